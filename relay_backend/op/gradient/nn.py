"""Gradients of the neural-network operators: the matrix products (dense, matmul, batch_matmul),
conv2d (a transposed convolution for the data, a convolution of data with the output gradient
for the weight, groups included), bias_add, softmax / log_softmax, batch_norm (inference form:
the moving statistics are inputs), layer_norm (batch statistics), lrn and dropout.
conv2d's formulas are for NCHW data and OIHW kernels; other layouts (NHWC / HWIO, ...) go
through NCHW with layout transforms (helpers.in_nchw).
"""
from ...ir.expr import TupleGetItem
from .. import tensor as T
from ..nn.conv import conv2d
from ..nn.dense import batch_matmul, dense
from ..nn.misc import pad
from ..reduce import mean as _mean, sum as _sum
from ..registry import register_gradient
from ..transform import expand_dims, reshape, strided_slice, transpose
from .helpers import collapse_sum_to, fit_axis, in_nchw, scalar, shape_of, transposed_conv2d, ttype


def _flat2d(x, shape):
    """x reshaped to (rows, last dim)."""
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return reshape(x, (rows, shape[-1]))


@register_gradient("nn.dense")
def dense_grad(orig, grad):
    """data (..., K), weight (N, K): d data = grad @ weight, d weight = grad^T @ data."""
    data, weight = orig.args
    dshape, gshape = shape_of(data), shape_of(orig)
    g2, x2 = _flat2d(grad, gshape), _flat2d(data, dshape)
    d_data = reshape(dense(g2, transpose(weight)), dshape)
    d_weight = dense(transpose(g2), transpose(x2))
    return [d_data, d_weight]


def _swap_last(x, ndim):
    return transpose(x, list(range(ndim - 2)) + [ndim - 1, ndim - 2])


@register_gradient("nn.matmul")
def matmul_grad(orig, grad):
    """out = A @ B with A = op_a(tensor_a) (..., M, K), B = op_b(tensor_b) (K, N)."""
    a, b = orig.args
    ashape, gshape = shape_of(a), shape_of(orig)
    ta, tb = orig.attrs.transpose_a, orig.attrs.transpose_b
    a_eff = _swap_last(a, len(ashape)) if ta else a
    a_eff_shape = ashape[:-2] + (ashape[-1], ashape[-2]) if ta else ashape
    if len(a_eff_shape) == 1:
        a_eff_shape, gshape = (1,) + a_eff_shape, (1,) + gshape
    b_eff = transpose(b) if tb else b                          # (K, N)
    g2, a2 = _flat2d(grad, gshape), _flat2d(a_eff, a_eff_shape)
    d_a = reshape(dense(g2, b_eff), a_eff_shape)               # grad @ B^T
    d_b = dense(transpose(a2), transpose(g2))                  # A^T @ grad: (K, N)
    d_a = reshape(d_a, ashape[:-2] + (ashape[-1], ashape[-2]) if ta else ashape)
    if ta:
        d_a = _swap_last(d_a, len(ashape))
    return [d_a, transpose(d_b) if tb else d_b]


@register_gradient("nn.batch_matmul")
def batch_matmul_grad(orig, grad):
    """out = A @ B per batch (a batch of 1 broadcasts): d A = grad @ B^T, d B = A^T @ grad, each
    expressed as a batch_matmul of the original operands and summed over broadcast batches."""
    a, b = orig.args
    ta, tb = orig.attrs.transpose_a, orig.attrs.transpose_b
    d_a_eff = batch_matmul(grad, b, transpose_a=False, transpose_b=not tb)   # (B, M, K)
    d_b_eff = batch_matmul(a, grad, transpose_a=not ta, transpose_b=False)   # (B, K, N)
    d_a = transpose(d_a_eff, (0, 2, 1)) if ta else d_a_eff
    d_b = transpose(d_b_eff, (0, 2, 1)) if tb else d_b_eff
    batch = shape_of(orig)[0]
    out = []
    for d, x in ((d_a, a), (d_b, b)):
        xs = shape_of(x)
        out.append(collapse_sum_to(d, (batch,) + xs[1:], xs) if xs[0] != batch else d)
    return out


