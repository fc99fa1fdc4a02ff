"""GraphExecutorCodegen: a fused, typed `main` -> TVM graph JSON, compiled kernels and params.

Follows graph_executor_codegen.cc. The walk over main is te_compiler.lower_main's (shared with
the AOT executor): one "null" node per main input, one "null" node p0, p1, ... per constant
(a graph param), one "tvm_op" node per primitive call, in that order. What is the graph
executor's own: entries get storage ids from analysis.memory_plan with outputs allowed to reuse
dead intermediates; reshape-only primitives that alias their input become "__nop" nodes;
concatenations whose producers can write straight into their output
(te_compiler/inplace_concat.py, shared with AOT) become "__nop" nodes with several inputs placed at byte offsets in the output's storage (the graph
attr "storage_offset", written only then); the used kernels are built into one runtime Module;
the nodes are written as graph JSON.
Programs that are not static dataflow raise GraphCodegenError pointing to kind="vm".
"""
import json
from dataclasses import dataclass, field

from ..ir.structural import structural_hash
from ..ir.expr import Function
from ..te_compiler import get as get_te_compiler
from ..target import as_target
from ..te_compiler.lower_main import GraphCodegenError, LoweredMain, flatten_tensor_types, lower_main
from ..analysis.kernel_summary import mac_count, op_calls, relay_ops
from ..analysis.memory_plan import MemoryPlan
from ..analysis.memory_views import plan_with_views, reduce_problem
from ..te_compiler.inplace_concat import inplace_concats


@dataclass
class GraphCodegenResult:
    """Everything codegen produced, kept for the factory, the debug executor and tests."""

    graph_json: str
    lib: object
    params: dict
    # the problem the planner solved (analysis.memory_plan.check_plan proves it): a Step per
    # kernel node and an Entry per graph entry, less the in-place concatenations' inputs
    # (views) and steps (analysis.memory_views)
    plan: object = None            # analysis.memory_plan.MemoryPlan
    steps: list = field(default_factory=list)      # memory_plan.Step
    entries: list = field(default_factory=list)    # memory_plan.Entry
    views: dict = field(default_factory=dict)      # entry -> (concat output entry, byte offset)
    primitive_functions: dict = field(default_factory=dict)   # func_name -> relay Function


class GraphExecutorCodegen:
    """Lower a module's main into a graph JSON, its kernels and its params
    (tvm.relay.backend.graph_executor_codegen.GraphExecutorCodegen).

    Parameters
    ----------
    mod : IRModule, optional
        The optimised, fused module whose main is lowered (codegen can take it instead).
        Defaults to None.
    target : str or Target, optional
        What the kernels are compiled for. Defaults to "llvm".
    mod_name : str, optional
        The prefix of the generated symbol names. Defaults to "default".
    """

    def __init__(self, mod=None, target="llvm", mod_name="default"):
        self.mod = mod
        self.target = target
        self.mod_name = mod_name
        self.result = None

    # ------------------------------------------------------------------ public
    def codegen(self, mod=None, func=None):
        """Lower a function (by default the module's main) into a graph JSON, a kernel library and
        params (tvm's GraphExecutorCodegen.codegen).

        Parameters
        ----------
        mod : IRModule, optional
            The optimised, fused module; None (the default) takes the one given to the constructor.
        func : Function, optional
            The function to lower; None (the default) takes the module's main.

        Returns
        -------
        result : tuple
            (graph_json, the kernels' runtime Module, params {"p0": NDArray, ...}).
        """
        mod = mod if mod is not None else self.mod
        if func is None:
            func = mod["main"]
        self.result = _build(lower_main(func, self.target, self.mod_name))
        return self.result.graph_json, self.result.lib, self.result.params

    # TVM-style accessors on the last codegen
    def get_graph_json(self) -> str:
        """The graph JSON of the last codegen.

        Returns
        -------
        graph_json : str
            Nodes, their inputs, the storage plan, shapes and dtypes.
        """
        return self.result.graph_json

    def get_params(self) -> dict:
        """The params of the last codegen: the constants lifted out of the graph.

        Returns
        -------
        params : dict of str to NDArray
            {"p0": value, ...}, the graph's param inputs.
        """
        return dict(self.result.params)


