"""Elementwise and broadcast operators, table-driven: each row is one op.

Unary ops use identity_rel and ELEMWISE; binary ops use broadcast_rel (or broadcast_comp_rel for
comparisons) and BROADCAST. Also clip, cast and where, which carry attrs or a third input.
Each row's te rule (a scalar PrimExpr function) becomes the op's compute through
compute_common.broadcast_compute; the rules reproduce the numpy references exactly (int divide
truncates, floor ops and float remainders follow numpy, round is half-to-even).

Dtypes: transcendentals (exp, log, sqrt, rsqrt, sigmoid, tanh, sin, cos, erf) take float tensors
only (float_rel); arithmetic rejects bool (no_bool_rel), as numpy does for negative / subtract /
sign; floor, ceil and round are the identity on ints and bools. Integer division by zero gives 0
(numpy's int result) and by -1 never runs a native divide (INT_MIN / -1 wraps to INT_MIN), so no
input can raise SIGFPE in compiled code.
"""
import dataclasses
import math

import numpy as np

from .. import te, tir
from ..errors import AttrsError, TypeInferenceError
from ..ir import expr as _expr
from ..ir.attrs import Attrs, always_printed
from ..ir.types import TensorType
from ..runtime.dtypes import SUPPORTED_DTYPES
from . import elemwise_math as M
from . import samples as S
from .compute_common import broadcast_compute, cast as _te_cast, is_float as _is_float
from .constructor_docs import constructor_doc
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import (broadcast_comp_rel, broadcast_rel, broadcast_shape, expect_tensor, float_rel,
                        identity_rel, no_bool_rel)

_erf = np.frompyfunc(math.erf, 1, 1)


def _erf_ref(x, attrs):
    return np.asarray(_erf(x.astype("float64")), dtype="float64").astype(x.dtype)


def _sigmoid_ref(x, attrs):
    x64 = x.astype("float64")
    return (0.5 * (1.0 + np.tanh(0.5 * x64))).astype(x.dtype)


def _sign(x, attrs):
    return np.sign(x).astype(x.dtype)


def _quiet(fn):
    """A numpy function run without floating-point warnings (log(0) is -inf, sqrt(-1) NaN, as
    the compiled kernels give silently)."""
    def quiet(*args):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(*args)
    return quiet


def _rounding_ref(fn):
    """floor / ceil / round on floats; ints and bools are returned unchanged (as the compute)."""
    return lambda x, attrs: fn(x) if np.dtype(x.dtype).kind == "f" else x.copy()


# --- te rules: one scalar expression per element, matching the numpy references ---------------------
def _neg(x):
    # -1 * x keeps numpy's -0.0 for floats; 0 - x for ints
    return x * tir.const(-1, x.dtype) if _is_float(x.dtype) else tir.const(0, x.dtype) - x


def _relu(x):
    return te.max(x, tir.const(0, x.dtype))


def _rounding(fn):
    """floor / ceil / round (round-half-to-even, like np.round) on floats; ints are unchanged."""
    return lambda x: fn(x) if _is_float(x.dtype) else x


def _te_sign(x):
    zero, one = tir.const(0, x.dtype), tir.const(1, x.dtype)
    out = te.if_then_else(x > zero, one, te.if_then_else(x < zero, -one, zero))
    return te.if_then_else(x != x, x, out) if _is_float(x.dtype) else out  # NaN stays NaN


def _identity(x):
    return x


def _fill(value):
    return lambda x: tir.const(value, x.dtype)


def _wrapping_neg(x):
    """-x for ints with two's-complement wraparound (-INT_MIN == INT_MIN, as numpy): computed in
    the unsigned type of the same width, whose subtraction wraps by definition."""
    if x.dtype.startswith("uint"):
        return tir.const(0, x.dtype) - x
    udt = "u" + x.dtype
    return (tir.const(0, udt) - x.astype(udt)).astype(x.dtype)


def _guarded_int_div(a, b, divide, by_minus_one):
    """divide(a, b) for ints without a native divide by 0 or -1 (x86 raises SIGFPE on both
    b == 0 and INT_MIN / -1): such lanes divide by 1 and select 0 (numpy's x // 0 and x % 0) or
    by_minus_one(a). Selects, not branches, so the loop still vectorizes."""
    zero, one = tir.const(0, b.dtype), tir.const(1, b.dtype)
    is_zero = b == zero
    if a.dtype.startswith("uint"):
        return te.if_then_else(is_zero, zero, divide(a, te.if_then_else(is_zero, one, b)))
    minus_one = tir.const(-1, b.dtype)
    is_m1 = b == minus_one
    quotient = divide(a, te.if_then_else(is_zero | is_m1, one, b))
    return te.if_then_else(is_zero, zero, te.if_then_else(is_m1, by_minus_one(a), quotient))


