"""The numpy references, te rules and dtype relations of the less common elementwise ops that
op/tensor.py's tables list: inverse trigonometric and hyperbolic functions, log2 / log10 /
trunc, the float classifiers (isnan, isinf, isfinite), bit operations and shifts.

The te rules give numpy's answers where C or LLVM leave the result undefined: a shift by a
negative amount or by the dtype's width or more gives 0 (left) or the sign fill (right), as
numpy's left_shift / right_shift do, instead of LLVM's poison. asinh, acosh and atanh have no
native intrinsic: they are log1p forms accurate for small arguments, switch to log(|x|) + ln 2
where x * x would overflow, and compute float16 in float32 (as numpy does).
"""
import math

import numpy as np

from .. import te, tir
from ..errors import TypeInferenceError
from ..ir.types import TensorType
from . import samples as S
from .compute_common import is_float
from .registry import Sample
from .relations import broadcast_rel, identity_rel

_LN2 = math.log(2.0)
_BIG = 2.0 ** 28          # beyond this x * x + 1 == x * x in float64; asinh(x) = log(2 |x|)


def quiet(fn):
    """numpy `fn` without floating-point warnings (the kernels give NaN / inf silently)."""
    def ref(*args):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(*args)
    return ref


# --- numpy references ------------------------------------------------------------------------
def float_ref(ufunc):
    """The reference of a float unary op: numpy's ufunc, quiet, in the input's dtype."""
    return lambda x, attrs: quiet(ufunc)(x).astype(x.dtype)


def classify_ref(ufunc):
    """isnan / isinf / isfinite: numpy's classifier, defined on every dtype (ints are finite)."""
    return lambda x, attrs: ufunc(x) if np.dtype(x.dtype).kind == "f" else ufunc(x.astype("float64"))


def shift_ref(ufunc):
    """left_shift / right_shift: numpy's, whose out-of-range amounts give 0 or the sign fill."""
    return lambda a, b, attrs: ufunc(a, b).astype(a.dtype)


# --- te rules --------------------------------------------------------------------------------
def _in_float32(rule):
    """A float rule computed in float32 for float16 inputs (numpy's float16 loops do the same)."""
    def wide(x):
        if x.dtype == "float16":
            return rule(x.astype("float32")).astype("float16")
        return rule(x)
    return wide


def _const(value, like):
    return tir.const(value, like.dtype)


@_in_float32
def te_asinh(x):
    size = te.abs(x)
    small = te.log1p(size + size * size / (_const(1.0, x) + te.sqrt(_const(1.0, x) + size * size)))
    value = te.if_then_else(size > _const(_BIG, x), te.log(size) + _const(_LN2, x), small)
    return te.if_then_else(x < _const(0.0, x), -value, value)


@_in_float32
def te_acosh(x):
    excess = x - _const(1.0, x)
    small = te.log1p(excess + te.sqrt(excess * (excess + _const(2.0, x))))
    value = te.if_then_else(x > _const(_BIG, x), te.log(x) + _const(_LN2, x), small)
    return te.if_then_else(x < _const(1.0, x), _const(math.nan, x), value)


@_in_float32
def te_atanh(x):
    return _const(0.5, x) * te.log1p(_const(2.0, x) * x / (_const(1.0, x) - x))


def te_classify(kind):
    """isnan / isinf / isfinite on any dtype: integers and bools are never NaN or infinite."""
    def rule(x):
        if not is_float(x.dtype):
            return tir.const(kind == "isfinite", "bool")
        if kind == "isnan":
            return te.isnan(x)
        if kind == "isinf":
            return te.isinf(x)
        return ~(te.isnan(x) | te.isinf(x))
    return rule


def _bits(dtype):
    return 8 * np.dtype(dtype).itemsize


