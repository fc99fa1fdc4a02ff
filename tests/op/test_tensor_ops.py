"""The elementwise / broadcast ops of op/tensor.py against an INDEPENDENT expression each.

The conformance tests compare every executor with the op's numpy reference; here the reference
itself (and the debug interpreter, which runs it) is checked against a second formulation written
without the reference's numpy ufunc: Python scalar math (math, fractions, Python's own int
division and rounding) or scipy.special, applied element by element after broadcasting. A new
op in tensor.py without a row in INDEPENDENT fails test_table_covers_every_tensor_op.

Also here: the dtype rules (float-only transcendentals, no arithmetic on bool), attribute
validation (cast, clip, nn.leaky_relu), ill-typed calls of clip / cast / where / the logical ops,
and integer division by 0 and -1 (and INT_MIN / -1) compiled natively, run in a subprocess so a
SIGFPE is a test failure rather than a dead test run.
"""
import json
import math
import os
import subprocess
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import special

import relay_backend as relay
from relay_backend.errors import AttrsError, TypeInferenceError
from relay_backend.op import list_ops
from relay_backend.op.nn.activation import LeakyReluAttrs
from relay_backend.op.tensor import CastAttrs, ClipAttrs

# the table ops' references live in op/tensor.py and (the rarer ones) op/elemwise_math.py
TENSOR_MODULES = ("relay_backend.op.tensor", "relay_backend.op.elemwise_math")
TOLERANCE = {"float16": (1e-3, 1e-3), "float32": (1e-6, 1e-7), "float64": (1e-12, 1e-12)}


# --- the independent expressions ----------------------------------------------------------------
def _trunc_div(a, b):
    if isinstance(a, float):
        return a / b
    return 0 if b == 0 else math.trunc(Fraction(a, b))  # relay divide truncates; x / 0 is 0


def _floor_div(a, b):
    if isinstance(a, float):
        return float(math.floor(Fraction(a) / Fraction(b)))  # exact rational floor
    return 0 if b == 0 else a // b                           # Python's // floors


def _floor_mod(a, b):
    if isinstance(a, float):
        q = math.floor(Fraction(a) / Fraction(b))
        return float(Fraction(a) - Fraction(b) * q)
    return 0 if b == 0 else a % b                            # Python's % takes the divisor's sign


def _clip(x, attrs):
    v = min(max(float(x), attrs.a_min), attrs.a_max)
    return v if isinstance(x, float) else math.trunc(v)     # ints: numpy clips in float, truncates


def _cast(x, attrs):
    kind = np.dtype(attrs.dtype).kind
    if kind == "b":
        return x != 0
    return math.trunc(x) if kind in "iu" else float(x)


def _round_half_even(x):
    return round(x) if isinstance(x, float) else x           # Python's round is half-to-even


def _sign(x):
    return (x > 0) - (x < 0)


def _trunc_mod(a, b):
    if isinstance(a, float):
        return math.fmod(a, b) if b != 0 else math.nan
    return 0 if b == 0 else a - b * math.trunc(Fraction(a, b))   # the dividend's sign


def _trunc_divide(a, b):
    if isinstance(a, float):
        if b == 0:
            return math.copysign(math.inf, a) * math.copysign(1.0, b) if a != 0 else math.nan
        return float(math.trunc(Fraction(a) / Fraction(b)))
    return _trunc_div(a, b)


def _shift(direction):
    """Python's unbounded ints: a << s, a >> s (floor, i.e. arithmetic); amounts outside
    [0, bits) give 0 (left) or the sign fill (right), as numpy defines them. Takes the
    inputs' dtype (`needs_dtype`) for the width."""
    def fn(attrs, a, s, dtype):
        if not 0 <= s < 8 * np.dtype(dtype).itemsize:
            return 0 if direction == "left" or a >= 0 else -1
        return a << s if direction == "left" else a >> s
    fn.needs_dtype = True
    return fn


