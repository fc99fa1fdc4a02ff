"""The tir interpreter (the kernel-level oracle) on hand-written PrimFuncs vs numpy."""
import numpy as np
import pytest

from relay_backend import tir
from relay_backend.errors import ExecutionError, InputError


def _elementwise(fn, dtype="float32", n=None):
    n = n if n is not None else tir.Var("n")
    A = tir.Buffer("A", (n,), dtype)
    B = tir.Buffer("B", (n,), dtype)
    i = tir.Var("i")
    return tir.PrimFunc([A, B], tir.For(i, 0, n, "serial", tir.BufferStore(B, fn(A[i]), (i,))))


def test_math_intrinsics_and_symbolic_size():
    f = _elementwise(lambda x: tir.Call("float32", "tanh", [x]) + tir.Call("float32", "exp", [x]))
    for size in (3, 10):
        a = np.linspace(-2, 2, size).astype("float32")
        b = np.zeros_like(a)
        tir.interp.run(f, a, b)
        np.testing.assert_allclose(b, np.tanh(a) + np.exp(a), rtol=1e-6)


def test_integer_floor_semantics():
    f = _elementwise(lambda x: tir.floordiv(x, 3) * 10 + tir.floormod(x, 3), "int32")
    a = np.arange(-7, 8, dtype="int32")
    b = np.zeros_like(a)
    tir.interp.run(f, a, b)
    np.testing.assert_array_equal(b, (a // 3) * 10 + a % 3)


def test_select_is_lazy_and_out_of_bounds_is_caught():
    n = 5
    A = tir.Buffer("A", (n,), "float32")
    B = tir.Buffer("B", (n,), "float32")
    i = tir.Var("i")
    shifted = tir.Select(i > 0, A[i - 1], tir.const(0.0))        # A[-1] never read
    ok = tir.PrimFunc([A, B], tir.For(i, 0, n, "serial", tir.BufferStore(B, shifted, (i,))))
    a = np.arange(n, dtype="float32")
    b = np.zeros_like(a)
    tir.interp.run(ok, a, b)
    np.testing.assert_array_equal(b, np.concatenate([[0], a[:-1]]))
    bad = tir.PrimFunc([A, B], tir.For(i, 0, n, "serial", tir.BufferStore(B, A[i - 1], (i,))))
    with pytest.raises(ExecutionError, match=r"A\[-1\] is out of bounds"):
        tir.interp.run(bad, a, b)


def test_uninitialized_temporary_read_fails():
    A = tir.Buffer("A", (4,), "float32")
    T = tir.Buffer("T", (4,), "float32", scope="local")
    i = tir.Var("i")
    body = tir.Allocate(T, tir.For(i, 0, 4, "serial", tir.BufferStore(A, T[i], (i,))))
    with pytest.raises(ExecutionError):
        tir.interp.run(tir.PrimFunc([A], body), np.zeros(4, "float32"))


def test_argument_checks():
    f = _elementwise(lambda x: x)
    with pytest.raises(InputError, match="expects 2 arrays"):
        tir.interp.run(f, np.zeros(3, "float32"))
    with pytest.raises(InputError, match="dtype float64"):
        tir.interp.run(f, np.zeros(3), np.zeros(3))
    with pytest.raises(InputError, match="shape"):
        tir.interp.run(f, np.zeros(3, "float32"), np.zeros(4, "float32"))


def test_reduction_with_let_and_if():
    A = tir.Buffer("A", (3, 4), "float32")
    B = tir.Buffer("B", (3,), "float32")
    i, k, t = tir.Var("i"), tir.Var("k"), tir.Var("t", "float32")
    body = tir.For(i, 0, 3, "parallel", tir.seq(
        tir.BufferStore(B, tir.const(0.0), (i,)),
        tir.For(k, 0, 4, "unrolled", tir.LetStmt(t, A[i, k] * A[i, k], tir.IfThenElse(
            t > 0.25, tir.BufferStore(B, B[i] + t, (i,)))))))
    a = np.random.default_rng(0).uniform(-1, 1, (3, 4)).astype("float32")
    b = np.zeros(3, "float32")
    tir.interp.run(tir.PrimFunc([A, B], body), a, b)
    sq = a * a
    np.testing.assert_allclose(b, np.where(sq > 0.25, sq, 0).sum(1), rtol=1e-6)
