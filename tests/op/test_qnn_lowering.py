"""The integer lowering of the qnn ops: the fixed-point multiplier against an independent
Python-integer model of TVM's GetFixedPointMultiplierShift / FixedPointMultiply, its Relay form
(compile-time constant and run-time multipliers, on compiled executors) bit-exact against the
numpy model, relay.qnn.transform.CanonicalizeOps, the pipeline running it, requantize_config,
and the errors of ill-typed qnn calls."""
import math

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import AttrsError, CompileError, TypeInferenceError
from relay_backend.ir.functor import post_order
from relay_backend.op.qnn.fixed_point import multiplier_parts, rescale_expr, rescale_ref

MULTIPLIERS = [0.0, 1.0, 0.5, 0.25, 2.0, 3.0, 1e-3, 7.3e-4, 0.123456789, 0.9999999999, 1 - 2 ** -40,
               2.0 ** -31, 2.0 ** -32, 2.0 ** -33, 2.0 ** 30, 2.0 ** 31, 5e10, -0.37, -1.5, 2.0 ** -31 * 0.75,
               float("inf"), float("nan"), 1e-300]


def _tvm_parts(m: float):
    """GetFixedPointMultiplierShift in Python scalars (round half away from zero) plus the
    range rules of fixed_point.py."""
    if not math.isfinite(m) or m == 0:
        return 0, 0
    sig, e = math.frexp(m)
    mag = math.floor(abs(sig) * 2 ** 31 + 0.5)
    if mag == 2 ** 31:
        mag, e = mag // 2, e + 1
    if e < -31:
        return 0, 0
    if e > 31:
        mag, e = 2 ** 31 - 1, 31
    return int(math.copysign(mag, sig)), e


def _tvm_multiply(x: int, m: float, rounding: str) -> int:
    mant, e = _tvm_parts(m)
    p = (x << max(e, 0)) * mant
    shift = 31 + max(-e, 0)
    half = 1 << (shift - 1)
    if rounding == "TONEAREST" and p < 0:
        half -= 1
    return (p + half) >> shift


def test_multiplier_parts_match_python_frexp():
    mant, e = multiplier_parts(np.array(MULTIPLIERS))
    assert [(int(a), int(b)) for a, b in zip(mant, e)] == [_tvm_parts(m) for m in MULTIPLIERS]


@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST"])
def test_rescale_ref_matches_python_integers(rounding):
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.integers(-2 ** 20, 2 ** 20, 200), [0, 1, -1, 3, -3, 5, -5]]).astype("int32")
    for m in MULTIPLIERS[:19] + [0.5 ** 5, 1.5]:
        got = rescale_ref(xs, np.float64(m), rounding)
        want = [_tvm_multiply(int(x), m, rounding) for x in xs]
        np.testing.assert_array_equal(got, np.array(want, dtype="int64").astype("int32"), err_msg=str(m))


def _run(kind, expr, params, args):
    mod = relay.IRModule.from_expr(relay.Function(params, expr))
    return relay.create_executor(kind, mod=mod).evaluate()(*args).numpy()


@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST"])
def test_relay_lowering_is_bit_exact_for_runtime_and_constant_multipliers(rounding):
    rng = np.random.default_rng(1)
    mults = np.array([m for m in MULTIPLIERS if m != 2.0 ** 31 and m != 5e10]   # huge: int64 overflow
                     + list(2.0 ** rng.uniform(-36, 12, 40)), dtype="float64")
    xs = rng.integers(-2 ** 16, 2 ** 16, mults.size).astype("int32")
    xs[:6] = [1, -1, 3, -3, 0, 7]
    want = rescale_ref(xs, mults, rounding)
    x = relay.var("x", shape=xs.shape, dtype="int32")
    m = relay.var("m", shape=mults.shape, dtype="float64")
    got_runtime = _run("graph", rescale_expr(x, m, rounding), [x, m], [xs, mults])
    np.testing.assert_array_equal(got_runtime, want)
    got_const = _run("vm", rescale_expr(x, mults, rounding), [x], [xs])
    np.testing.assert_array_equal(got_const, want)


def _quantized_program():
    x = relay.var("x", shape=(2, 4), dtype="float32")
    q = relay.qnn.op.quantize(x, relay.const(np.float32(0.05)), relay.const(np.int32(3)))
    r = relay.qnn.op.requantize(q, relay.const(np.float32(0.05)), relay.const(np.int32(3)),
                                relay.const(np.float32(0.1)), relay.const(np.int32(-2)), out_dtype="uint8")
    return relay.IRModule.from_expr(relay.Function([x], r))


def _qnn_calls(mod):
    return [n for n in post_order(mod["main"].body)
            if isinstance(n, relay.Call) and getattr(n.op, "name", "").startswith("qnn.")]


