"""Gradients of the issue-20 indexing operators TVM v0.18 registers one for: gather_nd (its
gradient scatters the output gradient back with scatter_nd's "add", as Relay's) and one_hot (the
output gradient summed where the value was on_value, and where it was off_value), reshape_like
and contrib_reverse_reshape (reshaped back) and collapse_sum_like/_to (broadcast back). The other gather/scatter ops, the
dyn forms, broadcast_to_like, full_like and slice_like have no gradient in Relay and are listed
in NOT_DIFFERENTIABLE.
"""
from .. import tensor as T
from ..creation import arange
from ..gathering import GatherNDAttrs
from ..one_hot_encoding import one_hot
from ..reduce import sum as _sum
from ..indexing import take
from ..like import broadcast_to_like, reshape_like
from ..registry import register_gradient
from ..scattering import scatter_nd
from ..transform import broadcast_to, reshape, stack
from .helpers import scalar, shape_of, ttype


def _read_positions(indices, m: int, b: int, data_shape, idx_shape):
    """The index tuples gather_nd read, as an (b + m, Y...) tensor: the batch coordinates, then
    each index made valid by the read rule (from the end, clamped), so scatter_nd writes the
    gradient exactly where the forward op read."""
    dtype = ttype(indices).dtype
    if dtype.startswith("float"):
        indices, dtype = T.cast(indices, "int32"), "int32"
    y_shape = idx_shape[1:]
    rows = []
    for k in range(b):
        coord = arange(0, data_shape[k], 1, dtype=dtype)
        coord = reshape(coord, (data_shape[k],) + (1,) * (len(y_shape) - k - 1))
        rows.append(broadcast_to(coord, y_shape))
    for c in range(m):
        n = data_shape[b + c]
        idx = take(indices, scalar(c, "int32"), axis=0)
        idx = T.where(T.less(idx, scalar(0, dtype)), T.add(idx, scalar(n, dtype)), idx)
        rows.append(T.clip(idx, 0, max(n - 1, 0)))
    return stack(rows, axis=0)


@register_gradient("gather_nd")
def gather_nd_grad(orig, grad):
    """[scatter_nd(zeros_like(data), read positions, grad, "add"), zeros_like(indices)]."""
    data, indices = orig.args
    attrs = orig.attrs if orig.attrs is not None else GatherNDAttrs()
    data_shape, idx_shape = shape_of(data), shape_of(indices)
    m, b = int(idx_shape[0]), attrs.batch_dims
    positions = _read_positions(indices, m, b, data_shape, idx_shape)
    return [scatter_nd(T.zeros_like(data), positions, grad, mode="add"), T.zeros_like(indices)]



@register_gradient("one_hot")
def one_hot_grad(orig, grad):
    """[0, sum of grad where on, sum of grad where off]: the positions come from the indices
    (a bool one_hot), so they are right even when on_value equals off_value."""
    indices, on_value, off_value = orig.args
    attrs = orig.attrs
    on_mask = one_hot(indices, scalar(True, "bool"), scalar(False, "bool"), attrs.depth, attrs.axis, "bool")
    zeros = T.zeros_like(grad)
    grad_on = _sum(T.where(on_mask, grad, zeros))
    grad_off = _sum(T.where(on_mask, zeros, grad))
    return [T.zeros_like(indices), T.cast(grad_on, ttype(on_value).dtype), T.cast(grad_off, ttype(off_value).dtype)]


@register_gradient("reshape_like")
def reshape_like_grad(orig, grad):
    """[grad reshaped like data, 0]."""
    data, shape_like = orig.args
    return [reshape_like(grad, data), T.zeros_like(shape_like)]


def _collapse_grad(orig, grad):
    """[grad broadcast back to data's shape, 0 for the shape argument]."""
    data, target = orig.args
    return [broadcast_to_like(grad, data), T.zeros_like(target)]


for _name in ("collapse_sum_like", "collapse_sum_to"):
    register_gradient(_name, _collapse_grad)


@register_gradient("contrib_reverse_reshape")
def reverse_reshape_grad(orig, grad):
    """[grad reshaped like data] (a reshape moves no element), as Relay's."""
    return [reshape_like(grad, orig.args[0])]
