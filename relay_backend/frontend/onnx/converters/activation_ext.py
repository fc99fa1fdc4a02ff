"""ONNX activations built from existing Relay ops: Hardmax, Shrink, Mish and Celu (TVM v0.18's
frontend converts them the same way: Hardmax as one_hot of argmax, the others elementwise).

Hardmax before opset 13 works on the input coerced to 2-D at `axis` (dims before it form the rows,
the rest the columns), as Softmax of those opsets; from 13 it works along `axis` alone. Ties pick
the first index, as argmax does.
"""
import numpy as np

from .... import op as _op
from ..common import const
from ._registry import converter
from .math import scalar


@converter("Hardmax")
def hardmax(ctx, inputs):
    """1 at the first maximum along the axis (of the 2-D coerced input before opset 13), 0 elsewhere."""
    x = inputs[0]
    shape = ctx.static_shape(x, "input")
    rank = len(shape)
    axis = int(ctx.attrs.get("axis", -1 if ctx.since >= 13 else 1))
    if not -rank <= axis < max(rank, 1):
        raise ctx.invalid(f"axis {axis} is out of range for a rank-{rank} input")
    axis %= max(rank, 1)
    if ctx.since < 13:
        rows = int(np.prod(shape[:axis], dtype=np.int64))
        flat = _op.reshape(x, (rows, int(np.prod(shape[axis:], dtype=np.int64))))
        return _op.reshape(_hardmax_along(ctx, flat, 1, x), shape)
    return _hardmax_along(ctx, x, axis, x)


def _hardmax_along(ctx, x, axis, like):
    depth = ctx.static_shape(x, "input")[axis]
    index = _op.argmax(x, axis=axis)
    return _op.one_hot(index, scalar(ctx, 1, like), scalar(ctx, 0, like), depth, axis, ctx.dtype(like))


@converter("Shrink", min_version=9)
def shrink(ctx, inputs):
    """x - bias above lambd, x + bias below -lambd, 0 between."""
    x = inputs[0]
    lambd, bias = float(ctx.attrs.get("lambd", 0.5)), float(ctx.attrs.get("bias", 0.0))
    dtype = ctx.dtype(x)
    zero = const(np.array(0, dtype))
    above = _op.greater(x, const(np.array(lambd, dtype)))
    below = _op.less(x, const(np.array(-lambd, dtype)))
    shifted_down = _op.subtract(x, const(np.array(bias, dtype)))
    shifted_up = _op.add(x, const(np.array(bias, dtype)))
    return _op.where(above, shifted_down, _op.where(below, shifted_up, zero))


@converter("Mish", min_version=18)
def mish(ctx, inputs):
    """x * tanh(softplus(x)), softplus(x) = log(1 + exp(x))."""
    x = inputs[0]
    softplus = _op.log(_op.add(_op.exp(x), scalar(ctx, 1, x)))
    return _op.multiply(x, _op.tanh(softplus))


@converter("Celu", min_version=12)
def celu(ctx, inputs):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    x = inputs[0]
    alpha = float(ctx.attrs.get("alpha", 1.0))
    if alpha == 0:
        raise ctx.invalid("alpha must not be 0 (Celu divides by it)")
    zero = scalar(ctx, 0, x)
    negative_part = _op.multiply(scalar(ctx, alpha, x),
                                 _op.subtract(_op.exp(_op.divide(x, scalar(ctx, alpha, x))), scalar(ctx, 1, x)))
    return _op.add(_op.maximum(x, zero), _op.minimum(negative_part, zero))
