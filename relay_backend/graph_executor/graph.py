"""Parsing and validating a TVM graph JSON (graph_executor.h's loading rules).

The graph runtime accepts exactly the keys TVM's runtime accepts: the five top-level keys
(nodes, arg_nodes, heads, attrs, node_row_ptr), node keys op/name/inputs/attrs, tvm_op attrs
func_name/num_inputs/num_outputs/flatten_data, and the list-encoded graph attrs storage_id /
shape / dltype (+ optional device_index, storage_scope). Anything malformed raises
SerializationError naming the key and what was expected.
"""
import json
from dataclasses import dataclass, field

import numpy as np

from ..errors import SerializationError

TOP_KEYS = ("nodes", "arg_nodes", "heads", "attrs", "node_row_ptr")
NODE_KEYS = {"op", "name", "inputs", "attrs", "attr", "control_deps"}
OP_ATTRS = ("func_name", "num_inputs", "num_outputs", "flatten_data")
ATTR_TAGS = {"storage_id": "list_int", "shape": "list_shape", "dltype": "list_str",
             "device_index": "list_int", "storage_scope": "list_str"}


@dataclass
class Node:
    """One graph node: "null" (an input or param) or "tvm_op" (a kernel call)."""

    op: str
    name: str
    inputs: list                  # [(node id, output index)]
    attrs: dict = field(default_factory=dict)

    @property
    def num_outputs(self) -> int:
        return int(self.attrs.get("num_outputs", 1)) if self.op != "null" else 1

    @property
    def func_name(self) -> str:
        return self.attrs.get("func_name", "")


@dataclass
class Graph:
    """A parsed graph: nodes, inputs, outputs and the per-entry attributes."""

    nodes: list
    arg_nodes: list
    heads: list                   # [(node id, output index)]
    node_row_ptr: list
    storage_id: list
    shape: list
    dltype: list
    device_index: list = None

    def entry_id(self, nid: int, index: int) -> int:
        return self.node_row_ptr[nid] + index

    @property
    def num_entries(self) -> int:
        return self.node_row_ptr[-1]


def _bad(what: str) -> SerializationError:
    return SerializationError(f"invalid graph json: {what}")


def _ref(ref, where: str) -> tuple:
    if not isinstance(ref, list) or len(ref) not in (2, 3) or not all(isinstance(x, int) for x in ref):
        raise _bad(f"{where}: an entry reference must be [node_id, index] or [node_id, index, version], got {ref!r}")
    return ref[0], ref[1]


def _node(obj, nid: int) -> Node:
    if not isinstance(obj, dict):
        raise _bad(f"node {nid} must be an object, got {type(obj).__name__}")
    unknown = set(obj) - NODE_KEYS
    if unknown:
        raise _bad(f"node {nid}: key(s) {sorted(unknown)} are not supported (allowed: {sorted(NODE_KEYS)})")
    for key in ("op", "name", "inputs"):
        if key not in obj:
            raise _bad(f"node {nid} lacks the required key {key!r}")
    attrs = obj.get("attrs", obj.get("attr", {}))
    if not isinstance(attrs, dict) or not all(isinstance(v, str) for v in attrs.values()):
        raise _bad(f"node {nid} ({obj['name']}): attrs must be an object of strings, got {attrs!r}")
    node = Node(str(obj["op"]), str(obj["name"]),
                [_ref(r, f"node {nid} ({obj['name']}) input") for r in obj["inputs"]], dict(attrs))
    if node.op == "tvm_op":
        missing = [k for k in OP_ATTRS if k not in attrs]
        if missing:
            raise _bad(f"tvm_op node {nid} ({node.name}) lacks attrs {missing}")
        try:
            counts = int(attrs["num_inputs"]), int(attrs["num_outputs"]), int(attrs["flatten_data"])
        except ValueError as err:
            raise _bad(f"tvm_op node {nid} ({node.name}): num_inputs/num_outputs/flatten_data must be "
                       f"integers written as strings ({err})") from None
        if counts[0] != len(node.inputs):
            raise _bad(f"tvm_op node {nid} ({node.name}) says num_inputs={counts[0]} but has "
                       f"{len(node.inputs)} inputs")
    elif node.op != "null":
        raise _bad(f"node {nid} ({node.name}) has op {node.op!r}; expected 'null' or 'tvm_op'")
    return node