def _bitwise(fn):
    """Python's & | ^ on unbounded ints (two's complement for negatives), or on bools."""
    return lambda attrs, a, b: fn(a, b) if isinstance(a, bool) else fn(int(a), int(b))


def _classify(kind):
    def fn(attrs, x):
        x = float(x)
        return {"isnan": math.isnan(x), "isinf": math.isinf(x),
                "isfinite": math.isfinite(x)}[kind]
    return fn


def _un(fn):
    return lambda attrs, x: fn(x)


def _bin(fn):
    return lambda attrs, a, b: fn(a, b)


SAME, BOOL = "same", "bool"
# op name -> (fn(attrs, *python scalars) -> python scalar, output dtype: SAME as the data input,
#             BOOL, or a function of (inputs, attrs))
INDEPENDENT = {
    "negative": (_un(lambda x: -x), SAME),
    "exp": (_un(math.exp), SAME),
    "log": (_un(math.log), SAME),
    "sqrt": (_un(math.sqrt), SAME),
    "rsqrt": (_un(lambda x: 1.0 / math.sqrt(x)), SAME),
    "sigmoid": (_un(lambda x: float(special.expit(x))), SAME),
    "tanh": (_un(math.tanh), SAME),
    "nn.relu": (_un(lambda x: x if x > 0 else 0), SAME),
    "abs": (_un(lambda x: -x if x < 0 else x), SAME),
    "floor": (_un(math.floor), SAME),
    "ceil": (_un(math.ceil), SAME),
    "round": (_un(_round_half_even), SAME),
    "sign": (_un(_sign), SAME),
    "sin": (_un(math.sin), SAME),
    "cos": (_un(math.cos), SAME),
    "erf": (_un(lambda x: float(special.erf(x))), SAME),
    "fast_exp": (_un(math.exp), SAME),
    "fast_tanh": (_un(math.tanh), SAME),
    "fast_erf": (_un(lambda x: float(special.erf(x))), SAME),
    "copy": (_un(lambda x: x), SAME),
    "zeros_like": (_un(lambda x: 0), SAME),
    "ones_like": (_un(lambda x: 1), SAME),
    "logical_not": (_un(lambda x: not x), BOOL),
    "add": (_bin(lambda a, b: a + b), SAME),
    "subtract": (_bin(lambda a, b: a - b), SAME),
    "multiply": (_bin(lambda a, b: a * b), SAME),
    "divide": (_bin(_trunc_div), SAME),
    "power": (_bin(math.pow), SAME),
    "maximum": (_bin(lambda a, b: a if a >= b else b), SAME),
    "minimum": (_bin(lambda a, b: a if a <= b else b), SAME),
    "floor_divide": (_bin(_floor_div), SAME),
    "floor_mod": (_bin(_floor_mod), SAME),
    "equal": (_bin(lambda a, b: a == b), BOOL),
    "not_equal": (_bin(lambda a, b: a != b), BOOL),
    "less": (_bin(lambda a, b: a < b), BOOL),
    "less_equal": (_bin(lambda a, b: a <= b), BOOL),
    "greater": (_bin(lambda a, b: a > b), BOOL),
    "greater_equal": (_bin(lambda a, b: a >= b), BOOL),
    "logical_and": (_bin(lambda a, b: a and b), BOOL),
    "logical_or": (_bin(lambda a, b: a or b), BOOL),
    "clip": (lambda attrs, x: _clip(x, attrs), SAME),
    "cast": (lambda attrs, x: _cast(x, attrs), lambda inputs, attrs: attrs.dtype),
    "where": (lambda attrs, c, x, y: x if c else y, lambda inputs, attrs: str(inputs[1].dtype)),
    "acos": (_un(math.acos), SAME),
    "acosh": (_un(math.acosh), SAME),
    "asin": (_un(math.asin), SAME),
    "asinh": (_un(math.asinh), SAME),
    "atan": (_un(math.atan), SAME),
    "atanh": (_un(math.atanh), SAME),
    "tan": (_un(math.tan), SAME),
    "sinh": (_un(math.sinh), SAME),
    "cosh": (_un(math.cosh), SAME),
    "log2": (_un(math.log2), SAME),
    "log10": (_un(math.log10), SAME),
    "trunc": (_un(math.trunc), SAME),
    "isnan": (_classify("isnan"), BOOL),
    "isinf": (_classify("isinf"), BOOL),
    "isfinite": (_classify("isfinite"), BOOL),
    "bitwise_not": (_un(lambda x: (not x) if isinstance(x, bool) else ~x), SAME),
    "mod": (_bin(_trunc_mod), SAME),
    "trunc_mod": (_bin(_trunc_mod), SAME),
    "trunc_divide": (_bin(_trunc_divide), SAME),
    "left_shift": (_shift("left"), SAME),
    "right_shift": (_shift("right"), SAME),
    "bitwise_and": (_bitwise(lambda a, b: a & b), SAME),
    "bitwise_or": (_bitwise(lambda a, b: a | b), SAME),
    "bitwise_xor": (_bitwise(lambda a, b: a ^ b), SAME),
    "logical_xor": (_bin(lambda a, b: a != b), BOOL),
}


