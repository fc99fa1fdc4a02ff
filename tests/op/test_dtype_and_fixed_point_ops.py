"""reinterpret, cast_like, fixed_point_multiply and fixed_point_multiply_per_axis: each op's
reference (and the debug interpreter) against an INDEPENDENT formulation — Python's struct
module for bit reinterpretation, exact Python integers for the Q31 arithmetic (rounding half
up, then wrapping to 64 and 32 bits as TVM's kernels do) — plus the relations' errors. The
conformance test runs the compiled executors against the references."""
import struct

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import AttrsError, TypeInferenceError
from relay_backend.op.fixed_point import FixedPointMultiplyAttrs, FixedPointMultiplyPerAxisAttrs

_STRUCT = {"float16": "e", "float32": "f", "float64": "d", "int8": "b", "uint8": "B", "int16": "h",
           "uint16": "H", "int32": "i", "uint32": "I", "int64": "q", "uint64": "Q"}
OPS = ("reinterpret", "cast_like", "fixed_point_multiply", "fixed_point_multiply_per_axis")


def _wrap(value, bits):
    value %= 1 << bits
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _reinterpret(x, attrs):
    src, dst = _STRUCT[str(x.dtype)], _STRUCT[attrs.dtype]
    values = [struct.unpack("<" + dst, struct.pack("<" + src, v.item()))[0] for v in x.reshape(-1)]
    return np.array(values, attrs.dtype).reshape(x.shape)


def _cast_like(x, like, attrs):
    kind = np.dtype(like.dtype).kind
    convert = {"b": lambda v: v != 0, "f": float}.get(kind, lambda v: int(v))   # int() truncates
    return np.array([convert(v.item()) for v in x.reshape(-1)], like.dtype).reshape(x.shape)


def _q_multiply_shift(x, multiplier, left, right):
    """x * multiplier * 2**(left - right - 31), rounded half up, through a wrapping int64."""
    product = _wrap(_wrap(x << left, 64) * multiplier, 64)
    total = right + 31
    return _wrap(_wrap(product + (1 << (total - 1)), 64) >> total, 32)


def _fixed_point_multiply(x, attrs):
    m, shift = attrs.multiplier, attrs.shift
    out = []
    for v in x.reshape(-1).tolist():
        if m == 1 << 30 and shift - 1 >= 0:
            out.append(_wrap(v << (shift - 1), 32))
        elif m == 1 << 30 and shift - 1 >= -31:
            e = 1 - shift
            out.append(_wrap(v + (1 << (e - 1)), 32) >> e)
        else:
            out.append(_q_multiply_shift(v, m, max(shift, 0), max(-shift, 0)))
    return np.array(out, "int32").reshape(x.shape)


def _per_axis(x, multiplier, left, right, attrs):
    axes = [a % x.ndim for a in attrs.axes]
    out = np.empty(x.shape, "int32")
    for index in np.ndindex(*x.shape):
        p = tuple(index[a] for a in axes)
        lshift = min(max(int(left[p]), 0), 32) if attrs.is_lshift_required else 0
        rshift = min(max(int(right[p]), 0), 32)
        out[index] = _q_multiply_shift(int(x[index]), int(multiplier[p]), lshift, rshift)
    return out


INDEPENDENT = {"reinterpret": _reinterpret, "cast_like": _cast_like,
               "fixed_point_multiply": _fixed_point_multiply, "fixed_point_multiply_per_axis": _per_axis}


def _cases():
    for name in OPS:
        op = relay.op.get(name)
        for i, sample in enumerate(op.samples(np.random.default_rng(0))):
            yield pytest.param(op, sample, id=f"{name}-{i}")


