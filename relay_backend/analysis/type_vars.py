"""free_type_vars / bound_type_vars / all_type_vars (tvm.relay.analysis), for an expression or
a type.

The type variables of an expression are those in its variables' annotations and its calls'
explicit type arguments; a function's type parameters are bound, and so are an ADT's type
variables where one of its constructors is used (looked up in `mod`). In a type, a FuncType's
type parameters are bound. Each list is in order of first appearance, without repeats.
"""
from ..docstrings import shared_parameters
from ..errors import RelayError
from ..ir.adt import Constructor
from ..ir.expr import Call, Expr, Function, Var
from ..ir.functor import all_nodes_pre_order
from ..ir.types import FuncType, RefType, TupleType, Type, TypeCall, TypeVar


class _Collector:
    """Records type variables in order of appearance, and which of them are bound."""

    def __init__(self, mod=None):
        self.mod = mod
        self.all = {}     # dict as an ordered set
        self.bound = {}

    def bind(self, tvs) -> None:
        for tv in tvs:
            self.all.setdefault(tv, None)
            self.bound.setdefault(tv, None)

    def visit_type(self, ty) -> None:
        stack = [ty]
        while stack:
            t = stack.pop()
            if isinstance(t, TypeVar):
                self.all.setdefault(t, None)
            elif isinstance(t, FuncType):
                self.bind(t.type_params)
                stack.extend(reversed((*t.arg_types, t.ret_type)))
            elif isinstance(t, TupleType):
                stack.extend(reversed(t.fields))
            elif isinstance(t, TypeCall):
                stack.extend(reversed(t.args))
            elif isinstance(t, RefType):
                stack.append(t.value)

    def visit_expr(self, expr: Expr) -> None:
        for node in all_nodes_pre_order(expr):
            if isinstance(node, Function):
                self.bind(node.type_params)
            elif isinstance(node, Var) and node.type_annotation is not None:
                self.visit_type(node.type_annotation)
            elif isinstance(node, Call):
                for t in node.type_args:
                    self.visit_type(t)
            elif isinstance(node, Constructor):
                self.bind(self._adt_type_vars(node))

    def _adt_type_vars(self, ctor: Constructor):
        if self.mod is None or ctor.belong_to not in self.mod.type_definitions:
            raise RelayError(f"type variables of constructor {ctor.name_hint}: its ADT "
                             f"{ctor.belong_to.name_hint} is not defined; pass mod= holding it")
        return self.mod.type_definitions[ctor.belong_to].type_vars


def _collect(expr_or_type, mod) -> _Collector:
    collector = _Collector(mod)
    if isinstance(expr_or_type, Type):
        collector.visit_type(expr_or_type)
    elif isinstance(expr_or_type, Expr):
        collector.visit_expr(expr_or_type)
    else:
        raise RelayError(f"type variable analysis takes a relay expression or type, got "
                         f"{type(expr_or_type).__name__}")
    return collector


# the parameters the three queries share (shared_parameters completes their docstrings)
TYPE_VAR_QUERY_PARAMETERS = {
    "expr": ("Expr or Type", "The expression or type to search."),
    "mod": ("IRModule, optional", "The module defining the ADTs whose constructors `expr` uses (their "
                                  "type parameters count as used there)."),
}


@shared_parameters(TYPE_VAR_QUERY_PARAMETERS)
def free_type_vars(expr, mod=None) -> list:
    """The type variables an expression or type uses but does not bind
    (tvm.relay.analysis.free_type_vars).

    Returns
    -------
    type_vars : list of TypeVar
        The free type variables, in order of first appearance.
    """
    c = _collect(expr, mod)
    return [tv for tv in c.all if tv not in c.bound]


@shared_parameters(TYPE_VAR_QUERY_PARAMETERS)
def bound_type_vars(expr, mod=None) -> list:
    """The type variables an expression or type binds: function type parameters, FuncType
    parameters, ADT parameters (tvm.relay.analysis.bound_type_vars).

    Returns
    -------
    type_vars : list of TypeVar
        The bound type variables.
    """
    return list(_collect(expr, mod).bound)


@shared_parameters(TYPE_VAR_QUERY_PARAMETERS)
def all_type_vars(expr, mod=None) -> list:
    """Every type variable of an expression or type, bound or free
    (tvm.relay.analysis.all_type_vars).

    Returns
    -------
    type_vars : list of TypeVar
        The type variables.
    """
    return list(_collect(expr, mod).all)


__all__ = ["free_type_vars", "bound_type_vars", "all_type_vars"]
