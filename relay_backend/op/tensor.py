"""Elementwise and broadcast operators, table-driven: each row is one op.

Unary ops use identity_rel and ELEMWISE; binary ops use broadcast_rel (or broadcast_comp_rel for
comparisons) and BROADCAST. Also clip, cast and where, which carry attrs or a third input.
Each row's te rule (a scalar PrimExpr function) becomes the op's compute through
compute_common.broadcast_compute; the rules reproduce the numpy references exactly (int divide
truncates, floor ops and float remainders follow numpy, round is half-to-even).
"""
import dataclasses
import math

import numpy as np

from .. import te, tir
from ..errors import TypeInferenceError
from ..ir import expr as _expr
from ..ir.attrs import Attrs
from ..ir.types import TensorType
from . import samples as S
from .compute_common import broadcast_compute, cast as _te_cast, is_float as _is_float
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import broadcast_comp_rel, broadcast_rel, broadcast_shape, expect_tensor, identity_rel

_erf = np.frompyfunc(math.erf, 1, 1)


def _erf_ref(x, attrs):
    return np.asarray(_erf(x.astype("float64")), dtype="float64").astype(x.dtype)


def _sigmoid_ref(x, attrs):
    x64 = x.astype("float64")
    return (0.5 * (1.0 + np.tanh(0.5 * x64))).astype(x.dtype)


def _sign(x, attrs):
    return np.sign(x).astype(x.dtype)


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


def _te_divide(a, b):
    return a / b if _is_float(a.dtype) else tir.truncdiv(a, b)  # ints truncate toward zero


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
    return _float_mod(a, b)[0] if _is_float(a.dtype) else a % b


def _te_floor_divide(a, b):
    """Floor division; for floats numpy's algorithm ((a - fmod(a, b)) / b, corrected by one
    where the remainder's sign was fixed, then rounded to the nearest integer), so results
    agree with numpy even where a / b rounds up to an integer."""
    if not _is_float(a.dtype):
        return a // b
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

# name, numpy reference (x, attrs) -> array, te rule (scalar PrimExpr -> PrimExpr), samples, level
UNARY_OPS = [
    ("negative", lambda x, a: np.negative(x), _neg, S.unary(_ALL_NUM), 3),
    ("exp", lambda x, a: np.exp(x), te.exp, S.unary(), 1),
    ("log", lambda x, a: np.log(x), te.log, S.unary(**_POS), 1),
    ("sqrt", lambda x, a: np.sqrt(x), te.sqrt, S.unary(**_POS), 1),
    ("rsqrt", lambda x, a: (1.0 / np.sqrt(x.astype("float64"))).astype(x.dtype), te.rsqrt, S.unary(**_POS), 1),
    ("sigmoid", _sigmoid_ref, te.sigmoid, S.unary(low=-6, high=6), 1),
    ("tanh", lambda x, a: np.tanh(x), te.tanh, S.unary(low=-4, high=4), 1),
    ("nn.relu", lambda x, a: np.maximum(x, np.zeros((), x.dtype)), _relu, S.unary(_ALL_NUM), 1),
    ("abs", lambda x, a: np.abs(x), te.abs, S.unary(_ALL_NUM), 3),
    ("floor", lambda x, a: np.floor(x), _rounding(te.floor), S.unary(low=-5, high=5), 3),
    ("ceil", lambda x, a: np.ceil(x), _rounding(te.ceil), S.unary(low=-5, high=5), 3),
    ("round", lambda x, a: np.round(x), _rounding(te.round), S.unary(low=-5, high=5), 3),
    ("sign", _sign, _te_sign, S.unary(_ALL_NUM), 3),
    ("sin", lambda x, a: np.sin(x), te.sin, S.unary(low=-4, high=4), 3),
    ("cos", lambda x, a: np.cos(x), te.cos, S.unary(low=-4, high=4), 3),
    ("erf", _erf_ref, te.erf, S.unary(low=-3, high=3), 3),
    ("copy", lambda x, a: x.copy(), _identity, S.unary(_ALL_NUM + ("bool",)), 3),
    ("zeros_like", lambda x, a: np.zeros_like(x), _fill(0), S.unary(_ALL_NUM), 3),
    ("ones_like", lambda x, a: np.ones_like(x), _fill(1), S.unary(_ALL_NUM), 3),
]


