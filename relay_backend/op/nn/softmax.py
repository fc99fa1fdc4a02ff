"""nn.softmax and nn.log_softmax along one axis. OPAQUE, as in TVM: they reduce and then map, so
the fuser treats them as their own kernels. References subtract the max for stability."""
import dataclasses

import numpy as np

from ... import te
from ...ir.attrs import Attrs
from ...ir.types import TensorType
from .. import samples as S
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T


@dataclasses.dataclass(frozen=True)
class SoftmaxAttrs(Attrs):
    axis: int = -1

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))


def _make_rel(op):
    def rel(arg_types, attrs) -> TensorType:
        """Same type as data; the axis must exist and the dtype must be a float."""
        data = C.tensor_arg(op, arg_types[0], "data")
        C.norm_axis(op, attrs.axis, data.ndim, data=data)
        if np.dtype(data.dtype).kind != "f":
            raise C.rel_error(op, f"expects a floating-point tensor, got {data.dtype}; cast first", data=data)
        return data
    return rel


def _shifted(x, axis):
    x64 = x.astype("float64")
    return x64 - x64.max(axis=axis, keepdims=True)


def _softmax_ref(x, attrs):
    e = np.exp(_shifted(x, attrs.axis))
    return (e / e.sum(axis=attrs.axis, keepdims=True)).astype(x.dtype)


def _log_softmax_ref(x, attrs):
    s = _shifted(x, attrs.axis)
    return (s - np.log(np.exp(s).sum(axis=attrs.axis, keepdims=True))).astype(x.dtype)


def _samples(rng):
    A = SoftmaxAttrs
    return [Sample([S.rand(rng, (2, 10), low=-5, high=5)], A()),
            Sample([S.rand(rng, (2, 3, 4))], A(axis=1)),
            Sample([S.rand(rng, (3, 5), "float64", -30, 30)], A(axis=0), "large logits"),
            Sample([S.rand(rng, (4, 8), "float16")], A(axis=-1)),
            Sample([S.rand(rng, (7,))], A(axis=0)),
            Sample([_dominant_first(S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS), "float16", -5, -3))], A(),
                   "float16, long axis: many small terms next to one large one")]


def _dominant_first(x):
    """Logits whose first entry holds about half of the softmax mass: the other terms are each
    below half a float16 ulp of the running sum, so adding up in float16 would drop them."""
    x[..., 0] = 4
    return x


def _shifted_stages(x, axis, tag, name):
    """(x - max) in the accumulation dtype (float32 for float16) as an expression builder,
    and the stage sum(exp(x - max)) along axis; the max is its own stage."""
    shape = T.dims(x)
    acc = T.acc_dtype(x.dtype)
    mx = T.reduce_along(shape, axis, lambda i: x[i], te.max, name + "_max", tag)

    def shifted(i):
        return x[i].astype(acc) - mx[T.drop(i, axis)].astype(acc)
    return shape, shifted


def _softmax_compute(attrs, inputs, out_type):
    """Stages: max along axis, exp(x - max), its sum, and the division (numerically stable)."""
    x, = inputs
    axis, tag = T.norm_axis(attrs.axis, x.ndim), SOFTMAX.tag
    shape, shifted = _shifted_stages(x, axis, tag, "softmax")
    ex = te.compute(shape, lambda *i: te.exp(shifted(i)), name="softmax_exp", tag=tag)
    total = T.reduce_along(shape, axis, lambda i: ex[i], te.sum, "softmax_sum", tag)
    return [te.compute(shape, lambda *i: (ex[i] / total[T.drop(i, axis)]).astype(x.dtype),
                       name="softmax", tag=tag)]


def _log_softmax_compute(attrs, inputs, out_type):
    """Stages: max along axis, sum of exp(x - max), then (x - max) - log(sum)."""
    x, = inputs
    axis, tag = T.norm_axis(attrs.axis, x.ndim), LOG_SOFTMAX.tag
    shape, shifted = _shifted_stages(x, axis, tag, "log_softmax")
    total = T.reduce_along(shape, axis, lambda i: te.exp(shifted(i)), te.sum, "log_softmax_sum", tag)
    return [te.compute(shape, lambda *i: (shifted(i) - te.log(total[T.drop(i, axis)])).astype(x.dtype),
                       name="log_softmax", tag=tag)]


SOFTMAX = defop("nn.softmax", inputs=("data",), attrs=SoftmaxAttrs, rel=_make_rel("nn.softmax"),
                pattern=OpPattern.OPAQUE, ref=_softmax_ref, samples=_samples, level=1,
                compute=_softmax_compute,
                doc="out = exp(x - max) / sum(exp(x - max)) along axis")
LOG_SOFTMAX = defop("nn.log_softmax", inputs=("data",), attrs=SoftmaxAttrs, rel=_make_rel("nn.log_softmax"),
                    pattern=OpPattern.OPAQUE, ref=_log_softmax_ref, samples=_samples, level=1,
                    compute=_log_softmax_compute,
                    doc="out = (x - max) - log(sum(exp(x - max))) along axis")


FAST_SOFTMAX = defop("nn.fast_softmax", inputs=("data",), attrs=SoftmaxAttrs,
                     rel=_make_rel("nn.fast_softmax"), pattern=OpPattern.OPAQUE, ref=_softmax_ref,
                     samples=_samples, level=1, compute=_softmax_compute,
                     doc="softmax with fast exp (FastMath's target); the compiled exp is already "
                         "the fast polynomial, so it shares softmax's stages")


# The parameters the softmax constructors share (constructor_docs completes their docstrings)
SOFTMAX_PARAMETERS = {
    "data": ("relay.Expr", "The input tensor (float)."),
    "axis": ("int, optional", "The axis to normalize over; negative values count from the last axis."),
}
NORMALIZED = ("result", "relay.Expr", "A tensor of data's shape whose values along `axis` sum to 1.")


@documented(SOFTMAX_PARAMETERS, NORMALIZED)
def softmax(data, axis=-1):
    """Softmax: exp(x) / sum(exp(x)) along one axis, computed stably."""
    return SOFTMAX(data, attrs=SoftmaxAttrs(axis))


@documented(SOFTMAX_PARAMETERS, NORMALIZED)
def fast_softmax(data, axis=-1):
    """Softmax for FastMath, with a fast exponential (here the same kernel as softmax)."""
    return FAST_SOFTMAX(data, attrs=SoftmaxAttrs(axis))


@documented(SOFTMAX_PARAMETERS, ("result", "relay.Expr", "A tensor of data's shape."))
def log_softmax(data, axis=-1):
    """The logarithm of softmax along one axis: x - log(sum(exp(x))), computed stably."""
    return LOG_SOFTMAX(data, attrs=SoftmaxAttrs(axis))


__all__ = ["softmax", "fast_softmax", "log_softmax", "SoftmaxAttrs"]
