"""Gradients of the shape and indexing operators: reshapes pass the gradient back reshaped,
transposes through the inverse permutation, layout_transform through the inverse transform,
concatenate/split/stack are each other's inverses,
broadcast_to/tile/repeat sum the copies, strided_slice places the gradient back at the sliced
positions (zeros elsewhere), take scatters it back by a one-hot product, pad keeps the interior
(edge and reflect modes fold the padding back onto the cells it copied).
"""
import numpy as np

from ...errors import OpNotImplemented
from ...ir.expr import Tuple, TupleGetItem
from ...ir.types import TensorType
from .. import tensor as T
from ..creation import arange
from ..indexing import slice_specs, split, strided_slice
from ..layout import layout_transform
from ..nn.dense import dense
from ..reduce import sum as _sum
from ..registry import register_gradient
from ..transform import concatenate, expand_dims, reshape, reverse, squeeze, transpose
from .helpers import (apply_matrix_along_axis, collapse_sum_to, dilate, fit_axis, scalar, shape_of,
                      ttype, zeros_of)


def _reshape_back(orig, grad):
    return [reshape(grad, shape_of(orig.args[0]))]


for _name in ("reshape", "expand_dims", "squeeze", "nn.batch_flatten"):
    register_gradient(_name, _reshape_back)


def _shape_query_grad(orig, grad):
    """A shape or a size does not change with the values: zero, as Relay's shape_of and
    ndarray_size gradients."""
    return [T.zeros_like(orig.args[0])]


for _name in ("shape_of", "ndarray_size"):
    register_gradient(_name, _shape_query_grad)


@register_gradient("transpose")
def transpose_grad(orig, grad):
    ndim = len(shape_of(orig))
    axes = orig.attrs.axes
    axes = list(reversed(range(ndim))) if axes is None else [a % ndim for a in axes]
    inverse = [0] * ndim
    for i, a in enumerate(axes):
        inverse[a] = i
    return [transpose(grad, inverse)]


@register_gradient("layout_transform")
def layout_transform_grad(orig, grad):
    """layout_transform is a bijection (block sizes divide their axes, no padding), so the
    gradient goes back through the transform from dst_layout to src_layout."""
    attrs = orig.attrs
    if attrs.src_layout == attrs.dst_layout:
        return [grad]
    return [layout_transform(grad, attrs.dst_layout, attrs.src_layout)]


@register_gradient("broadcast_to")
def broadcast_to_grad(orig, grad):
    return [collapse_sum_to(grad, shape_of(orig), shape_of(orig.args[0]))]


@register_gradient("reverse")
def reverse_grad(orig, grad):
    return [reverse(grad, orig.attrs.axis)]


@register_gradient("tile")
def tile_grad(orig, grad):
    """Sum the tiles: view the gradient as (r0, s0, r1, s1, ...) and sum the r axes."""
    shape = shape_of(orig.args[0])
    reps = tuple(orig.attrs.reps)
    rank = max(len(shape), len(reps))
    shape_p = (1,) * (rank - len(shape)) + shape
    reps_p = (1,) * (rank - len(reps)) + reps
    interleaved = [v for pair in zip(reps_p, shape_p) for v in pair]
    g = _sum(reshape(grad, interleaved), axis=list(range(0, 2 * rank, 2)))
    return [reshape(g, shape)]


@register_gradient("repeat")
def repeat_grad(orig, grad):
    shape = shape_of(orig.args[0])
    axis = orig.attrs.axis % len(shape)
    split_shape = shape[:axis] + (shape[axis], orig.attrs.repeats) + shape[axis + 1:]
    return [_sum(reshape(grad, split_shape), axis=[axis + 1])]


@register_gradient("concatenate")
def concatenate_grad(orig, grad):
    """The gradient of the input tuple: the output gradient split where the inputs met."""
    fields = orig.args[0].checked_type.fields
    axis = orig.attrs.axis % len(fields[0].shape)
    points, total = [], 0
    for f in fields[:-1]:
        total += int(f.shape[axis])
        points.append(total)
    if not points:
        return [Tuple([grad])]
    return [split(grad, points, axis).astuple()]


@register_gradient("split")
def split_grad(orig, grad):
    """The output is a tuple; its gradient fields are concatenated back."""
    n = len(orig.checked_type.fields)
    axis = orig.attrs.axis % len(shape_of(orig.args[0]))
    return [concatenate([TupleGetItem(grad, i) for i in range(n)], axis)]


