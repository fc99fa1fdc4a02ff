"""Blocked quantization (QuantizeLinear / DequantizeLinear with block_size > 0, opset 21): the
scale and zero point have the input's shape except along `axis`, where each value covers
block_size consecutive elements (ceil(dim / block_size) values). They are repeated block_size
times along the axis and cut to the input's length, then the formulas run elementwise:
y = saturate(round_half_even(x / scale) + zero_point) and x = (q - zero_point) * scale.
"""
import numpy as np

from .... import op as _op


def _expand(ctx, param, x_shape, axis, block, what):
    """`param` repeated block_size times along axis and cut to the input's shape there."""
    shape = ctx.static_shape(param, what)
    want = tuple(-(-d // block) if i == axis else d for i, d in enumerate(x_shape))
    if shape != want:
        raise ctx.invalid(f"{what} has shape {shape}; blocks of {block} along axis {axis} of an input of shape "
                          f"{x_shape} need {want}")
    repeated = _op.repeat(param, block, axis)
    if want[axis] * block == x_shape[axis]:
        return repeated
    return _op.strided_slice(repeated, [0] * len(x_shape), list(x_shape))


def _block_layout(ctx, x):
    shape = ctx.static_shape(x, "x")
    axis = int(ctx.attrs.get("axis", 1))
    block = int(ctx.attrs.get("block_size"))
    if not -len(shape) <= axis < len(shape):
        raise ctx.invalid(f"axis {axis} is out of range for a rank-{len(shape)} input")
    if block < 0:
        raise ctx.invalid(f"block_size must be positive, got {block}")
    return shape, axis % len(shape), block


def blocked_quantize(ctx, x, scale, zero_point, out_dtype):
    """QuantizeLinear with block_size > 0 (zero_point None: 0)."""
    shape, axis, block = _block_layout(ctx, x)
    scale = _op.cast(_expand(ctx, scale, shape, axis, block, "y_scale"), "float32")
    q = _op.round(_op.divide(_op.cast(x, "float32"), scale))
    if zero_point is not None:
        q = _op.add(q, _op.cast(_expand(ctx, zero_point, shape, axis, block, "y_zero_point"), "float32"))
    info = np.iinfo(out_dtype)
    return _op.cast(_op.clip(q, float(info.min), float(info.max)), out_dtype)


def blocked_dequantize(ctx, x, scale, zero_point):
    """DequantizeLinear with block_size > 0, in the scale's dtype."""
    shape, axis, block = _block_layout(ctx, x)
    out_dtype = ctx.dtype(scale)
    values = _op.cast(x, "float32")
    if zero_point is not None:
        values = _op.subtract(values, _op.cast(_expand(ctx, zero_point, shape, axis, block, "x_zero_point"), "float32"))
    out = _op.multiply(values, _op.cast(_expand(ctx, scale, shape, axis, block, "x_scale"), "float32"))
    return out if out_dtype == "float32" else _op.cast(out, out_dtype)
