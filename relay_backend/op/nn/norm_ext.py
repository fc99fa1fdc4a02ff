"""nn.instance_norm, nn.group_norm (OPAQUE, as TVM v0.18) and nn.l2_normalize
(OUT_ELEMWISE_FUSABLE).

group_norm splits the channel axis into num_groups groups and normalizes each (batch, group)
over its channels and every other non-batch axis with its own mean and (biased) variance, then
scales and shifts per channel: out = (x - mean) / sqrt(var + eps) * gamma[c] + beta[c].
instance_norm is group_norm with one group per channel, so one formula serves both. Statistics
are two-pass (mean, then mean of squared deviations) in float32 for float16 data.

l2_normalize: out = x / sqrt(max(sum(x^2 over axis), eps)); axis None (or empty) means all axes.
"""
import dataclasses

import numpy as np

from ... import te
from ...ir.attrs import Attrs
from ...ir.dims import is_static
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from ..constructor_docs import documented
from .misc import channel_params_fill
from .norm import NORM_PARAMETERS, BatchNormAttrs


@dataclasses.dataclass(frozen=True)
class InstanceNormAttrs(BatchNormAttrs):
    """axis, epsilon, center, scale: batch_norm's fields and defaults, as TVM's InstanceNormAttrs."""


@dataclasses.dataclass(frozen=True)
class GroupNormAttrs(Attrs):
    num_groups: int = 1
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True

    def __post_init__(self):
        object.__setattr__(self, "num_groups", C.ints(self.num_groups, 1, "num_groups", minimum=1)[0])
        BatchNormAttrs.__post_init__(self)


def _groups(attrs, channels):
    """The number of groups: one per channel for instance_norm."""
    return attrs.num_groups if isinstance(attrs, GroupNormAttrs) else channels


def _make_rel(op):
    def rel(arg_types, attrs) -> TensorType:
        """(data, gamma (C,), beta (C,)) -> data type; C = data.shape[axis], a multiple of num_groups."""
        data = C.tensor_arg(op, arg_types[0], "data")
        params = {n: C.tensor_arg(op, t, n) for n, t in zip(("gamma", "beta"), arg_types[1:])}
        types = dict(data=data, **params)
        ax = C.norm_axis(op, attrs.axis, data.ndim, **types)
        if ax == 0:
            raise C.rel_error(op, "axis must be a channel axis, not the batch axis 0", **types)
        C.same_dtype(op, **types)
        for name, t in params.items():
            C.channel_vector(op, t, data.shape[ax], name, **types)
        channels = data.shape[ax]
        if isinstance(attrs, GroupNormAttrs) and is_static(channels) and int(channels) % attrs.num_groups:
            raise C.rel_error(op, f"num_groups={attrs.num_groups} does not divide the {channels} channels", **types)
        return data
    return rel


