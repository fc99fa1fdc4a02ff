"""PoolBeforePointwiseConv: average-pool before a 1x1 convolution instead of after it.

    nn.avg_pool2d(nn.conv2d(x, w))   ->   nn.conv2d(nn.avg_pool2d(x), w)      (w 1x1)

A 1x1 convolution with stride 1, no padding and no dilation maps every pixel's channels by the
same linear map (per group), and an unpadded average pool averages every channel's pixels by
the same weights, so the two commute. Pooling first runs the convolution on the pooled map: a
2x2 / stride 2 pool (DenseNet's transition layers) leaves the convolution a quarter of its
multiply-adds and the pool reads the convolution's input instead of its output. The results
differ only by float rounding (the sums run in another order), so the pass runs at opt_level 3,
with FoldScaleAxis and AlterOpLayout.

Applies when the convolution's only consumer is the pool, both use the same data layout (a
channel-first or channel-last one), the pool has no padding, dilation 1 and ceil_mode off, and
the convolution's output dtype is its input's float dtype. Types are inferred if missing.
"""
from collections import Counter

from ..ir.expr import Call, Function
from ..ir.functor import ExprMutator, dataflow_children, post_order
from ..ir.module import IRModule
from ..ir.types import TensorType
from ..op.registry import OpDef, get as get_op
from .pass_infra import function_pass
from .rewrite import typed_function


def _op_name(expr) -> str:
    return expr.op.name if isinstance(expr, Call) and isinstance(expr.op, OpDef) else ""


def _is_pointwise(conv: Call) -> bool:
    """A 1x1, stride-1, unpadded, undilated float conv2d whose output keeps the input dtype."""
    attrs = conv.attrs
    data_type, weight_type = (getattr(a, "_checked_type_", None) for a in conv.args)
    if not (isinstance(data_type, TensorType) and isinstance(weight_type, TensorType)):
        return False
    kernel = tuple(attrs.kernel_size) if attrs.kernel_size is not None else None
    if kernel is None and attrs.kernel_layout == "OIHW":
        kernel = tuple(weight_type.shape[2:])
    return (kernel == (1, 1) and tuple(attrs.strides) == (1, 1) and tuple(attrs.dilation) == (1, 1)
            and not any(attrs.padding) and attrs.out_dtype in ("", data_type.dtype)
            and data_type.dtype.startswith("float") and attrs.out_layout in ("", attrs.data_layout))


def _pool_commutes(pool: Call, conv: Call) -> bool:
    attrs = pool.attrs
    return (attrs.layout == conv.attrs.data_layout and attrs.out_layout in ("", attrs.layout)
            and not any(attrs.padding) and tuple(attrs.dilation) == (1, 1) and not attrs.ceil_mode)


def _use_counts(func: Function) -> Counter:
    """How many times each dataflow node of `func` is used (an argument, or the result)."""
    uses = Counter({id(func.body): 1})
    for node in post_order(func.body):
        for child in dataflow_children(node):
            uses[id(child)] += 1
    return uses


class _PoolSwapper(ExprMutator):
    """Rewrites avg_pool2d(conv2d 1x1) bottom-up, deciding on the original (typed) nodes."""

    def __init__(self, uses: Counter):
        super().__init__()
        self.uses = uses

    def visit_call(self, call):
        new = super().visit_call(call)
        conv = call.args[0] if _op_name(call) == "nn.avg_pool2d" else None
        if conv is None or _op_name(conv) != "nn.conv2d" or self.uses[id(conv)] != 1 \
                or not _is_pointwise(conv) or not _pool_commutes(call, conv):
            return new
        new_conv = new.args[0]
        data, weight = new_conv.args
        pooled = Call(get_op("nn.avg_pool2d"), [data], new.attrs, span=call.span)
        return Call(new_conv.op, [pooled, weight], new_conv.attrs, span=conv.span)


def pool_before_pointwise_conv(func: Function, mod: IRModule = None) -> Function:
    """The PoolBeforePointwiseConv rewrite of one function (types inferred if missing).

    Parameters
    ----------
    func : Function
        The function to rewrite.
    mod : IRModule, optional
        Its module, for type inference. Defaults to None.

    Returns
    -------
    rewritten : Function
        The function with every eligible pool moved before its 1x1 convolution.
    """
    if func.body._checked_type_ is None:
        func = typed_function(Function(func.params, func.body, func.ret_type, func.type_params, func.attrs), mod)
    return _PoolSwapper(_use_counts(func)).visit(func)


def PoolBeforePointwiseConv():  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 3): avg_pool2d(conv2d 1x1) -> conv2d 1x1(avg_pool2d) (module doc)."""

    def transform(func, mod, ctx):
        return pool_before_pointwise_conv(func, mod)

    return function_pass(transform, opt_level=3, name="PoolBeforePointwiseConv", required=["InferType"])


__all__ = ["PoolBeforePointwiseConv", "pool_before_pointwise_conv"]
