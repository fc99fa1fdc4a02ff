"""Normalization operators: nn.batch_norm (inference form, using the moving statistics; a
3-output tuple as in TVM), nn.layer_norm and nn.lrn (local response normalization). All OPAQUE:
SimplifyInference rewrites batch_norm/layer_norm into elementwise arithmetic before fusion.
"""
import dataclasses

import numpy as np

from ... import te
from ...errors import AttrsError
from ...ir.attrs import Attrs
from ...ir.expr import TupleWrapper
from ...ir.types import TensorType, TupleType
from .. import samples as S
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from .misc import channel_params_fill


def _along(vec: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-D per-channel vector reshaped to broadcast along `axis` of a rank-`ndim` tensor."""
    shape = [1] * ndim
    shape[axis] = vec.shape[0]
    return vec.astype("float64").reshape(shape)


def _check_params(op, data, axis, params: dict) -> int:
    """Every per-channel parameter must be a (C,) vector of data's dtype, C = data.shape[axis]."""
    types = dict(data=data, **params)
    ax = C.norm_axis(op, axis, data.ndim, **types)
    C.same_dtype(op, **types)
    for name, t in params.items():
        C.channel_vector(op, t, data.shape[ax], name, **types)
    return ax


# --- nn.batch_norm -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class BatchNormAttrs(Attrs):
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))
        object.__setattr__(self, "epsilon", float(self.epsilon))
        if self.epsilon < 0:
            raise AttrsError(f"attribute epsilon={self.epsilon} must be non-negative")


_BN_PARAMS = ("gamma", "beta", "moving_mean", "moving_var")


def _batch_norm_rel(arg_types, attrs) -> TupleType:
    """(data, gamma, beta, mean, var) -> (data type, (C,), (C,)) with C = data.shape[axis]."""
    op = "nn.batch_norm"
    data = C.tensor_arg(op, arg_types[0], "data")
    params = {n: C.tensor_arg(op, t, n) for n, t in zip(_BN_PARAMS, arg_types[1:])}
    ax = _check_params(op, data, attrs.axis, params)
    vec = TensorType((data.shape[ax],), data.dtype)
    return TupleType([data, vec, vec])


def _batch_norm_ref(x, gamma, beta, mean, var, attrs):
    ax = attrs.axis % x.ndim
    out = (x.astype("float64") - _along(mean, ax, x.ndim)) / np.sqrt(_along(var, ax, x.ndim) + attrs.epsilon)
    if attrs.scale:
        out = out * _along(gamma, ax, x.ndim)
    if attrs.center:
        out = out + _along(beta, ax, x.ndim)
    return out.astype(x.dtype), mean.copy(), var.copy()


def _bn_inputs(rng, shape, axis, dtype="float32"):
    c = shape[axis]
    return [S.rand(rng, shape, dtype), S.rand(rng, (c,), dtype, 0.5, 1.5), S.rand(rng, (c,), dtype),
            S.rand(rng, (c,), dtype), S.rand(rng, (c,), dtype, 0.1, 2.0)]


def _batch_norm_samples(rng):
    A = BatchNormAttrs
    return [Sample(_bn_inputs(rng, (2, 3, 4, 4), 1), A()),
            Sample(_bn_inputs(rng, (2, 5), 1), A(epsilon=1e-3)),
            Sample(_bn_inputs(rng, (1, 4, 3, 2), 3, "float64"), A(axis=-1, center=False)),
            Sample(_bn_inputs(rng, (2, 3, 5), 1, "float16"), A(scale=False))]


def _affine(value, c, attrs, gamma, beta, acc):
    """value * gamma[c] (if scale) + beta[c] (if center), in the accumulation dtype."""
    if attrs.scale:
        value = value * gamma[c].astype(acc)
    if attrs.center:
        value = value + beta[c].astype(acc)
    return value