def _module(op, inputs, attrs):
    params = [relay.var(f"in{i}", shape=x.shape, dtype=str(x.dtype)) for i, x in enumerate(inputs)]
    return relay.IRModule.from_expr(relay.Function(params, op(*params, attrs=attrs)))


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_reference_and_interpreter_match_independent(op, sample):
    expected = INDEPENDENT[op.name](*sample.inputs, sample.attrs)
    ref = np.asarray(op.ref(*sample.inputs, sample.attrs))
    assert ref.dtype == expected.dtype and ref.shape == expected.shape
    np.testing.assert_array_equal(ref, expected)
    out = relay.create_executor("debug", mod=_module(op, sample.inputs, sample.attrs)).evaluate()(*sample.inputs)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_fixed_point_multiply_rounds_half_up_and_approximates_the_scale():
    """multiplier 0.75 in Q31, shift -2: x * 0.1875 rounded half up (ties go toward +inf)."""
    x = np.array([16, -16, 8, -8, 1000, -1000, 0], "int32")
    attrs = FixedPointMultiplyAttrs(int(0.75 * 2 ** 31), -2)
    ref = relay.op.get("fixed_point_multiply").ref(x, attrs)
    np.testing.assert_array_equal(ref, np.floor(x * 0.1875 + 0.5).astype("int32"))
    np.testing.assert_array_equal(ref, _fixed_point_multiply(x, attrs))


@pytest.mark.parametrize("kind", ["graph", "aot"])
def test_fixed_point_multiply_extremes_compiled(kind):
    """INT32_MIN / INT32_MAX with the largest multipliers and shifts: the 64-bit product wraps
    (computed unsigned, so no signed overflow), matching the exact-integer formulation."""
    x = np.array([-2 ** 31, 2 ** 31 - 1, -1, 1, 12345, -54321], "int32")
    for multiplier, shift in ((2 ** 31 - 1, 32), (-2 ** 31, 31), (2 ** 31 - 1, -32), (1 << 30, -30), (1 << 30, 32)):
        data = relay.var("x", shape=x.shape, dtype="int32")
        mod = relay.IRModule.from_expr(relay.Function([data], relay.fixed_point_multiply(data, multiplier, shift)))
        out = relay.create_executor(kind, mod=mod).evaluate()(x).numpy()
        want = _fixed_point_multiply(x, FixedPointMultiplyAttrs(multiplier, shift))
        np.testing.assert_array_equal(out, want, err_msg=f"multiplier={multiplier} shift={shift} on {kind}")


def _infer(expr):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(expr))
    return mod["main"].body.checked_type


def test_errors():
    f32 = relay.var("x", shape=(2, 3), dtype="float32")
    with pytest.raises(TypeInferenceError, match="same width"):
        _infer(relay.reinterpret(f32, "int64"))
    with pytest.raises(TypeInferenceError, match="same width"):
        _infer(relay.reinterpret(relay.var("b", shape=(2,), dtype="bool"), "int8"))
    with pytest.raises(TypeInferenceError, match="data must be int32"):
        _infer(relay.fixed_point_multiply(f32, 1 << 30, 1))
    with pytest.raises(AttrsError, match="not an int32"):
        relay.fixed_point_multiply(f32, 1 << 31, 1)
    with pytest.raises(AttrsError, match="outside"):
        relay.fixed_point_multiply(f32, 1 << 30, 40)
    x = relay.var("x", shape=(2, 3), dtype="int32")
    m = relay.var("m", shape=(2,), dtype="int32")
    with pytest.raises(TypeInferenceError, match="shape of data at axes"):
        _infer(relay.op.fixed_point_multiply_per_axis(x, m, m, m, True, True, [1]))
    with pytest.raises(TypeInferenceError, match="out of range"):
        _infer(relay.op.fixed_point_multiply_per_axis(x, m, m, m, True, True, [2]))
    assert _infer(relay.cast_like(f32, relay.var("y", shape=(5,), dtype="int8"))) == relay.TensorType((2, 3), "int8")
    assert FixedPointMultiplyPerAxisAttrs(1, 0, [1, 0]).axes == (1, 0)
