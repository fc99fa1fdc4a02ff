"""GraphExecutorCodegen: a fused, typed `main` -> TVM graph JSON, compiled kernels and params.

Follows graph_executor_codegen.cc: one "null" node per main parameter (in order), then the body
in post-order (memoized): each tensor Constant becomes a "null" node p0, p1, ... and a graph
param; each call of a primitive function becomes one "tvm_op" node after its inputs; Tuple,
TupleGetItem and Let only regroup entry references. Entries (node outputs) get storage ids
from analysis.memory_plan, so intermediates share memory; reshape-only primitives alias their
input and become "__nop" nodes. Control flow, ADTs, references, closures and dynamic shapes
cannot be expressed in a static graph: they raise GraphCodegenError pointing to kind="vm".
"""
import json
from dataclasses import dataclass, field

from ..errors import CompileError
from ..ir.adt import Constructor, Match
from ..ir.expr import (Call, Constant, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                       RefWrite, Tuple, TupleGetItem, Var)
from ..ir.functor import post_order
from ..ir.structural import structural_hash
from ..ir.types import TensorType, TupleType, is_any, type_to_str
from ..op.registry import OpDef
from ..te_compiler import get as get_te_compiler
from ..te_compiler.naming import NameSupply
from ..analysis.memory_plan import Entry as PlanEntry, Step, plan_memory, tensor_nbytes

CPU_DEVICE_TYPE = 1


class GraphCodegenError(CompileError):
    """The program cannot be expressed as a static graph (control flow, ADTs, dynamic shapes)."""


_UNSUPPORTED = {If: "control flow (If)", Match: "pattern matching (Match)",
                RefCreate: "references (RefCreate)", RefRead: "references (RefRead)",
                RefWrite: "references (RefWrite)", Constructor: "ADT constructors",
                GlobalVar: "calls to global functions", Op: "an un-fused operator call"}


def _excerpt(expr, limit: int = 200) -> str:
    text = expr.astext() if hasattr(expr, "astext") else repr(expr)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


def _unsupported(what: str, expr) -> GraphCodegenError:
    return GraphCodegenError(
        f"the graph executor does not support {what} (found in: {_excerpt(expr)}); "
        f"it runs static dataflow graphs only — use create_executor(kind=\"vm\") or "
        f"relay_backend.vm.compile for programs with control flow, ADTs, references, closures "
        f"or dynamic shapes")


def flatten_tensor_types(ty, where) -> list:
    """The TensorTypes of a (nested) tuple type; anything else is not a static graph value."""
    if isinstance(ty, TensorType):
        for d in ty.shape:
            if is_any(d):
                raise GraphCodegenError(
                    f"the graph executor needs static shapes, but {_excerpt(where)} has type "
                    f"{type_to_str(ty)}; use create_executor(kind=\"vm\") for dynamic shapes")
        return [ty]
    if isinstance(ty, TupleType):
        return [t for f in ty.fields for t in flatten_tensor_types(f, where)]
    raise _unsupported(f"values of type {type_to_str(ty) if ty is not None else 'unknown'}", where)


@dataclass
class Entry:
    """One node output: its shape, dtype and role in the memory plan."""

    shape: tuple
    dtype: str
    kind: str                      # "input" | "param" | "intermediate" | "output"

    @property
    def nbytes(self) -> int:
        return tensor_nbytes(self.shape, self.dtype)

    def for_planner(self, name: str) -> PlanEntry:
        return PlanEntry(self.nbytes, self.dtype, CPU_DEVICE_TYPE, self.kind, name)


@dataclass
class GraphCodegenResult:
    """Everything codegen produced, kept for the factory, the debug executor and tests."""

    graph_json: str
    lib: object
    params: dict
    plan: object = None            # analysis.memory_plan.MemoryPlan
    steps: list = field(default_factory=list)      # memory_plan.Step per kernel node
    entries: list = field(default_factory=list)    # memory_plan.Entry per graph entry
    primitive_functions: dict = field(default_factory=dict)   # func_name -> relay Function


class GraphExecutorCodegen:
    """tvm.relay.backend.graph_executor_codegen.GraphExecutorCodegen(mod, target)."""

    def __init__(self, mod=None, target="llvm", mod_name="default"):
        self.mod = mod
        self.target = target
        self.mod_name = mod_name
        self.result = None

    # ------------------------------------------------------------------ public
    def codegen(self, mod=None, func=None):
        """(graph_json, lowered runtime Module, params {"p0": NDArray, ...}) for `func`."""
        mod = mod if mod is not None else self.mod
        if func is None:
            func = mod["main"]
        self.result = _Builder(func, self.target, self.mod_name).build()
        return self.result.graph_json, self.result.lib, self.result.params

    # TVM-style accessors on the last codegen
    def get_graph_json(self) -> str:
        return self.result.graph_json

    def get_params(self) -> dict:
        return dict(self.result.params)