def _batch_norm_compute(attrs, inputs, out_type):
    """out = (x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c] (float16 math in float32);
    the moving mean and variance pass through as copies, like the reference."""
    x, gamma, beta, mean, var = inputs
    ax, acc, tag = T.norm_axis(attrs.axis, x.ndim), T.acc_dtype(x.dtype), BATCH_NORM.tag
    eps = T.const(attrs.epsilon, acc)

    def normalize(*i):
        c = i[ax]
        value = (x[i].astype(acc) - mean[c].astype(acc)) / te.sqrt(var[c].astype(acc) + eps)
        return _affine(value, c, attrs, gamma, beta, acc).astype(x.dtype)
    out = te.compute(x.shape, normalize, name="batch_norm", tag=tag)
    copies = [te.compute(t.shape, lambda c, t=t: t[c], name=f"batch_norm_{what}", tag=tag)
              for t, what in ((mean, "mean"), (var, "var"))]
    return [out] + copies


BATCH_NORM = defop("nn.batch_norm", inputs=("data",) + _BN_PARAMS, attrs=BatchNormAttrs, rel=_batch_norm_rel,
                   pattern=OpPattern.OPAQUE, ref=_batch_norm_ref, samples=_batch_norm_samples, level=1,
                   compute=_batch_norm_compute, fill_inputs=channel_params_fill(1, 2, 3, 4),
                   doc="out = (data - mean) / sqrt(var + eps) * gamma + beta; also returns mean, var")


# The parameters the normalization constructors share (constructor_docs completes their docstrings)
NORM_PARAMETERS = {
    "gamma": ("relay.Expr", "The scale, a 1-D tensor of length data.shape[axis]."),
    "beta": ("relay.Expr", "The offset, a 1-D tensor of length data.shape[axis]."),
    "epsilon": ("float, optional", "Added to the variance before the square root, so it is never zero."),
    "center": ("bool, optional", "If False, `beta` is not added."),
    "scale": ("bool, optional", "If False, `gamma` is not applied."),
}


@documented(NORM_PARAMETERS)
def batch_norm(data, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, center=True, scale=True):
    """Batch normalization with given statistics (inference form).

    out = (data - moving_mean) / sqrt(moving_var + epsilon) * gamma + beta, each 1-D
    parameter broadcast along `axis`.

    Parameters
    ----------
    moving_mean : relay.Expr
        The mean of each channel, a 1-D tensor of length data.shape[axis].
    moving_var : relay.Expr
        The variance of each channel, a 1-D tensor of length data.shape[axis].
    axis : int, optional
        The channel axis of `data`. Defaults to 1 (NCHW).

    Returns
    -------
    result : relay.TupleWrapper
        The 3-tuple (normalized data, moving_mean, moving_var); index 0 is the usual output.
    """
    call = BATCH_NORM(data, gamma, beta, moving_mean, moving_var,
                      attrs=BatchNormAttrs(axis, epsilon, center, scale))
    return TupleWrapper(call, 3)


# --- nn.layer_norm -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LayerNormAttrs(BatchNormAttrs):
    axis: int = -1


def _layer_norm_rel(arg_types, attrs) -> TensorType:
    """(data, gamma, beta) -> data type; gamma, beta of shape (data.shape[axis],)."""
    op = "nn.layer_norm"
    data = C.tensor_arg(op, arg_types[0], "data")
    params = {n: C.tensor_arg(op, t, n) for n, t in zip(("gamma", "beta"), arg_types[1:])}
    _check_params(op, data, attrs.axis, params)
    return data


def _layer_norm_ref(x, gamma, beta, attrs):
    ax = attrs.axis % x.ndim
    x64 = x.astype("float64")
    mean = x64.mean(axis=ax, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=ax, keepdims=True)
    out = (x64 - mean) / np.sqrt(var + attrs.epsilon)
    if attrs.scale:
        out = out * _along(gamma, ax, x.ndim)
    if attrs.center:
        out = out + _along(beta, ax, x.ndim)
    return out.astype(x.dtype)


