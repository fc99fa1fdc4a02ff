"""The compiled-graph facts the pictures and the text view share, read from a graph executor
factory (or its graph JSON): kernels with their Relay ops, inputs, params and storage."""
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..graph_executor.graph import Graph, parse_graph

# the parameter of every view of a compiled graph (shared_parameters completes their docstrings)
COMPILED_PARAMETERS = {"compiled": ("GraphExecutorFactoryModule or GraphModule or str",
                                    "What relay.build returned, a GraphModule, or a graph JSON text.")}


@dataclass
class CompiledNode:
    """One node of the compiled graph."""

    nid: int
    name: str
    kind: str                    # "input", "param" or "kernel"
    kernel: str = ""             # the compiled function (kernels)
    ops: list = field(default_factory=list)
    inputs: list = field(default_factory=list)     # node ids
    shapes: list = field(default_factory=list)
    dtypes: list = field(default_factory=list)
    storage_ids: list = field(default_factory=list)
    nbytes: list = field(default_factory=list)


def graph_of(compiled) -> Graph:
    """The parsed graph of a GraphExecutorFactoryModule, a GraphModule or graph JSON text."""
    if isinstance(compiled, Graph):
        return compiled
    if isinstance(compiled, str):
        return parse_graph(compiled)
    for attr in ("get_graph_json", "graph"):
        value = getattr(compiled, attr, None)
        if isinstance(value, Graph):
            return value
        if callable(value):
            try:
                return parse_graph(value())
            except Exception as err:  # noqa: BLE001 - an AOT factory has no graph JSON
                raise InputError(f"viz: {type(compiled).__name__} has no graph executor graph "
                                 f"({err}); build with executor=\"graph\"") from None
    raise InputError(f"viz: expected a graph executor factory, GraphModule or graph JSON, got "
                     f"{type(compiled).__name__}")


def compiled_nodes(compiled, param_names=()) -> list:
    """CompiledNode per graph node, in node order; inputs named in `param_names` (or p0, p1, ...
    when the factory carries params) are params."""
    graph = graph_of(compiled)
    params = set(param_names) | set(getattr(compiled, "params", {}) or {})
    nodes = []
    for nid, node in enumerate(graph.nodes):
        eids = [graph.entry_id(nid, k) for k in range(node.num_outputs)]
        shapes = [list(graph.shape[e]) for e in eids]
        dtypes = [graph.dltype[e] for e in eids]
        nbytes = [int(np.prod(s, dtype=np.int64)) * np.dtype(t).itemsize for s, t in zip(shapes, dtypes)]
        common = {"nid": nid, "name": node.name, "shapes": shapes, "dtypes": dtypes, "nbytes": nbytes,
                  "storage_ids": [graph.storage_id[e] for e in eids]}
        if node.op == "null":
            nodes.append(CompiledNode(kind="param" if node.name in params else "input", **common))
            continue
        ops = [op for op in node.attrs.get("relay_ops", "").split(",") if op]
        nodes.append(CompiledNode(kind="kernel", kernel=node.func_name, ops=ops,
                                  inputs=[src for src, _ in node.inputs], **common))
    return nodes


def tensor_text(shape, dtype) -> str:
    return f"Tensor[({', '.join(str(d) for d in shape)}{',' if len(shape) == 1 else ''}), {dtype}]"


__all__ = ["CompiledNode", "graph_of", "compiled_nodes", "tensor_text"]
