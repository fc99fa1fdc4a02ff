"""Building blocks shared by the gradient definitions: static shapes of typed expressions,
reducing a broadcast gradient back to an input's shape, dilating a tensor along an axis,
undoing a reduction's dropped axes, and the transposed 2-D convolution that conv2d and the
pooling gradients share.

A gradient function runs after type inference: `orig` (the forward call) and its arguments
carry `checked_type`, and the output gradient has the type of `orig`. Rules that compute with
shapes need them static: an `Any` dim or a size variable there is an OpNotImplemented naming the
op and the shape. Elementwise rules whose gradient keeps its input's type (relu, exp, a binary op
without broadcasting, zero gradients) build no shape, so they also serve symbolic programs.
"""
import dataclasses

import numpy as np

from ...errors import OpNotImplemented
from ...ir.expr import Call, const
from ...ir.dims import is_static_shape, shape_key, shape_to_str
from ...ir.expr import TupleGetItem
from ...ir.types import TensorType, TupleType
from .. import reduce as _reduce
from .. import transform as _transform
from ..creation import zeros
from ..layout import layout_transform
from ..nn.conv import conv2d
from ..nn.misc import pad


def ttype(expr) -> TensorType:
    """The inferred tensor type of a (typed) expression."""
    t = expr.checked_type
    if not isinstance(t, TensorType):
        raise OpNotImplemented(f"gradient: expected a tensor, got {t}")
    return t


def shape_of(expr, what: str = "gradient") -> tuple:
    """The static shape (ints) of a typed tensor expression."""
    shape = ttype(expr).shape
    if not is_static_shape(shape):
        raise OpNotImplemented(f"{what} needs static shapes, got {shape_to_str(shape)}: this gradient "
                               f"computes with the shape, so bind its size variables (or Any dims) first")
    return tuple(int(d) for d in shape)


def scalar(value, dtype: str):
    """A scalar constant of `dtype`."""
    return const(np.array(value, dtype=dtype), dtype=dtype)


def filled_of(t, fill: int, like=None):
    """Zeros (fill 0) or ones (fill 1) of type `t` (a tensor, or a tuple of them). With `like`,
    an expression of type `t`, they are zeros_like/ones_like of it, so a shape known only at run
    time is fine; without, `t` must be static."""
    if isinstance(t, TupleType):
        from ...ir.expr import Tuple
        return Tuple([filled_of(f, fill, None if like is None else TupleGetItem(like, i))
                      for i, f in enumerate(t.fields)])
    from ..creation import ones
    from ..tensor import ones_like, zeros_like
    if like is not None:
        return (zeros_like if fill == 0 else ones_like)(like)
    if not is_static_shape(t.shape):
        raise OpNotImplemented(f"gradient: {'zeros' if fill == 0 else 'ones'} of type {t} need a static shape")
    return (zeros if fill == 0 else ones)(tuple(int(d) for d in t.shape), t.dtype)


def zeros_of(t, like=None):
    """Zeros of type `t` (see filled_of)."""
    return filled_of(t, 0, like)


def collapse_sum_to(grad, from_shape, to_shape):
    """The gradient of a broadcast: `grad` (of from_shape) summed over the axes that broadcasting
    added or stretched, reshaped to to_shape (Relay's collapse_sum_to)."""
    from_shape, to_shape = tuple(from_shape), tuple(to_shape)
    if from_shape == to_shape:
        return grad
    lead = len(from_shape) - len(to_shape)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(to_shape)
                                if d == 1 and from_shape[lead + i] != 1]
    if axes:
        grad = _reduce.sum(grad, axis=axes)
    return _transform.reshape(grad, to_shape)


def collapse_like(grad, orig, arg):
    """collapse_sum_to(grad, shape of orig, shape of arg); `grad` itself when the two shapes are
    the same (symbolic ones included: nothing was broadcast)."""
    if shape_key(ttype(orig).shape) == shape_key(ttype(arg).shape):
        return grad
    return collapse_sum_to(grad, shape_of(orig), shape_of(arg))


def reduce_axes(attrs, ndim: int) -> list:
    """The axes a reduction with (axis, exclude) attrs removes, sorted and non-negative."""
    if attrs.axis is None:
        axes = list(range(ndim))
    else:
        axes = sorted({a + ndim if a < 0 else a for a in attrs.axis})
    if attrs.exclude:
        axes = [a for a in range(ndim) if a not in axes]
    return axes


def unreduce(expr, axes, keepdims: bool):
    """A reduction's result with its reduced axes back as size-1 dims."""
    if keepdims:
        return expr
    for a in axes:
        expr = _transform.expand_dims(expr, a)
    return expr


def dilate(x, axis: int, stride: int, shape, dtype: str):
    """x with stride-1 zeros between neighbours along `axis` (length (n-1)*stride + 1), and
    its new shape."""
    n = shape[axis]
    if stride == 1 or n == 0:
        return x, tuple(shape)
    y = _transform.expand_dims(x, axis + 1)
    widths = [(0, 0)] * (len(shape) + 1)
    widths[axis + 1] = (0, stride - 1)
    y = pad(y, widths, scalar(0, dtype))
    merged = list(shape)
    merged[axis] = n * stride
    y = _transform.reshape(y, merged)
    begin = [0] * len(shape)
    end = list(merged)
    end[axis] = (n - 1) * stride + 1
    out = list(shape)
    out[axis] = end[axis]
    return _transform.strided_slice(y, begin, end), tuple(out)


