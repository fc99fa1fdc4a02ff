"""free_vars / bound_vars / all_vars (re-exported by relay_backend.analysis)."""
from ..docstrings import shared_parameters
from .adt import Match, pattern_vars
from .expr import Function, Let, Var
from .functor import all_children, all_nodes_pre_order


def _children_with_pattern_vars(e):
    """all_children, with a Match's pattern variables before each clause body (where a reader
    meets them)."""
    if isinstance(e, Match):
        return (e.data, *(v for c in e.clauses for v in (*pattern_vars(c.lhs), c.rhs)))
    return all_children(e)


def _walk_pre_order(expr):
    """Every sub-expression in pre-order (the order a reader meets the variables)."""
    return all_nodes_pre_order(expr, children=_children_with_pattern_vars)


# the parameter the three queries share (shared_parameters completes their docstrings)
VARIABLE_QUERY_PARAMETERS = {"expr": ("Expr", "The expression to search; function bodies, branches and "
                                              "match clauses are searched too.")}


@shared_parameters(VARIABLE_QUERY_PARAMETERS)
def all_vars(expr) -> list:
    """Every variable in an expression, bound or free, in order of first appearance.

    Returns
    -------
    vars : list of Var
        The variables.
    """
    return [e for e in _walk_pre_order(expr) if isinstance(e, Var)]


@shared_parameters(VARIABLE_QUERY_PARAMETERS)
def bound_vars(expr) -> list:
    """The variables an expression binds (function parameters, let variables, pattern variables),
    in order of appearance.

    Returns
    -------
    vars : list of Var
        The bound variables.
    """
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


@shared_parameters(VARIABLE_QUERY_PARAMETERS)
def free_vars(expr) -> list:
    """The variables an expression uses but does not bind, in order of first use.

    Returns
    -------
    vars : list of Var
        The free variables (for a function body: its inputs).
    """
    bound = set(bound_vars(expr))
    return [v for v in all_vars(expr) if v not in bound]


__all__ = ["free_vars", "bound_vars", "all_vars"]
