"""lower_main: a fused, typed `main` as a flat list of kernel calls over tensor entries.

The graph executor's codegen (graph JSON) and the AOT executor (one C program) both start from
the same walk, which lives here so neither reaches into the other:

* one "input" node per main parameter, in order (a tuple-typed parameter gives one input per
  field: x_0, x_1, ...);
* the body in post-order (memoized): each tensor Constant becomes a "const" node p0, p1, ...
  (skipping names already taken by inputs, so a var named "p0" never shares a name with a
  param; two inputs with one name are rejected, since set_input by name would be ambiguous);
  each call of a primitive function is lowered through the TECompiler and becomes one "call"
  node after its inputs; Tuple, TupleGetItem and Let only regroup entry references;
* every node output is an entry (shape, dtype, kind, name); the entries of main's result are
  its outputs, and those written by a kernel get kind "output";
* every input and kernel output must be allocatable (runtime/limits.py): an AllocationError
  names the first that is not, before its kernel is lowered.

Control flow, ADTs, references, closures and dynamic shapes are not static dataflow: they raise
GraphCodegenError pointing to kind="vm" and naming the executor that asked (`executor=`).
Memory planning stays with each consumer (the graph executor lets outputs reuse dead
intermediates, AOT does not), fed by `steps()` and `planner_entries()`.
"""
from dataclasses import dataclass, field

from ..analysis.memory_plan import Entry as PlanEntry, Step, tensor_nbytes
from ..analysis.pure_concat import pure_concatenation
from ..autotvm.env import build_scope
from ..errors import CompileError
from ..ir.adt import Constructor, Match
from ..ir.expr import (Call, Constant, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                       RefWrite, Tuple, TupleGetItem, Var)
from ..ir.functor import post_order
from ..ir.types import TensorType, tuple_leaves, type_to_str
from ..transform.fuse_ops import aliases_first_param
from ..runtime.limits import check_tensor_size, max_tensor_bytes, tensor_bytes
from ..op.registry import OpDef
from ..ir.excerpt import excerpt as _excerpt
from .cache import CCacheKey
from .compiler import get as get_te_compiler, hand_over_early
from .naming import NameSupply, candidate_name, kernel_name, renamed

CPU_DEVICE_TYPE = 1


class GraphCodegenError(CompileError):
    """main is not a static dataflow graph (control flow, ADTs, dynamic shapes); graph and AOT."""


DEFAULT_EXECUTOR = "graph"


_UNSUPPORTED = {If: "control flow (If)", Match: "pattern matching (Match)",
                RefCreate: "references (RefCreate)", RefRead: "references (RefRead)",
                RefWrite: "references (RefWrite)", Constructor: "ADT constructors",
                GlobalVar: "calls to global functions", Op: "an un-fused operator call"}



def _unsupported(what: str, expr, executor: str = DEFAULT_EXECUTOR) -> GraphCodegenError:
    return GraphCodegenError(
        f"the {executor} executor does not support {what}: it runs static dataflow graphs "
        f"only — use create_executor(kind=\"vm\") or relay_backend.vm.compile for programs with "
        f"control flow, ADTs, references, closures or dynamic shapes (found in: {_excerpt(expr)})")


def flatten_tensor_types(ty, where, executor: str = DEFAULT_EXECUTOR) -> list:
    """The TensorTypes of a (nested) tuple type, in field order; anything else is not a static
    graph value. Iterative: a tuple nested thousands deep is fine."""
    leaves = tuple_leaves(ty)
    for ty in leaves:
        if not isinstance(ty, TensorType):
            raise _unsupported(f"values of type {type_to_str(ty) if ty is not None else 'unknown'}", where,
                               executor)
        if ty.is_dynamic:
            raise GraphCodegenError(
                f"the {executor} executor needs static shapes, not {type_to_str(ty)}; use "
                f"create_executor(kind=\"vm\") for dynamic shapes (found in: {_excerpt(where)})")
    return leaves


@dataclass
class MainEntry:
    """One flattened tensor (a node output): shape, dtype, role and which node makes it."""

    shape: tuple
    dtype: str
    kind: str                      # "input" | "param" | "intermediate" | "output"
    name: str                      # "<node>" or "<node>:<k>" for a multi-output node
    node: int                      # index of the producing node in LoweredMain.nodes
    index: int                     # which output of that node

    @property
    def nbytes(self) -> int:
        return tensor_nbytes(self.shape, self.dtype)

    def for_planner(self) -> PlanEntry:
        return PlanEntry(self.nbytes, self.dtype, CPU_DEVICE_TYPE, self.kind, self.name)