def _to_dtype(value, dtype):
    """A Python scalar as an element of `dtype` (ints wrap as numpy's fixed-width ints do)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return bool(value)
    if dt.kind in "iu":
        bits = dt.itemsize * 8
        v = int(value) % (1 << bits)
        return v - (1 << bits) if dt.kind == "i" and v >= 1 << (bits - 1) else v
    return float(value)


def independent(name, inputs, attrs):
    """The INDEPENDENT expression of op `name`, element by element over the broadcast inputs."""
    fn, out = INDEPENDENT[name]
    arrays = [np.asarray(x) for x in inputs]
    dtype = {SAME: str(arrays[0].dtype), BOOL: "bool"}.get(out) if isinstance(out, str) else out(arrays, attrs)
    bcast = np.broadcast_arrays(*arrays)
    shape = bcast[0].shape if bcast else ()
    extra = {"dtype": str(arrays[0].dtype)} if getattr(fn, "needs_dtype", False) else {}
    values = [_to_dtype(fn(attrs, *(b.flat[i].item() for b in bcast), **extra), dtype)
              for i in range(int(np.prod(shape)))]
    return np.array(values, dtype=dtype).reshape(shape)


def _tensor_ops():
    return [op for op in list_ops() if op.ref.__module__ in TENSOR_MODULES]


def _cases():
    for op in _tensor_ops():
        for i, sample in enumerate(op.samples(np.random.default_rng(0))):
            yield pytest.param(op, sample, id=f"{op.name}-{i}")


def _assert_matches(actual, expected, what):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    if expected.dtype.kind == "f":
        rtol, atol = TOLERANCE[str(expected.dtype)]
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def _module(op, inputs, attrs):
    params = [relay.var(f"in{i}", shape=np.shape(x), dtype=str(np.asarray(x).dtype)) for i, x in enumerate(inputs)]
    return relay.IRModule.from_expr(relay.Function(params, op(*params, attrs=attrs)))


def test_table_covers_every_tensor_op():
    names = {op.name for op in _tensor_ops()}
    assert len(names) >= 40, f"expected the tensor.py ops, found {sorted(names)}"
    missing = sorted(names - set(INDEPENDENT))
    assert not missing, f"ops in op/tensor.py without an independent expression in INDEPENDENT: {missing}"
    stale = sorted(set(INDEPENDENT) - names)
    assert not stale, f"INDEPENDENT rows for ops that are not in op/tensor.py: {stale}"


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_reference_and_interpreter_match_independent(op, sample):
    expected = independent(op.name, sample.inputs, sample.attrs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # references are quiet (no divide-by-zero noise)
        ref = np.asarray(op.ref(*sample.inputs, sample.attrs))
    _assert_matches(ref, expected, f"{op.name} reference")
    out = relay.create_executor("debug", mod=_module(op, sample.inputs, sample.attrs)).evaluate()(*sample.inputs)
    _assert_matches(out.numpy(), expected, f"{op.name} on the debug interpreter")


def test_independent_edge_values():
    """Values random samples rarely reach: halves for round, 1 // 0.1, x // 0 and x % 0 on ints."""
    get = relay.op.get
    cases = [
        ("round", [np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5], "float32")], None),
        ("floor_divide", [np.array([1.0, -1.0, 7.5], "float64"), np.array([0.1, 0.1, -2.5], "float64")], None),
        ("floor_mod", [np.array([1.0, -1.0, 7.5], "float64"), np.array([0.1, 0.1, -2.5], "float64")], None),
        ("divide", [np.array([7, -7, 7, -7, 5, 0], "int32"), np.array([2, 2, -2, -2, 0, 0], "int32")], None),
        ("floor_divide", [np.array([7, -7, 7, -7, 5, -3], "int64"), np.array([2, 2, -2, -2, 0, -1], "int64")], None),
        ("floor_mod", [np.array([7, -7, 7, -7, 5, -3], "int8"), np.array([2, 2, -2, -2, 0, -1], "int8")], None),
        ("clip", [np.array([-9, -3, -2, 0, 1, 2, 9], "int32")], ClipAttrs(-2.5, 1.7)),
        ("cast", [np.array([-1.7, -0.5, 0.0, 0.5, 2.9], "float32")], CastAttrs("int8")),
    ]
    for name, inputs, attrs in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ref = np.asarray(get(name).ref(*inputs, attrs))
        _assert_matches(ref, independent(name, inputs, attrs), f"{name} on {inputs}")


