"""ONNX CenterCropPad (18): each listed axis cut or zero-padded to the length `shape` gives, about
its centre (a crop starts at (dim - len) // 2; a pad puts (len - dim) // 2 zeros before and the
rest after), as onnx's reference.

A constant `shape` builds strided_slice and nn.pad; one known only at run time builds
dyn.strided_slice and dyn.nn.pad from the same arithmetic on the run-time values (debug
interpreter and VM).
"""
import numpy as np

from .... import op as _op
from ....op import nn as _nn
from ....runtime.limits import check_tensor_size
from ..common import const
from ._registry import converter
from .runtime_shapes import positive_axes, static_length


def _axes(ctx, nd):
    axes = ctx.attrs.ints("axes")
    axes = list(range(nd)) if axes is None else list(axes)
    if any(not -nd <= a < nd for a in axes) or len({a % nd for a in axes}) != len(axes):
        raise ctx.invalid(f"axes {axes} must be distinct axes of an input of rank {nd}")
    return [a % nd for a in axes]


@converter("CenterCropPad", min_version=18)
def center_crop_pad(ctx, inputs):
    x, shape = inputs
    nd = ctx.ndim(x)
    axes = _axes(ctx, nd)
    if static_length(ctx, shape, "shape") != len(axes):
        raise ctx.invalid(f"shape has {static_length(ctx, shape, 'shape')} lengths for {len(axes)} axes")
    value = ctx.maybe_value(shape)
    if value is None:
        return _run_time(ctx, x, shape, axes)
    dims = ctx.static_shape(x, "input")
    want = [int(v) for v in np.asarray(value).reshape(-1)]
    if any(v < 0 for v in want):
        raise ctx.invalid(f"shape {want} has a negative length")
    begin, end, width = [0] * nd, list(dims), [(0, 0)] * nd
    for a, length in zip(axes, want):
        if length < dims[a]:
            begin[a] = (dims[a] - length) // 2
            end[a] = begin[a] + length
        else:
            before = (length - dims[a]) // 2
            width[a] = (before, length - dims[a] - before)
    out_shape = [e - b + w[0] + w[1] for b, e, w in zip(begin, end, width)]
    check_tensor_size(out_shape, ctx.dtype(x), f"{ctx.where()}: the output")
    out = _op.strided_slice(x, begin, end)
    zero = const(np.zeros((), ctx.dtype(x)))
    return _nn.pad(out, tuple(width), zero) if any(w != (0, 0) for w in width) else out


def _run_time(ctx, x, shape, axes):
    """The crop (dyn.strided_slice) then the pad (dyn.nn.pad) for run-time lengths."""
    nd = ctx.ndim(x)
    axes = positive_axes(ctx, const(np.array(axes, "int64")), nd)
    dims = _op.shape_of(x, "int64")
    want = _op.scatter_elements(dims, axes, _op.cast(shape, "int64"), axis=0)   # unlisted axes keep theirs
    zero, two = const(np.int64(0)), const(np.int64(2))
    cut = _op.maximum(_op.subtract(dims, want), zero)
    begin = _op.floor_divide(cut, two)
    end = _op.add(begin, _op.minimum(dims, want))
    out = _op.strided_slice(x, begin, end, const(np.ones(nd, "int64")))
    grow = _op.maximum(_op.subtract(want, dims), zero)
    before = _op.floor_divide(grow, two)
    width = _op.stack([before, _op.subtract(grow, before)], axis=1)
    return _nn.pad(out, width, const(np.zeros((), ctx.dtype(x))))

