"""Gradients of the reductions: sum and mean spread the output gradient back over the reduced
axes; max and min share it among the positions holding the extreme (equally between ties, as
Relay); prod uses the product of the other elements (exact with zeros in the input); variance
differentiates sum((x - mean)^2) / N in both of its inputs.
"""
from .. import tensor as T
from ..reduce import prod as _prod, sum as _sum
from ..registry import register_gradient
from ..transform import broadcast_to
from .helpers import collapse_sum_to, reduce_axes, scalar, shape_of, ttype, unreduce


def _spread(orig, grad):
    """(x, its shape, the reduced axes, grad with the reduced axes back as size-1 dims)."""
    x = orig.args[0]
    shape = shape_of(x)
    axes = reduce_axes(orig.attrs, len(shape))
    return x, shape, axes, unreduce(grad, axes, orig.attrs.keepdims)


@register_gradient("sum")
def sum_grad(orig, grad):
    x, shape, axes, g = _spread(orig, grad)
    return [broadcast_to(g, shape)]


@register_gradient("mean")
def mean_grad(orig, grad):
    x, shape, axes, g = _spread(orig, grad)
    count = 1
    for a in axes:
        count *= shape[a]
    return [broadcast_to(g * scalar(1.0 / max(count, 1), ttype(x).dtype), shape)]


def _extreme_grad(orig, grad):
    x, shape, axes, g = _spread(orig, grad)
    y = unreduce(orig, axes, orig.attrs.keepdims)
    hits = T.cast(T.equal(broadcast_to(y, shape), x), ttype(x).dtype)
    count = _sum(hits, axis=axes, keepdims=True)
    return [hits * g / count]


register_gradient("max", _extreme_grad)
register_gradient("min", _extreme_grad)


@register_gradient("prod")
def prod_grad(orig, grad):
    """d prod / d x_i = product of the others: prod / x_i when no element is zero; the product
    of the non-zero ones at the single zero; 0 everywhere when two or more are zero."""
    x, shape, axes, g = _spread(orig, grad)
    dt = ttype(x).dtype
    zero, one = scalar(0, dt), scalar(1, dt)
    is_zero = T.equal(x, zero)
    n_zero = _sum(T.cast(is_zero, dt), axis=axes, keepdims=True)
    safe = T.where(is_zero, T.ones_like(x), x)
    nonzero_prod = _prod(safe, axis=axes, keepdims=True)
    others = T.where(T.equal(n_zero, zero), nonzero_prod / safe,
                     T.where(T.logical_and(T.equal(n_zero, one), is_zero),
                             broadcast_to(nonzero_prod, shape), T.zeros_like(x)))
    return [others * g]


@register_gradient("variance")
def variance_grad(orig, grad):
    """var = sum((x - m)^2) / N (N - 1 when unbiased): d/dx = 2 (x - m) / N, d/dm the negated
    sum over what m was broadcast along."""
    x, m = orig.args
    shape = shape_of(x)
    axes = reduce_axes(orig.attrs, len(shape))
    g = unreduce(grad, axes, orig.attrs.keepdims)
    count = 1
    for a in axes:
        count *= shape[a]
    count = max(count - int(orig.attrs.unbiased), 1)
    dx = g * scalar(2.0 / count, ttype(x).dtype) * (x - m)
    return [dx, collapse_sum_to(T.negative(dx), shape, shape_of(m))]


__all__ = ["sum_grad", "mean_grad", "prod_grad", "variance_grad"]
