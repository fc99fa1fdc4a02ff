"""RoiAlign's mode="max" as ONNX defines it (and onnxruntime runs it): each bin samples a
sampling_ratio x sampling_ratio grid; at each sample the four bilinear corners are weighted and the
LARGEST weighted corner is the sample's value (not the interpolated sum, which relay's roi_align
max mode takes); the bin is the largest sample. Built from Relay ops with the regions as run-time
values; the sample grid must be fixed (sampling_ratio > 0: the adaptive grid of 0 depends on each
region's size). mode="avg" goes to the RoiAlign converter registered before this module.

Sample positions follow ONNX: y = roi_start + (bin + (i + 0.5) / ratio) * bin_size, a sample
beyond [-1, size] contributes 0, others are clamped to the image as the reference does.
"""
import numpy as np

from .... import op as _op
from ..common import const
from ._registry import TABLE, converter

_AVERAGE = TABLE["RoiAlign"].fn


def _axis_samples(ctx, start, extent, bins, ratio, size, dtype):
    """(low index, high index, low weight, high weight, inside) of each region's samples along one
    axis: (R, bins * ratio) each."""
    c = lambda v: const(np.array(v, dtype))  # noqa: E731
    steps = (np.arange(bins).reshape(-1, 1) + (np.arange(ratio).reshape(1, -1) + 0.5) / ratio).reshape(1, -1)
    pos = _op.add(_op.expand_dims(start, 1), _op.multiply(const(steps.astype(dtype)),
                                                          _op.expand_dims(_op.divide(extent, c(bins)), 1)))
    inside = _op.logical_and(_op.greater_equal(pos, c(-1.0)), _op.less_equal(pos, c(float(size))))
    pos = _op.maximum(pos, c(0.0))
    low = _op.floor(pos)
    at_edge = _op.greater_equal(low, c(size - 1.0))
    low = _op.where(at_edge, c(size - 1.0), low)
    pos = _op.where(at_edge, low, pos)
    high = _op.where(at_edge, low, _op.add(low, c(1.0)))
    frac = _op.subtract(pos, low)
    return _op.cast(low, "int64"), _op.cast(high, "int64"), _op.subtract(c(1.0), frac), frac, inside


@converter("RoiAlign", min_version=10)
def roi_align(ctx, inputs):
    """RoiAlign: mode="max" here (ONNX's semantics), mode="avg" by the earlier converter."""
    if ctx.attrs.get("mode", "avg") != "max":
        return _AVERAGE(ctx, inputs)
    x, rois, batch = inputs
    coord = ctx.attrs.get("coordinate_transformation_mode", "half_pixel" if ctx.since >= 16 else "output_half_pixel")
    if coord not in ("half_pixel", "output_half_pixel"):
        raise ctx.invalid(f"coordinate_transformation_mode={coord!r} must be half_pixel or output_half_pixel")
    ratio = int(ctx.attrs.get("sampling_ratio", 0))
    if ratio <= 0:
        raise ctx.fail("mode='max' with an adaptive sampling grid (sampling_ratio=0) is not supported",
                       "give sampling_ratio > 0")
    out_h, out_w = int(ctx.attrs.get("output_height", 1)), int(ctx.attrs.get("output_width", 1))
    scale = float(ctx.attrs.get("spatial_scale", 1.0))
    n, channels, height, width = ctx.static_shape(x, "X")
    count = ctx.static_shape(rois, "rois")[0]
    dtype = ctx.dtype(x)
    c = lambda v: const(np.array(v, dtype))  # noqa: E731
    offset = 0.5 if coord == "half_pixel" else 0.0
    corners = [_op.subtract(_op.multiply(_op.take(_op.cast(rois, dtype), const(np.int64(k)), axis=1), c(scale)),
                            c(offset)) for k in range(4)]
    extents = [_op.subtract(corners[2], corners[0]), _op.subtract(corners[3], corners[1])]
    if coord != "half_pixel":
        extents = [_op.maximum(e, c(1.0)) for e in extents]
    y0, y1, wy0, wy1, in_y = _axis_samples(ctx, corners[1], extents[1], out_h, ratio, height, dtype)
    x0, x1, wx0, wx1, in_x = _axis_samples(ctx, corners[0], extents[0], out_w, ratio, width, dtype)
    inside = _op.logical_and(_op.expand_dims(in_y, 2), _op.expand_dims(in_x, 1))        # (R, SY, SX)
    images = _op.take(_op.reshape(x, (n, channels, height * width)), _op.cast(batch, "int64"), axis=0,
                      mode="clip")                                                      # (R, C, H*W)
    best = None
    for ys, wy in ((y0, wy0), (y1, wy1)):
        for xs, wx in ((x0, wx0), (x1, wx1)):
            index = _op.add(_op.multiply(_op.expand_dims(ys, 2), const(np.int64(width))), _op.expand_dims(xs, 1))
            weight = _op.where(inside, _op.multiply(_op.expand_dims(wy, 2), _op.expand_dims(wx, 1)), c(0.0))
            values = _op.take(images, _op.reshape(index, (count, -1)), axis=2, batch_dims=1, mode="clip")
            weighted = _op.multiply(values, _op.expand_dims(_op.reshape(weight, (count, -1)), 1))
            best = weighted if best is None else _op.maximum(best, weighted)
    grid = _op.reshape(best, (count, channels, out_h, ratio, out_w, ratio))
    return _op.max(grid, axis=[3, 5])