def test_canonicalize_ops_leaves_only_basic_ops():
    mod = relay.transform.InferType()(_quantized_program())
    assert len(_qnn_calls(mod)) == 2
    lowered = relay.qnn.transform.CanonicalizeOps()(mod)
    assert _qnn_calls(lowered) == []
    x = np.linspace(-3, 3, 8, dtype="float32").reshape(2, 4)
    want = relay.create_executor("debug", mod=mod).evaluate()(x).numpy()
    got = relay.create_executor("debug", mod=lowered).evaluate()(x).numpy()
    np.testing.assert_array_equal(got, want)
    text = lowered.astext()
    assert "floor_divide" in text and "int64" in text      # the fixed-point integer multiply


def test_conv2d_transpose_canonicalizes_to_an_integer_transposed_convolution():
    """As TVM's legalization: the zero points are subtracted in int16 and nn.conv2d_transpose
    accumulates in int32; the lowered program equals the op's reference bit for bit."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, size=(1, 2, 3, 4)).astype("uint8")
    w = rng.integers(-128, 128, size=(2, 3, 3, 3)).astype("int8")
    kzp = np.array([1, -2, 3], "int32")
    xv, wv = relay.var("x", shape=x.shape, dtype="uint8"), relay.var("w", shape=w.shape, dtype="int8")
    call = relay.qnn.op.conv2d_transpose(xv, wv, relay.const(np.int32(120)), relay.const(kzp),
                                         relay.const(np.float32(0.1)), relay.const(np.float32([0.1, 0.2, 0.3])),
                                         strides=(2, 2), padding=(1, 0), output_padding=(1, 1))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([xv, wv], call)))
    lowered = relay.qnn.transform.CanonicalizeOps()(mod)
    assert _qnn_calls(lowered) == []
    convs = [n for n in post_order(lowered["main"].body) if isinstance(n, relay.Call)
             and getattr(n.op, "name", "") == "nn.conv2d_transpose"]
    assert [(c.args[0].checked_type.dtype, c.checked_type.dtype) for c in convs] == [("int16", "int32")]
    want = relay.op.get("qnn.conv2d_transpose").ref(x, w, np.int32(120), kzp, np.float32(0.1),
                                                    np.float32([0.1, 0.2, 0.3]), call.attrs)
    got = relay.create_executor("graph", mod=lowered).evaluate()(x, w).numpy()
    np.testing.assert_array_equal(got, want)


def test_pipeline_runs_qnn_legalize_and_disabling_it_names_the_fix():
    assert "QnnCanonicalize" in relay.transform.pipeline_passes(opt_level=0)
    x = np.linspace(-3, 3, 8, dtype="float32").reshape(2, 4)
    mod = _quantized_program()
    want = relay.create_executor("debug", mod=mod).evaluate()(x).numpy()
    with relay.transform.PassContext(opt_level=0):
        np.testing.assert_array_equal(relay.create_executor("graph", mod=mod).evaluate()(x).numpy(), want)
    with relay.transform.PassContext(disabled_pass=["QnnCanonicalize"]):
        with pytest.raises(CompileError, match="qnn.quantize"):
            relay.create_executor("graph", mod=mod).evaluate()(x)


def test_requantize_config_sets_the_defaults():
    q = relay.var("q", shape=(4,), dtype="int32")
    s, z = relay.const(np.float32(0.5)), relay.const(np.int32(0))
    assert relay.qnn.op.requantize(q, s, z, s, z).attrs.rounding == "UPWARD"
    with relay.qnn.op.requantize_config(rounding="TONEAREST", compute_dtype="float32"):
        call = relay.qnn.op.requantize(q, s, z, s, z)
        assert (call.attrs.rounding, call.attrs.compute_dtype) == ("TONEAREST", "float32")
        # an explicit argument wins over the config
        assert relay.qnn.op.requantize(q, s, z, s, z, rounding="UPWARD").attrs.rounding == "UPWARD"
    assert relay.qnn.op.current_requantize_config() == {"rounding": "UPWARD", "compute_dtype": "int64"}


@pytest.mark.parametrize("compute_dtype", ["float32", "float64"])
@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST"])
def test_float_compute_dtype_within_one_step(compute_dtype, rounding):
    """The float path may round a product differently (fused multiply-add): within 1."""
    rng = np.random.default_rng(2)
    data = rng.integers(-3000, 3000, size=(64,)).astype("int32")
    q = relay.var("q", shape=data.shape, dtype="int32")
    call = relay.qnn.op.requantize(q, relay.const(np.float32(0.013)), relay.const(np.int32(4)),
                                   relay.const(np.float32(0.2)), relay.const(np.int32(-1)),
                                   rounding=rounding, compute_dtype=compute_dtype)
    want = relay.op.get("qnn.requantize").ref(data, np.float32(0.013), np.int32(4), np.float32(0.2),
                                              np.int32(-1), call.attrs)
    got = _run("graph", call, [q], [data])
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1


def test_zero_output_scale_is_a_clear_error():
    q = relay.var("q", shape=(4,), dtype="int32")
    call = relay.qnn.op.requantize(q, relay.const(np.float32(0.5)), relay.const(np.int32(0)),
                                   relay.const(np.float32(0.0)), relay.const(np.int32(0)))
    with pytest.raises(TypeInferenceError, match="output scale is 0"):
        relay.create_executor("graph", mod=relay.IRModule.from_expr(relay.Function([q], call)))\
            .evaluate()(np.zeros(4, "int32"))


@pytest.mark.parametrize("build, match", [
    (lambda: relay.qnn.op.quantize(relay.var("x", shape=(2,), dtype="int8"), relay.const(np.float32(1)),
                                   relay.const(np.int32(0))), "data must have dtype float32"),
    (lambda: relay.qnn.op.quantize(relay.var("x", shape=(2, 3)), relay.const(np.float32([1, 2])),
                                   relay.const(np.int32(0)), axis=1), "output_scale must be a scalar or a vector of 3"),
    (lambda: relay.qnn.op.dequantize(relay.var("x", shape=(2,), dtype="int8"), relay.const(np.float32(1)),
                                     relay.const(np.int8(0))), "input_zero_point must be int32"),
    (lambda: relay.qnn.op.quantize(relay.var("x", shape=(2, 3)), relay.const(np.float32(1)),
                                   relay.const(np.int32(0)), axis=2), "axis 2 is out of range"),
    (lambda: relay.qnn.op.conv2d_transpose(relay.var("x", shape=(1, 2, 3, 3), dtype="int8"),
                                           relay.var("w", shape=(2, 3, 2, 2), dtype="int16"),
                                           *(relay.const(np.int32(0)),) * 2, *(relay.const(np.float32(1)),) * 2),
     "weight must have dtype int8 or uint8"),
    (lambda: relay.qnn.op.conv2d_transpose(relay.var("x", shape=(1, 2, 3, 3), dtype="int8"),
                                           relay.var("w", shape=(2, 3, 2, 2), dtype="int8"),
                                           relay.const(np.int32(0)), relay.const(np.int32(0)),
                                           relay.const(np.float32(1)), relay.const(np.float32([1, 2]))),
     "kernel_scale must be a scalar or a vector of 3"),
    (lambda: relay.qnn.op.add(*(relay.var(n, shape=(2,), dtype=d) for n, d in (("a", "int8"), ("b", "uint8"))),
                              *(relay.const(np.float32(1)), relay.const(np.int32(0))) * 3),
     "lhs and rhs must have the same dtype"),
])
def test_ill_typed_calls_name_the_problem(build, match):
    with pytest.raises(TypeInferenceError, match=match):
        relay.transform.InferType()(relay.IRModule.from_expr(build()))


def test_bad_attrs():
    with pytest.raises(AttrsError, match="rounding"):
        relay.qnn.op.requantize(relay.var("q"), *[relay.const(1.0)] * 4, rounding="DOWN")
    with pytest.raises(AttrsError, match="out_dtype"):
        relay.qnn.op.quantize(relay.var("x"), relay.const(1.0), relay.const(0), out_dtype="float32")


def test_dynamic_batch_on_the_vm_matches_the_references():
    """A quantize -> conv2d -> requantize -> add program with an Any batch: the canonical form
    keeps the symbolic dims, the VM runs it for every batch size, bit-exact."""
    rng = np.random.default_rng(4)
    x = relay.var("x", shape=(relay.Any(), 3, 6, 6), dtype="float32")
    s, z = (lambda v: relay.const(np.float32(v))), (lambda v: relay.const(np.int32(v)))
    w = relay.const(rng.integers(-127, 128, (4, 3, 3, 3)).astype("int8"))
    q = relay.qnn.op.quantize(x, s(0.05), z(3))
    acc = relay.qnn.op.conv2d(q, w, z(3), z(0), s(0.05), s(0.01), kernel_size=(3, 3), channels=4, padding=(1, 1))
    r = relay.qnn.op.requantize(acc, s(5e-4), z(0), s(0.1), z(0))
    out = relay.qnn.op.add(r, r, s(0.1), z(0), s(0.1), z(0), s(0.2), z(1))
    mod = relay.IRModule.from_expr(relay.Function([x], out))
    for n in (1, 3):
        data = rng.uniform(-2, 2, (n, 3, 6, 6)).astype("float32")
        want = relay.create_executor("debug", mod=mod).evaluate()(data).numpy()
        got = relay.create_executor("vm", mod=mod).evaluate()(data).numpy()
        assert got.shape == (n, 4, 6, 6)
        np.testing.assert_array_equal(got, want)
