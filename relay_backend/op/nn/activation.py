"""Parametric activations: nn.leaky_relu (ELEMWISE, a fixed slope) and nn.prelu (BROADCAST, a
learned per-channel slope). nn.relu itself is a row of op/tensor.py's unary table."""
import dataclasses

import numpy as np

from ... import te
from ...ir.attrs import Attrs
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..relations import identity_rel
from ..tensor import real_attr
from . import _common as C
from . import _te as T
from .misc import channel_params_fill


@dataclasses.dataclass(frozen=True)
class LeakyReluAttrs(Attrs):
    alpha: float = 0.01

    def __post_init__(self):
        object.__setattr__(self, "alpha", real_attr("nn.leaky_relu", "alpha", self.alpha))


def _leaky_relu_ref(x, attrs):
    return np.where(x > 0, x, x * np.asarray(attrs.alpha, x.dtype)).astype(x.dtype)


def _leaky_relu_compute(attrs, inputs, out_type):
    """x if x > 0 else x * alpha (alpha a constant of x's dtype, as the reference)."""
    x, = inputs
    alpha = T.const(attrs.alpha, x.dtype)
    zero = T.const(0, x.dtype)
    return [te.compute(x.shape, lambda *i: te.if_then_else(x[i] > zero, x[i], x[i] * alpha),
                       name="leaky_relu", tag=LEAKY_RELU.tag)]


LEAKY_RELU = defop("nn.leaky_relu", inputs=("data",), attrs=LeakyReluAttrs, rel=identity_rel,
                   pattern=OpPattern.ELEMWISE, ref=_leaky_relu_ref, level=3, compute=_leaky_relu_compute,
                   samples=lambda rng: [Sample([S.rand(rng, (2, 5))], LeakyReluAttrs()),
                                        Sample([S.rand(rng, (3, 2, 2), "float64")], LeakyReluAttrs(0.2)),
                                        Sample([S.rand(rng, (6,), "float16")], LeakyReluAttrs(0.5))],
                   doc="out = x if x > 0 else alpha * x")


def leaky_relu(data, alpha=0.01):
    """Leaky rectified linear unit: x where x > 0, alpha * x elsewhere.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    alpha : float, optional
        The slope applied to negative inputs. Defaults to 0.01.

    Returns
    -------
    result : relay.Expr
        A tensor of data's shape and dtype.
    """
    return LEAKY_RELU(data, attrs=LeakyReluAttrs(alpha))


@dataclasses.dataclass(frozen=True)
class PReluAttrs(Attrs):
    axis: int = 1

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))


def _prelu_rel(arg_types, attrs) -> TensorType:
    """(data, alpha of shape (data.shape[axis],)) -> data type."""
    op = "nn.prelu"
    data = C.tensor_arg(op, arg_types[0], "data")
    alpha = C.tensor_arg(op, arg_types[1], "alpha")
    ax = C.norm_axis(op, attrs.axis, data.ndim, data=data, alpha=alpha)
    C.same_dtype(op, data=data, alpha=alpha)
    C.channel_vector(op, alpha, data.shape[ax], "alpha", data=data, alpha=alpha)
    return data


def _prelu_ref(x, alpha, attrs):
    shape = [1] * x.ndim
    shape[attrs.axis % x.ndim] = alpha.shape[0]
    return np.where(x > 0, x, x * alpha.reshape(shape)).astype(x.dtype)


def _prelu_compute(attrs, inputs, out_type):
    """x if x > 0 else x * alpha[index along axis]."""
    x, alpha = inputs
    ax = T.norm_axis(attrs.axis, x.ndim)
    zero = T.const(0, x.dtype)
    return [te.compute(x.shape, lambda *i: te.if_then_else(x[i] > zero, x[i], x[i] * alpha[i[ax]]),
                       name="prelu", tag=PRELU.tag)]


PRELU = defop("nn.prelu", inputs=("data", "alpha"), attrs=PReluAttrs, rel=_prelu_rel,
              fill_inputs=channel_params_fill(1),
              pattern=OpPattern.BROADCAST, ref=_prelu_ref, level=3, compute=_prelu_compute,
              samples=lambda rng: [Sample([S.rand(rng, (1, 3, 2, 2)), S.rand(rng, (3,), low=0, high=1)], PReluAttrs()),
                                   Sample([S.rand(rng, (2, 4), "float64"), S.rand(rng, (4,), "float64")],
                                          PReluAttrs(axis=-1))],
              doc="out = x if x > 0 else alpha[channel] * x")


def prelu(data, alpha, axis=1):
    """Parametric ReLU: a leaky ReLU whose negative slope is learned per channel.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    alpha : relay.Expr
        The slopes, a 1-D tensor with one value per channel (length data.shape[axis]).
    axis : int, optional
        The channel axis of `data` that `alpha` runs along. Defaults to 1 (NCHW).

    Returns
    -------
    result : relay.Expr
        A tensor of data's shape and dtype.
    """
    return PRELU(data, alpha, attrs=PReluAttrs(axis))


__all__ = ["leaky_relu", "prelu", "LeakyReluAttrs", "PReluAttrs"]