def _te_divide(a, b):
    if _is_float(a.dtype):
        return a / b
    return _guarded_int_div(a, b, tir.truncdiv, _wrapping_neg)  # ints truncate toward zero


def _te_power(a, b):
    if _is_float(a.dtype):
        return te.power(a, b)
    return te.power(a.astype("float64"), b.astype("float64")).astype(a.dtype)


def _float_mod(a, b):
    """numpy's float remainder: fmod, moved into the divisor's sign when they differ."""
    rem = te.fmod(a, b)
    zero = tir.const(0, a.dtype)
    fix = (rem != zero) & ((rem < zero) != (b < zero))
    return te.if_then_else(fix, rem + b, rem), fix


def _te_floor_mod(a, b):
    if _is_float(a.dtype):
        return _float_mod(a, b)[0]
    return _guarded_int_div(a, b, tir.floormod, lambda x: tir.const(0, x.dtype))


def _te_floor_divide(a, b):
    """Floor division; for floats numpy's algorithm ((a - fmod(a, b)) / b, corrected by one
    where the remainder's sign was fixed, then rounded to the nearest integer), so results
    agree with numpy even where a / b rounds up to an integer."""
    if not _is_float(a.dtype):
        return _guarded_int_div(a, b, tir.floordiv, _wrapping_neg)
    rem = te.fmod(a, b)
    zero, one = tir.const(0, a.dtype), tir.const(1, a.dtype)
    div = (a - rem) / b
    fix = (rem != zero) & ((rem < zero) != (b < zero))
    div = te.if_then_else(fix, div - one, div)
    floor = te.floor(div)
    floor = te.if_then_else(div - floor > tir.const(0.5, a.dtype), floor + one, floor)
    floor = te.if_then_else(div == zero, zero, floor)
    return te.if_then_else(b == zero, a / b, floor)  # numpy: x / 0 is +-inf or nan


_POS = dict(low=0.1, high=4.0)
_ALL_NUM = ("float32", "int32", "float64", "int8", "float16", "int64")
_ROUNDING_DTYPES = ("float32", "int32", "float64", "float16", "bool")


def _with(*gens):
    """Samples from several generators (e.g. a table's dtypes plus some bool or int cases)."""
    return lambda rng: [s for g in gens for s in g(rng)]


# Which dtypes an op accepts, as a relation factory (op name -> relation):
_FLOAT = float_rel                                                       # float tensors only
_NUM = no_bool_rel                                                       # anything but bool
_ANY = lambda name: identity_rel                                         # noqa: E731
_NEG_HINT = "use logical_not to negate a bool tensor"

