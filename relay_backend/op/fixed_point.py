"""Fixed-point rescaling of int32 tensors, the integer core of requantization:
fixed_point_multiply (one multiplier * 2**shift for the whole tensor) and
fixed_point_multiply_per_axis (a multiplier and shifts per channel), with TVM's
q_multiply_shift arithmetic.

The multiplier is a Q31 number (value = multiplier / 2**31). For an element x: shift left by
the left shift, multiply by the multiplier in 64 bits, add half of the last unit kept
(2**(right shift + 30)), shift right arithmetically by right shift + 31, and keep the low 32
bits. A multiplier of exactly 2**30 (one half) is TVM's power-of-two case: a plain shift of x
in 32 bits, rounding half up when it shifts right. 64-bit products wrap (the kernels multiply
in uint64, so no signed overflow is undefined), as the numpy references do.
"""
import dataclasses

import numpy as np

from .. import te, tir
from ..errors import AttrsError, TypeInferenceError
from ..ir.attrs import Attrs, always_printed, as_int_tuple
from ..ir.types import TensorType, type_to_str
from . import index_math as IM
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor, normalize_axes

Q = 31                      # fractional bits of the multiplier
HALF = 1 << 30              # the multiplier of one half: TVM's power-of-two path
MAX_SHIFT = 32              # |shift| beyond this would shift a 64-bit product out entirely


def _int32_tensor(op_name, t, what):
    t = expect_tensor(t, what)
    if t.dtype != "int32":
        raise TypeInferenceError(f"{op_name}: {what} must be int32, got {type_to_str(t)}; "
                                 f'cast it first (relay.cast(x, "int32"))')
    return t


# --- the arithmetic, shared by references and computes -----------------------------------------
def _round_shift_ref(product, right):
    """(product + 2**(right - 1)) >> right in wrapping int64 (right >= 1)."""
    with np.errstate(over="ignore"):
        rounded = (product.astype("uint64") + (np.uint64(1) << (right.astype("uint64") - np.uint64(1))))
    return rounded.view("int64") >> right.astype("int64")


def multiply_shift_ref(x, multiplier, left, right):
    """q_multiply_shift on numpy arrays (broadcasting): int32 result."""
    wide = np.left_shift(x.astype("int64"), np.asarray(left, "int64"))
    with np.errstate(over="ignore"):
        product = (wide.astype("uint64") * np.asarray(multiplier, "int64").astype("uint64")).view("int64")
    return _round_shift_ref(product, np.asarray(right, "int64") + Q).astype("int32")


def _te_round_shift(product, right):
    one = tir.const(1, "uint64")
    bias = te.shift_left(one, right.astype("uint64") - one)
    return te.shift_right((product.astype("uint64") + bias).astype("int64"), right.astype("int64"))


def te_multiply_shift(x, multiplier, left, right):
    """The te expression of q_multiply_shift (left, right: int32 in [0, MAX_SHIFT])."""
    wide = te.shift_left(x.astype("int64"), left.astype("int64"))
    product = (wide.astype("uint64") * multiplier.astype("int64").astype("uint64")).astype("int64")
    return _te_round_shift(product, right + tir.const(Q, "int32")).astype("int32")


# --- fixed_point_multiply ----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FixedPointMultiplyAttrs(Attrs):
    multiplier: int = always_printed(HALF)
    shift: int = always_printed(0)

    def __post_init__(self):
        for name in ("multiplier", "shift"):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise AttrsError(f"fixed_point_multiply: {name} must be an int, got {value!r}")
            object.__setattr__(self, name, int(value))
        if not -(1 << 31) <= self.multiplier < (1 << 31):
            raise AttrsError(f"fixed_point_multiply: multiplier {self.multiplier} is not an int32 (a Q31 number)")
        if abs(self.shift) > MAX_SHIFT:
            raise AttrsError(f"fixed_point_multiply: shift {self.shift} is outside [-{MAX_SHIFT}, {MAX_SHIFT}]")


def _fpm_rel(arg_types, attrs) -> TensorType:
    return _int32_tensor("fixed_point_multiply", arg_types[0], "data")


def _power_of_two(attrs) -> bool:
    """TVM's shortcut for a multiplier of one half, where the shift fits a 32-bit value (a
    right shift by more than 31 takes the general path, which gives the same value)."""
    return attrs.multiplier == HALF and attrs.shift - 1 >= -31


