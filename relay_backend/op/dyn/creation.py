"""dyn.arange: arange whose start, stop and step are run-time scalars, so its length is known
only when it runs (dyn.full, dyn.zeros and dyn.ones live in transform.py beside the ops they
shape).

`relay.arange` builds it when a limit is a Relay expression other than a constant. It is the
static `arange` with its ArangeAttrs read from the three scalar inputs (common.py's defdyn), so
the reference, the VM's shape function and DynamicToStatic (constant limits become `arange`)
agree with the static op by construction: limits are cast to dtype's kind as TVM casts them, a
zero step or a non-finite limit is an InputError naming the values.
"""
import dataclasses

import numpy as np

from ... import te
from ...errors import AttrsError, InputError, TypeInferenceError
from ...ir.attrs import Attrs, always_printed
from ...ir.types import Any, TensorType, type_to_str
from ..compute_common import cast as te_cast
from ..creation import ARANGE, ArangeAttrs
from ..registry import Sample
from ..relations import expect_tensor
from .common import defdyn, te_out_shape


@dataclasses.dataclass(frozen=True)
class DynArangeAttrs(Attrs):
    """The dtype of the values (the limits are the op's three scalar inputs)."""

    dtype: str = always_printed("float32")

    def __post_init__(self):
        try:
            object.__setattr__(self, "dtype", str(np.dtype(self.dtype)))
        except TypeError as err:
            raise AttrsError(f"dyn.arange: unknown dtype {self.dtype!r}") from err


_LIMITS = ("start", "stop", "step")


def _arange_rel(arg_types, attrs):
    for name, ty in zip(_LIMITS, arg_types):
        t = expect_tensor(ty, f"dyn.arange {name}")
        if t.ndim != 0:
            raise TypeInferenceError(f"dyn.arange: {name} must be a scalar (0-d tensor), got {type_to_str(t)}")
    return TensorType((Any(),), attrs.dtype)


def _arange_static(attrs, values):
    limits = []
    for name, value in zip(_LIMITS, values):
        arr = np.asarray(value)
        if arr.dtype.kind not in "iuf":
            raise InputError(f"dyn.arange: {name} must be a number, got dtype {arr.dtype}")
        limits.append(arr.item())
    return ARANGE, ArangeAttrs(*limits, attrs.dtype)


def _arange_compute(attrs, inputs, out_type):
    """start + step * i in float64, converted to dtype (as arange's reference); the length is the
    output buffer's, which the VM allocates from the shape function."""
    start, _, step = inputs

    def limit(scalar):          # ArangeAttrs truncates limits to an integer dtype first
        value = scalar[()]
        if np.dtype(attrs.dtype).kind in "iu":
            value = te_cast(value, attrs.dtype)
        return te_cast(value, "float64")
    first, delta = limit(start), limit(step)
    return [te.compute(te_out_shape(out_type, "arange"),
                       lambda i: te_cast(first + delta * i.astype("float64"), attrs.dtype),
                       name="T_dyn_arange", tag="opaque")]


def _samples(rng):
    def scalars(*values, dtype="int32"):
        return [np.asarray(v, dtype=dtype) for v in values]
    return [Sample(scalars(0, 5, 1), DynArangeAttrs("int32")),
            Sample(scalars(1.5, -2.0, -0.5, dtype="float32"), DynArangeAttrs("float32")),
            Sample(scalars(3, 1, 1), DynArangeAttrs("int64"))]


ARANGE_DYN = defdyn(
    "dyn.arange", inputs=_LIMITS, static_inputs=(), attrs=DynArangeAttrs, to_static=_arange_static,
    rel=_arange_rel, compute=_arange_compute, samples=_samples,
    doc="arange(start, stop, step) with the limits read at run time")


def arange(start, stop, step, dtype="float32"):
    """dyn.arange: evenly spaced values whose limits are known only at run time
    (relay.arange builds it for non-constant limits).

    Parameters
    ----------
    start : relay.Expr
        A scalar, the first value.
    stop : relay.Expr
        A scalar, the end of the interval (excluded).
    step : relay.Expr
        A scalar, the spacing between values.
    dtype : str, optional
        The dtype of the result. Defaults to "float32".

    Returns
    -------
    result : relay.Expr
        The 1-D tensor of values; the VM computes its length when it runs.
    """
    return ARANGE_DYN(start, stop, step, attrs=DynArangeAttrs(dtype))


__all__ = ["arange"]