def _attr_list(attrs: dict, key: str, required: bool):
    if key not in attrs:
        if required:
            raise _bad(f"attrs lacks the required key {key!r}")
        return None
    value = attrs[key]
    if not isinstance(value, list) or len(value) != 2 or value[0] != ATTR_TAGS[key] or not isinstance(value[1], list):
        raise _bad(f"attrs[{key!r}] must be [{ATTR_TAGS[key]!r}, [...]], got {str(value)[:80]}")
    return value[1]


def parse_graph(graph_json) -> Graph:
    """A validated Graph from a JSON string (or an already decoded dict)."""
    try:
        obj = json.loads(graph_json) if isinstance(graph_json, (str, bytes)) else graph_json
    except json.JSONDecodeError as err:
        raise _bad(f"not JSON ({err})") from None
    if not isinstance(obj, dict):
        raise _bad(f"top level must be an object, got {type(obj).__name__}")
    unknown = [k for k in obj if k not in TOP_KEYS and k != "metadata"]
    if unknown:
        raise _bad(f"key(s) {unknown} are not supported (expected {list(TOP_KEYS)})")
    missing = [k for k in TOP_KEYS if k not in obj]
    if missing:
        raise _bad(f"missing key(s) {missing}")
    nodes = [_node(n, i) for i, n in enumerate(obj["nodes"])]
    attrs = obj["attrs"]
    if not isinstance(attrs, dict):
        raise _bad("attrs must be an object")
    for key, value in attrs.items():
        if key not in ATTR_TAGS and not (isinstance(value, list) and value and value[0] in ("list_int", "size_t")):
            raise _bad(f"graph attr {key!r} is not supported")
    graph = Graph(nodes, list(obj["arg_nodes"]), [_ref(h, "heads") for h in obj["heads"]],
                  list(obj["node_row_ptr"]), _attr_list(attrs, "storage_id", True),
                  [tuple(s) for s in _attr_list(attrs, "shape", True)], _attr_list(attrs, "dltype", True),
                  _attr_list(attrs, "device_index", False))
    _check_consistent(graph)
    return graph


def _check_consistent(g: Graph) -> None:
    expected = [0]
    for n in g.nodes:
        expected.append(expected[-1] + n.num_outputs)
    if g.node_row_ptr != expected:
        raise _bad(f"node_row_ptr {g.node_row_ptr[:8]}... does not match the nodes' num_outputs (expected "
                   f"{expected[:8]}...)")
    n = g.num_entries
    for key in ("storage_id", "shape", "dltype"):
        if len(getattr(g, key)) != n:
            raise _bad(f"attrs[{key!r}] has {len(getattr(g, key))} items but the graph has {n} entries")
    for nid in g.arg_nodes:
        if not 0 <= nid < len(g.nodes) or g.nodes[nid].op != "null":
            raise _bad(f"arg_nodes lists {nid}, which is not a 'null' node")
    for nid, node in enumerate(g.nodes):
        for src, idx in node.inputs:
            if not 0 <= src < nid or not 0 <= idx < g.nodes[src].num_outputs:
                raise _bad(f"node {nid} ({node.name}) reads entry [{src}, {idx}], which is not an earlier node's output")
    for src, idx in g.heads:
        if not 0 <= src < len(g.nodes) or not 0 <= idx < g.nodes[src].num_outputs:
            raise _bad(f"head [{src}, {idx}] is not a node output")
    for i, (sid, dtype, shape) in enumerate(zip(g.storage_id, g.dltype, g.shape)):
        if not isinstance(sid, int) or sid < 0:
            raise _bad(f"entry {i} has storage id {sid!r}")
        try:
            np.dtype(dtype)
        except TypeError:
            raise _bad(f"entry {i} has unknown dltype {dtype!r}") from None
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            raise _bad(f"entry {i} has shape {list(shape)}; shapes must be non-negative integers")
