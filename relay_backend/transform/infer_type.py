"""InferType / InferTypeLocal: type inference for Relay programs.

Every sub-expression gets a type, possibly with IncompleteType holes, from an explicit-stack walk
(no Python recursion per node, so 10,000-deep chains are fine). Holes are bound by the unifier in
type_solver.py. An op call runs its type relation `op.rel(arg_types, attrs)` as soon as every
argument type is complete, otherwise the call is deferred and retried once more is known.

Module inference goes by strongly connected components of the call graph, callees first: a
function's GlobalVar has its annotated type when all params and the return are annotated, else a
hole shared by the (mutually) recursive uses in its component. Polymorphic functions (type_params)
are instantiated with fresh holes at each call.

Types are attached in place with ir.expr.bind_type, so the returned module holds the same
expression objects as the input (Op singletons are left untyped). Annotations are not rewritten,
but a function without a return annotation gets its inferred one as `ret_type`, as Relay's
InferType does (so typed programs compare structurally equal to annotated Relay ones).
"""
import networkx as nx

from ..errors import TypeInferenceError
from ..ir.adt import (Constructor, Match, PatternConstructor, PatternTuple, PatternVar,
                      PatternWildcard)
from ..ir.expr import (Call, Constant, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                       RefWrite, Tuple, TupleGetItem, Var, bind_type)
from ..ir.functor import all_nodes_post_order
from ..ir.module import TYPE_CHECKER, IRModule
from ..ir.types import (FuncType, IncompleteType, RefType, TensorType, TupleType, TypeCall,
                        type_to_str)
from ..ir.excerpt import excerpt
from .match_warning import warn_unmatched
from ..ir.span import attach_span, spanned_ancestor
from .pass_infra import module_pass, register_pass_factory
from .type_solver import TypeSolver, UnifyError, has_hole, substitute

_BOOL_SCALAR = TensorType((), "bool")
_CONST_TYPES = {}   # (shape, dtype) -> TensorType: types are immutable, so constants share them


def _fully_annotated(fn: Function) -> bool:
    def known(t):
        return t is not None and not isinstance(t, IncompleteType)
    return known(fn.ret_type) and all(known(p.type_annotation) for p in fn.params)


def _annotated_type(fn: Function) -> FuncType:
    return FuncType([p.type_annotation for p in fn.params], fn.ret_type, fn.type_params)


class _Deferred:
    """An op call or tuple projection waiting for its input types to be complete."""

    def __init__(self, node, inputs, out, solve):
        self.node, self.inputs, self.out, self.solve = node, inputs, out, solve


