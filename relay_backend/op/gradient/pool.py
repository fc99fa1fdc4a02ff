"""Gradients of the 2-D pools (written for NCHW; NHWC goes through layout transforms): avg_pool2d is a depthwise convolution with a ones kernel
divided by each window's count, so its gradient is the transposed convolution of grad / count;
max_pool2d routes each window's gradient to the first cell holding its maximum (window cells
compared in order, as Relay's max_pool2d_grad); the global pools spread evenly / to the maxima;
adaptive_avg_pool2d applies the transpose of its (static) bin-averaging matrices.
"""
import numpy as np

from ...ir.expr import const
from .. import tensor as T
from ..nn.misc import pad
from ..reduce import sum as _sum
from ..registry import register_gradient
from ..transform import broadcast_to, strided_slice
from .helpers import (apply_matrix_along_axis, dilate, fit_axis, in_nchw, scalar, shape_of,
                      transposed_conv2d, ttype)


def _window_out(size, kernel, stride, dilation, before, after, ceil_mode):
    span = (kernel - 1) * dilation + 1
    total = size + before + after
    if not ceil_mode:
        return (total - span) // stride + 1
    out = -(-(total - span) // stride) + 1
    return out - 1 if (out - 1) * stride >= size + before else out


def _geometry(orig):
    """(n, c, h, w, oh, ow, (pad top, left, bottom, right) including ceil_mode's extension)."""
    attrs = orig.attrs
    n, c, h, w = shape_of(orig.args[0])
    _, _, oh, ow = shape_of(orig)
    top, left, bottom, right = attrs.padding
    need_h = (oh - 1) * attrs.strides[0] + (attrs.pool_size[0] - 1) * attrs.dilation[0] + 1
    need_w = (ow - 1) * attrs.strides[1] + (attrs.pool_size[1] - 1) * attrs.dilation[1] + 1
    pads = (top, left, max(bottom, need_h - h - top), max(right, need_w - w - left))
    return n, c, h, w, oh, ow, pads


def _avg_counts(attrs, h, w, oh, ow) -> np.ndarray:
    """How many cells each output window divides by (padding counts when count_include_pad,
    never the ceil_mode extension); at least 1."""
    top, left, bottom, right = attrs.padding
    counts = np.zeros((oh, ow))
    lo_h, hi_h = (-top, h + bottom) if attrs.count_include_pad else (0, h)
    lo_w, hi_w = (-left, w + right) if attrs.count_include_pad else (0, w)
    rows = [[y * attrs.strides[0] - top + p * attrs.dilation[0] for p in range(attrs.pool_size[0])]
            for y in range(oh)]
    cols = [[x * attrs.strides[1] - left + q * attrs.dilation[1] for q in range(attrs.pool_size[1])]
            for x in range(ow)]
    for y in range(oh):
        in_rows = sum(lo_h <= r < hi_h for r in rows[y])
        for x in range(ow):
            counts[y, x] = in_rows * sum(lo_w <= col < hi_w for col in cols[x])
    return np.maximum(counts, 1)


@register_gradient("nn.avg_pool2d")
@in_nchw
def avg_pool2d_grad(orig, grad):
    attrs = orig.attrs
    n, c, h, w, oh, ow, pads = _geometry(orig)
    dtype = ttype(orig).dtype
    scaled = grad / const(_avg_counts(attrs, h, w, oh, ow), dtype=dtype)
    ones = const(np.ones((c, 1) + tuple(attrs.pool_size)), dtype=dtype)
    return [transposed_conv2d(scaled, ones, (n, c, oh, ow), (c, 1) + tuple(attrs.pool_size),
                              attrs.strides, attrs.dilation, c, pads[:2], (h, w), dtype)]


@register_gradient("nn.max_pool2d")
@in_nchw
def max_pool2d_grad(orig, grad):
    """For each window offset (p, q) in order: the cells equal to the window's max that no
    earlier offset claimed take the gradient, placed back at their input position."""
    attrs = orig.attrs
    n, c, h, w, oh, ow, pads = _geometry(orig)
    dtype = ttype(orig).dtype
    lowest = -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min
    hp, wp = h + pads[0] + pads[2], w + pads[1] + pads[3]
    xp = pad(orig.args[0], [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])], scalar(lowest, dtype))
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    claimed, total = None, None
    zeros_g = T.zeros_like(grad)
    for p in range(attrs.pool_size[0]):
        for q in range(attrs.pool_size[1]):
            begin = [0, 0, p * dh, q * dw]
            end = [n, c, p * dh + (oh - 1) * sh + 1, q * dw + (ow - 1) * sw + 1]
            cells = strided_slice(xp, begin, end, [1, 1, sh, sw])
            hit = T.equal(cells, orig)
            take = hit if claimed is None else T.logical_and(hit, T.logical_not(claimed))
            claimed = hit if claimed is None else T.logical_or(claimed, hit)
            part, shape = T.where(take, grad, zeros_g), (n, c, oh, ow)
            part, shape = dilate(part, 2, sh, shape, dtype)
            part, shape = dilate(part, 3, sw, shape, dtype)
            part = fit_axis(part, 2, p * dh, hp, list(shape), dtype)
            part = fit_axis(part, 3, q * dw, wp, [n, c, hp, shape[3]], dtype)
            total = part if total is None else total + part
    return [strided_slice(total, [0, 0, pads[0], pads[1]], [n, c, pads[0] + h, pads[1] + w])]


@register_gradient("nn.global_avg_pool2d")
@in_nchw
def global_avg_pool2d_grad(orig, grad):
    shape = shape_of(orig.args[0])
    return [broadcast_to(grad * scalar(1.0 / (shape[2] * shape[3]), ttype(orig).dtype), shape)]


@register_gradient("nn.global_max_pool2d")
@in_nchw
def global_max_pool2d_grad(orig, grad):
    """Shared equally among the cells holding the maximum, as Relay's max reduction."""
    x = orig.args[0]
    shape = shape_of(x)
    hits = T.cast(T.equal(broadcast_to(orig, shape), x), ttype(x).dtype)
    return [hits * grad / _sum(hits, axis=[2, 3], keepdims=True)]


def _bin_matrix(size: int, out: int) -> np.ndarray:
    """(out, size): row i averages PyTorch's adaptive bin [floor(i*size/out), ceil((i+1)*size/out))."""
    matrix = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        matrix[i, start:end] = 1.0 / max(end - start, 1)
    return matrix


@register_gradient("nn.adaptive_avg_pool2d")
@in_nchw
def adaptive_avg_pool2d_grad(orig, grad):
    n, c, h, w = shape_of(orig.args[0])
    _, _, oh, ow = shape_of(orig)
    dtype = ttype(orig).dtype
    g = apply_matrix_along_axis(grad, 2, _bin_matrix(h, oh).T, (n, c, oh, ow), dtype)
    return [apply_matrix_along_axis(g, 3, _bin_matrix(w, ow).T, (n, c, h, ow), dtype)]


__all__ = ["avg_pool2d_grad", "max_pool2d_grad", "adaptive_avg_pool2d_grad"]
