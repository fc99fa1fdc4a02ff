"""Tensor creation: full (a scalar input), zeros and ones (no inputs), arange (re-exported by
op/transform.py). All are ELEMWISE; shapes and arange limits are static attrs, so their te
computes (compute_common.shaped_compute) have static shapes.
"""
import dataclasses
import math

import numpy as np

from ..errors import AttrsError, TypeInferenceError
from ..ir import expr as _expr
from ..ir.attrs import Attrs, always_printed, as_int_tuple
from ..ir.types import TensorType, type_to_str
from .. import tir
from . import samples as S
from .compute_common import cast as _te_cast, shaped_compute
from .constructor_docs import documented
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor
from .static_args import is_dynamic_arg, static_ints, static_scalar


@dataclasses.dataclass(frozen=True)
class InitOpAttrs(Attrs):
    """shape and dtype of a created tensor; dtype "" (full only) means the fill value's dtype."""
    shape: tuple = always_printed(())
    dtype: str = always_printed("float32")   # Relay's default is "none": any dtype differs

    def __post_init__(self):
        shape = as_int_tuple(self.shape, name="shape")
        if any(d < 0 for d in shape):
            raise AttrsError(f"shape {shape} has a negative dim")
        object.__setattr__(self, "shape", shape)
        if self.dtype:
            try:
                object.__setattr__(self, "dtype", str(np.dtype(self.dtype)))
            except TypeError as err:
                raise AttrsError(f"unknown dtype {self.dtype!r}") from err


def _full_rel(arg_types, attrs):
    fill = expect_tensor(arg_types[0], "full fill_value")
    if fill.ndim != 0:
        raise TypeInferenceError(f"full: fill_value must be a scalar (0-d tensor), got {type_to_str(fill)}; "
                                 "use broadcast_to to expand a tensor")
    return TensorType(attrs.shape, attrs.dtype or fill.dtype)


def _init_rel(op_name):
    def rel(arg_types, attrs):
        if arg_types:
            raise TypeInferenceError(f"{op_name} takes no inputs, got {len(arg_types)}")
        if not attrs.dtype:
            raise TypeInferenceError(f"{op_name}: dtype must be given")
        return TensorType(attrs.shape, attrs.dtype)
    return rel


FULL = defop(
    "full", inputs=("fill_value",), attrs=InitOpAttrs, rel=_full_rel, pattern=OpPattern.ELEMWISE, level=3,
    ref=lambda v, a: np.full(a.shape, v, dtype=a.dtype or v.dtype),
    compute=shaped_compute("full", lambda attrs, dtype, i, inputs: _te_cast(inputs[0][()], dtype)),
    samples=lambda rng: [Sample([S.rand(rng, ())], InitOpAttrs((2, 3))),
                         Sample([np.array(7, "int32")], InitOpAttrs((4,), "")),
                         Sample([np.array(2.5, "float32")], InitOpAttrs((2, 1, 2), "float64")),
                         Sample([np.array(3, "int64")], InitOpAttrs((), "int32"))])
ZEROS = defop(
    "zeros", inputs=(), attrs=InitOpAttrs, rel=_init_rel("zeros"), pattern=OpPattern.ELEMWISE, level=3,
    ref=lambda a: np.zeros(a.shape, a.dtype),
    compute=shaped_compute("zeros", lambda attrs, dtype, i, inputs: tir.const(0, dtype)),
    samples=lambda rng: [Sample([], InitOpAttrs((2, 3))), Sample([], InitOpAttrs((4,), "int32")),
                         Sample([], InitOpAttrs((), "float64"))])
ONES = defop(
    "ones", inputs=(), attrs=InitOpAttrs, rel=_init_rel("ones"), pattern=OpPattern.ELEMWISE, level=3,
    ref=lambda a: np.ones(a.shape, a.dtype),
    compute=shaped_compute("ones", lambda attrs, dtype, i, inputs: tir.const(1, dtype)),
    samples=lambda rng: [Sample([], InitOpAttrs((3, 2))), Sample([], InitOpAttrs((5,), "int64")),
                         Sample([], InitOpAttrs((1, 1), "float16"))])


