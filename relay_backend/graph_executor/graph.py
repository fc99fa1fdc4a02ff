"""Parsing and validating a TVM graph JSON (graph_executor.h's loading rules).

The graph runtime accepts exactly the keys TVM's runtime accepts: the five top-level keys
(nodes, arg_nodes, heads, attrs, node_row_ptr), node keys op/name/inputs/attrs, tvm_op attrs
func_name/num_inputs/num_outputs/flatten_data, and the list-encoded graph attrs storage_id /
shape / dltype (+ optional device_index, storage_scope, and this runtime's storage_offset: the
byte offset of each entry in its storage, non-zero only for the inputs of an in-place
concatenation, a `__nop` whose inputs lie back to back inside its output). Anything malformed (a wrong type
anywhere, an unknown dltype, a shape whose byte size overflows int64) raises SerializationError
naming the key and what was expected; a device_index must be one device for the whole graph,
the CPU (1) or a CUDA GPU (2).
"""
import bisect
import json
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import SerializationError
from ..runtime.limits import check_tensor_size
from .storage_check import check_storage_plan

TOP_KEYS = ("nodes", "arg_nodes", "heads", "attrs", "node_row_ptr")
NODE_KEYS = {"op", "name", "inputs", "attrs", "attr", "control_deps"}
OP_ATTRS = ("func_name", "num_inputs", "num_outputs", "flatten_data")
ATTR_TAGS = {"storage_id": "list_int", "shape": "list_shape", "dltype": "list_str",
             "device_index": "list_int", "storage_scope": "list_str", "storage_offset": "list_int"}
# the dtypes the runtime allocates (runtime.params' DLPack table)
DLTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64")
CPU_DEVICE_TYPE = 1
CUDA_DEVICE_TYPE = 2
DEVICE_TYPES = (CPU_DEVICE_TYPE, CUDA_DEVICE_TYPE)
INT64_MAX = 2 ** 63 - 1


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
    storage_offset: list = None   # bytes per entry (in-place concatenations), None: all 0

    def entry_id(self, nid: int, index: int) -> int:
        return self.node_row_ptr[nid] + index

    @property
    def num_entries(self) -> int:
        return self.node_row_ptr[-1]

    def offset(self, eid: int) -> int:
        """Where entry `eid` starts in its storage, in bytes."""
        return 0 if self.storage_offset is None else self.storage_offset[eid]

    def nbytes(self, eid: int) -> int:
        """The byte size of entry `eid`."""
        return math.prod(self.shape[eid]) * np.dtype(self.dltype[eid]).itemsize

    def entry_label(self, eid: int) -> str:
        """The node name of entry `eid` ("<name>:<k>" for output k > 0 of a multi-output node)."""
        nid = bisect.bisect_right(self.node_row_ptr, eid) - 1
        k = eid - self.node_row_ptr[nid]
        return self.nodes[nid].name if k == 0 else f"{self.nodes[nid].name}:{k}"


def check_sizes(graph: Graph) -> int:
    """Bytes of the storage pools a GraphModule allocates for `graph`; AllocationError naming the
    entry (or the total) when a tensor or all pools together exceed the stated size limit."""
    pools = {}
    for eid, (sid, shape, dtype) in enumerate(zip(graph.storage_id, graph.shape, graph.dltype)):
        nbytes = check_tensor_size(shape, dtype, f"graph entry {eid} ({graph.entry_label(eid)!r})")
        pools[sid] = max(pools.get(sid, 0), graph.offset(eid) + nbytes)
    total = sum(pools.values())
    check_tensor_size((total,), "uint8", f"graph storage ({len(pools)} pools, {total} bytes)")
    return total


def _bad(what: str) -> SerializationError:
    return SerializationError(f"invalid graph json: {what}")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _int_list(value, key: str) -> list:
    """`value` as a list of ints, else SerializationError naming `key`."""
    if not isinstance(value, list):
        raise _bad(f"{key} must be a list of integers, got {type(value).__name__}")
    for i, x in enumerate(value):
        if not _is_int(x):
            raise _bad(f"{key}[{i}] must be an integer, got {x!r}")
    return list(value)