class _Checker:
    """Infers the types of one group of expressions (a call-graph component or a local expr)."""

    def __init__(self, mod, gv_types):
        self.mod = mod
        self.gv_types = gv_types          # GlobalVar -> Type, shared across components
        self.solver = TypeSolver()
        self.memo = {}                    # Expr -> Type (holes until finish())
        self.var_types = {}               # Var -> Type
        self.pending = []                 # _Deferred constraints
        self._ctor_types = {}

    # --- driver ---------------------------------------------------------------------------
    def infer(self, root):
        """Type `root` and everything under it; returns its (possibly incomplete) type."""
        memo, stack = self.memo, [(root, 0)]
        while stack:
            node, stage = stack.pop()
            if stage == 0 and node in memo:
                continue
            for klass in type(node).__mro__:
                handler = _HANDLERS.get(klass)
                if handler is not None:
                    break
            else:
                raise TypeInferenceError(f"InferType: {type(node).__name__} is not a relay expression")
            try:
                handler(self, node, stage, stack)
            except TypeInferenceError as err:   # name where: this node, or its nearest spanned parent
                raise attach_span(err, node.span or spanned_ancestor(
                    stack, lambda entry: entry[0].span if entry[1] > 0 else None))
        return memo[root]

    def _push(self, stack, node, stage, children=()):
        stack.append((node, stage))
        memo = self.memo
        for c in reversed(children):
            if c not in memo:
                stack.append((c, 0))

    def unify(self, expected, actual, context):
        """solver.unify with `context()` (built only on failure) appended to the message."""
        try:
            return self.solver.unify(expected, actual)
        except UnifyError as err:
            raise UnifyError(err.lhs, err.rhs, err.detail, context()) from None

    # --- leaves -----------------------------------------------------------------------------
    def var_type(self, v: Var):
        t = self.var_types.get(v)
        if t is None:
            t = v.type_annotation if v.type_annotation is not None else self.solver.fresh()
            self.var_types[v] = t
            self.memo[v] = t
        return t

    def _var(self, v, stage, stack):
        self.var_type(v)

    def _global_var(self, gv, stage, stack):
        self.memo[gv] = self.gv_types[self._module_gvar(gv)]

    def _module_gvar(self, gv) -> GlobalVar:
        if self.mod is not None:
            if gv in self.mod.functions:
                return gv
            if gv.name_hint in self.mod:
                return self.mod.get_global_var(gv.name_hint)
        where = "the module" if self.mod is not None else "any module (InferTypeLocal got none)"
        raise TypeInferenceError(f"@{gv.name_hint} is not defined in {where}; add the function with "
                                 f"mod[{gv.name_hint!r}] = fn")

    def _constant(self, c, stage, stack):
        key = (c.data.shape, c.data.dtype)
        t = _CONST_TYPES.get(key)
        if t is None:
            t = _CONST_TYPES[key] = TensorType(*key)
        self.memo[c] = t

    def _op(self, op, stage, stack):
        raise TypeInferenceError(
            f"operator {op.name} is used as a value; only calls of operators are typed. Wrap it in "
            f"a function, e.g. fn (%x, %y) {{ {op.name}(%x, %y) }}")

    def _constructor(self, ctor, stage, stack):
        self.memo[ctor] = self.ctor_type(ctor)

    def _type_data(self, ctor):
        defs = self.mod.type_definitions if self.mod is not None else {}
        td = defs.get(ctor.belong_to)
        if td is None:
            td = next((d for d in defs.values() if d.header.name_hint == ctor.belong_to.name_hint), None)
        if td is None or ctor not in td.constructors:
            raise TypeInferenceError(
                f"constructor {ctor.name_hint} belongs to ADT {ctor.belong_to.name_hint}, which is not "
                f"defined in the module; add it with mod.add_type_definition(TypeData(...))")
        return td

    def ctor_type(self, ctor) -> FuncType:
        """fn[type_vars](inputs) -> header[type_vars], from the ADT's TypeData in the module."""
        t = self._ctor_types.get(ctor)
        if t is None:
            td = self._type_data(ctor)
            t = FuncType(ctor.inputs, TypeCall(td.header, td.type_vars), td.type_vars)
            self._ctor_types[ctor] = t
        return t

    # --- calls ------------------------------------------------------------------------------
    def _call(self, call, stage, stack):
        if stage == 0:
            kids = call.args if isinstance(call.op, Op) else (call.op, *call.args)
            return self._push(stack, call, 1, kids)
        memo = self.memo
        arg_types = [memo[a] for a in call.args]
        if isinstance(call.op, Op):
            memo[call] = self._op_call(call, call.op, arg_types)
            return
        callee = self.solver.find(memo[call.op])
        if isinstance(callee, IncompleteType):   # e.g. an unannotated parameter used as a function
            fresh = FuncType([self.solver.fresh() for _ in arg_types], self.solver.fresh())
            self.solver.unify(callee, fresh)
            callee = fresh
        if not isinstance(callee, FuncType):
            raise TypeInferenceError(f"`{excerpt(call.op)}` is called in `{excerpt(call)}` but it is not "
                                     f"a function: its type is {type_to_str(self.solver.resolve(callee))}")
        ft = self.solver.instantiate(callee, call.type_args)
        if len(ft.arg_types) != len(arg_types):
            raise TypeInferenceError(
                f"`{excerpt(call)}` passes {len(arg_types)} argument(s) but `{excerpt(call.op)}` takes "
                f"{len(ft.arg_types)} (its type is {type_to_str(self.solver.resolve(callee))})")
        for i, (param_t, arg_t) in enumerate(zip(ft.arg_types, arg_types)):
            self.unify(param_t, arg_t, lambda i=i: (
                f"argument {i} (`{excerpt(call.args[i])}`) of call `{excerpt(call)}`: the callee expects "
                f"the first type, the argument has the second"))
        memo[call] = ft.ret_type

    def _op_call(self, call, op, arg_types):
        rel = getattr(op, "rel", None)
        if rel is None:
            hint = op.missing("rel") if hasattr(op, "missing") else "it is not registered"
            raise TypeInferenceError(f"operator {op.name!r} in `{excerpt(call)}` cannot be typed: {hint}")
        num = getattr(op, "num_inputs", len(arg_types))
        if 0 <= num != len(arg_types):
            raise TypeInferenceError(f"{op.name} takes {num} argument(s) {list(op.input_names)} but "
                                     f"`{excerpt(call)}` passes {len(arg_types)}")
        solver = self.solver
        if all(solver.is_complete(t) for t in arg_types) or self._fill_inputs(call, op, arg_types):
            return self._run_rel(call, op, [solver.resolve(t) for t in arg_types])
        out = solver.fresh()
        self.pending.append(_Deferred(call, arg_types, out, self._solve_rel))
        return out

    def _fill_inputs(self, call, op, arg_types) -> bool:
        """Give inputs of unknown type the types the op implies for them (an unannotated weight
        from `units`, a bias from the data's channel axis: OpDef.fill_inputs, TVM's relations
        Assign them); True when every input type is then complete."""
        fill = getattr(op, "fill_inputs", None)
        if fill is None:
            return False
        solver = self.solver
        known = [solver.resolve(t) if solver.is_complete(t) else None for t in arg_types]
        implied = fill(known, call.attrs)
        for i, ty in implied.items():
            if known[i] is None:
                names = getattr(op, "input_names", ())
                self.unify(arg_types[i], ty, lambda i=i, names=names: (
                    f"{op.name} implies the first type for its input "
                    f"{names[i] if i < len(names) else i} (`{excerpt(call.args[i])}`) in `{excerpt(call)}`"))
        return bool(implied) and all(solver.is_complete(t) for t in arg_types)

    def _run_rel(self, call, op, arg_types):
        try:
            out = op.rel(arg_types, call.attrs)
        except UnifyError:
            raise
        except TypeInferenceError as err:
            names = list(getattr(op, "input_names", ()))
            if len(names) != len(arg_types):
                names = [f"arg{i}" for i in range(len(arg_types))]
            args = "\n".join(f"    {n}: {type_to_str(t)}" for n, t in zip(names, arg_types))
            msg = str(err)
            if not msg.startswith(f"{op.name}:"):   # relations often name their op already
                msg = f"{op.name}: {msg}"
            raise TypeInferenceError(
                f"{msg}\n  in call `{excerpt(call)}`\n  argument types:\n{args}") from err
        if out is None:
            raise TypeInferenceError(f"{op.name}: the type relation returned None for `{excerpt(call)}`")
        return out

    def _solve_rel(self, d: _Deferred) -> bool:
        solver = self.solver
        if not all(solver.is_complete(t) for t in d.inputs) and \
                not self._fill_inputs(d.node, d.node.op, d.inputs):
            return False
        try:
            out = self._run_rel(d.node, d.node.op, [solver.resolve(t) for t in d.inputs])
            self.unify(d.out, out, lambda: f"the result of `{excerpt(d.node)}`")
        except TypeInferenceError as err:
            raise attach_span(err, d.node.span)
        return True

    # --- tuples, lets, ifs, functions -------------------------------------------------------
    def _tuple(self, tup, stage, stack):
        if stage == 0:
            return self._push(stack, tup, 1, tup.fields)
        self.memo[tup] = TupleType([self.memo[f] for f in tup.fields])

    def _tuple_getitem(self, tgi, stage, stack):
        if stage == 0:
            return self._push(stack, tgi, 1, (tgi.tuple_value,))
        t = self.solver.find(self.memo[tgi.tuple_value])
        if isinstance(t, IncompleteType):
            out = self.solver.fresh()
            self.pending.append(_Deferred(tgi, [t], out, self._solve_getitem))
            self.memo[tgi] = out
        else:
            self.memo[tgi] = self._project(tgi, t)

    def _project(self, tgi, t):
        if not isinstance(t, TupleType):
            raise TypeInferenceError(
                f"`{excerpt(tgi)}` takes field {tgi.index} of `{excerpt(tgi.tuple_value)}`, which is not "
                f"a tuple: its type is {type_to_str(self.solver.resolve(t))}")
        if not 0 <= tgi.index < len(t.fields):
            raise TypeInferenceError(
                f"tuple index {tgi.index} is out of range in `{excerpt(tgi)}`: the tuple has "
                f"{len(t.fields)} field(s), type {type_to_str(self.solver.resolve(t))}; use an index in "
                f"[0, {len(t.fields)})")
        return t.fields[tgi.index]

    def _solve_getitem(self, d: _Deferred) -> bool:
        t = self.solver.find(d.inputs[0])
        if isinstance(t, IncompleteType):
            return False
        self.unify(d.out, self._project(d.node, t), lambda: f"the result of `{excerpt(d.node)}`")
        return True

    def _let(self, let, stage, stack):
        if stage == 0:
            return self._push(stack, let, 1, (let.value,))
        if stage == 1:
            v = let.var
            self.unify(self.var_type(v), self.memo[let.value], lambda: (
                f"in `let %{v.name_hint} = {excerpt(let.value)}`: the first type is %{v.name_hint}'s "
                f"annotation (or its use), the second the value's type"))
            return self._push(stack, let, 2, (let.body,))
        self.memo[let] = self.memo[let.body]

    def _if(self, ite, stage, stack):
        if stage == 0:
            return self._push(stack, ite, 1, (ite.cond,))
        if stage == 1:
            ct = self.memo[ite.cond]
            if self.solver.is_complete(ct):
                ct = self.solver.resolve(ct)
                if ct != _BOOL_SCALAR:
                    raise TypeInferenceError(
                        f"the condition of an If must be a bool scalar `Tensor[(), bool]`, but "
                        f"`{excerpt(ite.cond)}` has type `{type_to_str(ct)}`; compare to get a bool, "
                        f"and reduce or index a tensor condition to a scalar")
            else:
                self.unify(_BOOL_SCALAR, ct, lambda: f"the condition `{excerpt(ite.cond)}` of an If")
            return self._push(stack, ite, 2, (ite.true_branch, ite.false_branch))
        self.memo[ite] = self.unify(self.memo[ite.true_branch], self.memo[ite.false_branch], lambda: (
            f"the branches of `{excerpt(ite)}` disagree: the first type is the then-branch's, the "
            f"second the else-branch's"))

    def _function(self, fn, stage, stack):
        if stage == 0:
            for p in fn.params:
                self.var_type(p)
            return self._push(stack, fn, 1, (fn.body,))
        body_t = self.memo[fn.body]
        ret = fn.ret_type
        if ret is not None:
            self.unify(ret, body_t, lambda: (
                f"the body of `{excerpt(fn)}` does not match its annotated return type (first type: "
                f"annotation, second: body)"))
        else:
            ret = body_t
        self.memo[fn] = FuncType([self.var_types[p] for p in fn.params], ret, fn.type_params)

    # --- references -------------------------------------------------------------------------
    def _ref_create(self, r, stage, stack):
        if stage == 0:
            return self._push(stack, r, 1, (r.value,))
        self.memo[r] = RefType(self.memo[r.value])

    def _ref_read(self, r, stage, stack):
        if stage == 0:
            return self._push(stack, r, 1, (r.ref,))
        cell = self.solver.fresh()
        self.unify(RefType(cell), self.memo[r.ref], lambda: f"`{excerpt(r)}` reads a non-reference")
        self.memo[r] = cell

    def _ref_write(self, r, stage, stack):
        if stage == 0:
            return self._push(stack, r, 1, (r.ref, r.value))
        self.unify(self.memo[r.ref], RefType(self.memo[r.value]), lambda: (
            f"`{excerpt(r)}` writes a value of the second type into a reference of the first"))
        self.memo[r] = TupleType([])

    # --- ADTs -------------------------------------------------------------------------------
    def _match(self, m, stage, stack):
        if stage == 0:
            return self._push(stack, m, 1, (m.data,))
        if stage == 1:
            if not m.clauses:
                raise TypeInferenceError(f"`{excerpt(m)}` has no clauses")
            for clause in m.clauses:
                self._bind_pattern(clause.lhs, self.memo[m.data], m)
            if m.complete:
                warn_unmatched(m, self.mod)
            return self._push(stack, m, 2, [c.rhs for c in m.clauses])
        result = self.memo[m.clauses[0].rhs]
        for i, clause in enumerate(m.clauses[1:], start=1):
            result = self.unify(result, self.memo[clause.rhs], lambda i=i: (
                f"clause {i} of `{excerpt(m)}` has the second type, earlier clauses the first"))
        self.memo[m] = result

    def _bind_pattern(self, pattern, expected, m):
        stack = [(pattern, expected)]
        while stack:
            p, want = stack.pop()
            if isinstance(p, PatternWildcard):
                continue
            if isinstance(p, PatternVar):
                v = p.var
                self.unify(self.var_type(v), want, lambda v=v: (
                    f"pattern variable %{v.name_hint} in `{excerpt(m)}` (first: its annotation, second: "
                    f"the matched type)"))
            elif isinstance(p, PatternConstructor):
                ctor = p.constructor
                td = self._type_data(ctor)
                mapping = {tv: self.solver.fresh() for tv in td.type_vars}
                adt = TypeCall(td.header, [mapping[tv] for tv in td.type_vars])
                self.unify(adt, want, lambda ctor=ctor: (
                    f"pattern {ctor.name_hint}(...) in `{excerpt(m)}` matches {td.header.name_hint} "
                    f"values (first type) but the matched value has the second type"))
                if len(p.patterns) != len(ctor.inputs):
                    raise TypeInferenceError(
                        f"pattern {ctor.name_hint}(...) in `{excerpt(m)}` has {len(p.patterns)} "
                        f"sub-pattern(s) but {ctor.name_hint} has {len(ctor.inputs)} field(s)")
                for sub, field_t in zip(p.patterns, ctor.inputs):
                    stack.append((sub, substitute(field_t, mapping)))
            elif isinstance(p, PatternTuple):
                fields = [self.solver.fresh() for _ in p.patterns]
                self.unify(TupleType(fields), want, lambda: (
                    f"a tuple pattern of {len(p.patterns)} field(s) in `{excerpt(m)}`"))
                stack.extend(zip(p.patterns, fields))
            else:
                raise TypeInferenceError(f"unknown pattern {type(p).__name__} in `{excerpt(m)}`")

    # --- solving and binding ----------------------------------------------------------------
    def solve_pending(self):
        progress = True
        while self.pending and progress:
            progress = False
            batch, self.pending = self.pending, []
            for d in batch:
                if d.solve(d):
                    progress = True
                else:
                    self.pending.append(d)

    def finish(self):
        """Solve what was deferred, check every type is complete, then attach the types."""
        self.solve_pending()
        if self.pending:
            raise self._unresolved_error(self.pending[0])
        solver, resolved, bad = self.solver, [], None
        resolve_memo, hole_memo = {}, {}   # shared: nested types cost their total size once
        for node, t in self.memo.items():
            rt = solver.resolve(t, resolve_memo)
            if has_hole(rt, hole_memo):
                if bad is None or (isinstance(node, Var) and not isinstance(bad, Var)):
                    bad = node
                continue
            resolved.append((node, rt))
        if bad is not None:
            got = type_to_str(solver.resolve(self.memo[bad]))
            raise attach_span(TypeInferenceError(
                f"cannot infer the type of `{excerpt(bad)}` (got `{got}`); annotate it{_hint(bad)}"),
                bad.span)
        for node, t in resolved:
            bind_type(node, t)
            if isinstance(node, Function) and node.ret_type is None and isinstance(t, FuncType):
                node.ret_type = t.ret_type   # as Relay's InferType: a missing annotation is filled

    def _unresolved_error(self, d: _Deferred):
        for i, t in enumerate(d.inputs):
            if not self.solver.is_complete(t):
                arg = d.node.args[i] if isinstance(d.node, Call) else d.node.tuple_value
                return attach_span(TypeInferenceError(
                    f"cannot infer the type of `{excerpt(d.node)}`: its input `{excerpt(arg)}` has unknown "
                    f"type `{type_to_str(self.solver.resolve(t))}`; annotate it{_hint(arg)}"),
                    d.node.span or arg.span)
        return attach_span(TypeInferenceError(f"cannot infer the type of `{excerpt(d.node)}`"), d.node.span)


