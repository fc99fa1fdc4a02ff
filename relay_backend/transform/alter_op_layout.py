"""AlterOpLayout (tvm.relay.transform.AlterOpLayout): let the target pick the layout of each
operator, e.g. x86 runs conv2d as nn.contrib_conv2d_NCHWc on channel-blocked data and dense as
nn.contrib_dense_pack on a packed weight (strategy/x86_alter_layout.py).

Each call whose op has an "FTVMAlterOpLayout" attribute is offered to it with the target; what
it returns (a new op and attrs) replaces the call, and the new op's FInferCorrectLayout rule
says how the arguments are transformed and which layout the result is in. The new layout then
travels forward through the ops whose rules allow it (elementwise, broadcast, concatenate, ...)
exactly as in ConvertLayout, which shares the rewriter: between two blocked convolutions there
is no transform when their blocks agree, and every consumer that needs the original layout (an
op without a rule, the function's result) gets it back. Run FoldConstant afterwards: the
transforms of constant weights fold into packed constants at compile time.

Guarantee: the result computes the same values (layout_transform is exact). Opt_level 3; needs
types; without a target (None) nothing is altered, as Relay without a target context.
"""
from ..ir.expr import Function
from .convert_layout import LayoutRewriter
from .pass_infra import function_pass
from .rewrite import typed_function


class OpLayoutAlterer(LayoutRewriter):
    """The rewriter whose calls are offered to their op's FTVMAlterOpLayout for `target`."""

    def __init__(self, target):
        super().__init__()
        self.target = target

    def new_op_and_attrs(self, call):
        alter = call.op.get_attr("FTVMAlterOpLayout")
        altered = alter(call, self.target) if alter is not None else None
        return altered if altered is not None else (call.op, call.attrs)


def alter_op_layout(func: Function, target, mod=None) -> Function:
    """`func` with its ops in the layouts `target` prefers (unchanged when target is None)."""
    if target is None:
        return func
    return OpLayoutAlterer(target).visit(typed_function(func, mod))


def AlterOpLayout(target=None):  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 3; requires InferType and CanonicalizeOps, as Relay). `target`
    (e.g. "llvm") chooses the alterations; build(), vm.compile() and AOT pass theirs.

    Parameters
    ----------
    target : None or str or Target, optional
        The target whose preferred layouts the ops take (x86 "llvm": channel-blocked
        convolutions and a packed dense weight); None alters nothing. Defaults to None.

    Returns
    -------
    pass : FunctionPass
        The pass.
    """
    return function_pass(lambda func, mod, ctx: alter_op_layout(func, target, mod), opt_level=3,
                         name="AlterOpLayout", required=["InferType"])


__all__ = ["AlterOpLayout", "alter_op_layout", "OpLayoutAlterer"]
