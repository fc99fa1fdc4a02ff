"""Ops about run-time shapes: shape_of (a tensor's shape as a tensor) and dyn.arange (arange
with limits computed at run time).

shape_of's output shape is static (the input's rank), so it runs everywhere; with `Any` input
dims its kernel reads the dims from the input buffer. dyn.arange's length depends on its
inputs' *values*, so its relation gives `(Any,)` and its shape function computes the length
when the VM runs; graph and AOT executors need static shapes and reject it. `relay.arange`
builds dyn.arange when a limit is an expression rather than a number or constant (TVM's arange
takes tensor inputs in every case). Both are OPAQUE, as in TVM: a data-dependent op starts its
own fused group, so its inputs are the group's inputs.
"""
import dataclasses
import math

import numpy as np

from .. import te, tir
from ..errors import AttrsError, ExecutionError, TypeInferenceError
from ..ir.attrs import Attrs
from ..ir.types import Any, TensorType, type_to_str
from .compute_common import cast as _te_cast
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor


def _dtype_attr(op_name: str, dtype) -> str:
    try:
        return str(np.dtype(dtype))
    except TypeError as err:
        raise AttrsError(f"{op_name}: unknown dtype {dtype!r}") from err


# --- shape_of ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ShapeOfAttrs(Attrs):
    """The dtype of the shape tensor (int32 or int64)."""

    dtype: str = "int32"

    def __post_init__(self):
        dtype = _dtype_attr("shape_of", self.dtype)
        if np.dtype(dtype).kind not in "iu":
            raise AttrsError(f"shape_of: dtype must be an integer type, got {dtype}")
        object.__setattr__(self, "dtype", dtype)


def _shape_of_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "shape_of data")
    return TensorType((data.ndim,), attrs.dtype)


def _shape_of_ref(data, attrs):
    return np.asarray(data.shape, dtype=attrs.dtype).reshape((np.ndim(data),))


def _shape_of_compute(attrs, inputs, out_type):
    """out[i] = data.shape[i]: a chain of selects over the (possibly symbolic) dims."""
    data, = inputs

    def element(i):
        value = tir.const(0, attrs.dtype)
        for axis in reversed(range(data.ndim)):
            dim = _te_cast(tir.convert(data.shape[axis]), attrs.dtype)
            value = te.if_then_else(i == axis, dim, value)
        return value

    return [te.compute((data.ndim,), element, name="T_shape_of", tag=SHAPE_OF.tag)]


SHAPE_OF = defop(
    "shape_of", inputs=("data",), attrs=ShapeOfAttrs, rel=_shape_of_rel, pattern=OpPattern.OPAQUE,
    ref=_shape_of_ref, compute=_shape_of_compute, level=10,
    samples=lambda rng: [Sample([rng.standard_normal((2, 3, 4)).astype("float32")], ShapeOfAttrs()),
                         Sample([np.arange(5, dtype="int32")], ShapeOfAttrs("int64"))],
    doc="the shape of a tensor as a 1-d integer tensor")


def shape_of(data, dtype="int32"):
    """relay.shape_of: the shape of `data` as a 1-d tensor of `dtype`."""
    return SHAPE_OF(data, attrs=ShapeOfAttrs(dtype))


# --- dyn.arange ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DynArangeAttrs(Attrs):
    """The dtype of the values (the limits are the op's three scalar inputs)."""

    dtype: str = "float32"

    def __post_init__(self):
        object.__setattr__(self, "dtype", _dtype_attr("dyn.arange", self.dtype))


def _dyn_arange_rel(arg_types, attrs):
    for name, ty in zip(("start", "stop", "step"), arg_types):
        t = expect_tensor(ty, f"dyn.arange {name}")
        if t.ndim != 0:
            raise TypeInferenceError(f"dyn.arange: {name} must be a scalar (0-d tensor), got {type_to_str(t)}")
    return TensorType((Any(),), attrs.dtype)


def _arange_length(start, stop, step) -> int:
    start, stop, step = (np.asarray(v).item() for v in (start, stop, step))
    if step == 0:
        raise ExecutionError("dyn.arange: step is 0")
    if not all(math.isfinite(v) for v in (start, stop, step)):
        raise ExecutionError(f"dyn.arange: limits must be finite, got {start}, {stop}, {step}")
    return max(0, math.ceil((stop - start) / step))


def _dyn_arange_ref(start, stop, step, attrs):
    n = _arange_length(start, stop, step)
    first, delta = np.float64(np.asarray(start).item()), np.float64(np.asarray(step).item())
    return (first + delta * np.arange(n, dtype="float64")).astype(attrs.dtype)


def _dyn_arange_shape(attrs, arrays):
    """The run-time output type: the length follows from the limits' values."""
    return TensorType((_arange_length(*(np.asarray(a) for a in arrays)),), attrs.dtype)


def _dyn_arange_compute(attrs, inputs, out_type):
    """start + step * i in float64, converted to dtype (as the reference); the length is the
    output buffer's, which the VM allocates from the shape function."""
    start, _, step = inputs
    first = _te_cast(start[()], "float64")
    delta = _te_cast(step[()], "float64")
    return [te.compute((te.var("arange_len"),),
                       lambda i: _te_cast(first + delta * i.astype("float64"), attrs.dtype),
                       name="T_dyn_arange", tag=DYN_ARANGE.tag)]


def _dyn_arange_samples(rng):
    def scalars(*values, dtype="int32"):
        return [np.asarray(v, dtype=dtype) for v in values]
    return [Sample(scalars(0, 5, 1), DynArangeAttrs("int32")),
            Sample(scalars(1.5, -2.0, -0.5, dtype="float32"), DynArangeAttrs("float32")),
            Sample(scalars(3, 1, 1), DynArangeAttrs("int64"))]


DYN_ARANGE = defop(
    "dyn.arange", inputs=("start", "stop", "step"), attrs=DynArangeAttrs, rel=_dyn_arange_rel,
    pattern=OpPattern.OPAQUE, ref=_dyn_arange_ref, compute=_dyn_arange_compute,
    shape_func=_dyn_arange_shape, level=3, samples=_dyn_arange_samples,
    doc="arange whose limits are run-time scalars: its length is known only when it runs")


def dyn_arange(start, stop, step, dtype="float32"):
    """arange over scalar expressions (relay.arange builds it when a limit is an expression)."""
    return DYN_ARANGE(start, stop, step, attrs=DynArangeAttrs(dtype))


__all__ = ["shape_of"]