def _logical_not_rel(arg_types, attrs=None):
    t = identity_rel(arg_types)
    if t.dtype != "bool":
        raise TypeInferenceError(f"logical_not expects a bool tensor, got {t}")
    return t


_bool_only = ("bool",)
_int_div = lambda a, b: (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(a.dtype)  # noqa: E731


def _divide_ref(a, b, attrs):
    if np.dtype(a.dtype).kind in "iu":
        return _int_div(a, b)  # relay divide truncates toward zero for ints
    return np.divide(a, b)


def _floor_mod_ref(a, b, attrs):
    return np.mod(a, b).astype(a.dtype)


# name, reference (a, b, attrs), te rule (a, b) -> PrimExpr, samples, is comparison (bool output), level
BINARY_OPS = [
    ("add", lambda a, b, t: np.add(a, b), lambda a, b: a + b, S.binary(_ALL_NUM), False, 1),
    ("subtract", lambda a, b, t: np.subtract(a, b), lambda a, b: a - b, S.binary(_ALL_NUM), False, 1),
    ("multiply", lambda a, b, t: np.multiply(a, b), lambda a, b: a * b, S.binary(_ALL_NUM), False, 1),
    ("divide", _divide_ref, _te_divide, S.binary(("float32", "int32", "float64"), avoid_zero_rhs=True,
                                                 rhs_low=0.5, rhs_high=3.0), False, 1),
    ("power", lambda a, b, t: np.power(a, b), _te_power, S.binary(low=0.2, high=3.0), False, 4),
    ("maximum", lambda a, b, t: np.maximum(a, b), te.max, S.binary(_ALL_NUM), False, 4),
    ("minimum", lambda a, b, t: np.minimum(a, b), te.min, S.binary(_ALL_NUM), False, 4),
    ("floor_divide", lambda a, b, t: np.floor_divide(a, b), _te_floor_divide,
     S.binary(("float32", "int32"), low=-9, high=9, avoid_zero_rhs=True), False, 1),
    ("floor_mod", _floor_mod_ref, _te_floor_mod,
     S.binary(("float32", "int32"), low=-9, high=9, avoid_zero_rhs=True), False, 1),
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
]


def _logical_rel(arg_types, attrs=None):
    t = broadcast_rel(arg_types)
    if t.dtype != "bool":
        raise TypeInferenceError(f"logical ops expect bool tensors, got {arg_types[0]} and {arg_types[1]}")
    return t


def _rule(fn):
    """A table's te rule as a broadcast_compute function (the table rules take no attrs)."""
    return lambda attrs, *scalars: fn(*scalars)


for _name, _ref, _te_rule, _samples, _level in UNARY_OPS:
    defop(_name, inputs=("data",), rel=identity_rel, pattern=OpPattern.ELEMWISE, ref=_ref,
          samples=_samples, level=_level, compute=broadcast_compute(_name, _rule(_te_rule)))

for _name, _ref, _te_rule, _samples, _is_comp, _level in BINARY_OPS:
    defop(_name, inputs=("lhs", "rhs"), rel=broadcast_comp_rel if _is_comp else broadcast_rel,
          pattern=OpPattern.BROADCAST, ref=_ref, samples=_samples, level=_level,
          compute=broadcast_compute(_name, _rule(_te_rule)))

LOGICAL_NOT = defop("logical_not", inputs=("data",), rel=_logical_not_rel, pattern=OpPattern.ELEMWISE,
                    ref=lambda x, a: np.logical_not(x), samples=S.unary(_bool_only), level=4,
                    compute=broadcast_compute("logical_not", _rule(lambda x: ~x)))
for _name, _fn, _te_rule in (("logical_and", np.logical_and, lambda a, b: a & b),
                             ("logical_or", np.logical_or, lambda a, b: a | b)):
    defop(_name, inputs=("lhs", "rhs"), rel=_logical_rel, pattern=OpPattern.BROADCAST,
          ref=(lambda fn: lambda a, b, t: fn(a, b))(_fn), samples=S.binary(_bool_only), level=4,
          compute=broadcast_compute(_name, _rule(_te_rule)))


# --- clip ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ClipAttrs(Attrs):
    a_min: float = 0.0
    a_max: float = 0.0


def _clip_ref(x, attrs):
    return np.clip(x, attrs.a_min, attrs.a_max).astype(x.dtype)


def _te_clip(attrs, x):
    """min(max(x, a_min), a_max) with the bounds in x's dtype for floats. For ints numpy clips
    in float64 and truncates back, i.e. thresholds ceil(a_min) / floor(a_max) and results
    trunc(a_min) / trunc(a_max); thresholds outside the dtype's range never fire."""
    lo, hi = attrs.a_min, attrs.a_max
    if _is_float(x.dtype):
        return te.min(te.max(x, tir.const(lo, x.dtype)), tir.const(hi, x.dtype))
    info = np.iinfo(x.dtype)
    if lo > hi:
        return tir.const(int(np.clip(math.trunc(hi), info.min, info.max)), x.dtype)
    out = x
    if math.floor(hi) < info.max:
        out = te.if_then_else(x > tir.const(math.floor(hi), x.dtype), tir.const(math.trunc(hi), x.dtype), out)
    if math.ceil(lo) > info.min:
        out = te.if_then_else(x < tir.const(math.ceil(lo), x.dtype), tir.const(math.trunc(lo), x.dtype), out)
    return out


CLIP = defop("clip", inputs=("data",), attrs=ClipAttrs, rel=identity_rel, pattern=OpPattern.ELEMWISE,
             ref=_clip_ref, level=3, compute=broadcast_compute("clip", _te_clip),
             samples=lambda rng: [Sample([S.rand(rng, (2, 5))], ClipAttrs(-0.5, 0.7)),
                                  Sample([S.rand(rng, (3,), "float64")], ClipAttrs(0.0, 6.0)),
                                  Sample([S.rand(rng, (4,), "int32", -9, 9)], ClipAttrs(-3, 3))])


# --- cast ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class CastAttrs(Attrs):
    dtype: str = "float32"

    def __post_init__(self):
        object.__setattr__(self, "dtype", str(np.dtype(self.dtype)))


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
def _unary_ctor(op_name):
    from .registry import get
    op = get(op_name)

    def ctor(data):
        return op(data)
    ctor.__name__ = op_name.split(".")[-1]
    ctor.__doc__ = f"relay.{op_name}: elementwise {op_name.split('.')[-1]}."
    return ctor


def _binary_ctor(op_name):
    from .registry import get
    op = get(op_name)

    def ctor(lhs, rhs):
        return op(lhs, rhs)
    ctor.__name__ = op_name
    ctor.__doc__ = f"relay.{op_name}: broadcasting {op_name}."
    return ctor


negative, exp, log, sqrt, rsqrt, sigmoid, tanh = (_unary_ctor(n) for n in
                                                 ("negative", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh"))
abs, floor, ceil, round, sign, sin, cos, erf = (_unary_ctor(n) for n in  # noqa: A001
                                                ("abs", "floor", "ceil", "round", "sign", "sin", "cos", "erf"))
copy, zeros_like, ones_like, logical_not = (_unary_ctor(n) for n in
                                            ("copy", "zeros_like", "ones_like", "logical_not"))
relu = _unary_ctor("nn.relu")  # exported as nn.relu
add, subtract, multiply, divide, power, maximum, minimum = (_binary_ctor(n) for n in (
    "add", "subtract", "multiply", "divide", "power", "maximum", "minimum"))
floor_divide, floor_mod, equal, not_equal, less, less_equal, greater, greater_equal = (_binary_ctor(n) for n in (
    "floor_divide", "floor_mod", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"))
logical_and, logical_or = _binary_ctor("logical_and"), _binary_ctor("logical_or")


def clip(a, a_min, a_max):
    """relay.clip: limit values to [a_min, a_max]."""
    return CLIP(a, attrs=ClipAttrs(float(a_min), float(a_max)))


def cast(data, dtype):
    """relay.cast: convert to `dtype`."""
    return CAST(data, attrs=CastAttrs(dtype))


def where(condition, x, y):
    """relay.where: pick from x where condition is true, else from y (broadcasting)."""
    return WHERE(condition, x, y)


__all__ = ["negative", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "abs", "floor", "ceil", "round",
           "sign", "sin", "cos", "erf", "copy", "zeros_like", "ones_like", "logical_not", "add", "subtract",
           "multiply", "divide", "power", "maximum", "minimum", "floor_divide", "floor_mod", "equal",
           "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
           "clip", "cast", "where"]

_expr._OPERATOR_HOOKS.update(add=add, subtract=subtract, multiply=multiply, divide=divide,
                             negative=negative, less=less, greater=greater, less_equal=less_equal,
                             greater_equal=greater_equal, cast=cast)