def test_references_do_not_warn_on_special_values():
    """log(0), sqrt(-1), rsqrt(0), exp overflow, 0 ** -1 and 1.0 / 0 give inf / NaN quietly,
    like the compiled kernels, with the values numpy gives."""
    get = relay.op.get
    f32 = lambda *v: np.array(v, "float32")  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(get("log").ref(f32(0.0, -1.0), None), f32(-np.inf, np.nan))
        np.testing.assert_array_equal(get("sqrt").ref(f32(-1.0), None), f32(np.nan))
        np.testing.assert_array_equal(get("rsqrt").ref(f32(0.0), None), f32(np.inf))
        np.testing.assert_array_equal(get("exp").ref(f32(1000.0), None), f32(np.inf))
        np.testing.assert_array_equal(get("power").ref(f32(0.0), f32(-1.0), None), f32(np.inf))
        np.testing.assert_array_equal(get("divide").ref(f32(1.0, 0.0), f32(0.0, 0.0), None), f32(np.inf, np.nan))
        np.testing.assert_array_equal(get("floor_divide").ref(f32(1.0), f32(0.0), None), f32(np.inf))


# --- dtype rules -------------------------------------------------------------------------------------
FLOAT_ONLY = ("exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "sin", "cos", "erf", "fast_exp",
              "fast_tanh", "fast_erf", "acos", "acosh", "asin", "asinh", "atan", "atanh", "tan", "sinh",
              "cosh", "log2", "log10")
NO_BOOL_UNARY = ("negative", "abs", "sign", "nn.relu", "clip")
NO_BOOL_BINARY = ("add", "subtract", "multiply", "divide", "power", "floor_divide", "floor_mod", "mod",
                  "trunc_divide", "trunc_mod")


def _infer(op_name, *types, attrs=None):
    params = [relay.var(f"in{i}", t) for i, t in enumerate(types)]
    call = relay.op.get(op_name)(*params, attrs=attrs)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, call)))
    return mod["main"].body.checked_type


@pytest.mark.parametrize("name", FLOAT_ONLY)
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_float_only_ops_reject_ints_and_bools(name, dtype):
    with pytest.raises(TypeInferenceError) as err:
        _infer(name, relay.TensorType((2, 3), dtype))
    assert f'{name} expects a floating-point tensor, got {dtype}; cast it first (relay.cast(x, "float32"))' \
        in str(err.value)