# name, numpy reference (x, attrs) -> array, te rule (scalar PrimExpr -> PrimExpr), samples, level,
# dtype rule (a relation factory above)
UNARY_OPS = [
    ("negative", lambda x, a: np.negative(x), _neg, S.unary(_ALL_NUM), 3,
     lambda name: no_bool_rel(name, hint=_NEG_HINT)),
    ("exp", _quiet(lambda x, a: np.exp(x)), te.exp, S.unary(), 1, _FLOAT),
    ("log", _quiet(lambda x, a: np.log(x)), te.log, S.unary(**_POS), 1, _FLOAT),
    ("sqrt", _quiet(lambda x, a: np.sqrt(x)), te.sqrt, S.unary(**_POS), 1, _FLOAT),
    ("rsqrt", _quiet(lambda x, a: (1.0 / np.sqrt(x.astype("float64"))).astype(x.dtype)), te.rsqrt, S.unary(**_POS), 1,
     _FLOAT),
    ("sigmoid", _sigmoid_ref, te.sigmoid, S.unary(low=-6, high=6), 1, _FLOAT),
    ("tanh", lambda x, a: np.tanh(x), te.tanh, S.unary(low=-4, high=4), 1, _FLOAT),
    ("nn.relu", lambda x, a: np.maximum(x, np.zeros((), x.dtype)), _relu, S.unary(_ALL_NUM), 1, _NUM),
    ("abs", lambda x, a: np.abs(x), te.abs, S.unary(_ALL_NUM), 3, _NUM),
    ("floor", _rounding_ref(np.floor), _rounding(te.floor),
     S.unary(_ROUNDING_DTYPES, low=-5, high=5), 3, _ANY),
    ("ceil", _rounding_ref(np.ceil), _rounding(te.ceil), S.unary(_ROUNDING_DTYPES, low=-5, high=5), 3, _ANY),
    ("round", _rounding_ref(np.round), _rounding(te.round),
     S.unary(_ROUNDING_DTYPES, low=-5, high=5), 3, _ANY),
    ("sign", _sign, _te_sign, S.unary(_ALL_NUM), 3, _NUM),
    ("sin", lambda x, a: np.sin(x), te.sin, S.unary(low=-4, high=4), 3, _FLOAT),
    ("cos", lambda x, a: np.cos(x), te.cos, S.unary(low=-4, high=4), 3, _FLOAT),
    ("erf", _erf_ref, te.erf, S.unary(low=-3, high=3), 3, _FLOAT),
    ("copy", lambda x, a: x.copy(), _identity, S.unary(_ALL_NUM + ("bool",)), 3, _ANY),
    ("zeros_like", lambda x, a: np.zeros_like(x), _fill(0), S.unary(_ALL_NUM), 3, _ANY),
    ("ones_like", lambda x, a: np.ones_like(x), _fill(1), S.unary(_ALL_NUM), 3, _ANY),
    # FastMath's targets (Relay's fast approximations): the compiled exp, tanh and erf are
    # already inline polynomials accurate to a few float32 ulps, so these share their rules.
    ("fast_exp", _quiet(lambda x, a: np.exp(x)), te.exp, S.unary(), 1, _FLOAT),
    ("fast_tanh", lambda x, a: np.tanh(x), te.tanh, S.unary(low=-4, high=4), 1, _FLOAT),
    ("fast_erf", _erf_ref, te.erf, S.unary(low=-3, high=3), 1, _FLOAT),
    # inverse trigonometric / hyperbolic functions, other logs, trunc (elemwise_math.py's rules)
    ("acos", M.float_ref(np.arccos), te.acos, S.unary(low=-0.95, high=0.95), 3, _FLOAT),
    ("acosh", M.float_ref(np.arccosh), M.te_acosh, S.unary(low=1.0, high=6.0), 3, _FLOAT),
    ("asin", M.float_ref(np.arcsin), te.asin, S.unary(low=-0.95, high=0.95), 3, _FLOAT),
    ("asinh", M.float_ref(np.arcsinh), M.te_asinh, S.unary(low=-6.0, high=6.0), 3, _FLOAT),
    ("atan", M.float_ref(np.arctan), te.atan, S.unary(low=-6.0, high=6.0), 3, _FLOAT),
    ("atanh", M.float_ref(np.arctanh), M.te_atanh, S.unary(low=-0.95, high=0.95), 3, _FLOAT),
    ("tan", M.float_ref(np.tan), te.tan, S.unary(low=-1.4, high=1.4), 3, _FLOAT),
    ("sinh", M.float_ref(np.sinh), te.sinh, S.unary(low=-4.0, high=4.0), 3, _FLOAT),
    ("cosh", M.float_ref(np.cosh), te.cosh, S.unary(low=-4.0, high=4.0), 3, _FLOAT),
    ("log2", M.float_ref(np.log2), te.log2, S.unary(**_POS), 3, _FLOAT),
    ("log10", M.float_ref(np.log10), te.log10, S.unary(**_POS), 3, _FLOAT),
    ("trunc", _rounding_ref(np.trunc), _rounding(te.trunc), S.unary(_ROUNDING_DTYPES, low=-5, high=5), 3, _ANY),
    # bool results on every dtype (TVM's IdentityCompRel); samples hold NaN and +-inf
    ("isnan", M.classify_ref(np.isnan), M.te_classify("isnan"), M.special_samples, 3, M.classify_rel_of),
    ("isinf", M.classify_ref(np.isinf), M.te_classify("isinf"), M.special_samples, 3, M.classify_rel_of),
    ("isfinite", M.classify_ref(np.isfinite), M.te_classify("isfinite"), M.special_samples, 3,
     M.classify_rel_of),
    ("bitwise_not", lambda x, a: np.invert(x), te.bitwise_not, S.unary(M.BIT_DTYPES, low=-100, high=100), 4,
     lambda name: M.integer_rel(name, binary=False, allow_bool=True)),
]


def _logical_not_rel(arg_types, attrs=None):
    t = identity_rel(arg_types)
    if t.dtype != "bool":
        raise TypeInferenceError(f"logical_not expects a bool tensor, got {t}")
    return t


_bool_only = ("bool",)
_QUIET = dict(divide="ignore", invalid="ignore", over="ignore")  # x / 0, 0 / 0, INT_MIN // -1


