"""Fixed-point rescaling: multiply an int32 tensor by a real multiplier using integers only, as
TVM's QNN requantize does (GetFixedPointMultiplierShift + FixedPointMultiply in
src/relay/qnn/utils.cc), in numpy (the references) and in Relay ops (the canonicalizations).

A multiplier m is split as m = M * 2**(e - 31) with M a 31-bit significand (frexp's, rounded
half away from zero; a significand that rounds up to 2**31 becomes 2**30 with e + 1). Then

    p = int64(x) * (M * 2**max(e, 0))            T = 31 + max(-e, 0)
    UPWARD:    (p + 2**(T-1)) >> T               ties go towards +inf
    TONEAREST: (p + 2**(T-1) - (p < 0)) >> T     ties go away from zero

and the result is cast back to int32. Range rules (TVM leaves them undefined): a zero or
non-finite multiplier gives 0; one below 2**-32 gives 0 (every int32 product rounds to 0);
one of 2**31 or more is clamped to M = 2**31 - 1, e = 31.

The Relay lowering uses only existing ops (multiply, add, floor_divide, where, cast...): a
right shift by T is a floor division by 2**T. With a constant multiplier the parts are computed
here in numpy and become constants; with a multiplier known only at run time (a scale that is a
graph input) the same parts are computed by Relay ops on the multiplier, exactly: an exponent
estimate from log corrected by one either way, and multiplications by powers of two (exact in
floating point) looked up in tables.
"""
import numpy as np

from ...errors import AttrsError
from ...ir.expr import const
from .. import tensor as _t
from ..annotation import stop_fusion as _stop_fusion
from ..indexing import take as _t_take

ROUNDINGS = ("UPWARD", "TONEAREST")
F64, I64 = "float64", "int64"
_MAX_E, _MIN_E = 31, -31


def check_rounding(op_name: str, rounding: str) -> str:
    if rounding not in ROUNDINGS:
        raise AttrsError(f"{op_name}: rounding={rounding!r} must be one of {list(ROUNDINGS)}")
    return rounding


# --- numpy --------------------------------------------------------------------------------------------
def multiplier_parts(multiplier) -> tuple:
    """(M, e) int64 arrays for float multipliers (TVM's GetFixedPointMultiplierShift with the
    range rules of the module docstring)."""
    m = np.asarray(multiplier, dtype=F64)
    m = np.where(np.isfinite(m), m, 0.0)
    sig, e = np.frexp(m)
    mag = np.floor(np.abs(sig) * 2.0 ** 31 + 0.5)
    carry = mag == 2.0 ** 31
    mag = np.where(carry, 2.0 ** 30, mag)
    e = e + carry
    tiny, huge = e < _MIN_E, e > _MAX_E
    mag = np.where(tiny, 0.0, np.where(huge, 2.0 ** 31 - 1, mag))
    e = np.where(tiny, 0, np.where(huge, _MAX_E, e))
    return (np.sign(m) * mag).astype(I64), e.astype(I64)


def rescale_ref(x, multiplier, rounding: str = "UPWARD") -> np.ndarray:
    """int32(x * multiplier) rounded as `rounding`, in exact int64 arithmetic (multiplier
    broadcasts against x)."""
    mant, e = multiplier_parts(multiplier)
    scaled = mant * (np.int64(1) << np.maximum(e, 0))
    shift = 31 + np.maximum(-e, 0)
    half = np.int64(1) << (shift - 1)
    with np.errstate(over="ignore"):
        p = np.asarray(x).astype(I64) * scaled
        if rounding == "TONEAREST":
            half = np.where(p < 0, half - 1, half)
        return ((p + half) >> shift).astype("int32")


# --- Relay --------------------------------------------------------------------------------------------
def _c(value, dtype=F64):
    return const(np.asarray(value, dtype=dtype), dtype=dtype)


_LIMIT = 40                                          # |multiplier| clamped to [2**-40, 2**40]
_NORMALIZE = np.array([2.0 ** -k for k in range(-_LIMIT - 1, _LIMIT + 2)])   # 2**-k at k + 41
_POW2 = np.array([2.0 ** n for n in range(63)])     # exact in float64 and int64