def _build(lowered: LoweredMain) -> GraphCodegenResult:
    """Plan memory, drop aliased reshapes and in-place concatenations, build the used kernels,
    write the graph JSON."""
    nodes = [_json_node(lowered, n) for n in lowered.nodes]
    steps = lowered.steps()
    entries = lowered.planner_entries()
    views, dropped = inplace_concats(lowered)
    plan, offsets = plan_with_views(steps, entries, views, dropped)
    plan.check_size("the graph executor")
    sids = list(plan.storage_ids)
    call_nodes = [nid for nid, n in enumerate(lowered.nodes) if n.op == "call"]
    for index in dropped:                         # producers wrote the slices: nothing to copy
        nodes[call_nodes[index]]["name"] = "concatenate_nop"
        nodes[call_nodes[index]]["attrs"]["func_name"] = "__nop"
    for nid, step in zip(call_nodes, steps):      # aliased reshapes need no kernel
        if step.alias_of is not None and sids[step.outputs[0]] == sids[step.alias_of]:
            nodes[nid]["name"] = "reshape_nop"
            nodes[nid]["attrs"]["func_name"] = "__nop"
            # it reads only the data it reshapes (reshape_like's shape operand is static)
            nodes[nid]["inputs"] = [_ref(lowered, step.alias_of)]
            nodes[nid]["attrs"]["num_inputs"] = "1"
    used = {n["attrs"]["func_name"] for n in nodes if n["op"] == "tvm_op"}
    kernels = [c for name, c in lowered.cached.items() if name in used]
    lib = get_te_compiler().build(kernels, lowered.target) if kernels else None
    row_ptr = [0]
    for n in lowered.nodes:
        row_ptr.append(row_ptr[-1] + len(n.outputs))
    graph = {
        "nodes": nodes,
        "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
        "heads": [_ref(lowered, eid) for eid in lowered.outputs],
        "attrs": {
            "storage_id": ["list_int", list(sids)],
            "shape": ["list_shape", [list(e.shape) for e in lowered.entries]],
            "dltype": ["list_str", [e.dtype for e in lowered.entries]],
            "device_index": ["list_int", [as_target(lowered.target).device_type] * len(lowered.entries)],
        },
        "node_row_ptr": row_ptr,
    }
    if views:                                     # only graphs with in-place concatenations
        graph["attrs"]["storage_offset"] = ["list_int", offsets]
    params = {name: data for name, data, _ in lowered.constants}
    planned_steps, planned_entries, kept = reduce_problem(steps, entries, views, dropped)
    planned = plan if not views else _kept_plan(plan, kept)
    return GraphCodegenResult(json.dumps(graph), lib, params, planned, planned_steps, planned_entries,
                              views=views,
                              primitive_functions={k: lowered.prims[k] for k in used if k in lowered.prims})


def _kept_plan(plan: MemoryPlan, kept: dict) -> MemoryPlan:
    """`plan` restricted to the entries the planner saw (`kept`: old id -> new id)."""
    ids = [None] * len(kept)
    for eid, new in kept.items():
        ids[new] = plan.storage_ids[eid]
    return MemoryPlan(ids, plan.storage_sizes, plan.storage_device_types,
                      sum(plan.entry_sizes[eid] for eid in kept), [plan.entry_sizes[eid] for eid in kept])


def _ref(lowered: LoweredMain, eid: int) -> list:
    """[node id, output index, version] of entry `eid`."""
    entry = lowered.entries[eid]
    return [entry.node, entry.index, 0]


def _json_node(lowered: LoweredMain, node) -> dict:
    """The graph JSON dict of one node: "null" for inputs and constants, "tvm_op" for calls."""
    if node.op != "call":
        return {"op": "null", "name": node.name, "inputs": []}
    prim = node.prim
    attrs = {"func_name": node.func_name, "flatten_data": "0", "num_inputs": str(len(node.inputs)),
             "num_outputs": str(len(node.outputs)), "hash": f"{_prim_hash(node):016x}",
             "relay_ops": ",".join(relay_ops(prim)), "mac_count": str(mac_count(prim))}
    for key, value in prim.attrs.items():
        if isinstance(value, str):
            attrs[key] = value
    attrs.update(_layout_attrs(prim))
    return {"op": "tvm_op", "name": node.name, "attrs": attrs,
            "inputs": [_ref(lowered, eid) for eid in node.inputs]}


def _prim_hash(node) -> int:
    """structural_hash of a call node's primitive function (its cache key computed it)."""
    return node.prim_hash if node.prim_hash is not None else structural_hash(node.prim)


def _layout_attrs(prim: Function) -> dict:
    """String call attributes whose name contains "layout" (what LabelOps copies)."""
    out = {}
    for call in op_calls(prim):
        attrs = call.attrs
        if attrs is None or not hasattr(attrs, "__dataclass_fields__"):
            continue
        for key in attrs.__dataclass_fields__:
            value = getattr(attrs, key, None)
            if "layout" in key and isinstance(value, str) and value:
                out[key] = value
    return out


# GraphCodegenError and flatten_tensor_types live in te_compiler.lower_main (shared with AOT)
__all__ = ["GraphExecutorCodegen", "GraphCodegenResult", "GraphCodegenError", "flatten_tensor_types"]