def _fpm_ref(x, attrs):
    if _power_of_two(attrs):
        exponent = attrs.shift - 1
        if exponent >= 0:
            return np.left_shift(x, np.int32(exponent))
        with np.errstate(over="ignore"):
            return (x + np.int32(1 << (-exponent - 1))) >> np.int32(-exponent)
    return multiply_shift_ref(x, attrs.multiplier, max(attrs.shift, 0), max(-attrs.shift, 0))


def _fpm_element(attrs, value):
    if _power_of_two(attrs):
        exponent = attrs.shift - 1
        if exponent >= 0:
            return te.shift_left(value, tir.const(exponent, "int32"))
        rounding = tir.const(1 << (-exponent - 1), "uint32")
        summed = (value.astype("uint32") + rounding).astype("int32")     # wraps, as int32 in TVM
        return te.shift_right(summed, tir.const(-exponent, "int32"))
    return te_multiply_shift(value, tir.const(attrs.multiplier, "int32"), tir.const(max(attrs.shift, 0), "int32"),
                             tir.const(max(-attrs.shift, 0), "int32"))


def _fpm_compute(attrs, inputs, out_type):
    x, = inputs
    return [IM.compute(FIXED_POINT_MULTIPLY, IM.te_dims(x), lambda *i: _fpm_element(attrs, x[i]))]


def _int32_values(rng, shape, low=-(1 << 31), high=(1 << 31) - 1):
    values = rng.integers(low, high, size=shape, endpoint=True).astype("int32")
    return values


FIXED_POINT_MULTIPLY = defop(
    "fixed_point_multiply", inputs=("data",), attrs=FixedPointMultiplyAttrs, rel=_fpm_rel,
    pattern=OpPattern.ELEMWISE, ref=_fpm_ref, compute=_fpm_compute, level=10,
    samples=lambda rng: [Sample([_int32_values(rng, (2, 5), -5000, 5000)], FixedPointMultiplyAttrs(1395864371, -3)),
                         Sample([_int32_values(rng, (7,))], FixedPointMultiplyAttrs(-1073741823, 2)),
                         Sample([_int32_values(rng, (3, 2))], FixedPointMultiplyAttrs(2147483647, 0)),
                         Sample([_int32_values(rng, (4,), -99, 99)], FixedPointMultiplyAttrs(HALF, -4)),
                         Sample([_int32_values(rng, (4,), -99, 99)], FixedPointMultiplyAttrs(HALF, 5)),
                         Sample([_int32_values(rng, ())], FixedPointMultiplyAttrs(HALF, 0))],
    doc="round(data * multiplier * 2**(shift - 31)) in int32 (TVM's q_multiply_shift)")


def fixed_point_multiply(data, multiplier, shift):
    """relay.fixed_point_multiply: data * (multiplier / 2**31) * 2**shift, rounded, in int32.

    Parameters
    ----------
    data : relay.Expr
        The int32 input tensor.
    multiplier : int
        The Q31 fixed-point factor: its value is multiplier / 2**31.
    shift : int
        The power of two applied as well: positive shifts left, negative shifts right (with
        rounding).
    Returns
    -------
    result : relay.Expr
        The rescaled int32 tensor.
    """
    return FIXED_POINT_MULTIPLY(data, attrs=FixedPointMultiplyAttrs(multiplier, shift))


# --- fixed_point_multiply_per_axis -------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FixedPointMultiplyPerAxisAttrs(Attrs):
    is_lshift_required: bool = False
    is_rshift_required: bool = False
    axes: tuple = always_printed(())

    def __post_init__(self):
        object.__setattr__(self, "is_lshift_required", bool(self.is_lshift_required))
        object.__setattr__(self, "is_rshift_required", bool(self.is_rshift_required))
        object.__setattr__(self, "axes", as_int_tuple(self.axes, name="axes") or ())


def _per_axis_axes(data, attrs):
    """The axes, non-negative, in the parameters' order (validated by normalize_axes)."""
    normalize_axes(attrs.axes, data.ndim, "fixed_point_multiply_per_axis: axes")
    return tuple(a % data.ndim for a in attrs.axes)


