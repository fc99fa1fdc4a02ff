"""Substituting variables and renaming binders: `bind` (tvm.relay.bind) and `dedup` (Relay's
DeDup), the building blocks of Inline, the gradient passes and other rewrites that copy code.

`bind(expr, binds)` replaces free variables by expressions; on a Function the bound parameters
are removed from its parameter list. `dedup(expr)` gives every variable `expr` binds (function
parameters, let variables, pattern variables) a fresh Var, so a copy of a function can be
inlined twice without binding one variable twice. Both walk let chains iteratively.
"""
from ..ir.adt import Clause, Match, PatternConstructor, PatternTuple, PatternVar
from ..ir.expr import Expr, Function, Var
from .let_chain import LetChainMutator
from .to_a_normal_form import keep_type


class Renamer(LetChainMutator):
    """Maps variables through `mapping`; with fresh=True every binder gets a new Var first."""

    def __init__(self, mapping=None, fresh: bool = False):
        super().__init__()
        self.mapping = dict(mapping or {})
        self.fresh = fresh

    def visit_var(self, var):
        return self.mapping.get(var, var)

    def binder(self, var: Var) -> Var:
        if not self.fresh:
            return var
        new = keep_type(Var(var.name_hint, var.type_annotation), var)
        self.mapping[var] = new
        return new

    def visit_function(self, fn):
        if fn.is_primitive:
            return fn
        params = [self.binder(p) for p in fn.params]
        body = self.visit(fn.body)
        if body is fn.body and all(n is o for n, o in zip(params, fn.params)):
            return fn
        return keep_type(Function(params, body, fn.ret_type, fn.type_params, fn.attrs), fn)

    def bind_let(self, let):
        var = self.binder(let.var)
        self._bound[let] = (var, self.visit(let.value))

    def rebuild_let(self, let, body):
        return keep_type(super().rebuild_let(let, body), let)

    def visit_match(self, m):
        data = self.visit(m.data)
        clauses = [Clause(self._pattern(c.lhs), self.visit(c.rhs)) for c in m.clauses]
        if data is m.data and all(n.lhs is o.lhs and n.rhs is o.rhs for n, o in zip(clauses, m.clauses)):
            return m
        return keep_type(Match(data, clauses, m.complete), m)

    def _pattern(self, p):
        if isinstance(p, PatternVar):
            v = self.binder(p.var)
            return p if v is p.var else PatternVar(v)
        if isinstance(p, PatternConstructor):
            subs = [self._pattern(q) for q in p.patterns]
            return p if all(n is o for n, o in zip(subs, p.patterns)) else PatternConstructor(p.constructor, subs)
        if isinstance(p, PatternTuple):
            subs = [self._pattern(q) for q in p.patterns]
            return p if all(n is o for n, o in zip(subs, p.patterns)) else PatternTuple(subs)
        return p

    def visit_call(self, call):
        return keep_type(super().visit_call(call), call)

    def visit_tuple(self, tup):
        return keep_type(super().visit_tuple(tup), tup)

    def visit_tuple_getitem(self, tgi):
        return keep_type(super().visit_tuple_getitem(tgi), tgi)

    def visit_if(self, ite):
        return keep_type(super().visit_if(ite), ite)


def bind(expr: Expr, binds: dict) -> Expr:
    """`expr` with the variables in `binds` replaced (tvm.relay.bind); a Function loses the
    parameters that are bound."""
    if isinstance(expr, Function):
        params = [p for p in expr.params if p not in binds]
        body = Renamer(binds).visit(expr.body)
        return Function(params, body, expr.ret_type, expr.type_params, expr.attrs)
    return Renamer(binds).visit(expr)


def dedup(expr: Expr) -> Expr:
    """A copy of `expr` in which every bound variable is a fresh Var (types kept)."""
    return Renamer(fresh=True).visit(expr)


__all__ = ["bind", "dedup", "Renamer"]
