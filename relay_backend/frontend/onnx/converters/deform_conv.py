"""ONNX DeformConv (2-D, with or without the mask of modulated deformable convolution), built from
Relay ops. relay's deformable_conv2d is not used: it has no mask, and (as TVM's) it reads a sample
whose position lies outside the image as 0 but clamps the corners of one inside, where ONNX (its
reference samples with GridSample, zero padding, aligned corners) lets each corner outside count 0
on its own, so samples within a pixel of the border differ.

Each kernel tap k of output position (i, j) samples the input at (i * stride - pad_top + kh * dil +
dy, j * stride - pad_left + kw * dil + dx), the offsets (dy, dx) read per offset group from
`offset` (channel g * 2K + 2k for dy, + 1 for dx), bilinearly with zeros outside the image (the
corners outside count 0, as GridSample with zero padding and aligned corners). The sample is scaled
by mask[g * K + k] (1 without a mask) and the columns are contracted with the weights per
convolution group.
"""
import numpy as np

from .... import op as _op
from ..common import const
from ._registry import converter
from .nn import conv_pads, per_dim


def _corner(images, y, x, height, width, weight, dtype):
    """images (N, Cg, H*W) read at integer corners y, x (N, S) with `weight`, 0 outside the image."""
    inside = _op.logical_and(_op.logical_and(_op.greater_equal(y, const(np.int64(0))),
                                             _op.less(y, const(np.int64(height)))),
                             _op.logical_and(_op.greater_equal(x, const(np.int64(0))),
                                             _op.less(x, const(np.int64(width)))))
    index = _op.add(_op.multiply(_op.clip(y, 0, height - 1), const(np.int64(width))), _op.clip(x, 0, width - 1))
    values = _op.take(images, index, axis=2, batch_dims=1, mode="fast")               # (N, Cg, S)
    scale = _op.where(inside, weight, const(np.array(0, dtype)))
    return _op.multiply(values, _op.expand_dims(scale, 1))


@converter("DeformConv", min_version=19)
def deform_conv(ctx, inputs):
    """X, W, offset[, B[, mask]] -> the deformable (modulated with a mask) 2-D convolution."""
    x, w, offset = inputs[:3]
    bias = inputs[3] if len(inputs) > 3 else None
    mask = inputs[4] if len(inputs) > 4 else None
    xs, ws = ctx.static_shape(x, "X"), ctx.static_shape(w, "W")
    if len(xs) != 4:
        raise ctx.fail("only 2-D DeformConv is supported")
    n, channels, height, width = xs
    out_channels, group_channels, kh, kw = ws
    groups, offset_groups = int(ctx.attrs.get("group", 1)), int(ctx.attrs.get("offset_group", 1))
    kernel = per_dim(ctx, "kernel_shape", 2) or (kh, kw)
    strides, dilations = per_dim(ctx, "strides", 2, 1), per_dim(ctx, "dilations", 2, 1)
    pads = conv_pads(ctx, xs[2:], kernel, strides, dilations)
    if tuple(kernel) != (kh, kw) or channels != group_channels * groups or out_channels % groups \
            or channels % offset_groups:
        raise ctx.invalid(f"X {xs}, W {ws}, kernel_shape {kernel}, group {groups} and offset_group {offset_groups} "
                          "do not fit together")
    taps = kh * kw
    out_h, out_w = ctx.static_shape(offset, "offset")[2:]
    positions = out_h * out_w
    dtype = ctx.dtype(x)
    base_y = (np.arange(out_h) * strides[0] - pads[0]).reshape(1, out_h, 1) + \
        (np.arange(kh) * dilations[0]).repeat(kw).reshape(taps, 1, 1)
    base_x = (np.arange(out_w) * strides[1] - pads[1]).reshape(1, 1, out_w) + \
        np.tile(np.arange(kw) * dilations[1], kh).reshape(taps, 1, 1)
    grid = _op.reshape(offset, (n, offset_groups, taps, 2, out_h, out_w))
    dy = _op.take(grid, const(np.int64(0)), axis=3)                                       # (N, G, K, oH, oW)
    dx = _op.take(grid, const(np.int64(1)), axis=3)
    y = _op.add(_op.cast(dy, dtype), const(np.broadcast_to(base_y, (taps, out_h, out_w)).astype(dtype)))
    xc = _op.add(_op.cast(dx, dtype), const(np.broadcast_to(base_x, (taps, out_h, out_w)).astype(dtype)))
    y0, x0 = _op.floor(y), _op.floor(xc)
    fy, fx = _op.subtract(y, y0), _op.subtract(xc, x0)
    one = const(np.array(1, dtype))
    y0, x0 = _op.cast(y0, "int64"), _op.cast(x0, "int64")
    images = _op.reshape(x, (n, offset_groups, channels // offset_groups, height * width))
    modulation = None if mask is None else _op.reshape(_op.cast(mask, dtype), (n, offset_groups, 1, taps * positions))
    columns = []
    for g in range(offset_groups):
        pick = lambda t: _op.reshape(_op.take(t, const(np.int64(g)), axis=1), (n, taps * positions))  # noqa: E731
        image = _op.take(images, const(np.int64(g)), axis=1)                              # (N, Cg, H*W)
        ys, xs_, wy, wx = pick(y0), pick(x0), pick(fy), pick(fx)
        total = None
        for oy, weight_y in ((0, _op.subtract(one, wy)), (1, wy)):
            for ox, weight_x in ((0, _op.subtract(one, wx)), (1, wx)):
                term = _corner(image, _op.add(ys, const(np.int64(oy))), _op.add(xs_, const(np.int64(ox))),
                               height, width, _op.multiply(weight_y, weight_x), dtype)
                total = term if total is None else _op.add(total, term)
        columns.append(total if modulation is None else _op.multiply(total, _op.take(modulation, const(np.int64(g)),
                                                                                         axis=1)))
    sampled = _op.concatenate(columns, 1) if offset_groups > 1 else columns[0]             # (N, C, K * P)
    sampled = _op.reshape(sampled, (n, groups, group_channels * taps, positions))
    weights = _op.reshape(w, (groups, out_channels // groups, group_channels * taps))
    out = _op.einsum([sampled, weights], "ngkp,gok->ngop")
    out = _op.reshape(out, (n, out_channels, out_h, out_w))
    if bias is not None:
        out = _op.add(out, _op.reshape(bias, (1, out_channels, 1, 1)))
    return out
