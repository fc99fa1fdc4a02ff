"""Gradients of the elementwise and broadcasting operators (Relay's _tensor_grad.py family).

Each `*_grad(orig, grad)` returns one gradient per input of the call `orig`; broadcasting
binary ops reduce their gradients back to each input's shape (collapse_sum_to). Operators whose
result is piecewise constant (floor, sign, comparisons, ...) have zero gradients, as in Relay;
operators on bool tensors only (logical_*) have none.
"""
import math

from .. import tensor as T
from ..registry import register_gradient
from .helpers import collapse_like, scalar, shape_of, ttype


def _dtype(expr):
    return ttype(expr).dtype


def _one_input(fn):
    """A gradient rule for a unary op given as fn(x, orig, grad) -> d(orig)/dx * grad."""
    return lambda orig, grad: [fn(orig.args[0], orig, grad)]


def zero_grads(orig, grad):
    """Zero gradients for every input (piecewise-constant results)."""
    return [T.zeros_like(a) for a in orig.args]


UNARY = {
    "exp": lambda x, y, g: g * y,
    "fast_exp": lambda x, y, g: g * y,
    "log": lambda x, y, g: g / x,
    "sqrt": lambda x, y, g: g * scalar(0.5, _dtype(x)) / y,
    "rsqrt": lambda x, y, g: g * scalar(-0.5, _dtype(x)) * y / x,
    "sigmoid": lambda x, y, g: g * y * (scalar(1, _dtype(x)) - y),
    "tanh": lambda x, y, g: g * (scalar(1, _dtype(x)) - y * y),
    "fast_tanh": lambda x, y, g: g * (scalar(1, _dtype(x)) - y * y),
    "sin": lambda x, y, g: g * T.cos(x),
    "cos": lambda x, y, g: T.negative(g * T.sin(x)),
    "erf": lambda x, y, g: g * scalar(2 / math.sqrt(math.pi), _dtype(x)) * T.exp(T.negative(x * x)),
    "fast_erf": lambda x, y, g: g * scalar(2 / math.sqrt(math.pi), _dtype(x)) * T.exp(T.negative(x * x)),
    "negative": lambda x, y, g: T.negative(g),
    "copy": lambda x, y, g: g,
    "abs": lambda x, y, g: T.where(T.less(x, scalar(0, _dtype(x))), T.negative(g), g),
    "nn.relu": lambda x, y, g: T.where(T.less(x, scalar(0, _dtype(x))), T.zeros_like(g), g),
    "cast": lambda x, y, g: T.cast(g, _dtype(x)),
}
for _name, _fn in UNARY.items():
    register_gradient(_name, _one_input(_fn))

for _name in ("floor", "ceil", "round", "sign", "zeros_like", "ones_like", "argmax", "argmin",
              "floor_divide", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
    register_gradient(_name, zero_grads)


@register_gradient("clip")
def clip_grad(orig, grad):
    """grad where a_min <= x <= a_max, 0 outside."""
    x = orig.args[0]
    dt = _dtype(x)
    outside = T.logical_or(T.less(x, scalar(orig.attrs.a_min, dt)),
                           T.less(scalar(orig.attrs.a_max, dt), x))
    return [T.where(outside, T.zeros_like(grad), grad)]


@register_gradient("nn.leaky_relu")
def leaky_relu_grad(orig, grad):
    """grad for x > 0, alpha * grad otherwise."""
    x = orig.args[0]
    dt = _dtype(x)
    return [T.where(T.less(x, scalar(0, dt)), grad * scalar(orig.attrs.alpha, dt), grad)]


@register_gradient("nn.prelu")
def prelu_grad(orig, grad):
    """d/dx: grad, or alpha[c] * grad where x < 0; d/dalpha[c]: sum of x * grad where x < 0."""
    x, alpha = orig.args
    shape = shape_of(x)
    axis = orig.attrs.axis % len(shape)
    from ..transform import expand_dims
    from ..reduce import sum as _sum
    trailing = len(shape) - axis - 1
    alpha_b = expand_dims(alpha, 1, trailing) if trailing else alpha
    negative = T.less(x, scalar(0, _dtype(x)))
    zeros_g = T.zeros_like(grad)
    dx = T.where(negative, grad * alpha_b, grad)
    dalpha = _sum(T.where(negative, grad * x, zeros_g), axis=[axis], exclude=True)
    return [dx, dalpha]


# --- broadcasting binary ops ---------------------------------------------------------------------
def _binary(fn):
    """fn(x, y, orig, grad) -> (dx, dy) before collapsing each to its input's shape."""
    def rule(orig, grad):
        x, y = orig.args
        dx, dy = fn(x, y, orig, grad)
        return [collapse_like(dx, orig, x), collapse_like(dy, orig, y)]
    return rule


BINARY = {
    "add": lambda x, y, z, g: (g, g),
    "subtract": lambda x, y, z, g: (g, T.negative(g)),
    "multiply": lambda x, y, z, g: (g * y, g * x),
    "divide": lambda x, y, z, g: (g / y, T.negative(g * z / y)),
    "power": lambda x, y, z, g: (g * y * T.power(x, y - scalar(1, _dtype(x))), g * z * T.log(x)),
    "maximum": lambda x, y, z, g: (T.where(T.greater_equal(x, y), g, T.zeros_like(g)),
                                   T.where(T.greater_equal(x, y), T.zeros_like(g), g)),
    "minimum": lambda x, y, z, g: (T.where(T.less_equal(x, y), g, T.zeros_like(g)),
                                   T.where(T.less_equal(x, y), T.zeros_like(g), g)),
    "floor_mod": lambda x, y, z, g: (g, T.negative(g * T.floor(x / y))),
}
for _name, _fn in BINARY.items():
    register_gradient(_name, _binary(_fn))


@register_gradient("where")
def where_grad(orig, grad):
    """No gradient for the condition; grad goes to x where it holds, to y elsewhere."""
    cond, x, y = orig.args
    zeros_g = T.zeros_like(grad)
    return [T.zeros_like(cond),
            collapse_like(T.where(cond, grad, zeros_g), orig, x),
            collapse_like(T.where(cond, zeros_g, grad), orig, y)]


@register_gradient("full")
def full_grad(orig, grad):
    """The fill value receives the sum of the output gradient."""
    from ..reduce import sum as _sum
    value = orig.args[0]
    total = _sum(grad)
    return [T.cast(total, _dtype(value)) if _dtype(value) != ttype(orig).dtype else total]


for _name in ("zeros", "ones", "arange"):
    register_gradient(_name, lambda orig, grad: [])

__all__ = ["zero_grads", "UNARY", "BINARY"]