def te_shift(direction):
    """left or right shift with numpy's results for amounts outside [0, bits)."""
    def rule(a, b):
        zero = tir.const(0, b.dtype)
        in_range = b < tir.const(_bits(b.dtype), b.dtype)
        if not b.dtype.startswith("uint"):
            in_range = in_range & (b >= zero)
        amount = te.if_then_else(in_range, b, zero)      # never a poison shift amount
        if direction == "left":
            return te.if_then_else(in_range, te.shift_left(a, amount), tir.const(0, a.dtype))
        if a.dtype.startswith("uint"):
            fill = tir.const(0, a.dtype)
        else:
            fill = te.if_then_else(a < tir.const(0, a.dtype), tir.const(-1, a.dtype), tir.const(0, a.dtype))
        return te.if_then_else(in_range, te.shift_right(a, amount), fill)
    return rule


# --- relations -------------------------------------------------------------------------------
def integer_rel(op_name: str, binary: bool, allow_bool: bool):
    """identity (unary) or broadcast (binary) relation of an op on integer (and maybe bool)
    tensors only: bit patterns of floats are not what the op is about."""
    base = broadcast_rel if binary else identity_rel
    accepted = "integer or bool" if allow_bool else "integer"

    def rel(arg_types, attrs=None) -> TensorType:
        out = base(arg_types, attrs)
        ok = out.dtype.startswith(("int", "uint")) or (allow_bool and out.dtype == "bool")
        if not ok:
            fix = ("; use logical_and / logical_or / logical_xor / logical_not for bool tensors"
                   if out.dtype == "bool" else '; cast first (relay.cast(x, "int32"))')
            raise TypeInferenceError(f"{op_name} expects {accepted} tensors, got {out.dtype}{fix}")
        return out
    rel.__name__ = rel.__qualname__ = f"integer_rel[{op_name}]"
    return rel


def classify_rel(arg_types, attrs=None) -> TensorType:
    """isnan / isinf / isfinite: the input's shape, bool (TVM's IdentityCompRel)."""
    return TensorType(identity_rel(arg_types, attrs).shape, "bool")


def classify_rel_of(op_name: str):
    """The tables' relation factory form of classify_rel (every dtype is accepted)."""
    return classify_rel


# --- samples ---------------------------------------------------------------------------------
BIT_DTYPES = ("int32", "uint8", "int64", "bool", "int8", "uint32")


def special_samples(rng):
    """Float tensors holding NaN, +inf and -inf among finite values, and an int tensor."""
    out = []
    for shape, dtype in (((2, 4), "float32"), ((5,), "float64"), ((3,), "float16"), ((), "float32")):
        values = S.rand(rng, shape, dtype, -3.0, 3.0)
        flat = values.reshape(-1)
        specials = np.array([np.nan, np.inf, -np.inf], dtype)
        flat[: min(3, flat.size)] = specials[: min(3, flat.size)]
        out.append(Sample([rng.permutation(flat).reshape(shape)]))
    out.append(Sample([S.rand(rng, (2, 3), "int32", -9, 9)]))
    return out


def shift_samples(rng):
    """Shift amounts from -1 to bits + 1 (the out-of-range ones as numpy defines them), over
    broadcasting shapes and signed / unsigned dtypes, with negative values to shift right."""
    out = []
    for (lhs_shape, rhs_shape), dtype in zip(S.BROADCAST_PAIRS, ("int32", "int8", "uint8", "int64", "uint32", "int16")):
        bits = _bits(dtype)
        lhs = S.rand(rng, lhs_shape, dtype, -1000, 1000)
        rhs = rng.integers(-1, bits + 2, size=rhs_shape)
        out.append(Sample([lhs, rhs.astype(dtype)]))
    return out


def bit_samples(rng):
    """Two-input samples for bitwise and / or / xor over integer and bool dtypes."""
    return S.binary(BIT_DTYPES, low=-1000, high=1000)(rng)


__all__ = ["quiet", "float_ref", "classify_ref", "shift_ref", "te_asinh", "te_acosh", "te_atanh",
           "te_classify", "te_shift", "integer_rel", "classify_rel", "classify_rel_of", "BIT_DTYPES",
           "special_samples", "shift_samples", "bit_samples"]