def _divide_ref(a, b, attrs):
    """Float division; for ints relay divide truncates toward zero: numpy's floor quotient
    (0 for x // 0, INT_MIN for INT_MIN // -1) moved up by one where a remainder is left and
    the signs differ."""
    with np.errstate(**_QUIET):
        if np.dtype(a.dtype).kind not in "iu":
            return np.divide(a, b)
        quotient, rem = np.floor_divide(a, b), np.mod(a, b)
    fix = (rem != 0) & ((a < 0) != (b < 0))
    return (quotient + fix.astype(a.dtype)).astype(a.dtype)


def _floor_divide_ref(a, b, attrs):
    with np.errstate(**_QUIET):
        return np.floor_divide(a, b)


def _floor_mod_ref(a, b, attrs):
    with np.errstate(**_QUIET):
        return np.mod(a, b).astype(a.dtype)


def _trunc_divide_ref(a, b, attrs):
    """Quotient rounded toward zero: relay divide for ints, trunc(a / b) for floats."""
    if np.dtype(a.dtype).kind in "iu":
        return _divide_ref(a, b, attrs)
    with np.errstate(**_QUIET):
        return np.trunc(np.divide(a, b)).astype(a.dtype)


def _trunc_mod_ref(a, b, attrs):
    """Remainder with the dividend's sign (C's %, fmod); x % 0 is 0 for ints, NaN for floats."""
    with np.errstate(**_QUIET):
        return np.fmod(a, b).astype(a.dtype)


def _te_trunc_divide(a, b):
    return te.trunc(a / b) if _is_float(a.dtype) else _te_divide(a, b)


def _te_trunc_mod(a, b):
    if _is_float(a.dtype):
        return te.fmod(a, b)
    return _guarded_int_div(a, b, tir.truncmod, lambda x: tir.const(0, x.dtype))


_ALL_NUM_BOOL = _with(S.binary(_ALL_NUM), lambda rng: S.binary(_bool_only)(rng)[:2])
_INT_DIVISORS = S.binary(("int64", "int8", "uint8"), low=-9, high=9, rhs_low=-2, rhs_high=3)  # 0 and -1 divisors


# name, reference (a, b, attrs), te rule (a, b) -> PrimExpr, samples, is comparison (bool output), level
# (arithmetic rows reject bool through no_bool_rel below; comparisons accept every dtype)
BINARY_OPS = [
    ("add", lambda a, b, t: np.add(a, b), lambda a, b: a + b, S.binary(_ALL_NUM), False, 1),
    ("subtract", lambda a, b, t: np.subtract(a, b), lambda a, b: a - b, S.binary(_ALL_NUM), False, 1),
    ("multiply", lambda a, b, t: np.multiply(a, b), lambda a, b: a * b, S.binary(_ALL_NUM), False, 1),
    ("divide", _divide_ref, _te_divide, _with(S.binary(("float32", "int32", "float64"), avoid_zero_rhs=True,
                                                       rhs_low=0.5, rhs_high=3.0), _INT_DIVISORS), False, 1),
    ("power", _quiet(lambda a, b, t: np.power(a, b)), _te_power, S.binary(low=0.2, high=3.0), False, 4),
    # te.max / te.min are logical or / and on bools, as numpy's maximum / minimum
    ("maximum", lambda a, b, t: np.maximum(a, b), te.max, _ALL_NUM_BOOL, False, 4),
    ("minimum", lambda a, b, t: np.minimum(a, b), te.min, _ALL_NUM_BOOL, False, 4),
    ("floor_divide", _floor_divide_ref, _te_floor_divide,
     _with(S.binary(("float32", "int32"), low=-9, high=9, avoid_zero_rhs=True), _INT_DIVISORS), False, 1),
    ("floor_mod", _floor_mod_ref, _te_floor_mod,
     _with(S.binary(("float32", "int32"), low=-9, high=9, avoid_zero_rhs=True), _INT_DIVISORS), False, 1),
    ("equal", lambda a, b, t: np.equal(a, b), lambda a, b: a == b,
     S.binary(("int32", "float32"), low=-2, high=2), True, 4),
    ("not_equal", lambda a, b, t: np.not_equal(a, b), lambda a, b: a != b,
     S.binary(("int32", "float32"), low=-2, high=2), True, 4),
    ("less", lambda a, b, t: np.less(a, b), lambda a, b: a < b, S.binary(("float32", "int32")), True, 4),
    ("less_equal", lambda a, b, t: np.less_equal(a, b), lambda a, b: a <= b,
     S.binary(("float32", "int32")), True, 4),
    ("greater", lambda a, b, t: np.greater(a, b), lambda a, b: a > b, S.binary(("float32", "int32")), True, 4),
    ("greater_equal", lambda a, b, t: np.greater_equal(a, b), lambda a, b: a >= b,
     S.binary(("float32", "int32")), True, 4),
    # TVM's mod is trunc_mod: the remainder takes the dividend's sign
    ("mod", _trunc_mod_ref, _te_trunc_mod,
     _with(S.binary(("float32", "int32"), low=-9, high=9, avoid_zero_rhs=True), _INT_DIVISORS), False, 1),
    ("trunc_divide", _trunc_divide_ref, _te_trunc_divide,
     _with(S.binary(("float32", "int32"), low=-9, high=9, avoid_zero_rhs=True), _INT_DIVISORS), False, 1),
    ("trunc_mod", _trunc_mod_ref, _te_trunc_mod,
     _with(S.binary(("float32", "int32"), low=-9, high=9, avoid_zero_rhs=True), _INT_DIVISORS), False, 1),
    ("left_shift", M.shift_ref(np.left_shift), M.te_shift("left"), M.shift_samples, False, 4),
    ("right_shift", M.shift_ref(np.right_shift), M.te_shift("right"), M.shift_samples, False, 4),
    ("bitwise_and", lambda a, b, t: np.bitwise_and(a, b), te.bitwise_and, M.bit_samples, False, 4),
    ("bitwise_or", lambda a, b, t: np.bitwise_or(a, b), te.bitwise_or, M.bit_samples, False, 4),
    ("bitwise_xor", lambda a, b, t: np.bitwise_xor(a, b), te.bitwise_xor, M.bit_samples, False, 4),
]