def _per_axis_rel(arg_types, attrs) -> TensorType:
    op = "fixed_point_multiply_per_axis"
    data = _int32_tensor(op, arg_types[0], "data")
    want = tuple(data.shape[a] for a in _per_axis_axes(data, attrs))
    for t, what in zip(arg_types[1:], ("fp_multiplier", "left_shift", "right_shift")):
        t = _int32_tensor(op, t, what)
        if len(t.shape) != len(want) or any(IM.is_static(a) and IM.is_static(b) and int(a) != int(b)
                                            for a, b in zip(t.shape, want)):
            raise TypeInferenceError(f"{op}: {what} must have the shape of data at axes {attrs.axes}, "
                                     f"{want}, got {type_to_str(t)} (data: {type_to_str(data)})")
    return data


def _clamp_shift(values):
    return np.clip(values, 0, MAX_SHIFT)


def _per_axis_ref(x, multiplier, left, right, attrs):
    axes = tuple(a % x.ndim for a in attrs.axes)
    order = np.argsort(axes)
    shape = [1] * x.ndim
    for a in axes:
        shape[a] = x.shape[a]

    def spread(v):   # parameters laid out along their axes, broadcast against x
        return np.transpose(v, order).reshape(shape) if v.ndim else v
    lshift = _clamp_shift(spread(left)) if attrs.is_lshift_required else np.zeros((), "int32")
    return multiply_shift_ref(x, spread(multiplier), lshift, _clamp_shift(spread(right)))


def _per_axis_compute(attrs, inputs, out_type):
    x, multiplier, left, right = inputs
    axes = tuple(a % len(x.shape) for a in attrs.axes)
    zero, top = tir.const(0, "int32"), tir.const(MAX_SHIFT, "int32")

    def element(*i):
        p = tuple(i[a] for a in axes)
        lshift = tir.min(tir.max(left[p], zero), top) if attrs.is_lshift_required else zero
        return te_multiply_shift(x[i], multiplier[p], lshift, tir.min(tir.max(right[p], zero), top))
    return [IM.compute(FIXED_POINT_MULTIPLY_PER_AXIS, IM.te_dims(x), element)]


def _per_axis_samples(rng):
    def params(shape):   # Q31 multipliers in [0.25, 1), left shifts 0..2, right shifts 0..8
        return [rng.integers(1 << 29, (1 << 31) - 1, size=shape).astype("int32"),
                rng.integers(0, 3, size=shape).astype("int32"), rng.integers(0, 9, size=shape).astype("int32")]
    return [Sample([_int32_values(rng, (2, 3, 4), -3000, 3000), *params((3,))],
                   FixedPointMultiplyPerAxisAttrs(True, True, (1,))),
            Sample([_int32_values(rng, (4, 2)), *params((2,))], FixedPointMultiplyPerAxisAttrs(False, True, (-1,))),
            Sample([_int32_values(rng, (3, 2, 2), -100, 100), *params((2, 3))],      # parameters[k, c] for
                   FixedPointMultiplyPerAxisAttrs(True, False, (2, 0)))]             # data[c, :, k]


FIXED_POINT_MULTIPLY_PER_AXIS = defop(
    "fixed_point_multiply_per_axis", inputs=("data", "fp_multiplier", "left_shift", "right_shift"),
    attrs=FixedPointMultiplyPerAxisAttrs, rel=_per_axis_rel, pattern=OpPattern.BROADCAST,
    ref=_per_axis_ref, compute=_per_axis_compute, level=10, samples=_per_axis_samples,
    doc="fixed_point_multiply with a multiplier and shifts per index of `axes` (per-channel requantize)")


def fixed_point_multiply_per_axis(x, fp_multiplier, left_shift, right_shift, is_lshift_required,
                                  is_rshift_required, axes):
    """relay.op.fixed_point_multiply_per_axis (TVM's _make form): per-channel q_multiply_shift.
    Shift amounts are clamped to [0, 32]."""
    return FIXED_POINT_MULTIPLY_PER_AXIS(x, fp_multiplier, left_shift, right_shift, attrs=FixedPointMultiplyPerAxisAttrs(
        is_lshift_required, is_rshift_required, axes))


__all__ = ["fixed_point_multiply", "fixed_point_multiply_per_axis", "FixedPointMultiplyAttrs",
           "FixedPointMultiplyPerAxisAttrs", "multiply_shift_ref", "te_multiply_shift"]