def fit_axis(x, axis: int, offset: int, length: int, shape, dtype: str):
    """x placed at [offset, offset + len) of an axis of `length`, zero elsewhere, or cut to it."""
    n = shape[axis]
    after = length - offset - n
    if offset >= 0 and after >= 0:
        if offset == 0 and after == 0:
            return x
        widths = [(0, 0)] * len(shape)
        widths[axis] = (offset, after)
        return pad(x, widths, scalar(0, dtype))
    begin, end = [0] * len(shape), list(shape)
    begin[axis], end[axis] = max(0, -offset), min(n, length - offset)
    cut = _transform.strided_slice(x, begin, end)
    cut_shape = list(shape)
    cut_shape[axis] = end[axis] - begin[axis]
    return fit_axis(cut, axis, max(0, offset), length, cut_shape, dtype)


def transposed_conv2d(grad, weight, grad_shape, weight_shape, strides, dilation, groups, pad_top_left,
                      in_hw, dtype: str):
    """The gradient w.r.t. the data of an NCHW/OIHW conv2d: `grad` (N, O, OH, OW) spread back
    through `weight` (O, C/groups, KH, KW) onto (N, C, H, W) where the data sat at offset
    pad_top_left of the padded input."""
    n, o, oh, ow = grad_shape
    _, cg, kh, kw = weight_shape
    g = grad
    shape = (n, o, oh, ow)
    for axis, stride in ((2, strides[0]), (3, strides[1])):
        g, shape = dilate(g, axis, stride, shape, dtype)
    # flipped kernel with in/out channels swapped within each group: (groups*Cg, O/groups, KH, KW)
    og = o // groups
    w = _transform.reshape(weight, (groups, og, cg, kh, kw))
    w = _transform.transpose(w, (0, 2, 1, 3, 4))
    w = _transform.reshape(w, (groups * cg, og, kh, kw))
    w = _transform.reverse(_transform.reverse(w, 2), 3)
    full_h, full_w = (kh - 1) * dilation[0], (kw - 1) * dilation[1]
    r = conv2d(g, w, padding=(full_h, full_w, full_h, full_w), dilation=dilation, groups=groups)
    r_shape = [n, groups * cg, shape[2] + full_h, shape[3] + full_w]
    for axis, offset, length in ((2, pad_top_left[0], in_hw[0]), (3, pad_top_left[1], in_hw[1])):
        r = fit_axis(r, axis, -offset, length, r_shape, dtype)
        r_shape[axis] = length
    return r





def in_nchw(fgrad):
    """Wrap a gradient written for NCHW data (and OIHW kernels) so it also serves calls in other
    layouts: the call is restated in NCHW on layout-transformed inputs, the output gradient is
    transformed likewise, and the input gradients are transformed back."""
    def layouts(attrs):
        if hasattr(attrs, "data_layout"):
            return [attrs.data_layout, attrs.kernel_layout], attrs.out_layout or attrs.data_layout
        return [attrs.layout], attrs.out_layout or attrs.layout

    def rule(orig, grad):
        ins, out = layouts(orig.attrs)
        canonical = ["NCHW", "OIHW"][:len(ins)]
        if ins == canonical and out == "NCHW":
            return fgrad(orig, grad)
        if hasattr(orig.attrs, "data_layout"):
            attrs = dataclasses.replace(orig.attrs, data_layout="NCHW", kernel_layout="OIHW", out_layout="")
        else:
            attrs = dataclasses.replace(orig.attrs, layout="NCHW", out_layout="")
        args = [type_locally_expr(layout_transform(a, src, dst) if src != dst else a)
                for a, src, dst in zip(orig.args, ins, canonical)]
        call = type_locally_expr(Call(orig.op, args, attrs))
        grads = fgrad(call, layout_transform(grad, out, "NCHW"))
        return [layout_transform(g, dst, src) if src != dst else g
                for g, src, dst in zip(grads, ins, canonical)]
    rule.__name__ = fgrad.__name__
    rule.__doc__ = fgrad.__doc__
    return rule


def type_locally_expr(expr):
    """Type a freshly built call from its (typed) arguments' types via its op's relation."""
    if expr._checked_type_ is None:
        for a in expr.args:
            if a._checked_type_ is None:
                type_locally_expr(a)
        expr._checked_type_ = expr.op.rel([a.checked_type for a in expr.args], expr.attrs)
    return expr


def apply_matrix_along_axis(grad, axis: int, matrix, shape, dtype: str):
    """`grad` with its `axis` (length L) mapped through the constant (n, L) `matrix`:
    out[..., i, ...] = sum_j matrix[i, j] * grad[..., j, ...]. The adjoint of any static
    linear map along one axis (padding modes, adaptive pooling bins, gathers)."""
    from ..nn.dense import dense
    n, length = matrix.shape
    rank = len(shape)
    perm = [a for a in range(rank) if a != axis] + [axis]
    rest = [shape[a] for a in perm[:-1]]
    moved = _transform.transpose(grad, perm) if axis != rank - 1 else grad
    flat = _transform.reshape(moved, (int(np.prod(rest, dtype=np.int64)), length))
    mapped = dense(flat, const(np.asarray(matrix, dtype=dtype), dtype=dtype))
    out = _transform.reshape(mapped, rest + [n])
    if axis != rank - 1:
        inverse = [perm.index(a) for a in range(rank)]
        out = _transform.transpose(out, inverse)
    return out


__all__ = ["ttype", "shape_of", "scalar", "zeros_of", "collapse_sum_to", "collapse_like",
           "reduce_axes", "unreduce", "dilate", "fit_axis", "transposed_conv2d",
           "apply_matrix_along_axis", "in_nchw"]
