"""ToGraphNormalForm (tvm.relay.transform): remove let bindings, sharing values by reference.

Guarantee: the result has no `let` except for functions that refer to their own variable
(local recursion keeps `let %f = fn ... ; %f` as the value); every use of a let variable is
replaced by the bound value itself, so a value used twice becomes a shared node of the graph.
Meaning is unchanged for pure programs; a binding evaluated only for its effect (a RefWrite
whose result is unused) disappears, as in Relay. Primitive functions are left alone. Walks let
chains iteratively.
"""
from ..ir.expr import Function, Let
from ..ir.vars import free_vars
from .let_chain import LetChainMutator
from .pass_infra import function_pass
from .to_a_normal_form import keep_type


class GraphNormalizer(LetChainMutator):
    """Substitutes each let variable by its (rewritten) value and drops the binding."""

    def bind_let(self, let):
        value = self.visit(let.value)
        if isinstance(let.value, Function) and let.var in free_vars(let.value):
            value = keep_type(Let(let.var, value, let.var), let.value)
        self.memo_map[let.var] = value

    def rebuild_let(self, let, body):
        return body

    def visit_function(self, fn):
        return fn if fn.is_primitive else super().visit_function(fn)


def to_graph_normal_form(expr):
    """The graph normal form of one expression."""
    return GraphNormalizer().visit(expr)


def ToGraphNormalForm():  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 1): let bindings replaced by shared values."""
    return function_pass(lambda func, mod, ctx: to_graph_normal_form(func), opt_level=1,
                         name="ToGraphNormalForm")


__all__ = ["ToGraphNormalForm", "to_graph_normal_form"]