def _logical_rel(arg_types, attrs=None):
    t = broadcast_rel(arg_types)
    if t.dtype != "bool":
        raise TypeInferenceError(f"logical ops expect bool tensors, got {arg_types[0]} and {arg_types[1]}")
    return t


def _rule(fn):
    """A table's te rule as a broadcast_compute function (the table rules take no attrs)."""
    return lambda attrs, *scalars: fn(*scalars)


# the arithmetic binary ops that reject bool, with the logical op that does what was meant
_BOOL_HINTS = {"add": "use logical_or for bool tensors", "multiply": "use logical_and for bool tensors",
               "subtract": "for bool tensors not_equal is xor"}
_NO_BOOL_BINARY = ("add", "subtract", "multiply", "divide", "power", "floor_divide", "floor_mod", "mod",
                   "trunc_divide", "trunc_mod")
# bit operations: integer tensors, and bool ones where the op is also a logical op
_BIT_BINARY = {"left_shift": False, "right_shift": False, "bitwise_and": True, "bitwise_or": True,
               "bitwise_xor": True}


def _binary_rel(name, is_comparison):
    if is_comparison:
        return broadcast_comp_rel
    if name in _BIT_BINARY:
        return M.integer_rel(name, binary=True, allow_bool=_BIT_BINARY[name])
    if name in _NO_BOOL_BINARY:
        return no_bool_rel(name, base=broadcast_rel, hint=_BOOL_HINTS.get(name, ""))
    return broadcast_rel


for _name, _ref, _te_rule, _samples, _level, _dtypes in UNARY_OPS:
    defop(_name, inputs=("data",), rel=_dtypes(_name), pattern=OpPattern.ELEMWISE, ref=_ref,
          samples=_samples, level=_level, compute=broadcast_compute(_name, _rule(_te_rule)))

for _name, _ref, _te_rule, _samples, _is_comp, _level in BINARY_OPS:
    defop(_name, inputs=("lhs", "rhs"), rel=_binary_rel(_name, _is_comp),
          pattern=OpPattern.BROADCAST, ref=_ref, samples=_samples, level=_level,
          compute=broadcast_compute(_name, _rule(_te_rule)))

LOGICAL_NOT = defop("logical_not", inputs=("data",), rel=_logical_not_rel, pattern=OpPattern.ELEMWISE,
                    ref=lambda x, a: np.logical_not(x), samples=S.unary(_bool_only), level=4,
                    compute=broadcast_compute("logical_not", _rule(lambda x: ~x)))
for _name, _fn, _te_rule in (("logical_and", np.logical_and, lambda a, b: a & b),
                             ("logical_or", np.logical_or, lambda a, b: a | b),
                             ("logical_xor", np.logical_xor, lambda a, b: a != b)):
    defop(_name, inputs=("lhs", "rhs"), rel=_logical_rel, pattern=OpPattern.BROADCAST,
          ref=(lambda fn: lambda a, b, t: fn(a, b))(_fn), samples=S.binary(_bool_only), level=4,
          compute=broadcast_compute(_name, _rule(_te_rule)))