@pytest.mark.parametrize("name", FLOAT_ONLY)
def test_float_only_ops_accept_floats(name):
    for dtype in ("float16", "float32", "float64"):
        assert _infer(name, relay.TensorType((2, 3), dtype)) == relay.TensorType((2, 3), dtype)


def test_float_only_op_on_ints_never_runs():
    """The silent-zeros bug: sigmoid / erf / rsqrt on int32 used to return zeros in the interpreter."""
    x = relay.var("x", shape=(3,), dtype="int32")
    for fn in (relay.sigmoid, relay.erf, relay.rsqrt):
        mod = relay.IRModule.from_expr(relay.Function([x], fn(x)))
        with pytest.raises(TypeInferenceError, match="expects a floating-point tensor"):
            relay.create_executor("debug", mod=mod).evaluate()(np.array([1, 2, 3], "int32"))


@pytest.mark.parametrize("name", NO_BOOL_UNARY)
def test_arithmetic_unary_rejects_bool(name):
    attrs = ClipAttrs(0, 1) if name == "clip" else None
    with pytest.raises(TypeInferenceError, match=f"{name} is not defined on bool tensors"):
        _infer(name, relay.TensorType((4,), "bool"), attrs=attrs)
    assert _infer(name, relay.TensorType((4,), "int8"), attrs=attrs) == relay.TensorType((4,), "int8")


@pytest.mark.parametrize("name", NO_BOOL_BINARY)
def test_arithmetic_binary_rejects_bool(name):
    b = relay.TensorType((4,), "bool")
    with pytest.raises(TypeInferenceError, match=f"{name} is not defined on bool tensors"):
        _infer(name, b, b)


def test_bool_hints_name_the_logical_op():
    b = relay.TensorType((4,), "bool")
    for name, hint in (("negative", "logical_not"), ("add", "logical_or"), ("multiply", "logical_and"),
                       ("subtract", "not_equal")):
        with pytest.raises(TypeInferenceError, match=hint):
            _infer(name, *([b] if name == "negative" else [b, b]))


def test_numpy_rejects_what_we_reject_on_bool():
    """Where numpy raises on bool (negative, subtract, sign), so does the relation."""
    b = np.array([True, False])
    for fn in (np.negative, np.sign):
        with pytest.raises(TypeError):
            fn(b)
    with pytest.raises(TypeError):
        np.subtract(b, b)


def test_bool_ops_that_numpy_allows_still_work():
    """maximum / minimum are or / and on bools; comparisons, copy, rounding keep bool."""
    b = relay.TensorType((2, 2), "bool")
    for name in ("maximum", "minimum", "less", "equal"):
        assert _infer(name, b, b) == b
    for name in ("copy", "floor", "ceil", "round", "zeros_like", "ones_like"):
        assert _infer(name, b) == b


# --- attributes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["floatxx", "object", "U3", "complex64", "complex128", "datetime64", "S4"])
def test_cast_rejects_unknown_and_unsupported_dtypes(dtype):
    with pytest.raises(AttrsError, match="cast"):
        CastAttrs(dtype)
    x = relay.var("x", shape=(2,), dtype="float32")
    with pytest.raises(AttrsError):
        relay.cast(x, dtype)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                   "uint64", "float16", "float32", "float64"])
def test_cast_accepts_supported_dtypes(dtype):
    assert CastAttrs(dtype).dtype == dtype
    assert CastAttrs(np.dtype(dtype)).dtype == dtype


@pytest.mark.parametrize("a_min,a_max", [("a", 1.0), (0.0, "1"), (None, 1.0), (0.0, None), ([0.0], 1.0),
                                         (True, 2.0), (0.0, 1 + 2j)])
