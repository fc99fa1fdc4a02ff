"""ToCPS / UnCPS (tvm.relay.transform): continuation-passing style.

`to_cps(func, mod)` returns a function taking one more parameter, the continuation
`%k: fn (R') -> answer`, over a new type parameter `answer`; instead of returning a value R it
calls %k with it. Function types inside become CPS types the same way (each function type gains
a continuation argument and returns `answer`). A call of a non-operator `f(args)` becomes
`f(args, fn (%x) { rest })`; an If or Match first binds the rest of the block to a continuation
function that every branch calls; operator calls, tuples, projections, constants and references
stay `let`-bound as they are. Global functions called inside get CPS copies named `<name>_cps`.
`un_cps(func)` wraps a CPS function back: `fn (params) { func(params, fn (%x) { %x }) }`; the
UnCPS pass does so for the functions nothing refers to and keeps the `_cps` copies their CPS
code calls, so ToCPS then UnCPS on a module computes what the module did.

The input is converted to A-normal form first (Relay requires the caller to do that), so blocks
are let chains, rewritten here by a loop from the end of the chain: a 10,000-binding chain is
fine. Types are needed (InferType runs when they are missing). Primitive functions are not
supported, as in Relay.
"""
from ..errors import RelayError
from ..ir.adt import Clause, Constructor, Match, PatternConstructor, PatternTuple, PatternVar
from ..ir.expr import (Call, Constant, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                       RefWrite, Tuple, TupleGetItem, Var)
from ..ir.module import IRModule
from ..ir.types import FuncType, IncompleteType, RefType, TupleType, TypeCall, TypeVar
from .infer_type import InferType
from .inline import call_graph
from .pass_infra import module_pass
from .to_a_normal_form import to_a_normal_form


def cps_type(t, answer: TypeVar):
    """The CPS version of a type: every FuncType (args) -> R becomes (args', fn (R') -> answer)
    -> answer, recursively."""
    if isinstance(t, FuncType):
        args = [cps_type(a, answer) for a in t.arg_types]
        k = FuncType([cps_type(t.ret_type, answer)], answer)
        return FuncType(args + [k], answer, t.type_params, t.type_constraints)
    if isinstance(t, TupleType):
        return TupleType([cps_type(f, answer) for f in t.fields])
    if isinstance(t, RefType):
        return RefType(cps_type(t.value, answer))
    if isinstance(t, TypeCall):
        return TypeCall(t.func, [cps_type(a, answer) for a in t.args])
    return t


def _let_chain(expr):
    """([(var, value)], tail) of a block in A-normal form."""
    bindings = []
    while isinstance(expr, Let):
        bindings.append((expr.var, expr.value))
        expr = expr.body
    return bindings, expr


class _CPS:
    """Converts the functions of one top-level function, sharing its `answer` type variable."""

    def __init__(self, mod: IRModule, answer: TypeVar, cps_globals: dict):
        self.mod = mod
        self.answer = answer
        self.cps_globals = cps_globals
        self.vars = {}

    def var(self, v: Var) -> Var:
        new = self.vars.get(v)
        if new is None:
            t = v._checked_type_ or v.type_annotation
            if t is None or isinstance(t, IncompleteType):
                raise RelayError(f"ToCPS: variable %{v.name_hint} has no inferred type; run InferType")
            new = self.vars[v] = Var(v.name_hint, cps_type(t, self.answer))
        return new

    def atom(self, e):
        if isinstance(e, Var):
            return self.var(e)
        if isinstance(e, GlobalVar):
            return self.global_var(e)
        if isinstance(e, (Constant, Op, Constructor)):
            return e
        raise RelayError(f"ToCPS: expected an atomic expression in A-normal form, got "
                         f"{type(e).__name__}")

    def global_var(self, gv: GlobalVar):
        if gv not in self.mod.functions:
            return gv
        new = self.cps_globals.get(gv)
        if new is None:
            new = self.cps_globals[gv] = GlobalVar(gv.name_hint + "_cps")
            self.mod[new] = to_cps(self.mod[gv], self.mod, self.cps_globals)
        return new

    def function(self, fn: Function) -> Function:
        if fn.is_primitive:
            raise RelayError("ToCPS: primitive functions are not supported (run it before FuseOps)")
        t = fn._checked_type_
        if not isinstance(t, FuncType):
            raise RelayError("ToCPS: the function has no inferred type; run InferType first")
        k = Var("k", FuncType([cps_type(t.ret_type, self.answer)], self.answer))
        params = [self.var(p) for p in fn.params] + [k]
        body = self.block(fn.body, lambda a: Call(k, [a]))
        return Function(params, body, self.answer, fn.type_params, fn.attrs)

    def block(self, expr, kont):
        bindings, tail = _let_chain(expr)
        rest = kont(self.atom(tail))
        for var, value in reversed(bindings):
            rest = self.bind(var, value, rest)
        return rest

    def bind(self, var, value, rest):
        x = self.var(var)
        if isinstance(value, Call) and not isinstance(value.op, (Op, Constructor)):
            args = [self.atom(a) for a in value.args] + [Function([x], rest)]
            return Call(self.atom(value.op), args, value.attrs, value.type_args)
        if isinstance(value, (If, Match)):
            k = Var("k", FuncType([x.type_annotation], self.answer))
            return Let(k, Function([x], rest), self.branch(value, lambda a: Call(k, [a])))
        return Let(x, self.simple(value), rest)

    def branch(self, value, kont):
        if isinstance(value, If):
            return If(self.atom(value.cond), self.block(value.true_branch, kont),
                      self.block(value.false_branch, kont))
        clauses = [Clause(self.pattern(c.lhs), self.block(c.rhs, kont)) for c in value.clauses]
        return Match(self.atom(value.data), clauses, value.complete)

    def pattern(self, p):
        if isinstance(p, PatternVar):
            return PatternVar(self.var(p.var))
        if isinstance(p, PatternConstructor):
            return PatternConstructor(p.constructor, [self.pattern(q) for q in p.patterns])
        if isinstance(p, PatternTuple):
            return PatternTuple([self.pattern(q) for q in p.patterns])
        return p

    def simple(self, value):
        """A value that needs no continuation, with its operands renamed."""
        a = self.atom
        if isinstance(value, Call):
            return Call(value.op, [a(x) for x in value.args], value.attrs, value.type_args)
        if isinstance(value, Tuple):
            return Tuple([a(f) for f in value.fields])
        if isinstance(value, TupleGetItem):
            return TupleGetItem(a(value.tuple_value), value.index)
        if isinstance(value, RefCreate):
            return RefCreate(a(value.value))
        if isinstance(value, RefRead):
            return RefRead(a(value.ref))
        if isinstance(value, RefWrite):
            return RefWrite(a(value.ref), a(value.value))
        if isinstance(value, Function):
            return self.function(value)
        return a(value)