# --- clip ---------------------------------------------------------------------------------------
def real_attr(op_name: str, name: str, value) -> float:
    """A numeric (int or float, not bool) attribute value as a Python float, else AttrsError."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise AttrsError(f"{op_name}: attribute {name} must be a number, got {value!r} ({type(value).__name__})")
    return float(value)


@dataclasses.dataclass(frozen=True)
class ClipAttrs(Attrs):
    a_min: float = always_printed(0.0)
    a_max: float = always_printed(0.0)

    def __post_init__(self):
        lo, hi = real_attr("clip", "a_min", self.a_min), real_attr("clip", "a_max", self.a_max)
        if math.isnan(lo) or math.isnan(hi):
            raise AttrsError(f"clip: bounds must not be NaN, got a_min={lo}, a_max={hi}")
        if lo > hi:
            raise AttrsError(f"clip: a_min={lo} is greater than a_max={hi}; every value would be a_max")
        object.__setattr__(self, "a_min", lo)
        object.__setattr__(self, "a_max", hi)


def _clip_ref(x, attrs):
    return np.clip(x, attrs.a_min, attrs.a_max).astype(x.dtype)


def _te_clip(attrs, x):
    """min(max(x, a_min), a_max) with the bounds in x's dtype for floats. For ints numpy clips
    in float64 and truncates back, i.e. thresholds ceil(a_min) / floor(a_max) and results
    trunc(a_min) / trunc(a_max); thresholds outside the dtype's range never fire."""
    lo, hi = attrs.a_min, attrs.a_max   # ClipAttrs guarantees lo <= hi, neither NaN
    if _is_float(x.dtype):
        return te.min(te.max(x, tir.const(lo, x.dtype)), tir.const(hi, x.dtype))
    info = np.iinfo(x.dtype)
    out = x
    if hi < info.max and math.floor(hi) < info.max:
        out = te.if_then_else(x > tir.const(math.floor(hi), x.dtype), tir.const(math.trunc(hi), x.dtype), out)
    if lo > info.min and math.ceil(lo) > info.min:
        out = te.if_then_else(x < tir.const(math.ceil(lo), x.dtype), tir.const(math.trunc(lo), x.dtype), out)
    return out


CLIP = defop("clip", inputs=("data",), attrs=ClipAttrs, rel=no_bool_rel("clip"), pattern=OpPattern.ELEMWISE,
             ref=_clip_ref, level=3, compute=broadcast_compute("clip", _te_clip),
             samples=lambda rng: [Sample([S.rand(rng, (2, 5))], ClipAttrs(-0.5, 0.7)),
                                  Sample([S.rand(rng, (3,), "float64")], ClipAttrs(0.0, 6.0)),
                                  Sample([S.rand(rng, (4,), "int32", -9, 9)], ClipAttrs(-3, 3))])


# --- cast ---------------------------------------------------------------------------------------
CAST_DTYPES = SUPPORTED_DTYPES


@dataclasses.dataclass(frozen=True)
class CastAttrs(Attrs):
    dtype: str = always_printed("float32")

    def __post_init__(self):
        try:
            dtype = str(np.dtype(self.dtype))
        except (TypeError, ValueError) as err:
            raise AttrsError(f"cast: unknown dtype {self.dtype!r}; supported: {list(CAST_DTYPES)}") from err
        if dtype not in CAST_DTYPES:
            raise AttrsError(f"cast: dtype {self.dtype!r} ({dtype}) is not supported; "
                             f"supported: {list(CAST_DTYPES)}")
        object.__setattr__(self, "dtype", dtype)


def _cast_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "data")
    return TensorType(data.shape, attrs.dtype)


CAST = defop("cast", inputs=("data",), attrs=CastAttrs, rel=_cast_rel, pattern=OpPattern.ELEMWISE,
             ref=lambda x, a: x.astype(a.dtype), level=3,
             compute=broadcast_compute("cast", lambda attrs, x: _te_cast(x, attrs.dtype)),
             samples=lambda rng: [Sample([S.rand(rng, (2, 3), "float32", -9, 9)], CastAttrs("int32")),
                                  Sample([S.rand(rng, (4,), "int32", -9, 9)], CastAttrs("float32")),
                                  Sample([S.rand(rng, (3,), "float32")], CastAttrs("float16")),
                                  Sample([S.rand(rng, (5,), "bool")], CastAttrs("float32"))])


# --- where --------------------------------------------------------------------------------------
def _where_rel(arg_types, attrs=None):
    cond = expect_tensor(arg_types[0], "condition")
    x = expect_tensor(arg_types[1], "x")
    y = expect_tensor(arg_types[2], "y")
    if cond.dtype != "bool":
        raise TypeInferenceError(f"where: condition must be bool, got {cond}")
    if x.dtype != y.dtype:
        raise TypeInferenceError(f"where: x and y must have the same dtype, got {x} and {y}")
    shape = broadcast_shape(broadcast_shape(cond.shape, x.shape, cond, x), y.shape, None, y)
    return TensorType(shape, x.dtype)


