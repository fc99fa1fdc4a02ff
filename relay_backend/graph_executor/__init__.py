"""Level 6: the graph executor (tvm.contrib.graph_executor + graph_executor_codegen).

    factory = relay_backend.build(mod, target="llvm", params=params)   # build_module
    gmod = factory["default"](relay_backend.cpu(0))                    # GraphModule, params set
    gmod.set_input("data", x); gmod.run(); y = gmod.get_output(0).numpy()

codegen.py turns a fused main into graph JSON + kernels + params; graph.py parses and validates
graph JSON; runtime.py is the GraphModule; factory.py the build result and its single-file
export; debug_executor.py the per-node profiler and intermediate dumps.
"""
from .codegen import GraphCodegenError, GraphExecutorCodegen
from .graph import Graph, Node, parse_graph
from .runtime import GraphModule, create
from .factory import GraphExecutorFactoryModule
from . import debug_executor

__all__ = ["GraphExecutorCodegen", "GraphCodegenError", "GraphModule", "create",
           "GraphExecutorFactoryModule", "parse_graph", "debug_executor"]