class _Builder:
    """One codegen run: nodes and entries, memory plan, kernels, JSON."""

    def __init__(self, func: Function, target, mod_name):
        self.func = func
        self.target = target
        self.mod_name = mod_name
        self.nodes = []            # JSON node dicts
        self.node_entries = []     # per node: list of entry ids
        self.entries = []          # Entry per entry id
        self.steps = []            # memory_plan.Step per tvm_op node, in node order
        self.step_nodes = []       # node id of each step
        self.params = {}           # "p0" -> NDArray
        self.names = NameSupply()
        self.cached = {}           # func_name -> CachedFunc
        self.prims = {}            # func_name -> primitive relay Function
        self.refs = {}             # expr -> list of (node id, output index)

    # -- nodes
    def _add_node(self, node: dict, types) -> list:
        nid = len(self.nodes)
        self.nodes.append(node)
        ids = []
        for ty in types:
            ids.append(len(self.entries))
            kind = {"null": "input"}.get(node["op"], "intermediate")
            self.entries.append(Entry(tuple(int(d) for d in ty.shape), ty.dtype, kind))
        self.node_entries.append(ids)
        return [(nid, k) for k in range(len(types))]

    def _entry_id(self, ref) -> int:
        return self.node_entries[ref[0]][ref[1]]

    # -- visiting
    def build(self) -> GraphCodegenResult:
        func = self.func
        if func.body._checked_type_ is None:
            raise GraphCodegenError("GraphExecutorCodegen needs a type-checked main; run InferType first")
        flatten_tensor_types(func.body.checked_type, func)
        for p in func.params:          # a tuple-typed parameter gives one input per field: x_0, x_1, ...
            types = flatten_tensor_types(p.checked_type, p)
            if isinstance(p.checked_type, TensorType):
                self.refs[p] = self._add_node({"op": "null", "name": p.name_hint, "inputs": []}, types)
            else:
                self.refs[p] = [r for k, t in enumerate(types)
                                for r in self._add_node({"op": "null", "name": f"{p.name_hint}_{k}", "inputs": []}, [t])]
        let_values = {}
        for node in post_order(func.body):
            if isinstance(node, Let):
                let_values[node.var] = node.value
        for node in post_order(func.body):
            if node not in self.refs:
                self.refs[node] = self._visit(node, let_values)
        heads = self.refs[func.body]
        for ref in heads:
            entry = self.entries[self._entry_id(ref)]
            if entry.kind == "intermediate":
                entry.kind = "output"
        return self._finish(heads)

    def _visit(self, node, let_values) -> list:
        if isinstance(node, Var):
            if node in let_values:
                return self.refs[let_values[node]]
            raise GraphCodegenError(f"free variable %{node.name_hint} in main: make it a parameter of main")
        if isinstance(node, Constant):
            name = f"p{len(self.params)}"
            self.params[name] = node.data
            ty = TensorType(node.data.shape, node.data.dtype)
            refs = self._add_node({"op": "null", "name": name, "inputs": []}, [ty])
            self.entries[-1].kind = "param"
            return refs
        if isinstance(node, Tuple):
            return [r for f in node.fields for r in self.refs[f]]
        if isinstance(node, TupleGetItem):
            return self._tuple_item(node)
        if isinstance(node, Let):
            return self.refs[node.body]
        if isinstance(node, Call):
            return self._call(node, let_values)
        if isinstance(node, Function):
            if node.is_primitive:
                return []  # only meaningful as a callee; visited through its call
            raise _unsupported("closures (a function value in main)", node)
        for klass, what in _UNSUPPORTED.items():
            if isinstance(node, klass):
                raise _unsupported(what, node)
        raise _unsupported(type(node).__name__, node)

    def _tuple_item(self, node: TupleGetItem) -> list:
        ty = node.tuple_value.checked_type
        sizes = [len(flatten_tensor_types(f, node)) for f in ty.fields]
        start = sum(sizes[:node.index])
        return self.refs[node.tuple_value][start:start + sizes[node.index]]

    def _callee(self, call: Call, let_values):
        callee = call.op
        while isinstance(callee, Var) and callee in let_values:
            callee = let_values[callee]
        if isinstance(callee, Function) and callee.is_primitive:
            return callee
        if isinstance(callee, OpDef):
            raise GraphCodegenError(
                f"operator {callee.name} is called directly in main ({_excerpt(call)}); run "
                f"transform.FuseOps first so every op call is inside a primitive function")
        for klass, what in _UNSUPPORTED.items():
            if isinstance(callee, klass):
                raise _unsupported(what, call)
        raise _unsupported("calls of non-primitive functions (closures)", call)

    def _call(self, call: Call, let_values) -> list:
        prim = self._callee(call, let_values)
        inputs = [r for a in call.args for r in self.refs[a]]
        out_types = flatten_tensor_types(call.checked_type, call)
        reshape_only = int(prim.attrs.get("relay.reshape_only", 0)) == 1 and len(inputs) == 1
        cached = get_te_compiler().lower(prim, self.target, mod_name=self.mod_name)
        func_name = cached.func_name
        self.cached[func_name] = cached
        self.prims[func_name] = prim
        attrs = {"func_name": func_name, "flatten_data": "0", "num_inputs": str(len(inputs)),
                 "num_outputs": str(len(out_types)), "hash": f"{structural_hash(prim):016x}",
                 "relay_ops": ",".join(_relay_ops(prim))}
        for key, value in prim.attrs.items():
            if isinstance(value, str):
                attrs[key] = value
        attrs.update(_layout_attrs(prim))
        node = {"op": "tvm_op", "name": self.names.fresh(func_name), "attrs": attrs,
                "inputs": [[nid, k, 0] for nid, k in inputs]}
        refs = self._add_node(node, out_types)
        in_ids = [self._entry_id(r) for r in inputs]
        out_ids = [self._entry_id(r) for r in refs]
        alias = in_ids[0] if reshape_only and len(out_ids) == 1 else None
        self.steps.append(Step(tuple(in_ids), tuple(out_ids), alias, node["name"]))
        self.step_nodes.append(len(self.nodes) - 1)
        return refs

    # -- output
    def _finish(self, heads) -> GraphCodegenResult:
        names = self._entry_names()
        entries = [e.for_planner(n) for e, n in zip(self.entries, names)]
        plan = plan_memory(self.steps, entries)
        sids = list(plan.storage_ids)
        for nid, step in zip(self.step_nodes, self.steps):   # aliased reshapes need no kernel
            if step.alias_of is not None and sids[step.outputs[0]] == sids[step.alias_of]:
                node = self.nodes[nid]
                node["name"] = "reshape_nop"
                node["attrs"]["func_name"] = "__nop"
        used = {n["attrs"]["func_name"] for n in self.nodes if n["op"] == "tvm_op"}
        kernels = [c for name, c in self.cached.items() if name in used]
        lib = get_te_compiler().build(kernels, self.target) if kernels else None
        row_ptr = [0]
        for ids in self.node_entries:
            row_ptr.append(row_ptr[-1] + len(ids))
        graph = {
            "nodes": self.nodes,
            "arg_nodes": [i for i, n in enumerate(self.nodes) if n["op"] == "null"],
            "heads": [[nid, k, 0] for nid, k in heads],
            "attrs": {
                "storage_id": ["list_int", list(sids)],
                "shape": ["list_shape", [list(e.shape) for e in self.entries]],
                "dltype": ["list_str", [e.dtype for e in self.entries]],
                "device_index": ["list_int", [CPU_DEVICE_TYPE] * len(self.entries)],
            },
            "node_row_ptr": row_ptr,
        }
        return GraphCodegenResult(json.dumps(graph), lib, dict(self.params), plan, self.steps,
                                  entries, {k: self.prims[k] for k in used if k in self.prims})

    def _entry_names(self) -> list:
        names = []
        for node, ids in zip(self.nodes, self.node_entries):
            names.extend(node["name"] if len(ids) == 1 else f"{node['name']}:{k}" for k in range(len(ids)))
        return names


def _calls_in(prim: Function):
    return [n for n in post_order(prim.body) if isinstance(n, Call) and isinstance(n.op, OpDef)]


def _relay_ops(prim: Function) -> list:
    """The op names inside a primitive function in post-order, e.g. [nn.conv2d, add, nn.relu]."""
    return [c.op.name for c in _calls_in(prim)]


def _layout_attrs(prim: Function) -> dict:
    """String call attributes whose name contains "layout" (what LabelOps copies)."""
    out = {}
    for call in _calls_in(prim):
        attrs = call.attrs
        if attrs is None or not hasattr(attrs, "__dataclass_fields__"):
            continue
        for key in attrs.__dataclass_fields__:
            value = getattr(attrs, key, None)
            if "layout" in key and isinstance(value, str) and value:
                out[key] = value
    return out