def _typed_anf(func: Function, mod: IRModule) -> Function:
    """`func` in A-normal form with types (ANF keeps the types of a typed input)."""
    if func._checked_type_ is None:
        scratch = mod.copy() if mod is not None else IRModule()
        gv = GlobalVar("__to_cps_input")
        scratch[gv] = func
        func = InferType()(scratch)[gv]
    return to_a_normal_form(func)


def to_cps(func: Function, mod: IRModule = None, cps_globals: dict = None) -> Function:
    """The continuation-passing-style version of a function (tvm.relay.transform.to_cps): it
    takes a continuation as its last parameter and passes its result to it.

    Parameters
    ----------
    func : Function
        The function.
    mod : IRModule, optional
        The module of the global functions it calls; their CPS copies are added to it as
        <name>_cps. Defaults to None (a scratch module).
    cps_globals : dict, optional
        The CPS versions made so far, by global; shared across calls to convert several
        functions. Defaults to None.

    Returns
    -------
    func : Function
        The CPS function, with an extra answer type parameter.
    """
    if not isinstance(func, Function):
        raise RelayError(f"to_cps expects a relay Function, got {type(func).__name__}")
    mod = mod if mod is not None else IRModule()
    answer = TypeVar("answer")
    converter = _CPS(mod, answer, {} if cps_globals is None else cps_globals)
    out = converter.function(_typed_anf(func, mod))
    return Function(out.params, out.body, out.ret_type, (*out.type_params, answer), out.attrs)


def un_cps(func: Function) -> Function:
    """A direct-style wrapper of a CPS function (tvm.relay.transform.un_cps): it calls the CPS
    function with the identity continuation.

    Parameters
    ----------
    func : Function
        A function made by to_cps (a continuation parameter and an answer type parameter
        last).

    Returns
    -------
    func : Function
        A function of the original parameters returning the result directly.
    """
    if not isinstance(func, Function) or not func.params or not func.type_params:
        raise RelayError("un_cps expects a function in CPS: a continuation parameter last and an "
                         "answer type parameter last")
    k_type = func.params[-1]._checked_type_ or func.params[-1].type_annotation
    if not isinstance(k_type, FuncType) or len(k_type.arg_types) != 1:
        raise RelayError(f"un_cps: the last parameter %{func.params[-1].name_hint} must be a "
                         f"continuation fn (T) -> answer")
    ret = k_type.arg_types[0]
    params = [Var(p.name_hint, p._checked_type_ or p.type_annotation) for p in func.params[:-1]]
    x = Var("x", ret)
    others = list(func.type_params[:-1])
    call = Call(func, [*params, Function([x], x, ret)], None, [*others, ret])
    return Function(params, call, ret, others)


def ToCPS():  # noqa: N802 - tvm.relay naming
    """Pass (opt_level 1): each function replaced by its CPS version; callees are looked up in
    the input module, so the order functions are converted in does not matter."""

    def transform(mod, ctx):
        work, shared = mod.copy(), {}
        converted = {gv: to_cps(fn, work, shared) for gv, fn in mod.functions.items()
                     if isinstance(fn, Function) and not fn.is_primitive}
        for gv, fn in converted.items():
            work[gv] = fn
        return work

    return module_pass(transform, opt_level=1, name="ToCPS")


def UnCPS():  # noqa: N802 - tvm.relay naming
    """Module pass (opt_level 1): each CPS function that no function of the module refers to
    (main, and the functions ToCPS converted in place) is wrapped back into direct style. The
    ones the CPS code refers to (the <name>_cps copies ToCPS added) stay in CPS, since their
    callers pass them a continuation; Relay's UnCPS wraps those too and so breaks their calls.
    """

    def transform(mod, ctx):
        graph = call_graph(mod)
        referenced = {callee for _, callee in graph.edges}
        out = mod.copy()
        for gv, fn in mod.functions.items():
            if gv not in referenced and isinstance(fn, Function) and not fn.is_primitive:
                out[gv] = un_cps(fn)
        return out

    return module_pass(transform, opt_level=1, name="UnCPS")


__all__ = ["ToCPS", "UnCPS", "to_cps", "un_cps", "cps_type"]