WHERE = defop("where", inputs=("condition", "x", "y"), rel=_where_rel, pattern=OpPattern.BROADCAST,
              ref=lambda c, x, y, a: np.where(c, x, y), level=4,
              compute=broadcast_compute("where", lambda attrs, c, x, y: te.if_then_else(c, x, y)),
              samples=lambda rng: [Sample([S.rand(rng, (2, 3), "bool"), S.rand(rng, (2, 3)), S.rand(rng, (3,))]),
                                   Sample([S.rand(rng, (4, 1), "bool"), S.rand(rng, (1, 5), "int32"),
                                           S.rand(rng, (), "int32")])])


# --- Python constructors with tvm.relay's names ----------------------------------------------------
# One line per op for the constructors' docstrings (constructor_docs adds Parameters and Returns);
# a row missing here gets a generic line naming the op.
SUMMARIES = {
    "negative": "Negate each element: -data (ints wrap around, as numpy's).",
    "exp": "The exponential e**x of each element (float tensors).",
    "log": "The natural logarithm of each element (float tensors; log(0) is -inf).",
    "sqrt": "The square root of each element (float tensors; negative inputs give NaN).",
    "rsqrt": "The reciprocal square root 1 / sqrt(x) of each element (float tensors).",
    "sigmoid": "The logistic function 1 / (1 + exp(-x)) of each element (float tensors).",
    "tanh": "The hyperbolic tangent of each element (float tensors).",
    "nn.relu": "Rectified linear unit: max(x, 0) for each element.",
    "abs": "The absolute value of each element.",
    "floor": "Round each element down to an integer value (ints are returned unchanged).",
    "ceil": "Round each element up to an integer value (ints are returned unchanged).",
    "round": "Round each element to the nearest integer value, halves to even (ints unchanged).",
    "sign": "The sign of each element: -1, 0 or 1 (NaN stays NaN).",
    "sin": "The sine of each element, in radians (float tensors).",
    "cos": "The cosine of each element, in radians (float tensors).",
    "erf": "The Gauss error function of each element (float tensors).",
    "copy": "A copy of the tensor (same shape, dtype and values).",
    "zeros_like": "A tensor of zeros with the shape and dtype of `data`.",
    "ones_like": "A tensor of ones with the shape and dtype of `data`.",
    "logical_not": "Logical negation of each element of a bool tensor.",
    "fast_exp": "Exponential for FastMath: e**x of each element, by a fast approximation.",
    "fast_tanh": "Hyperbolic tangent for FastMath, by a fast approximation.",
    "fast_erf": "Gauss error function for FastMath, by a fast approximation.",
    "add": "Elementwise sum lhs + rhs, broadcasting.",
    "subtract": "Elementwise difference lhs - rhs, broadcasting.",
    "multiply": "Elementwise product lhs * rhs, broadcasting.",
    "divide": "Elementwise quotient lhs / rhs, broadcasting (ints truncate toward zero; x / 0 is 0 for ints).",
    "power": "Elementwise power lhs ** rhs, broadcasting.",
    "maximum": "Elementwise maximum of lhs and rhs, broadcasting.",
    "minimum": "Elementwise minimum of lhs and rhs, broadcasting.",
    "floor_divide": "Elementwise floor(lhs / rhs), broadcasting (numpy's //).",
    "floor_mod": "Elementwise remainder with the sign of rhs, broadcasting (numpy's %).",
    "equal": "Elementwise lhs == rhs as a bool tensor, broadcasting.",
    "not_equal": "Elementwise lhs != rhs as a bool tensor, broadcasting.",
    "less": "Elementwise lhs < rhs as a bool tensor, broadcasting.",
    "less_equal": "Elementwise lhs <= rhs as a bool tensor, broadcasting.",
    "greater": "Elementwise lhs > rhs as a bool tensor, broadcasting.",
    "greater_equal": "Elementwise lhs >= rhs as a bool tensor, broadcasting.",
    "logical_and": "Elementwise logical and of two bool tensors, broadcasting.",
    "logical_or": "Elementwise logical or of two bool tensors, broadcasting.",
}


def _unary_ctor(op_name):
    from .registry import get
    op = get(op_name)

    def ctor(data):
        return op(data)
    ctor.__name__ = op_name.split(".")[-1]
    summary = SUMMARIES.get(op_name, f"relay.{op_name}, applied to each element of `data`.")
    ctor.__doc__ = constructor_doc(summary, ctor)
    return ctor