@dataclass
class MainNode:
    """A producer of entries: a main input, a constant, or one kernel call."""

    op: str                        # "input" | "const" | "call"
    name: str                      # var name, "p0", or the call's unique name
    outputs: tuple                 # entry ids written
    inputs: tuple = ()             # entry ids read (calls)
    func_name: str = None          # kernel name (calls)
    prim: Function = None          # the primitive function called (calls)
    alias_of: int = None           # reshape-only call: the input entry (its first) its output may share
    prim_hash: int = None          # structural_hash of prim (calls), computed once by its cache key
    data: object = None            # NDArray (constants)


@dataclass
class LoweredMain:
    """main flattened: nodes in execution order over entries, plus the lowered kernels."""

    func: Function
    target: object
    mod_name: str
    nodes: list = field(default_factory=list)        # MainNode
    entries: list = field(default_factory=list)      # MainEntry per entry id
    outputs: list = field(default_factory=list)      # entry id per flattened result
    cached: dict = field(default_factory=dict)       # func_name -> CachedFunc, first-lowered order
    prims: dict = field(default_factory=dict)        # func_name -> primitive relay Function

    @property
    def inputs(self) -> list:
        """(name, entry id) of every flattened main input, in parameter order."""
        return [(n.name, n.outputs[0]) for n in self.nodes if n.op == "input"]

    @property
    def constants(self) -> list:
        """(name, NDArray, entry id) of every constant, numbered p0, p1, ... in first-use order."""
        return [(n.name, n.data, n.outputs[0]) for n in self.nodes if n.op == "const"]

    @property
    def calls(self) -> list:
        """The kernel-call nodes in execution order."""
        return [n for n in self.nodes if n.op == "call"]

    def steps(self) -> list:
        """memory_plan.Step per kernel call (reshape-only calls carry alias_of)."""
        return [Step(n.inputs, n.outputs, n.alias_of, n.name) for n in self.calls]

    def planner_entries(self) -> list:
        """memory_plan.Entry per entry id."""
        return [e.for_planner() for e in self.entries]


def lower_main(func: Function, target="llvm", mod_name="default",
               executor: str = DEFAULT_EXECUTOR) -> LoweredMain:
    """Flatten the fused, typed `func` (main), lowering every primitive call via the TECompiler.

    `executor` ("graph", "AOT") only names the caller in error messages. The walk is one build
    (autotvm.env.build_scope): at most one untuned-operator warning, shipped tuning records on.
    """
    with build_scope(target):
        return _Walk(func, target, mod_name, executor).run()