def _hint(node) -> str:
    if isinstance(node, Var):
        return f", e.g. relay.var({node.name_hint!r}, shape=..., dtype=...)"
    if isinstance(node, Function):
        return " (annotate its parameters and ret_type)"
    return ""


_HANDLERS = {
    Var: _Checker._var, GlobalVar: _Checker._global_var, Constant: _Checker._constant,
    Op: _Checker._op, Constructor: _Checker._constructor, Call: _Checker._call,
    Tuple: _Checker._tuple, TupleGetItem: _Checker._tuple_getitem, Let: _Checker._let,
    If: _Checker._if, Function: _Checker._function, RefCreate: _Checker._ref_create,
    RefRead: _Checker._ref_read, RefWrite: _Checker._ref_write, Match: _Checker._match,
}


# --------------------------------------------------------------------------------------------
# Module-level driver
# --------------------------------------------------------------------------------------------
def _components_callees_first(mod: IRModule) -> list:
    """Strongly connected components of the global call graph, callees before callers."""
    graph = nx.DiGraph()
    names = {gv.name_hint: gv for gv in mod.functions}
    for gv, fn in mod.functions.items():
        graph.add_node(gv)
        for node in all_nodes_post_order(fn):
            if isinstance(node, GlobalVar):
                callee = node if node in mod.functions else names.get(node.name_hint)
                if callee is not None:
                    graph.add_edge(gv, callee)
    dag = nx.condensation(graph)
    order = list(reversed(list(nx.topological_sort(dag))))
    position = {gv: i for i, gv in enumerate(mod.functions)}
    return [sorted(dag.nodes[c]["members"], key=position.get) for c in order]