def _lookup(table, index):
    """table[index] for a float64 index expression holding integers (clipped to the table)."""
    return _t_take(_c(table), _t.cast(index, "int32"))


def _cut(expr):
    """Stop fusion here: the steps below use a value several times, and a fused kernel inlines
    every use, so one kernel for the whole decomposition would grow exponentially."""
    return _stop_fusion(expr)


def _parts_expr(m):
    """(M * 2**max(e,0), 2**T) as float64 expressions of a float64 multiplier expression: the
    exponent from log, corrected by one either way (exact whatever log's rounding), the
    significand by multiplying with an exact power of two from a table."""
    a = _t.abs(m)
    a = _t.where(_t.less_equal(a, _c(np.finfo(F64).max)), a, _c(0.0))   # inf / nan -> 0
    a = _cut(_t.clip(a, 2.0 ** -_LIMIT, 2.0 ** _LIMIT))                  # tiny / huge stay so
    e = _t.floor(_t.multiply(_t.log(a), _c(1.0 / np.log(2.0))))
    s = _cut(_t.multiply(a, _lookup(_NORMALIZE, _t.add(e, _c(_LIMIT + 1.0)))))
    big = _t.greater_equal(s, _c(2.0))
    s, e = _t.where(big, _t.multiply(s, _c(0.5)), s), _t.add(e, _t.cast(big, F64))
    s, e = _cut(s), _cut(e)
    small = _t.less(s, _c(1.0))
    s, e = _t.where(small, _t.multiply(s, _c(2.0)), s), _t.subtract(e, _t.cast(small, F64))
    mag = _cut(_t.floor(_t.add(_t.multiply(s, _c(2.0 ** 30)), _c(0.5))))   # s in [1, 2)
    carry = _t.equal(mag, _c(2.0 ** 31))
    mag = _t.where(carry, _c(2.0 ** 30), mag)
    e = _cut(_t.add(_t.add(e, _c(1.0)), _t.cast(carry, F64)))           # frexp's exponent
    drop, huge = _t.less(e, _c(float(_MIN_E))), _t.greater(e, _c(float(_MAX_E)))
    mag = _t.where(drop, _c(0.0), _t.where(huge, _c(2.0 ** 31 - 1), mag))
    e = _cut(_t.clip(e, _MIN_E, _MAX_E))
    mag = _cut(_t.where(_t.less(m, _c(0.0)), _t.negative(mag), mag))
    scaled = _t.multiply(mag, _lookup(_POW2, _t.maximum(e, _c(0.0))))
    divisor = _lookup(_POW2, _t.add(_t.maximum(_t.negative(e), _c(0.0)), _c(31.0)))
    return _cut(scaled), _cut(divisor)


def rescale_expr(x, multiplier, rounding: str = "UPWARD"):
    """The Relay expression of rescale_ref: `x` an integer expression (cast to int64 here),
    `multiplier` a numpy value (a compile-time constant) or a float64 expression broadcasting
    against x (known at run time). Returns an int32 expression."""
    if isinstance(multiplier, np.ndarray) or np.isscalar(multiplier):
        mant, e = multiplier_parts(multiplier)
        scaled = _c(mant * (np.int64(1) << np.maximum(e, 0)), I64)
        shift = 31 + np.maximum(-e, 0)
        divisor, half = _c(np.int64(1) << shift, I64), _c(np.int64(1) << (shift - 1), I64)
    else:
        scaled_f, divisor_f = _parts_expr(multiplier)
        scaled, divisor = _t.cast(scaled_f, I64), _t.cast(divisor_f, I64)
        half = _t.cast(_t.multiply(divisor_f, _c(0.5)), I64)
    p = _t.multiply(_t.cast(x, I64), scaled)
    if rounding == "TONEAREST":
        half = _t.where(_t.less(p, _c(0, I64)), _t.subtract(half, _c(1, I64)), half)
    return _t.cast(_t.floor_divide(_t.add(p, half), divisor), "int32")