def _layer_norm_samples(rng):
    def inputs(shape, axis, dtype="float32"):
        c = shape[axis]
        return [S.rand(rng, shape, dtype), S.rand(rng, (c,), dtype, 0.5, 1.5), S.rand(rng, (c,), dtype)]
    A = LayerNormAttrs
    return [Sample(inputs((2, 3, 8), -1), A()),
            Sample(inputs((4, 6), 1, "float64"), A(axis=1, epsilon=1e-6)),
            Sample(inputs((2, 5, 3), 1), A(axis=1, center=False, scale=False)),
            Sample(inputs((3, 16), -1, "float16"), A()),
            Sample([S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS), "float16", 0, 1000),
                    S.rand(rng, (S.FLOAT16_REDUCTION_TERMS,), "float16", 0.5, 1.5),
                    S.rand(rng, (S.FLOAT16_REDUCTION_TERMS,), "float16")], A(),
                   "float16, long axis whose sum and variance overflow float16")]


def _layer_norm_compute(attrs, inputs, out_type):
    """Stages: mean along axis, variance as mean((x - mean)^2) (two-pass, as the reference),
    then (x - mean) / sqrt(var + eps) * gamma + beta; float16 math in float32."""
    x, gamma, beta = inputs
    ax, acc, tag = T.norm_axis(attrs.axis, x.ndim), T.acc_dtype(x.dtype), LAYER_NORM.tag
    shape = T.dims(x)
    count = T.const(1, acc) * shape[ax]
    total = T.reduce_along(shape, ax, lambda i: x[i].astype(acc), te.sum, "layer_norm_sum", tag)
    mean = te.compute(total.shape, lambda *i: total[i] / count, name="layer_norm_mean", tag=tag)

    def centered(i):
        return x[i].astype(acc) - mean[T.drop(i, ax)]
    sq = T.reduce_along(shape, ax, lambda i: centered(i) * centered(i), te.sum, "layer_norm_sqsum", tag)
    eps = T.const(attrs.epsilon, acc)

    def normalize(*i):
        value = centered(i) / te.sqrt(sq[T.drop(i, ax)] / count + eps)
        return _affine(value, i[ax], attrs, gamma, beta, acc).astype(x.dtype)
    return [te.compute(x.shape, normalize, name="layer_norm", tag=tag)]


LAYER_NORM = defop("nn.layer_norm", inputs=("data", "gamma", "beta"), attrs=LayerNormAttrs, rel=_layer_norm_rel,
                   pattern=OpPattern.OPAQUE, ref=_layer_norm_ref, samples=_layer_norm_samples, level=1,
                   compute=_layer_norm_compute, fill_inputs=channel_params_fill(1, 2),
                   doc="out = (data - mean_axis) / sqrt(var_axis + eps) * gamma + beta")


@documented(NORM_PARAMETERS)
def layer_norm(data, gamma, beta, axis=-1, epsilon=1e-5, center=True, scale=True):
    """Layer normalization: normalize along one axis with the data's own mean and variance.

    out = (data - mean) / sqrt(var + epsilon) * gamma + beta, the statistics taken over
    `axis` for each position of the other axes.

    Parameters
    ----------
    axis : int, optional
        The axis to normalize over. Defaults to -1 (the last).

    Returns
    -------
    result : relay.Expr
        The normalized tensor, of data's shape.
    """
    return LAYER_NORM(data, gamma, beta, attrs=LayerNormAttrs(axis, epsilon, center, scale))


# --- nn.lrn --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LRNAttrs(Attrs):
    size: int = 5
    axis: int = 1
    bias: float = 2.0
    alpha: float = 0.00001
    beta: float = 0.75

    def __post_init__(self):
        object.__setattr__(self, "size", C.ints(self.size, 1, "size", minimum=1)[0])
        object.__setattr__(self, "axis", int(self.axis))
        for name in ("bias", "alpha", "beta"):
            object.__setattr__(self, name, float(getattr(self, name)))


def _lrn_rel(arg_types, attrs) -> TensorType:
    """Same type as data; axis must be in range."""
    data = C.tensor_arg("nn.lrn", arg_types[0], "data")
    C.norm_axis("nn.lrn", attrs.axis, data.ndim, data=data)
    return data


