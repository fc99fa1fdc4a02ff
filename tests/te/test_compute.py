"""te computes lowered with the default schedule and run by the tir interpreter vs numpy.
Tolerance: float32 results within 1e-5 (the interpreter computes in double precision)."""
import numpy as np
import pytest

from relay_backend import te
from relay_backend.errors import CompileError
from .te_helpers import rand, run_lowered

TOL = dict(rtol=1e-5, atol=1e-5)


def test_elementwise_intrinsics():
    A = te.placeholder((4, 5), name="A")
    B = te.compute(A.shape, lambda i, j: te.exp(A[i, j]) * te.sigmoid(A[i, j]) + te.abs(A[i, j]),
                   name="B")
    a = rand(4, 5)
    (b,), func = run_lowered(te.create_schedule(B), [A, B], [a])
    np.testing.assert_allclose(b, np.exp(a) / (1 + np.exp(-a)) + np.abs(a), **TOL)
    assert "exp(A[i, j])" in func.script()


def test_broadcast_add():
    A = te.placeholder((3, 1, 4), name="A")
    B = te.placeholder((5, 1), name="B")
    C = te.compute((3, 5, 4), lambda i, j, k: A[i, 0, k] + B[j, 0], name="C")
    a, b = rand(3, 1, 4), rand(5, 1)
    (c,), _ = run_lowered(te.create_schedule(C), [A, B, C], [a, b])
    np.testing.assert_allclose(c, a + b, **TOL)


def test_matmul_with_reduce_axis():
    n, m, K = 5, 7, 6
    A = te.placeholder((n, K), name="A")
    B = te.placeholder((K, m), name="B")
    k = te.reduce_axis((0, K), "k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    a, b = rand(n, K), rand(K, m)
    (c,), _ = run_lowered(te.create_schedule(C), [A, B, C], [a, b])
    np.testing.assert_allclose(c, a @ b, **TOL)


def test_max_min_reductions_with_where_and_offset_axis():
    A = te.placeholder((4, 9), name="A")
    k = te.reduce_axis((2, 9), "k")
    mx = te.compute((4,), lambda i: te.max(A[i, k], axis=k), name="mx")
    mn = te.compute((4,), lambda i: te.min(A[i, k], axis=k, where=A[i, k] > 0), name="mn")
    a = rand(4, 9)
    (x, y), _ = run_lowered(te.create_schedule([mx, mn]), [A, mx, mn], [a])
    np.testing.assert_allclose(x, a[:, 2:].max(1), **TOL)
    np.testing.assert_allclose(y, np.where(a[:, 2:] > 0, a[:, 2:], np.inf).min(1), **TOL)


def test_argmax_via_comm_reducer():
    def fcombine(x, y):
        keep = x[1] >= y[1]
        return te.if_then_else(keep, x[0], y[0]), te.if_then_else(keep, x[1], y[1])

    def fidentity(t0, t1):
        return te.const(-1, t0), te.min_value(t1)

    argmax = te.comm_reducer(fcombine, fidentity, name="argmax")
    A = te.placeholder((5, 7), name="A")
    k = te.reduce_axis((0, 7), "k")
    idx, val = te.compute((5,), lambda i: argmax((k.var, A[i, k]), axis=k), name="T")
    a = rand(5, 7)
    (got_idx, got_val), func = run_lowered(te.create_schedule(idx), [A, idx, val], [a])
    np.testing.assert_array_equal(got_idx, a.argmax(1))
    np.testing.assert_allclose(got_val, a.max(1), **TOL)


def test_multi_output_compute():
    A = te.placeholder((6,), name="A")
    B, C = te.compute((6,), lambda i: (A[i] + 1.0, A[i] * 2.0), name="BC")
    a = rand(6)
    (b, c), _ = run_lowered(te.create_schedule([B, C]), [A, B, C], [a])
    np.testing.assert_allclose(b, a + 1, **TOL)
    np.testing.assert_allclose(c, a * 2, **TOL)


def test_symbolic_shape_runs_with_two_sizes():
    n = te.var("n")
    A = te.placeholder((n, 3), name="A")
    B = te.compute((n, 3), lambda i, j: A[i, j] * 2.0 + te.const(1.0), name="B")
    s = te.create_schedule(B)
    xo, xi = s[B].split(B.op.axis[0], factor=4)
    func = te.lower(s, [A, B])
    assert [v.name for v in func.shape_vars] == ["n"]
    for size in (3, 9):
        a = rand(size, 3)
        (b,), _ = run_lowered(s, [A, B], [a])
        np.testing.assert_allclose(b, a * 2 + 1, **TOL)


def test_integer_compute_and_casts():
    A = te.placeholder((7,), dtype="int32", name="A")
    B = te.compute((7,), lambda i: (A[i] // 2 + A[i] % 3).astype("float32") * 0.5, name="B")
    a = rand(7, dtype="int32")
    (b,), _ = run_lowered(te.create_schedule(B), [A, B], [a])
    np.testing.assert_allclose(b, ((a // 2 + a % 3) * 0.5).astype("float32"))


def test_errors_name_the_problem():
    A = te.placeholder((4,), name="A")
    with pytest.raises(CompileError, match="rank 1"):
        te.compute((4,), lambda i: A[i, 0])
    with pytest.raises(CompileError, match="2 dimensions"):
        te.compute((4, 4), lambda i: A[i])
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    with pytest.raises(CompileError, match="input A is read but not in args"):
        te.lower(te.create_schedule(B), [B])
    with pytest.raises(CompileError, match="output B is not in args"):
        te.lower(te.create_schedule(B), [A])
    with pytest.raises(CompileError, match="true division of integers"):
        te.var("n") / 2
    k = te.reduce_axis((0, 4), "k")
    with pytest.raises(CompileError, match="must be the whole body"):
        te.compute((1,), lambda i: te.sum(A[k], axis=k) + 1.0)


@pytest.mark.parametrize("reducer,numpy_fn", [(te.sum, np.any), (te.max, np.any), (te.min, np.all)])
def test_bool_reductions_are_logical(reducer, numpy_fn):
    """numpy's bool arithmetic: a sum or max of bools is `or`, a min is `and`; the lowered
    body holds no bool arithmetic (codegen rejects it)."""
    A = te.placeholder((3, 4), "bool", name="A")
    k = te.reduce_axis((0, 4), "k")
    B = te.compute((3,), lambda i: reducer(A[i, k], axis=k), name="B")
    a = np.array([[0, 0, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]], dtype=bool)
    (b,), func = run_lowered(te.create_schedule(B), [A, B], [a])
    np.testing.assert_array_equal(b, numpy_fn(a, axis=1))
    assert "+" not in func.script() and "max(" not in func.script() and "min(" not in func.script()
