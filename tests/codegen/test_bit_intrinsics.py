"""The bit intrinsics (bitwise_and/or/xor/not, shift_left/right, reinterpret) on the three
kernel backends: the tir interpreter, LLVM and C, against numpy's operators and views."""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.codegen import build
from relay_backend.errors import CompileError
from relay_backend.runtime import nd

pytestmark = pytest.mark.compile

BACKENDS = ("interp", "llvm", "c")


def _kernel(fn, in_dtypes, out_dtype, n=8):
    ins = [tir.Buffer(f"A{k}", (n,), dt) for k, dt in enumerate(in_dtypes)]
    out = tir.Buffer("C", (n,), out_dtype)
    i = tir.Var("i")
    body = tir.For(i, 0, n, "serial", tir.BufferStore(out, fn(*[b[i] for b in ins]), (i,)))
    return tir.PrimFunc(ins + [out], body, "bits")


def _run(func, backend, inputs, out_dtype):
    out = np.zeros(inputs[0].shape, out_dtype)
    if backend == "interp":
        tir.interp.run(func, *inputs, out)
        return out
    result = nd.empty(out.shape, out_dtype)
    build(func, target=backend)["bits"](*[nd.array(x) for x in inputs], result)
    return result.numpy()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "uint32", "int64"])
def test_bitwise_and_shifts(backend, dtype):
    bits = 8 * np.dtype(dtype).itemsize
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    a = rng.integers(int(info.min), int(info.max), size=8, endpoint=True).astype(dtype)
    a[0] = info.min
    b = rng.integers(int(info.min), int(info.max), size=8, endpoint=True).astype(dtype)
    s = np.array([0, 1, bits - 1, 3, bits // 2, 2, 5, bits - 2], dtype)
    cases = [(lambda x, y: te.bitwise_and(x, y), [a, b], a & b),
             (lambda x, y: te.bitwise_or(x, y), [a, b], a | b),
             (lambda x, y: te.bitwise_xor(x, y), [a, b], a ^ b),
             (lambda x: te.bitwise_not(x), [a], ~a),
             (lambda x, y: te.shift_left(x, y), [a, s], np.left_shift(a, s)),
             (lambda x, y: te.shift_right(x, y), [a, s], np.right_shift(a, s))]
    for fn, inputs, want in cases:
        func = _kernel(fn, [dtype] * len(inputs), dtype)
        np.testing.assert_array_equal(_run(func, backend, inputs, dtype), want, err_msg=f"{backend} {dtype}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_bool_bitwise(backend):
    a = np.array([True, False, True, False] * 2)
    b = np.array([True, True, False, False] * 2)
    for fn, want in ((te.bitwise_and, a & b), (te.bitwise_or, a | b), (te.bitwise_xor, a ^ b)):
        func = _kernel(fn, ["bool", "bool"], "bool")
        np.testing.assert_array_equal(_run(func, backend, [a, b], "bool"), want)
    np.testing.assert_array_equal(_run(_kernel(te.bitwise_not, ["bool"], "bool"), backend, [a], "bool"), ~a)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("int32", "float32"), ("float64", "uint64"),
                                     ("int64", "float64"), ("float16", "int16"), ("uint16", "float16"),
                                     ("int8", "uint8")])
def test_reinterpret(backend, src, dst):
    if "float16" in (src, dst) and backend == "interp":
        pytest.skip("the interpreter computes float16 in Python floats")
    rng = np.random.default_rng(2)
    if np.dtype(src).kind == "f":
        x = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, 3e-3, 7.0], src)
    else:
        x = np.arange(8).astype(src) * 9 + np.array(rng.integers(0, 50, 8)).astype(src)
        if np.dtype(dst).kind == "f":      # finite, non-NaN bit patterns: compared exactly below
            x = np.array([1.0, -2.0, 0.5, 3.25, -0.0, 8.0, 1e-3, 100.0], dst).view(src)
    out = _run(_kernel(lambda v: te.reinterpret(dst, v), [src], dst), backend, [x], dst)
    np.testing.assert_array_equal(out.view(src), x)


def test_reinterpret_needs_same_width():
    with pytest.raises(CompileError, match="same width"):
        te.reinterpret("int64", tir.const(1.0, "float32"))
    with pytest.raises(CompileError, match="integer or bool"):
        te.bitwise_and(tir.const(1.0, "float32"), tir.const(2.0, "float32"))