class _Walk:
    """One walk over main; `refs` maps each visited expression to the entry ids it denotes."""

    def __init__(self, func: Function, target, mod_name, executor=DEFAULT_EXECUTOR):
        self.out = LoweredMain(func, target, mod_name)
        self.executor = executor
        self.names = NameSupply()
        # Kernel names are unique per built module, as in TVM: the shared TECompiler cache may
        # have lowered a function first for another build or the VM, under another name.
        self.kernel_names = NameSupply()
        self.kernels = {}  # id(CachedFunc in the shared cache) -> this module's copy
        self.refs = {}             # expr -> list of entry ids
        self.num_consts = 0
        self.input_names = set()   # names of main's flattened inputs (constants skip them)

    def _check_sizes(self, types, describe) -> None:
        """Every tensor of main must be allocatable: an AllocationError names the one that is not,
        before anything is lowered or allocated (a conv2d with padding 1e6, a 2**70-element input).
        `describe()` names the value; it is only called for an oversized tensor (an excerpt of a
        call prints its arguments, too slow to make for every call of a long chain)."""
        limit = max_tensor_bytes()
        for k, ty in enumerate(types):
            if tensor_bytes(ty.shape, ty.dtype) > limit:
                where = describe() if len(types) == 1 else f"{describe()} (field {k})"
                check_tensor_size(ty.shape, ty.dtype, f"the {self.executor} executor: {where}")

    def _refuse_dynamic_inputs(self, func) -> None:
        """GraphCodegenError naming the first input whose type has a size variable or Any: the
        graph and AOT executors plan memory for fixed sizes; the VM runs such programs."""
        for p in func.params:
            ty = p._checked_type_
            for leaf in tuple_leaves(ty) if ty is not None else ():
                if isinstance(leaf, TensorType) and leaf.is_dynamic:
                    raise GraphCodegenError(
                        f"the {self.executor} executor needs static shapes, but input '{p.name_hint}' has "
                        f"type {type_to_str(ty)} (a size variable or Any is known only at run time); "
                        f"use create_executor(kind=\"vm\") or relay_backend.vm.compile, which run "
                        f"kernels compiled for any size, or give the input a static shape "
                        f"(found in: {_excerpt(func)})")

    def _add_node(self, node: MainNode, types) -> list:
        nid = len(self.out.nodes)
        kind = {"input": "input", "const": "param"}.get(node.op, "intermediate")
        ids = []
        for k, ty in enumerate(types):
            name = node.name if len(types) == 1 else f"{node.name}:{k}"
            ids.append(len(self.out.entries))
            self.out.entries.append(MainEntry(tuple(int(d) for d in ty.shape), ty.dtype, kind, name, nid, k))
        node.outputs = tuple(ids)
        self.out.nodes.append(node)
        return ids

    def run(self) -> LoweredMain:
        func = self.out.func
        if func.body._checked_type_ is None:
            raise GraphCodegenError(f"the {self.executor} executor needs a type-checked main; "
                                    f"run InferType first")
        self._refuse_dynamic_inputs(func)
        flatten_tensor_types(func.body.checked_type, func, self.executor)
        for p in func.params:
            types = flatten_tensor_types(p.checked_type, p, self.executor)
            self._check_sizes(types, lambda: f"input '{p.name_hint}'")
            if isinstance(p.checked_type, TensorType):
                self.refs[p] = self._add_node(MainNode("input", p.name_hint, ()), types)
            else:
                self.refs[p] = [r for k, t in enumerate(types)
                                for r in self._add_node(MainNode("input", f"{p.name_hint}_{k}", ()), [t])]
        self._note_input_names()
        let_values = {}
        for node in post_order(func.body):
            if isinstance(node, Let):
                let_values[node.var] = node.value
        for node in post_order(func.body):
            if node not in self.refs:
                self.refs[node] = self._visit(node, let_values)
        self.out.outputs = list(self.refs[func.body])
        for eid in self.out.outputs:
            entry = self.out.entries[eid]
            if entry.kind == "intermediate":
                entry.kind = "output"
        return self.out

    def _note_input_names(self) -> None:
        """Remember the input names, which constant names (p0, p1, ...) must avoid. Several
        inputs may share a name, as Relay allows: they are set by index (by name the module
        reports the name as ambiguous)."""
        self.input_names = {name for name, _ in self.out.inputs}

    def _const_name(self) -> str:
        """The next free param name p<k>: names of inputs are skipped (a var may be called "p0")."""
        while True:
            name = f"p{self.num_consts}"
            self.num_consts += 1
            if name not in self.input_names:
                return name

    def _visit(self, node, let_values) -> list:
        if isinstance(node, Var):
            if node in let_values:
                return self.refs[let_values[node]]
            raise GraphCodegenError(f"free variable %{node.name_hint} in main: make it a parameter of main")
        if isinstance(node, Constant):
            name = self._const_name()
            ty = TensorType(node.data.shape, node.data.dtype)
            return self._add_node(MainNode("const", name, (), data=node.data), [ty])
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
            raise _unsupported("closures (a function value in main)", node, self.executor)
        for klass, what in _UNSUPPORTED.items():
            if isinstance(node, klass):
                raise _unsupported(what, node, self.executor)
        raise _unsupported(type(node).__name__, node, self.executor)

    def _tuple_item(self, node: TupleGetItem) -> list:
        ty = node.tuple_value.checked_type
        sizes = [len(flatten_tensor_types(f, node, self.executor)) for f in ty.fields]
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
                raise _unsupported(what, call, self.executor)
        raise _unsupported("calls of non-primitive functions (closures)", call, self.executor)

    def _call(self, call: Call, let_values) -> list:
        prim = self._callee(call, let_values)
        inputs = tuple(r for a in call.args for r in self.refs[a])
        out_types = flatten_tensor_types(call.checked_type, call, self.executor)
        self._check_sizes(out_types, lambda: f"the output of {candidate_name(prim)} ({_excerpt(call, 120)})")
        reshape_only = aliases_first_param(prim) and len(inputs) == len(prim.params)
        out = self.out
        key = CCacheKey(prim, out.target)
        compiler = get_te_compiler()
        lowered_before = compiler.stats["lowered"]
        shared = compiler.lower(key, mod_name=out.mod_name)
        cached = self.kernels.get(id(shared))
        if cached is None:
            cached = renamed(shared, kernel_name(prim, out.mod_name, self.kernel_names))
            self.kernels[id(shared)] = cached
            # a pure concatenation may run in place (inplace_concat.py: no kernel at all), so it
            # is compiled with the others only if the executor keeps it
            if compiler.stats["lowered"] > lowered_before and pure_concatenation(prim) is None:
                hand_over_early(cached)
        func_name = cached.func_name
        out.cached[func_name] = cached
        out.prims[func_name] = prim
        node = MainNode("call", self.names.fresh(func_name), (), inputs, func_name, prim,
                        prim_hash=key.structural_key.source_hash)
        refs = self._add_node(node, out_types)
        if reshape_only and len(refs) == 1:
            node.alias_of = inputs[0]
        return refs


__all__ = ["LoweredMain", "MainEntry", "MainNode", "lower_main", "flatten_tensor_types",
           "GraphCodegenError", "CPU_DEVICE_TYPE"]