def _binary_ctor(op_name):
    from .registry import get
    op = get(op_name)

    def ctor(lhs, rhs):
        return op(lhs, rhs)
    ctor.__name__ = op_name
    summary = SUMMARIES.get(op_name, f"relay.{op_name} of `lhs` and `rhs`, elementwise with broadcasting.")
    ctor.__doc__ = constructor_doc(summary, ctor)
    return ctor


negative, exp, log, sqrt, rsqrt, sigmoid, tanh = (_unary_ctor(n) for n in
                                                 ("negative", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh"))
abs, floor, ceil, round, sign, sin, cos, erf = (_unary_ctor(n) for n in  # noqa: A001
                                                ("abs", "floor", "ceil", "round", "sign", "sin", "cos", "erf"))
copy, zeros_like, ones_like, logical_not = (_unary_ctor(n) for n in
                                            ("copy", "zeros_like", "ones_like", "logical_not"))
fast_exp, fast_tanh, fast_erf = (_unary_ctor(n) for n in ("fast_exp", "fast_tanh", "fast_erf"))
relu = _unary_ctor("nn.relu")  # exported as nn.relu
add, subtract, multiply, divide, power, maximum, minimum = (_binary_ctor(n) for n in (
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum"))
floor_divide, floor_mod, equal, not_equal, less, less_equal, greater, greater_equal = (_binary_ctor(n) for n in (
    "floor_divide", "floor_mod", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"))
logical_and, logical_or = _binary_ctor("logical_and"), _binary_ctor("logical_or")
acos, acosh, asin, asinh, atan, atanh, tan, sinh, cosh = (_unary_ctor(n) for n in (
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "tan", "sinh", "cosh"))
log2, log10, trunc, isnan, isinf, isfinite, bitwise_not = (_unary_ctor(n) for n in (
    "log2", "log10", "trunc", "isnan", "isinf", "isfinite", "bitwise_not"))
mod, trunc_divide, trunc_mod, left_shift, right_shift = (_binary_ctor(n) for n in (
    "mod", "trunc_divide", "trunc_mod", "left_shift", "right_shift"))
bitwise_and, bitwise_or, bitwise_xor, logical_xor = (_binary_ctor(n) for n in (
    "bitwise_and", "bitwise_or", "bitwise_xor", "logical_xor"))


def clip(a, a_min, a_max):
    """Limit each element to the interval [a_min, a_max].

    Parameters
    ----------
    a : relay.Expr
        The input tensor (any dtype but bool).
    a_min : float
        The lower bound; smaller elements become a_min. Must not be NaN.
    a_max : float
        The upper bound; larger elements become a_max. Must be at least a_min.

    Returns
    -------
    result : relay.Expr
        A tensor of a's shape and dtype (for ints, the bounds are truncated toward zero, as numpy).
    """
    return CLIP(a, attrs=ClipAttrs(a_min, a_max))


def cast(data, dtype):
    """Convert each element of `data` to another dtype.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    dtype : str
        The dtype of the result, e.g. "float32", "int8" or "bool" (numpy's conversion rules:
        floats to ints truncate toward zero).

    Returns
    -------
    result : relay.Expr
        A tensor of data's shape with dtype `dtype`.
    """
    return CAST(data, attrs=CastAttrs(dtype))


def where(condition, x, y):
    """Choose each element from `x` where `condition` holds, else from `y`.

    Parameters
    ----------
    condition : relay.Expr
        A bool tensor saying, per element, which input to take.
    x : relay.Expr
        The values taken where `condition` is True.
    y : relay.Expr
        The values taken where `condition` is False; same dtype as `x`.

    Returns
    -------
    result : relay.Expr
        A tensor of the three inputs' broadcast shape and x's dtype.
    """
    return WHERE(condition, x, y)


__all__ = ["negative", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "abs", "floor", "ceil", "round",
           "sign", "sin", "cos", "erf", "copy", "zeros_like", "ones_like", "logical_not", "add", "subtract",
           "multiply", "divide", "power", "maximum", "minimum", "floor_divide", "floor_mod", "equal",
           "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
           "clip", "cast", "where", "fast_exp", "fast_tanh", "fast_erf",
           "acos", "acosh", "asin", "asinh", "atan", "atanh", "tan", "sinh", "cosh", "log2", "log10", "trunc",
           "isnan", "isinf", "isfinite", "bitwise_not", "mod", "trunc_divide", "trunc_mod", "left_shift",
           "right_shift", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_xor"]

_expr._OPERATOR_HOOKS.update(add=add, subtract=subtract, multiply=multiply, divide=divide,
                             negative=negative, less=less, greater=greater, less_equal=less_equal,
                             greater_equal=greater_equal, cast=cast)