@register_gradient("nn.conv2d")
@in_nchw
def conv2d_grad(orig, grad):
    """d data: the output gradient spread back through the flipped kernel (a transposed conv);
    d weight: the convolution of the data with the output gradient as the kernel (strides and
    dilation swap roles), channels regrouped so each group only meets its own."""
    data, weight = orig.args
    attrs = orig.attrs
    n, c, h, w = shape_of(data)
    o, cg, kh, kw = shape_of(weight)
    gshape = shape_of(orig)
    groups, dtype = attrs.groups, ttype(data).dtype
    top, left = attrs.padding[0], attrs.padding[1]
    d_data = transposed_conv2d(grad, weight, gshape, (o, cg, kh, kw), attrs.strides, attrs.dilation,
                               groups, (top, left), (h, w), dtype)
    # weight: (Cg, groups*N, H, W) data convolved with (O, N, OH, OW) gradient, groups=groups
    x = reshape(data, (n, groups, cg, h, w))
    x = reshape(transpose(x, (2, 1, 0, 3, 4)), (cg, groups * n, h, w))
    k = transpose(grad, (1, 0, 2, 3))
    r = conv2d(x, k, strides=attrs.dilation, padding=attrs.padding, dilation=attrs.strides,
               groups=groups)
    span_h = (h + top + attrs.padding[2] - ((gshape[2] - 1) * attrs.strides[0] + 1)) // attrs.dilation[0] + 1
    span_w = (w + left + attrs.padding[3] - ((gshape[3] - 1) * attrs.strides[1] + 1)) // attrs.dilation[1] + 1
    r_shape = [cg, o, span_h, span_w]
    r = fit_axis(r, 2, 0, kh, r_shape, dtype)
    r_shape[2] = kh
    r = fit_axis(r, 3, 0, kw, r_shape, dtype)
    return [d_data, transpose(r, (1, 0, 2, 3))]


def _along(vec, axis, ndim):
    trailing = ndim - axis - 1
    return expand_dims(vec, 1, trailing) if trailing else vec


@register_gradient("nn.bias_add")
def bias_add_grad(orig, grad):
    axis = orig.attrs.axis % len(shape_of(orig))
    return [grad, _sum(grad, axis=[axis], exclude=True)]


def _softmax_grad(orig, grad):
    return [(grad - _sum(grad * orig, axis=[orig.attrs.axis], keepdims=True)) * orig]


register_gradient("nn.softmax", _softmax_grad)
register_gradient("nn.fast_softmax", _softmax_grad)


@register_gradient("nn.log_softmax")
def log_softmax_grad(orig, grad):
    return [grad - _sum(grad, axis=[orig.attrs.axis], keepdims=True) * T.exp(orig)]


@register_gradient("nn.dropout")
def dropout_grad(orig, grad):
    """Inference dropout is the identity on its first output; the mask has no gradient."""
    return [TupleGetItem(grad, 0)]


@register_gradient("nn.batch_norm")
def batch_norm_grad(orig, grad):
    """out = (x - mean) / sqrt(var + eps) * gamma + beta with mean/var inputs (inference form);
    outputs 1 and 2 pass mean and var through, so their gradients add to those inputs'."""
    x, gamma, beta, mean, var = orig.args
    attrs = orig.attrs
    shape = shape_of(x)
    ndim, dtype = len(shape), ttype(x).dtype
    axis = attrs.axis % ndim
    g, g_mean, g_var = (TupleGetItem(grad, i) for i in range(3))
    inv = T.rsqrt(var + scalar(attrs.epsilon, dtype))
    centered = x - _along(mean, axis, ndim)
    scale = gamma * inv if attrs.scale else inv
    d_x = g * _along(scale, axis, ndim)
    sum_g = _sum(g, axis=[axis], exclude=True)
    sum_gc = _sum(g * centered, axis=[axis], exclude=True)
    zero = T.zeros_like(gamma)
    d_gamma = sum_gc * inv if attrs.scale else zero
    d_beta = sum_g if attrs.center else T.zeros_like(beta)
    d_mean = T.negative(scale * sum_g) + g_mean
    d_var = sum_gc * scale * inv * inv * scalar(-0.5, dtype) + g_var
    return [d_x, d_gamma, d_beta, d_mean, d_var]