def _ref(ref, where: str) -> tuple:
    if not isinstance(ref, list) or len(ref) not in (2, 3) or not all(_is_int(x) for x in ref):
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
    for key in ("op", "name"):
        if not isinstance(obj[key], str):
            raise _bad(f"node {nid}: {key!r} must be a string, got {obj[key]!r}")
    if not isinstance(obj["inputs"], list):
        raise _bad(f"node {nid} ({obj['name']}): 'inputs' must be a list of entry references, "
                   f"got {type(obj['inputs']).__name__}")
    attrs = obj.get("attrs", obj.get("attr", {}))
    if not isinstance(attrs, dict) or not all(isinstance(v, str) for v in attrs.values()):
        raise _bad(f"node {nid} ({obj['name']}): attrs must be an object of strings, got {attrs!r}")
    node = Node(obj["op"], obj["name"],
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
        if counts[0] < 0 or counts[1] < 1:
            raise _bad(f"tvm_op node {nid} ({node.name}): num_inputs must be >= 0 and num_outputs "
                       f">= 1, got {counts[0]} and {counts[1]}")
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
    """Read and validate a graph JSON: every key, node, entry reference, shape and dtype is
    checked, so a bad file is a SerializationError rather than a crash at run time.

    Parameters
    ----------
    graph_json : str or bytes or dict
        The JSON text, or a dict already decoded from it.

    Returns
    -------
    graph : Graph
        The validated graph.
    """
    try:
        obj = json.loads(graph_json) if isinstance(graph_json, (str, bytes)) else graph_json
    except (json.JSONDecodeError, RecursionError) as err:
        raise _bad(f"not JSON ({str(err)[:200]})") from None
    if not isinstance(obj, dict):
        raise _bad(f"top level must be an object, got {type(obj).__name__}")
    unknown = [k for k in obj if k not in TOP_KEYS and k != "metadata"]
    if unknown:
        raise _bad(f"key(s) {unknown} are not supported (expected {list(TOP_KEYS)})")
    missing = [k for k in TOP_KEYS if k not in obj]
    if missing:
        raise _bad(f"missing key(s) {missing}")
    if not isinstance(obj["nodes"], list):
        raise _bad(f"nodes must be a list, got {type(obj['nodes']).__name__}")
    nodes = [_node(n, i) for i, n in enumerate(obj["nodes"])]
    attrs = obj["attrs"]
    if not isinstance(attrs, dict):
        raise _bad("attrs must be an object")
    for key, value in attrs.items():
        if key not in ATTR_TAGS and not (isinstance(value, list) and value and value[0] in ("list_int", "size_t")):
            raise _bad(f"graph attr {key!r} is not supported")
    if not isinstance(obj["heads"], list):
        raise _bad(f"heads must be a list of entry references, got {type(obj['heads']).__name__}")
    device_index = _attr_list(attrs, "device_index", False)
    offsets = _attr_list(attrs, "storage_offset", False)
    graph = Graph(nodes, _int_list(obj["arg_nodes"], "arg_nodes"), [_ref(h, "heads") for h in obj["heads"]],
                  _int_list(obj["node_row_ptr"], "node_row_ptr"),
                  _int_list(_attr_list(attrs, "storage_id", True), "attrs['storage_id']"),
                  _shapes(_attr_list(attrs, "shape", True)), _dltypes(_attr_list(attrs, "dltype", True)),
                  None if device_index is None else _int_list(device_index, "attrs['device_index']"),
                  None if offsets is None else _int_list(offsets, "attrs['storage_offset']"))
    _check_consistent(graph)
    _check_copies(graph)
    check_storage_plan(graph)
    return graph


def _shapes(value) -> list:
    """attrs["shape"] items as tuples of non-negative ints whose element count fits int64."""
    out = []
    for i, shape in enumerate(value):
        if not isinstance(shape, list):
            raise _bad(f"attrs['shape'][{i}] must be a list of dimensions, got {shape!r}")
        count = 1
        for d in shape:
            if not _is_int(d) or d < 0:
                raise _bad(f"attrs['shape'][{i}] is {shape}; dimensions must be non-negative integers")
            count *= d
        if count > INT64_MAX // 8:
            raise _bad(f"attrs['shape'][{i}] is {shape}: {count} elements overflow int64 byte sizes")
        out.append(tuple(shape))
    return out


def _dltypes(value) -> list:
    """attrs["dltype"] items, each one of DLTYPES."""
    for i, dtype in enumerate(value):
        if not isinstance(dtype, str) or dtype not in DLTYPES:
            raise _bad(f"attrs['dltype'][{i}] is {dtype!r}; supported dltypes are {list(DLTYPES)}")
    return list(value)


def first_difference(got: list, want: list, want_is: str = "expected is") -> str:
    """Where two lists first differ, e.g. "first differs at index 11: 12 where the nodes'
    num_outputs give 11 (lengths 14 and 14)": a long list's mismatch is never hidden by
    truncating both lists at the same place."""
    index = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    have = got[index] if index < len(got) else "the end of the list"
    need = want[index] if index < len(want) else "the end of the list"
    return f"first differs at index {index}: {have} where {want_is} {need} (lengths {len(got)} and {len(want)})"


def _check_consistent(g: Graph) -> None:
    expected = [0]
    for n in g.nodes:
        expected.append(expected[-1] + n.num_outputs)
    if g.node_row_ptr != expected:
        where = first_difference(g.node_row_ptr, expected, "the nodes' num_outputs give")
        raise _bad(f"node_row_ptr does not match the nodes' num_outputs: {where}")
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
    for i, sid in enumerate(g.storage_id):
        if not 0 <= sid < n:
            raise _bad(f"attrs['storage_id'][{i}] is {sid}; storage ids must be in 0..{n - 1} (a plan "
                       f"never needs more storages than the graph's {n} entries)")
    if g.device_index is not None:
        if len(g.device_index) != n:
            raise _bad(f"attrs['device_index'] has {len(g.device_index)} items but the graph has {n} entries")
        for i, dev in enumerate(g.device_index):
            if dev not in DEVICE_TYPES or dev != g.device_index[0]:
                raise _bad(f"attrs['device_index'][{i}] is {dev}, but this runtime executes a graph on "
                           f"one device, the CPU ({CPU_DEVICE_TYPE}) or a CUDA GPU ({CUDA_DEVICE_TYPE}), "
                           f"and entry 0 is on {g.device_index[0]}; rebuild the graph for one target")


def _check_offsets(g: Graph) -> set:
    """The entries that are inputs of an in-place concatenation (a __nop with several inputs);
    SerializationError unless storage_offset has one non-negative int per entry, non-zero only
    for those."""
    concat_inputs = {g.entry_id(*ref) for node in g.nodes
                     if node.op == "tvm_op" and node.func_name == "__nop" and len(node.inputs) > 1
                     for ref in node.inputs}
    if g.storage_offset is None:
        return concat_inputs
    if len(g.storage_offset) != g.num_entries:
        raise _bad(f"attrs['storage_offset'] has {len(g.storage_offset)} items but the graph has "
                   f"{g.num_entries} entries")
    for eid, offset in enumerate(g.storage_offset):
        if offset < 0 or (offset and eid not in concat_inputs):
            raise _bad(f"attrs['storage_offset'][{eid}] is {offset}; an offset must be >= 0, and non-zero "
                       f"only for an input of an in-place concatenation (a __nop with several inputs)")
    return concat_inputs


def _check_inplace_concat(g: Graph, nid: int, node: Node) -> None:
    """A __nop with several inputs is an in-place concatenation: its inputs lie back to back, in
    order, inside its output's storage (same storage id and dtype, offsets adding up), and fill it."""
    where = (f"node {nid} ({node.name!r}): __nop with {len(node.inputs)} inputs (a __nop has one input, a "
             f"reshape, unless it is an in-place concatenation)")
    if node.num_outputs != 1:
        raise _bad(f"{where} must have one output, got {node.num_outputs}")
    out = g.entry_id(nid, 0)
    at = g.offset(out)
    for ref in node.inputs:
        eid = g.entry_id(*ref)
        if g.storage_id[eid] != g.storage_id[out] or g.dltype[eid] != g.dltype[out] or g.offset(eid) != at:
            raise _bad(f"{where}: input entry {eid} must lie in the output's storage {g.storage_id[out]} "
                       f"at byte offset {at} as {g.dltype[out]} (an in-place concatenation), got storage "
                       f"{g.storage_id[eid]}, offset {g.offset(eid)}, {g.dltype[eid]}")
        at += g.nbytes(eid)
    if at != g.offset(out) + g.nbytes(out):
        raise _bad(f"{where}: its inputs fill {at - g.offset(out)} bytes of its {g.nbytes(out)}-byte output")


def _check_copies(g: Graph) -> None:
    """A __nop (reshape sharing its input's storage) or __copy node moves one entry's bytes to
    another unchanged: one input, one output, same dtype and element count. A __nop with several
    inputs is an in-place concatenation (_check_inplace_concat)."""
    _check_offsets(g)
    for nid, node in enumerate(g.nodes):
        if node.op != "tvm_op" or node.func_name not in ("__nop", "__copy"):
            continue
        if node.func_name == "__nop" and len(node.inputs) > 1:
            _check_inplace_concat(g, nid, node)
            continue
        where = f"node {nid} ({node.name!r}): {node.func_name}"
        if len(node.inputs) != 1 or node.num_outputs != 1:
            raise _bad(f"{where} must have one input and one output, got {len(node.inputs)} and "
                       f"{node.num_outputs}")
        src, dst = g.entry_id(*node.inputs[0]), g.entry_id(nid, 0)
        sizes = [math.prod(g.shape[e]) for e in (src, dst)]
        if g.dltype[src] != g.dltype[dst] or sizes[0] != sizes[1]:
            raise _bad(f"{where} copies {sizes[0]} {g.dltype[src]} elements {list(g.shape[src])} into "
                       f"{sizes[1]} {g.dltype[dst]} elements {list(g.shape[dst])}; they must match")