def _group_norm_ref(x, gamma, beta, attrs):
    ax = attrs.axis % x.ndim
    moved = np.moveaxis(x.astype("float64"), ax, 1)
    n, c = moved.shape[:2]
    groups = _groups(attrs, c)
    grouped = moved.reshape(n, groups, -1)
    mean = grouped.mean(axis=2, keepdims=True)
    var = ((grouped - mean) ** 2).mean(axis=2, keepdims=True)
    out = ((grouped - mean) / np.sqrt(var + attrs.epsilon)).reshape(moved.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if attrs.scale:
        out = out * gamma.astype("float64").reshape(shape)
    if attrs.center:
        out = out + beta.astype("float64").reshape(shape)
    return np.ascontiguousarray(np.moveaxis(out, 1, ax)).astype(x.dtype)


def _group_norm_compute(attrs, inputs, out_type):
    """Stages: per-(batch, group) sum, mean, sum of squared deviations, then the normalization
    with the per-channel gamma / beta; float16 math in float32."""
    x, gamma, beta = inputs
    shape = T.dims(x)
    ax = T.norm_axis(attrs.axis, x.ndim)
    channels = shape[ax]
    groups = _groups(attrs, channels)
    per_group = channels // groups
    acc, tag = T.acc_dtype(x.dtype), OPS[type(attrs)].tag
    others = [a for a in range(1, x.ndim) if a != ax]
    count = T.const(1, acc) * per_group
    for a in others:
        count = count * shape[a]

    def over_group(body, name):
        rc = te.reduce_axis((0, per_group), name + "_c")
        rest = [te.reduce_axis((0, shape[a]), f"{name}_{a}") for a in others]

        def f(n, g):
            index = [None] * x.ndim
            index[0], index[ax] = n, g * per_group + rc.var
            for a, r in zip(others, rest):
                index[a] = r.var
            return te.sum(body(tuple(index), n, g), axis=[rc] + rest)
        return te.compute((shape[0], groups), f, name=name, tag=tag)
    total = over_group(lambda i, n, g: x[i].astype(acc), "norm_sum")
    mean = te.compute((shape[0], groups), lambda n, g: total[n, g] / count, name="norm_mean", tag=tag)

    def centered(i, n, g):
        return x[i].astype(acc) - mean[n, g]
    sq = over_group(lambda i, n, g: centered(i, n, g) * centered(i, n, g), "norm_sqsum")
    eps = T.const(attrs.epsilon, acc)

    def normalize(*i):
        c = i[ax]
        n, g = i[0], c // per_group
        value = centered(i, n, g) / te.sqrt(sq[n, g] / count + eps)
        if attrs.scale:
            value = value * gamma[c].astype(acc)
        if attrs.center:
            value = value + beta[c].astype(acc)
        return value.astype(x.dtype)
    return [te.compute(x.shape, normalize, name="group_norm", tag=tag)]


def _norm_inputs(rng, shape, axis, dtype="float32", low=-2.0, high=2.0):
    c = shape[axis]
    return [S.rand(rng, shape, dtype, low, high), S.rand(rng, (c,), dtype, 0.5, 1.5), S.rand(rng, (c,), dtype)]


def _instance_samples(rng):
    A = InstanceNormAttrs
    return [Sample(_norm_inputs(rng, (2, 3, 4, 5), 1), A()),
            Sample(_norm_inputs(rng, (2, 4, 3), -1, "float64"), A(axis=-1, epsilon=1e-3)),
            Sample(_norm_inputs(rng, (1, 2, 6), 1), A(center=False)),
            Sample(_norm_inputs(rng, (1, 2, S.FLOAT16_REDUCTION_TERMS), 1, "float16", 0, 1000), A(),
                   "float16, long rows whose sum and variance overflow float16")]


def _group_samples(rng):
    A = GroupNormAttrs
    return [Sample(_norm_inputs(rng, (2, 6, 3, 3), 1), A(num_groups=3)),
            Sample(_norm_inputs(rng, (1, 3, 4, 4), -1, "float64"), A(num_groups=2, axis=-1, epsilon=1e-3)),
            Sample(_norm_inputs(rng, (2, 4, 5), 1), A(num_groups=1, scale=False)),
            Sample(_norm_inputs(rng, (1, 4, S.FLOAT16_REDUCTION_TERMS // 2), 1, "float16", 0, 1000), A(num_groups=2),
                   "float16, long groups whose sum and variance overflow float16")]


INSTANCE_NORM = defop("nn.instance_norm", inputs=("data", "gamma", "beta"), attrs=InstanceNormAttrs,
                      rel=_make_rel("nn.instance_norm"), pattern=OpPattern.OPAQUE, ref=_group_norm_ref,
                      samples=_instance_samples, level=1, compute=_group_norm_compute,
                      fill_inputs=channel_params_fill(1, 2),
                      doc="out = (data - mean) / sqrt(var + eps) * gamma + beta, statistics per (batch, channel)")
GROUP_NORM = defop("nn.group_norm", inputs=("data", "gamma", "beta"), attrs=GroupNormAttrs,
                   rel=_make_rel("nn.group_norm"), pattern=OpPattern.OPAQUE, ref=_group_norm_ref,
                   samples=_group_samples, level=1, compute=_group_norm_compute, fill_inputs=channel_params_fill(1, 2),
                   doc="out = (data - mean) / sqrt(var + eps) * gamma + beta, statistics per (batch, channel group)")
OPS = {InstanceNormAttrs: INSTANCE_NORM, GroupNormAttrs: GROUP_NORM}


# instance_norm and group_norm take batch_norm's per-channel parameters plus these
GROUP_NORM_PARAMETERS = {
    **NORM_PARAMETERS,
    "data": ("relay.Expr", "The input tensor, (N, C, ...) with the channels on `axis`."),
    "axis": ("int, optional", "The channel axis of `data` (not the batch axis 0)."),
}


@documented(GROUP_NORM_PARAMETERS)
def instance_norm(data, gamma, beta, axis=1, epsilon=1e-5, center=True, scale=True):
    """relay.nn.instance_norm: normalize each (batch, channel) over the remaining axes."""
    return INSTANCE_NORM(data, gamma, beta, attrs=InstanceNormAttrs(axis, epsilon, center, scale))


@documented(GROUP_NORM_PARAMETERS)
def group_norm(data, gamma, beta, num_groups, axis=1, epsilon=1e-5, center=True, scale=True):
    """relay.nn.group_norm: normalize each (batch, group of channels) over the group and the other axes.

    Parameters
    ----------
    num_groups : int
        The number of groups the channels are split into; it divides data.shape[axis].
    """
    return GROUP_NORM(data, gamma, beta, attrs=GroupNormAttrs(num_groups, axis, epsilon, center, scale))


# --- nn.l2_normalize ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class L2NormalizeAttrs(Attrs):
    eps: float = 0.0
    axis: tuple = None

    def __post_init__(self):
        object.__setattr__(self, "eps", float(self.eps))
        if self.axis is not None:
            axis = (self.axis,) if isinstance(self.axis, int) else tuple(int(a) for a in self.axis)
            object.__setattr__(self, "axis", axis or None)


def _l2_axes(attrs, ndim, **types):
    if attrs.axis is None:
        return tuple(range(ndim))
    axes = tuple(C.norm_axis("nn.l2_normalize", a, ndim, **types) for a in attrs.axis)
    if len(set(axes)) != len(axes):
        raise C.rel_error("nn.l2_normalize", f"axis={attrs.axis} repeats an axis", **types)
    return axes


def _l2_rel(arg_types, attrs) -> TensorType:
    """Same type as data; the axes must exist."""
    data = C.tensor_arg("nn.l2_normalize", arg_types[0], "data")
    _l2_axes(attrs, data.ndim, data=data)
    return data


def _l2_ref(x, attrs):
    axes = _l2_axes(attrs, x.ndim)
    x64 = x.astype("float64")
    norm = np.sqrt(np.maximum((x64 * x64).sum(axis=axes, keepdims=True), attrs.eps))
    return (x64 / norm).astype(x.dtype)


def _l2_compute(attrs, inputs, out_type):
    """A keepdims sum of squares over the axes (float16 in float32), then x / sqrt(max(sum, eps))."""
    x, = inputs
    shape, axes, tag = T.dims(x), _l2_axes(attrs, len(x.shape)), L2_NORMALIZE.tag
    acc = T.acc_dtype(x.dtype)
    red = {a: te.reduce_axis((0, shape[a]), f"l2_r{a}") for a in axes}

    def sumsq(*i):
        index = tuple(red[a].var if a in red else k for a, k in enumerate(i))
        v = x[index].astype(acc)
        return te.sum(v * v, axis=list(red.values()))
    kept = [1 if a in red else d for a, d in enumerate(shape)]
    sq = te.compute(kept, sumsq, name="l2_sumsq", tag=tag)
    eps = T.const(attrs.eps, acc)
    return [te.compute(x.shape, lambda *i: (x[i].astype(acc) / te.sqrt(te.max(
        sq[tuple(0 if a in red else k for a, k in enumerate(i))], eps))).astype(x.dtype), name="l2_normalize", tag=tag)]


L2_NORMALIZE = defop(
    "nn.l2_normalize", inputs=("data",), attrs=L2NormalizeAttrs, rel=_l2_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
    ref=_l2_ref, compute=_l2_compute, level=2,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3, 4))], L2NormalizeAttrs(1e-10, (1,))),
                         Sample([S.rand(rng, (3, 5), "float64")], L2NormalizeAttrs(1e-3)),
                         Sample([np.zeros((2, 3), "float32")], L2NormalizeAttrs(0.25, (0, -1)), "eps bounds the norm"),
                         Sample([S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS), "float16", 10, 20)],
                                L2NormalizeAttrs(1e-6, (1,)), "float16, a sum of squares past float16's range")],
    doc="out = data / sqrt(max(sum(data^2 over axis), eps))")


def l2_normalize(data, eps, axis=None):
    """relay.nn.l2_normalize: divide by the L2 norm over `axis` (all axes if None), at least sqrt(eps).

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    eps : float
        The floor of the sum of squares, so the divisor is at least sqrt(eps).
    axis : None or int or tuple of int, optional
        The axes the norm is taken over; None (or empty) means every axis. Defaults to None.

    Returns
    -------
    result : relay.Expr
        The normalized tensor, of data's shape.
    """
    return L2_NORMALIZE(data, attrs=L2NormalizeAttrs(eps, axis))


__all__ = ["instance_norm", "group_norm", "l2_normalize", "InstanceNormAttrs", "GroupNormAttrs", "L2NormalizeAttrs"]