def test_clip_rejects_non_numeric_bounds(a_min, a_max):
    with pytest.raises(AttrsError, match="clip: attribute a_m(in|ax) must be a number"):
        ClipAttrs(a_min, a_max)
    x = relay.var("x", shape=(2,), dtype="float32")
    with pytest.raises(AttrsError):
        relay.clip(x, a_min, a_max)


def test_clip_rejects_inverted_and_nan_bounds():
    with pytest.raises(AttrsError, match="a_min=2.0 is greater than a_max=1.0"):
        ClipAttrs(2.0, 1.0)
    with pytest.raises(AttrsError, match="NaN"):
        ClipAttrs(float("nan"), 1.0)
    attrs = ClipAttrs(np.int32(-3), np.float32(3.5))
    assert (attrs.a_min, attrs.a_max) == (-3.0, 3.5) and isinstance(attrs.a_min, float)
    assert ClipAttrs(1, 1).a_max == 1.0
    assert ClipAttrs(np.array(0.5), 2).a_min == 0.5


def test_clip_with_infinite_bounds_on_ints():
    """ONNX-style unbounded clips: inf bounds leave ints alone (no OverflowError in the compute)."""
    x = np.array([-9, 0, 9], "int32")
    mod = _module(relay.op.get("clip"), [x], ClipAttrs(-math.inf, math.inf))
    for kind in ("debug", "graph"):
        np.testing.assert_array_equal(relay.create_executor(kind, mod=mod).evaluate()(x).numpy(), x)


@pytest.mark.parametrize("alpha", ["0.1", None, [0.1], True, 1j])
def test_leaky_relu_rejects_non_numeric_alpha(alpha):
    with pytest.raises(AttrsError, match="nn.leaky_relu: attribute alpha must be a number"):
        LeakyReluAttrs(alpha)
    x = relay.var("x", shape=(2,), dtype="float32")
    with pytest.raises(AttrsError):
        relay.nn.leaky_relu(x, alpha=alpha)


def test_leaky_relu_accepts_numbers():
    assert LeakyReluAttrs(1).alpha == 1.0
    assert LeakyReluAttrs(np.float32(0.25)).alpha == 0.25


# --- ill-typed calls --------------------------------------------------------------------------------
T = relay.TensorType


def test_clip_ill_typed():
    with pytest.raises(TypeInferenceError, match="clip is not defined on bool"):
        _infer("clip", T((3,), "bool"), attrs=ClipAttrs(0, 1))
    with pytest.raises(TypeInferenceError, match="expected a tensor"):
        _infer("clip", relay.TupleType([T((3,), "float32")]), attrs=ClipAttrs(0, 1))


def test_cast_ill_typed():
    with pytest.raises(TypeInferenceError, match="expected a tensor for data"):
        _infer("cast", relay.TupleType([T((3,), "float32")]), attrs=CastAttrs("int32"))
    assert _infer("cast", T((3,), "bool"), attrs=CastAttrs("float16")) == T((3,), "float16")


def test_where_ill_typed():
    with pytest.raises(TypeInferenceError, match="condition must be bool"):
        _infer("where", T((3,), "int32"), T((3,), "float32"), T((3,), "float32"))
    with pytest.raises(TypeInferenceError, match="x and y must have the same dtype"):
        _infer("where", T((3,), "bool"), T((3,), "float32"), T((3,), "int32"))
    with pytest.raises(TypeInferenceError, match="Incompatible broadcast"):
        _infer("where", T((3,), "bool"), T((4,), "float32"), T((4,), "float32"))
    with pytest.raises(TypeInferenceError, match="Incompatible broadcast"):
        _infer("where", T((2, 1), "bool"), T((2, 3), "float32"), T((4,), "float32"))
    assert _infer("where", T((2, 1), "bool"), T((1, 3), "int8"), T((), "int8")) == T((2, 3), "int8")