def infer_module_types(mod: IRModule) -> dict:
    """Type every function of `mod` in place; returns {GlobalVar: FuncType}."""
    gv_types = {}
    for members in _components_callees_first(mod):
        checker = _Checker(mod, gv_types)
        for gv in members:
            fn = mod.functions[gv]
            gv_types[gv] = _annotated_type(fn) if _fully_annotated(fn) else checker.solver.fresh()
        for gv in members:
            fn_t = checker.infer(mod.functions[gv])
            try:
                checker.unify(gv_types[gv], fn_t, lambda gv=gv: (
                    f"the recursive uses of @{gv.name_hint} (first type) disagree with its definition "
                    f"(second type)"))
            except TypeInferenceError as err:
                raise attach_span(err, mod.functions[gv].span)
        checker.finish()
        for gv in members:
            gv_types[gv] = mod.functions[gv].checked_type
            bind_type(gv, gv_types[gv])
    return gv_types


def _infer_type(mod, ctx):
    infer_module_types(mod)
    return mod.copy()


def InferType():
    """The type inference pass (opt_level 0): after it every expression of every function has
    `checked_type`. Types are attached in place; the returned module shares the functions."""
    return module_pass(_infer_type, opt_level=0, name="InferType")


def InferTypeLocal(expr, mod=None):
    """Infer and attach the types of an expression and of its sub-expressions (tvm's
    InferTypeLocal).

    Parameters
    ----------
    expr : Expr
        The expression.
    mod : IRModule, optional
        Supplies the global functions and ADT definitions the expression refers to. Defaults
        to None.

    Returns
    -------
    type : Type
        The type of `expr`.
    """
    gv_types = infer_module_types(mod) if mod is not None else {}
    checker = _Checker(mod, gv_types)
    checker.infer(expr)
    checker.finish()
    return expr.checked_type


register_pass_factory("InferType", InferType)
TYPE_CHECKER["infer"] = infer_module_types   # what IRModule.import_from_std type-checks with