@register_gradient("nn.layer_norm")
def layer_norm_grad(orig, grad):
    """Normalized over `axis` with the batch's own mean and variance:
    d x = (d xhat - mean(d xhat) - xhat * mean(d xhat * xhat)) / sigma, d xhat = grad * gamma."""
    x, gamma, beta = orig.args
    attrs = orig.attrs
    shape = shape_of(x)
    ndim, dtype = len(shape), ttype(x).dtype
    axis = attrs.axis % ndim
    mu = _mean(x, axis=[axis], keepdims=True)
    centered = x - mu
    var = _mean(centered * centered, axis=[axis], keepdims=True)
    inv = T.rsqrt(var + scalar(attrs.epsilon, dtype))
    xhat = centered * inv
    dxhat = grad * _along(gamma, axis, ndim) if attrs.scale else grad
    d_x = (dxhat - _mean(dxhat, axis=[axis], keepdims=True)
           - xhat * _mean(dxhat * xhat, axis=[axis], keepdims=True)) * inv
    d_gamma = _sum(grad * xhat, axis=[axis], exclude=True) if attrs.scale else T.zeros_like(gamma)
    d_beta = _sum(grad, axis=[axis], exclude=True) if attrs.center else T.zeros_like(beta)
    return [d_x, d_gamma, d_beta]


def _window_sum(v, axis, offset, size, shape, dtype):
    """out[k] = sum of v[k + offset + t] for t in [0, size), out-of-range terms 0."""
    before, after = max(0, -offset), max(0, offset + size - 1)
    widths = [(0, 0)] * len(shape)
    widths[axis] = (before, after)
    padded = pad(v, widths, scalar(0, dtype)) if before or after else v
    total = None
    n = shape[axis]
    for t in range(size):
        start = offset + t + before
        begin, end = [0] * len(shape), list(shape)
        begin[axis], end[axis] = start, start + n
        term = strided_slice(padded, begin, end)
        total = term if total is None else total + term
    return total


@register_gradient("nn.lrn")
def lrn_grad(orig, grad):
    """out_i = x_i D_i^-beta, D_i = bias + alpha/size * sum_{j in W(i)} x_j^2, W(i) =
    [i - size//2, i - size//2 + size): d x_k = g_k D_k^-beta - 2 beta alpha/size x_k *
    sum_{i : k in W(i)} g_i x_i D_i^(-beta-1)."""
    x = orig.args[0]
    attrs = orig.attrs
    shape = shape_of(x)
    dtype = ttype(x).dtype
    axis = attrs.axis % len(shape)
    half, size = attrs.size // 2, attrs.size
    k = scalar(attrs.alpha / size, dtype)
    d = scalar(attrs.bias, dtype) + k * _window_sum(x * x, axis, -half, size, shape, dtype)
    d_pow = T.power(d, scalar(-attrs.beta, dtype))
    u = grad * x * d_pow / d
    back = _window_sum(u, axis, half - size + 1, size, shape, dtype)
    return [grad * d_pow - scalar(2 * attrs.beta, dtype) * k * x * back]


__all__ = ["dense_grad", "matmul_grad", "batch_matmul_grad", "conv2d_grad", "batch_norm_grad",
           "layer_norm_grad", "lrn_grad"]