def test_logical_ops_ill_typed():
    with pytest.raises(TypeInferenceError, match="logical_not expects a bool tensor"):
        _infer("logical_not", T((3,), "int32"))
    for name in ("logical_and", "logical_or"):
        with pytest.raises(TypeInferenceError, match="logical ops expect bool tensors"):
            _infer(name, T((3,), "float32"), T((3,), "float32"))
        with pytest.raises(TypeInferenceError, match="do not match"):
            _infer(name, T((3,), "bool"), T((3,), "int32"))
        with pytest.raises(TypeInferenceError, match="Incompatible broadcast"):
            _infer(name, T((3,), "bool"), T((2,), "bool"))


# --- integer division by 0 and -1, compiled -------------------------------------------------------
_DIVISION_SCRIPT = r"""
import json, sys
import numpy as np
import relay_backend as relay
from relay_backend.backend import te_compiler

cases = json.loads(sys.argv[1])
out = {}
for key, (name, dtype, a, b, kind) in cases.items():
    a, b = np.array(a, dtype), np.array(b, dtype)
    x = relay.var("a", shape=a.shape, dtype=dtype)
    y = relay.var("b", shape=b.shape, dtype=dtype)
    func = relay.Function([x, y], getattr(relay, name)(x, y))
    if kind == "jit":
        func = relay.transform.InferType()(relay.IRModule.from_expr(func))["main"].with_attr("Primitive", 1)
        relay.transform.InferTypeLocal(func)
        res = relay.nd.empty(a.shape, dtype)
        te_compiler.get().jit(func, "llvm")(relay.nd.array(a), relay.nd.array(b), res)
    else:
        res = relay.create_executor(kind, mod=relay.IRModule.from_expr(func)).evaluate()(a, b)
    out[key] = [int(v) for v in res.numpy()]
    print(key, "ok", file=sys.stderr, flush=True)
print(json.dumps(out))
"""


def _division_inputs(dtype):
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)
    if info.min == 0:  # unsigned: no -1; the all-ones divisor must divide normally
        return [7, 0, hi, hi, 5, hi - 1, 9], [0, 0, 0, hi, hi, hi, 4]
    a = [7, -7, lo, lo, 5, lo, 0, hi, -1, 3, lo, hi, -9, 9, lo + 1, 0]
    b = [0, 0, -1, 0, -1, 2, 0, -1, -1, -2, 1, lo, 4, -4, -1, -1]
    return a, b


