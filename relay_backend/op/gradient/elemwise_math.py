"""Gradients of the rarer elementwise ops (op/elemwise_math.py's rows of op/tensor.py's tables):
the inverse trigonometric and hyperbolic functions, tan / sinh / cosh, log2 / log10 as Relay's
_tensor_grad.py defines them; trunc, trunc_divide and the classifiers (isnan, isinf, isfinite)
are piecewise constant (zero gradients, like floor and the comparisons here); mod / trunc_mod
follow floor_mod with the truncated quotient. cast_like passes the gradient back cast to the
data's dtype. Bit operations, shifts, logical_xor, reinterpret and the fixed-point multiplies
work on integer bits and have none (NOT_DIFFERENTIABLE_MATH).
"""
import math

from .. import tensor as T
from ..dtype_ops import cast_like
from ..registry import register_gradient
from .elemwise import _binary, _dtype, _one_input, zero_grads
from .helpers import scalar


def _one(x):
    return scalar(1, _dtype(x))


MATH_UNARY = {
    "log2": lambda x, y, g: g / (x * scalar(math.log(2.0), _dtype(x))),
    "log10": lambda x, y, g: g / (x * scalar(math.log(10.0), _dtype(x))),
    "tan": lambda x, y, g: g / (T.cos(x) * T.cos(x)),
    "sinh": lambda x, y, g: g * T.cosh(x),
    "cosh": lambda x, y, g: g * T.sinh(x),
    "asin": lambda x, y, g: g / T.sqrt(_one(x) - x * x),
    "acos": lambda x, y, g: T.negative(g) / T.sqrt(_one(x) - x * x),
    "atan": lambda x, y, g: g / (_one(x) + x * x),
    "asinh": lambda x, y, g: g / T.sqrt(x * x + _one(x)),
    "acosh": lambda x, y, g: g / T.sqrt(x * x - _one(x)),
    "atanh": lambda x, y, g: g / (_one(x) - x * x),
}
for _name, _fn in MATH_UNARY.items():
    register_gradient(_name, _one_input(_fn))

MATH_BINARY = {
    "mod": lambda x, y, z, g: (g, T.negative(g * T.trunc(x / y))),
    "trunc_mod": lambda x, y, z, g: (g, T.negative(g * T.trunc(x / y))),
}
for _name, _fn in MATH_BINARY.items():
    register_gradient(_name, _binary(_fn))

for _name in ("trunc", "trunc_divide", "isnan", "isinf", "isfinite"):
    register_gradient(_name, zero_grads)



@register_gradient("cast_like")
def cast_like_grad(orig, grad):
    """The gradient cast back to the data's dtype; none reaches dtype_like (only its dtype is read)."""
    data, like = orig.args
    return [cast_like(grad, data), T.zeros_like(like)]


# integer / bool ops and bit reinterpretation: no gradient (Relay registers none either)
NOT_DIFFERENTIABLE_MATH = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "left_shift",
                           "right_shift", "logical_xor", "reinterpret", "fixed_point_multiply",
                           "fixed_point_multiply_per_axis",
                           # sorts and scans (op/algorithm/): Relay registers no gradient for them
                           "argsort", "sort", "topk", "dyn.topk", "cumsum", "cumprod", "einsum", "dft", "stft",
                           "random.threefry_generate", "random.threefry_split", "random.uniform",
                           "random.normal", "random.multinomial", "debug")

__all__ = ["MATH_UNARY", "MATH_BINARY", "NOT_DIFFERENTIABLE_MATH"]
