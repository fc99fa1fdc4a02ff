"""Level 7: pictures and terminal views of a program (tvm.contrib.relay_viz).

    from relay_backend import viz
    dot = viz.relay_graph(mod)             # the Relay graph of main: ops, shapes, dtypes; fused
                                           # primitive functions drawn as clusters
    dot = viz.kernel_graph(factory)        # the compiled graph: one box per kernel, its Relay ops
    dot = viz.memory_plan_graph(factory)   # storage ids over node order, with their bytes
    print(viz.text(factory))               # the same as plain text for a terminal
    viz.render(dot, "out/model")           # out/model.dot always; .svg/.png when Graphviz's
                                           # `dot` program is installed

DOT is built with the `graphviz` package (pip install "relay_backend[viz]"); drawing SVG/PNG
needs the Graphviz `dot` program as well. `text()` needs neither.
"""
from .dot import kernel_graph, memory_plan_graph, relay_graph
from .drawing import can_draw, render
from .terminal import memory_plan_text, text

__all__ = ["relay_graph", "kernel_graph", "memory_plan_graph", "render", "can_draw", "text",
           "memory_plan_text"]