# --- arange ------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ArangeAttrs(Attrs):
    """Static start/stop/step, already converted to dtype's kind (int dtypes truncate, as TVM casts)."""
    start: float = always_printed(0.0)
    stop: float = always_printed(0.0)
    step: float = always_printed(1.0)
    dtype: str = always_printed("float32")

    def __post_init__(self):
        try:
            dtype = np.dtype(self.dtype)
        except TypeError as err:
            raise AttrsError(f"arange: unknown dtype {self.dtype!r}") from err
        object.__setattr__(self, "dtype", str(dtype))
        conv = int if dtype.kind in "iu" else float
        for name in ("start", "stop", "step"):
            value = getattr(self, name)
            if not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(value):
                raise AttrsError(f"arange: {name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, conv(value))
        if self.step == 0:
            raise AttrsError("arange: step must not be 0")

    @property
    def length(self) -> int:
        return max(0, math.ceil((self.stop - self.start) / self.step))


def _arange_rel(arg_types, attrs):
    if arg_types:
        raise TypeInferenceError(f"arange takes no tensor inputs (its limits are attrs), got {len(arg_types)}")
    return TensorType((attrs.length,), attrs.dtype)


def _arange_ref(attrs):
    return (attrs.start + attrs.step * np.arange(attrs.length, dtype="float64")).astype(attrs.dtype)


def _te_arange(attrs, dtype, indices, inputs):
    """start + step * i in float64, then converted to dtype (ints truncate), like the reference."""
    (i,) = indices
    start, step = tir.const(float(attrs.start), "float64"), tir.const(float(attrs.step), "float64")
    value = start + step * i.astype("float64")
    return _te_cast(value, dtype)


ARANGE = defop(
    "arange", inputs=(), attrs=ArangeAttrs, rel=_arange_rel, pattern=OpPattern.ELEMWISE, ref=_arange_ref, level=3,
    compute=shaped_compute("arange", _te_arange),
    samples=lambda rng: [Sample([], ArangeAttrs(0, 5, 1)), Sample([], ArangeAttrs(1.5, -2.0, -0.5)),
                         Sample([], ArangeAttrs(2, 11, 3, "int32")), Sample([], ArangeAttrs(0, 0.95, 0.1, "float64")),
                         Sample([], ArangeAttrs(3, 1, 1, "int64"))])


def _scalar_expr(value, dtype):
    """A limit of dyn.arange: a relay expression as given, a Python number as a constant."""
    return value if isinstance(value, _expr.Expr) else _expr.const(np.asarray(value, dtype=dtype))


# --- Python constructors with tvm.relay's names ---------------------------------------------------------------
def _dyn():
    """relay.dyn's constructors (op/dyn builds on this module's ops, so it is imported on use)."""
    from . import dyn
    return dyn


def full(fill_value, shape=(), dtype=""):
    """A tensor of a given shape filled with one value.

    Parameters
    ----------
    fill_value : relay.Expr or float or int
        The scalar every element takes (a Python number becomes a constant).
    shape : tuple of int or relay.Expr, optional
        The shape of the result; () (the default) is a scalar. A non-constant Relay
        expression builds dyn.full.
    dtype : str, optional
        The dtype of the result; "" (the default) keeps the dtype of `fill_value`.

    Returns
    -------
    result : relay.Expr
        The filled tensor.
    """
    if is_dynamic_arg(shape):
        return _dyn().full(fill_value, shape, dtype)
    if not isinstance(fill_value, _expr.Expr):
        fill_value = _expr.const(fill_value, dtype or None)
    return FULL(fill_value, attrs=InitOpAttrs(static_ints(shape, "full", "shape"), dtype))


# the parameters of zeros and ones (constructor_docs completes their docstrings)
FILL_PARAMETERS = {
    "shape": ("tuple of int or relay.Expr",
              "The shape of the result. A non-constant Relay expression builds the dyn variant of "
              "the op (dyn.zeros, dyn.ones), whose shape is known only at run time."),
    "dtype": ("str, optional", "The dtype of the result."),
}


@documented(FILL_PARAMETERS, ("result", "relay.Expr", "The tensor of zeros."))
def zeros(shape, dtype="float32"):
    """A tensor of zeros."""
    if is_dynamic_arg(shape):
        return _dyn().zeros(shape, dtype)
    return ZEROS(attrs=InitOpAttrs(static_ints(shape, "zeros", "shape"), dtype))


@documented(FILL_PARAMETERS, ("result", "relay.Expr", "The tensor of ones."))
def ones(shape, dtype="float32"):
    """A tensor of ones."""
    if is_dynamic_arg(shape):
        return _dyn().ones(shape, dtype)
    return ONES(attrs=InitOpAttrs(static_ints(shape, "ones", "shape"), dtype))


def arange(start, stop=None, step=None, dtype="float32"):
    """Evenly spaced values in the half-open interval [start, stop), as numpy.arange.

    arange(n) gives [0, n). With Python numbers or Relay constants the limits are attrs and
    the length is static; when a limit is any other Relay expression (known only at run
    time) the call is dyn.arange, whose length the VM computes when it runs.

    Parameters
    ----------
    start : float or int or relay.Expr
        The first value; when `stop` is None, the end of the interval and the start is 0.
    stop : None or float or int or relay.Expr, optional
        The end of the interval (excluded). Defaults to None.
    step : None or float or int or relay.Expr, optional
        The spacing between values; None (the default) means 1.
    dtype : str, optional
        The dtype of the result. Defaults to "float32".

    Returns
    -------
    result : relay.Expr
        The 1-D tensor of values.
    """
    limits = (start, stop, step)
    if any(isinstance(v, _expr.Expr) and not isinstance(v, _expr.Constant) for v in limits):
        if stop is None:
            start, stop = 0, start
        if step is None:
            step = 1
        return _dyn().arange(*(_scalar_expr(v, dtype) for v in (start, stop, step)), dtype=dtype)
    start = static_scalar(start, "arange", "start")
    if stop is None:
        start, stop = 0, start
    else:
        stop = static_scalar(stop, "arange", "stop")
    step = 1 if step is None else static_scalar(step, "arange", "step")
    return ARANGE(attrs=ArangeAttrs(start, stop, step, dtype))


__all__ = ["full", "zeros", "ones", "arange"]