@register_gradient("stack")
def stack_grad(orig, grad):
    n = len(orig.args[0].checked_type.fields)
    axis = orig.attrs.axis % len(shape_of(orig))
    parts = split(grad, n, axis)
    return [Tuple([squeeze(parts[i], axis=[axis]) for i in range(n)])]


@register_gradient("strided_slice")
def strided_slice_grad(orig, grad):
    """Each sliced axis: the gradient dilated by the stride and placed at its first position."""
    x = orig.args[0]
    shape = list(shape_of(x))
    dtype = ttype(x).dtype
    g, gshape = grad, list(shape_of(orig))
    for axis, (b, e, s) in slice_specs(ttype(x), orig.attrs).items():
        positions = range(*slice(b, e, s).indices(shape[axis]))
        if len(positions) == 0:
            return [zeros_of(ttype(x))]
        if positions.step < 0:
            g = reverse(g, axis)
            first = positions[-1]
        else:
            first = positions[0]
        g, dilated = dilate(g, axis, abs(positions.step), tuple(gshape), dtype)
        gshape = list(dilated)
        g = fit_axis(g, axis, first, shape[axis], gshape, dtype)
        gshape[axis] = shape[axis]
    return [g]


@register_gradient("take")
def take_grad(orig, grad):
    """Scatter-add the gradient back to the gathered positions: a one-hot (indices x n) matrix
    product along the axis (indices clipped or wrapped as the forward op did)."""
    data, indices = orig.args
    if orig.attrs.batch_dims != 0:
        raise OpNotImplemented("the gradient of take supports batch_dims=0 only")
    dshape, ishape = shape_of(data), shape_of(indices)
    dtype, idtype = ttype(data).dtype, ttype(indices).dtype
    axis = orig.attrs.axis
    work_shape = (int(np.prod(dshape, dtype=np.int64)),) if axis is None else dshape
    axis = 0 if axis is None else axis % len(dshape)
    n, m = work_shape[axis], int(np.prod(ishape, dtype=np.int64))
    pre = int(np.prod(work_shape[:axis], dtype=np.int64))
    post = int(np.prod(work_shape[axis + 1:], dtype=np.int64))
    idx = reshape(indices, (m,))
    if orig.attrs.mode == "clip":
        idx = T.clip(idx, 0, n - 1)
    elif orig.attrs.mode == "wrap":
        idx = T.floor_mod(idx, scalar(n, idtype))
    onehot = T.cast(T.equal(expand_dims(idx, 1), expand_dims(arange(0, n, 1, dtype=idtype), 0)), dtype)
    g = transpose(reshape(grad, (pre, m, post)), (0, 2, 1))
    g = dense(reshape(g, (pre * post, m)), transpose(onehot))        # (pre*post, n)
    g = transpose(reshape(g, (pre, post, n)), (0, 2, 1))
    return [reshape(g, dshape), zeros_of(TensorType(ishape, idtype))]


def _pad_source_matrix(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """(n, n + before + after) matrix: entry [i, j] = 1 when padded position j copies x[i]."""
    length = n + before + after
    matrix = np.zeros((n, length))
    for j in range(length):
        i = j - before
        if mode == "edge":
            i = min(max(i, 0), n - 1)
        elif mode == "reflect":
            period = 2 * (n - 1) if n > 1 else 1
            i = abs(i) % period if period else 0
            i = period - i if i >= n else i
        if 0 <= i < n:
            matrix[i, j] = 1.0
    return matrix


@register_gradient("nn.pad")
def pad_grad(orig, grad):
    """Interior cells get their gradient (plus, for edge/reflect, that of the padding cells that
    copied them); in constant mode the pad value gets the padding's total."""
    data, value = orig.args
    shape = list(shape_of(data))
    dtype = ttype(data).dtype
    g, gshape = grad, list(shape_of(orig))
    for axis, (before, after) in enumerate(orig.attrs.pad_width):
        if before == 0 and after == 0:
            continue
        if orig.attrs.pad_mode == "constant":
            g = strided_slice(g, [0] * axis + [before], gshape[:axis] + [before + shape[axis]])
        else:
            matrix = _pad_source_matrix(shape[axis], before, after, orig.attrs.pad_mode)
            g = apply_matrix_along_axis(g, axis, matrix, gshape, dtype)
        gshape[axis] = shape[axis]
    if orig.attrs.pad_mode == "constant":
        dvalue = T.subtract(_sum(grad), _sum(g))
    else:
        dvalue = zeros_of(ttype(value))
    return [g, dvalue]


__all__ = ["transpose_grad", "layout_transform_grad", "tile_grad", "strided_slice_grad", "take_grad", "pad_grad"]
