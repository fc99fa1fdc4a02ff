"""DefuseOps (tvm.relay.transform): the inverse of FuseOps.

Guarantee: every call of a primitive function literal (Primitive=1, as FuseOps writes them) is
replaced by a fresh copy of the function's body with its parameters bound to the call's
arguments, so DefuseOps(FuseOps(m)) has the operator calls of m again (structurally equal to m
for programs FuseOps only grouped). Meaning is unchanged.
"""
from ..ir.expr import Function
from ..ir.functor import ExprMutator
from .pass_infra import function_pass
from .substitute import bind, dedup


class Defuser(ExprMutator):
    def visit_call(self, call):
        if isinstance(call.op, Function) and call.op.is_primitive:
            args = [self.visit(a) for a in call.args]
            fresh = dedup(call.op)
            return self.visit(bind(fresh.body, dict(zip(fresh.params, args))))
        return super().visit_call(call)


def defuse_ops(expr):
    """`expr` with its calls of primitive functions inlined."""
    return Defuser().visit(expr)


def DefuseOps():  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 3, as TVM)."""
    return function_pass(lambda func, mod, ctx: defuse_ops(func), opt_level=3, name="DefuseOps")


__all__ = ["DefuseOps", "defuse_ops"]
