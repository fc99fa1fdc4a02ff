"""Substituting variables and renaming binders: `bind` (tvm.relay.bind) and `dedup` (Relay's
DeDup), the building blocks of Inline, the gradient passes and other rewrites that copy code.

`bind(expr, binds)` replaces free variables by expressions; on a Function the bound parameters
are removed from its parameter list. `dedup(expr)` gives every variable `expr` binds (function
parameters, let variables, pattern variables) a fresh Var, so a copy of a function can be
inlined twice without binding one variable twice. Both walk let chains iteratively.
"""
from ..ir.adt import PatternVar
from ..ir.expr import Expr, Function, Var
from .let_chain import LetChainMutator
from .to_a_normal_form import TypedMutator, keep_type


class Renamer(LetChainMutator, TypedMutator):
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
        for p in fn.params:
            self.binder(p)
        return super().visit_function(fn)

    def bind_let(self, let):
        var = self.binder(let.var)
        self._bound[let] = (var, self.visit(let.value))

    def rebuild_let(self, let, body):
        return keep_type(super().rebuild_let(let, body), let)

    def visit_pattern(self, pattern):
        if isinstance(pattern, PatternVar):
            self.binder(pattern.var)
        return super().visit_pattern(pattern)


def bind(expr: Expr, binds: dict) -> Expr:
    """Replace variables of an expression by expressions (tvm.relay.bind).

    Parameters
    ----------
    expr : Expr
        The expression; for a Function, the bound parameters are removed from its parameter
        list.
    binds : dict of Var to Expr
        What to put in place of each variable.

    Returns
    -------
    expr : Expr
        The expression with the variables replaced.
    """
    if isinstance(expr, Function):
        params = [p for p in expr.params if p not in binds]
        body = Renamer(binds).visit(expr.body)
        return Function(params, body, expr.ret_type, expr.type_params, expr.attrs)
    return Renamer(binds).visit(expr)


def dedup(expr: Expr) -> Expr:
    """A copy of an expression in which every bound variable is a fresh Var (types kept), so no
    variable is bound twice.

    Parameters
    ----------
    expr : Expr
        The expression whose binders to rename; free variables are kept as they are.

    Returns
    -------
    expr : Expr
        The renamed copy.
    """
    return Renamer(fresh=True).visit(expr)


__all__ = ["bind", "dedup", "Renamer"]