def _expected_division(name, a, b):
    """numpy's answer: floor_divide / mod (0 for x // 0 and x % 0; INT_MIN // -1 wraps to INT_MIN);
    for the truncating divide, the exact rational quotient truncated and wrapped (0 for x / 0)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if name == "floor_divide":
            return np.floor_divide(a, b)
        if name == "floor_mod":
            return np.mod(a, b)
    if name in ("mod", "trunc_mod"):
        vals = [_to_dtype(_trunc_mod(int(x), int(y)), a.dtype) for x, y in zip(a, b)]
        return np.array(vals, a.dtype)
    vals = [_to_dtype(_trunc_div(int(x), int(y)), a.dtype) for x, y in zip(a, b)]
    return np.array(vals, a.dtype)


def test_numpy_integer_division_conventions():
    """The values the guards reproduce, as numpy gives them."""
    with np.errstate(all="ignore"):
        assert np.floor_divide(np.int32(7), np.int32(0)) == 0 and np.mod(np.int32(7), np.int32(0)) == 0
        assert np.floor_divide(np.int32(-2**31), np.int32(-1)) == -2**31
        assert np.mod(np.int64(-2**63), np.int64(-1)) == 0


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "uint32"])
@pytest.mark.parametrize("name", ["divide", "floor_divide", "floor_mod", "mod", "trunc_divide", "trunc_mod"])
def test_integer_division_references_by_zero_and_minus_one(name, dtype):
    a, b = (np.array(v, dtype) for v in _division_inputs(dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero / overflow warnings from the reference
        ref = np.asarray(relay.op.get(name).ref(a, b, None))
    np.testing.assert_array_equal(ref, _expected_division(name, a, b))
    assert ref.dtype == a.dtype


@pytest.mark.compile
def test_integer_division_by_zero_and_minus_one_compiled():
    """divide / floor_divide / floor_mod on int32 and int64 (and int8, uint32) with 0 and -1
    divisors and INT_MIN dividends, through TECompiler.jit (LLVM) and the AOT executor (C);
    before the guards this died with SIGFPE, so the kernels run in a child process."""
    cases = {}
    for name in ("divide", "floor_divide", "floor_mod", "mod", "trunc_divide", "trunc_mod"):
        for dtype in ("int32", "int64", "int8", "uint32"):
            a, b = _division_inputs(dtype)
            cases[f"{name}-{dtype}-jit"] = (name, dtype, a, b, "jit")
        for dtype in ("int32", "int64"):
            a, b = _division_inputs(dtype)
            cases[f"{name}-{dtype}-aot"] = (name, dtype, a, b, "aot")
    env = dict(os.environ, RB_NO_DISK_CACHE="1")
    proc = subprocess.run([sys.executable, "-c", _DIVISION_SCRIPT, json.dumps(cases)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, (
        f"the child running the division kernels failed with return code {proc.returncode} "
        f"({'SIGFPE' if proc.returncode == -8 else 'see stderr'}); last case that finished: "
        f"{(proc.stderr.strip().splitlines() or ['none'])[-1]}\n{proc.stderr[-3000:]}")
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    for key, (name, dtype, a, b, kind) in cases.items():
        a, b = np.array(a, dtype), np.array(b, dtype)
        np.testing.assert_array_equal(np.array(results[key], dtype), _expected_division(name, a, b),
                                      err_msg=f"{key}: a={a.tolist()} b={b.tolist()}")


# --- bit operations, shifts, float classifiers ------------------------------------------------------
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"])
def test_bit_ops_reject_floats(name):
    T = relay.TensorType
    with pytest.raises(TypeInferenceError, match=f"{name} expects integer"):
        _infer(name, T((3,), "float32"), T((3,), "float32"))


@pytest.mark.parametrize("name", ["left_shift", "right_shift"])
def test_shifts_reject_bool_and_name_the_logical_ops(name):
    T = relay.TensorType
    with pytest.raises(TypeInferenceError, match="logical_and / logical_or"):
        _infer(name, T((3,), "bool"), T((3,), "bool"))


def test_classifiers_give_bool_on_every_dtype():
    T = relay.TensorType
    for name in ("isnan", "isinf", "isfinite"):
        for dtype in ("float32", "int8", "bool"):
            assert _infer(name, T((2, 3), dtype)) == T((2, 3), "bool")


@pytest.mark.compile
@pytest.mark.parametrize("kind", ["graph", "aot"])
def test_shift_edge_amounts_compiled(kind):
    """Amounts of 0, bits - 1, bits, bits + 1, -1 and INT_MIN / INT_MAX operands: numpy's values
    (0 or the sign fill past the width), never LLVM's poison or C's undefined shift."""
    a = np.array([-128, 127, -1, 1, -128, 5, -7, 64], "int8")
    s = np.array([0, 7, 8, 9, -1, 127, 1, 6], "int8")
    for name, fn in (("left_shift", np.left_shift), ("right_shift", np.right_shift)):
        x, y = relay.var("x", shape=(8,), dtype="int8"), relay.var("y", shape=(8,), dtype="int8")
        mod = relay.IRModule.from_expr(relay.Function([x, y], getattr(relay, name)(x, y)))
        out = relay.create_executor(kind, mod=mod).evaluate()(a, s).numpy()
        np.testing.assert_array_equal(out, fn(a, s), err_msg=f"{name} on {kind}")
        expected = [_shift("left" if name == "left_shift" else "right")(None, int(v), int(k), "int8")
                    for v, k in zip(a, s)]
        np.testing.assert_array_equal(out, np.array([_to_dtype(v, "int8") for v in expected], "int8"))
