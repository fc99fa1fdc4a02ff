"""free_vars / bound_vars / all_vars (re-exported by relay_backend.analysis)."""
from .adt import Match, pattern_vars
from .expr import Function, Let, Var
from .functor import all_children


def _walk_pre_order(expr):
    """Every sub-expression in pre-order (the order a reader meets the variables)."""
    seen, stack = set(), [expr]
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        yield e
        kids = all_children(e)
        if isinstance(e, Match):  # pattern variables count as appearing before their clause body
            kids = (e.data, *(v for c in e.clauses for v in (*pattern_vars(c.lhs), c.rhs)))
        stack.extend(reversed(kids))


def all_vars(expr) -> list:
    """Every Var in expr, bound or free, in order of first appearance."""
    return [e for e in _walk_pre_order(expr) if isinstance(e, Var)]


def bound_vars(expr) -> list:
    """Vars bound in expr (function params, let vars, pattern vars), in order of appearance."""
    out, seen = [], set()
    for e in _walk_pre_order(expr):
        if isinstance(e, Function):
            new = e.params
        elif isinstance(e, Let):
            new = (e.var,)
        elif isinstance(e, Match):
            new = [v for c in e.clauses for v in pattern_vars(c.lhs)]
        else:
            continue
        for v in new:
            if v not in seen:
                seen.add(v)
                out.append(v)
    return out


def free_vars(expr) -> list:
    """Vars used in expr but not bound in it, in order of first use."""
    bound = set(bound_vars(expr))
    return [v for v in all_vars(expr) if v not in bound]


__all__ = ["free_vars", "bound_vars", "all_vars"]