def _lrn_ref(x, attrs):
    """TVM semantics: out = x / (bias + alpha / size * sum of x^2 over the channel window)^beta,
    the window for channel i being [i - size // 2, i - size // 2 + size) clipped to the axis."""
    ax = attrs.axis % x.ndim
    sq = np.moveaxis(x.astype("float64") ** 2, ax, -1)
    c = sq.shape[-1]
    csum = np.concatenate([np.zeros(sq.shape[:-1] + (1,)), sq.cumsum(-1)], axis=-1)
    lo = np.clip(np.arange(c) - attrs.size // 2, 0, c)
    hi = np.clip(np.arange(c) - attrs.size // 2 + attrs.size, 0, c)
    window = np.moveaxis(csum[..., hi] - csum[..., lo], -1, ax)
    return (x / (attrs.bias + attrs.alpha / attrs.size * window) ** attrs.beta).astype(x.dtype)


def _lrn_samples(rng):
    n = S.FLOAT16_REDUCTION_TERMS
    return [Sample([S.rand(rng, (1, 7, 3, 3))], LRNAttrs()),
            Sample([S.rand(rng, (2, 4, 5), "float64")], LRNAttrs(size=3, axis=1, bias=1.0, alpha=0.5, beta=0.5)),
            Sample([S.rand(rng, (2, 3, 6))], LRNAttrs(size=4, axis=-1, bias=1.5, alpha=0.2, beta=0.75),
                   "even size: window [i-2, i+2)"),
            Sample([S.rand(rng, (1, n, 1, 1), "float16", 0.5, 0.7)], LRNAttrs(size=n, bias=1.0, alpha=2.0, beta=1.0),
                   "float16, long window (alpha/size * window sum is 0.4 to 0.7)")]


def _lrn_compute(attrs, inputs, out_type):
    """Stages: the sum of x^2 over the clipped channel window [i - size//2, i - size//2 + size)
    (a reduction over `size` taps with a where= mask), then x / (bias + alpha/size * sum)^beta."""
    x, = inputs
    ax, acc, tag = T.norm_axis(attrs.axis, x.ndim), T.acc_dtype(x.dtype), LRN.tag
    channels = T.dims(x)[ax]
    r = te.reduce_axis((0, attrs.size), "lrn_k")

    def window(*i):
        c = i[ax] - attrs.size // 2 + r.var
        v = x[T.insert(T.drop(i, ax), ax, c)].astype(acc)
        return te.sum(v * v, axis=r, where=T.in_range(c, 0, channels))
    sq = te.compute(x.shape, window, name="lrn_sqsum", tag=tag)
    bias, scale, beta = (T.const(v, acc) for v in (attrs.bias, attrs.alpha / attrs.size, attrs.beta))
    return [te.compute(x.shape, lambda *i: (x[i].astype(acc) / te.power(bias + scale * sq[i], beta))
                       .astype(x.dtype), name="lrn", tag=tag)]


LRN = defop("nn.lrn", inputs=("data",), attrs=LRNAttrs, rel=_lrn_rel, pattern=OpPattern.OPAQUE, ref=_lrn_ref,
            samples=_lrn_samples, level=2, compute=_lrn_compute,
            doc="out = data / (bias + alpha/size * window_sum(data^2))^beta")


def lrn(data, size=5, axis=1, bias=2, alpha=0.00001, beta=0.75):
    """Local response normalization across channels.

    out = data / (bias + alpha / size * sum of data**2 over a window of `size` channels
    centred on each one) ** beta.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    size : int, optional
        The number of channels in the window. Defaults to 5.
    axis : int, optional
        The channel axis. Defaults to 1 (NCHW).
    bias : float, optional
        The offset added inside the power, which keeps the denominator away from zero.
        Defaults to 2.
    alpha : float, optional
        The scale of the windowed sum of squares (divided by `size`). Defaults to 0.00001.
    beta : float, optional
        The exponent. Defaults to 0.75.

    Returns
    -------
    result : relay.Expr
        The normalized tensor, of data's shape.
    """
    return LRN(data, attrs=LRNAttrs(size, axis, bias, alpha, beta))


__all__ = ["batch_norm", "layer_norm", "lrn", "BatchNormAttrs", "LayerNormAttrs", "LRNAttrs"]
