"""LLVM codegen of hand-written PrimFuncs, checked against numpy.

Integer results must match exactly; float32/float64 within 1e-6 relative (rounding order
may differ), float16 within 1e-3 relative.
"""
import numpy as np
import pytest

from relay_backend import tir
from relay_backend.codegen import build, codegen_llvm
from relay_backend.errors import CompileError
from relay_backend.runtime import nd

pytestmark = pytest.mark.compile


def _loop_nest(shape, body_fn, kinds=None):
    """for i0 in shape[0]: for i1 ...: body_fn(indices) (kinds per level, default serial)."""
    idx = [tir.Var(f"i{k}") for k in range(len(shape))]
    stmt = body_fn(idx)
    kinds = kinds or ["serial"] * len(shape)
    for var, ext, kind in reversed(list(zip(idx, shape, kinds))):
        stmt = tir.For(var, 0, ext, kind, stmt)
    return stmt


def _elementwise(name, dtype, shape, fn, nin=2):
    ins = [tir.Buffer(f"A{k}", shape, dtype) for k in range(nin)]
    out = tir.Buffer("C", shape, dtype)
    body = _loop_nest(shape, lambda ix: tir.BufferStore(out, fn(*[b[tuple(ix)] for b in ins]), ix))
    return tir.PrimFunc(ins + [out], body, name)


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-6), ("int32", 0), ("float16", 1e-3),
                                       ("float64", 1e-12), ("int8", 0), ("int64", 0)])
def test_elementwise_add(dtype, tol):
    mod = build(_elementwise("add", dtype, (3, 37), lambda a, b: a + b))
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 37)) * 20).astype(dtype)
    b = (rng.standard_normal((3, 37)) * 20).astype(dtype)
    out = nd.empty((3, 37), dtype)
    mod["add"](nd.array(a), nd.array(b), out)
    np.testing.assert_allclose(out.numpy().astype("float64"), (a + b).astype("float64"), rtol=tol)


def test_matmul_loop_nest():
    M, K, N = 17, 33, 9
    A = tir.Buffer("A", (M, K), "float32")
    B = tir.Buffer("B", (K, N), "float32")
    C = tir.Buffer("C", (M, N), "float32")
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    body = tir.For(i, 0, M, "parallel", tir.For(j, 0, N, "serial", tir.seq(
        tir.BufferStore(C, tir.const(0.0), (i, j)),
        tir.For(k, 0, K, "serial", tir.BufferStore(C, C[i, j] + A[i, k] * B[k, j], (i, j))))))
    mod = build(tir.PrimFunc([A, B, C], body, "matmul"))
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((M, K)).astype("float32"), rng.standard_normal((K, N)).astype("float32")
    c = nd.empty((M, N), "float32")
    mod["matmul"](nd.array(a), nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-5, atol=1e-5)


def test_symbolic_shape_two_sizes():
    n = tir.Var("n")
    A, B = tir.Buffer("A", (n, 4), "float32"), tir.Buffer("B", (n, 4), "float32")
    i, j = tir.Var("i"), tir.Var("j")
    body = tir.For(i, 0, n, "serial", tir.For(j, 0, 4, "serial",
                                              tir.BufferStore(B, A[i, j] * 3.0 + 1.0, (i, j))))
    mod = build(tir.PrimFunc([A, B], body, "affine"))
    assert mod.function_info("affine").shape_vars == ("n",)
    for rows in (1, 1000):
        a = np.arange(rows * 4, dtype="float32").reshape(rows, 4)
        out = nd.empty((rows, 4), "float32")
        mod["affine"](nd.array(a), out)
        np.testing.assert_allclose(out.numpy(), a * 3 + 1, rtol=1e-6)


def test_if_then_else_and_select():
    n = 50
    A = tir.Buffer("A", (n,), "float32")
    B = tir.Buffer("B", (n,), "float32")
    C = tir.Buffer("C", (n,), "int32")
    i = tir.Var("i")
    body = tir.For(i, 0, n, "serial", tir.seq(
        tir.BufferStore(B, tir.Select(A[i] > 0.0, A[i], A[i] * 0.5), (i,)),
        tir.IfThenElse(tir.floormod(i, 3).equal(0), tir.BufferStore(C, i * 2, (i,)),
                       tir.BufferStore(C, tir.const(-1), (i,)))))
    mod = build(tir.PrimFunc([A, B, C], body, "branch"))
    a = np.linspace(-3, 3, n).astype("float32")
    b, c = nd.empty((n,), "float32"), nd.empty((n,), "int32")
    mod["branch"](nd.array(a), b, c)
    np.testing.assert_allclose(b.numpy(), np.where(a > 0, a, a * 0.5), rtol=1e-7)
    idx = np.arange(n)
    np.testing.assert_array_equal(c.numpy(), np.where(idx % 3 == 0, idx * 2, -1))


def test_integer_division_semantics():
    f = _elementwise("divs", "int32", (8,),
                     lambda a, b: tir.floordiv(a, b) * 1000 + tir.floormod(a, b) * 100
                     + tir.truncdiv(a, b) * 10 + tir.truncmod(a, b))
    mod = build(f)
    a = np.array([7, -7, 7, -7, 0, 9, -9, 5], dtype="int32")
    b = np.array([2, 2, -2, -2, 3, 3, 3, -5], dtype="int32")
    out = nd.empty((8,), "int32")
    mod["divs"](nd.array(a), nd.array(b), out)
    trunc_div = np.trunc(a / b).astype("int32")
    want = (a // b) * 1000 + (a % b) * 100 + trunc_div * 10 + (a - trunc_div * b)
    np.testing.assert_array_equal(out.numpy(), want)


def test_casts_bool_min_max_and_nan():
    n = 6
    A = tir.Buffer("A", (n,), "float32")
    M = tir.Buffer("M", (n,), "bool")
    I8 = tir.Buffer("I8", (n,), "int8")
    F = tir.Buffer("F", (n,), "float64")
    X = tir.Buffer("X", (n,), "float32")
    i = tir.Var("i")
    x = A[i]
    body = tir.For(i, 0, n, "serial", tir.seq(
        tir.BufferStore(M, tir.Or(x > 1.0, tir.Not(x.equal(x))), (i,)),
        tir.BufferStore(I8, tir.Cast("int8", tir.Select(x.equal(x), x, tir.const(0.0))), (i,)),
        tir.BufferStore(F, tir.Cast("float64", x) * tir.const(2.0, "float64"), (i,)),
        tir.BufferStore(X, tir.max(tir.min(x, 2.0), -1.0), (i,))))
    mod = build(tir.PrimFunc([A, M, I8, F, X], body, "casts"))
    a = np.array([-3.5, 0.5, 1.5, 2.75, np.nan, 100.0], dtype="float32")
    outs = [nd.empty((n,), d) for d in ("bool", "int8", "float64", "float32")]
    mod["casts"](nd.array(a), *outs)
    np.testing.assert_array_equal(outs[0].numpy(), (a > 1) | np.isnan(a))
    np.testing.assert_array_equal(outs[1].numpy(), np.nan_to_num(a).astype("int8"))
    np.testing.assert_array_equal(outs[2].numpy(), a.astype("float64") * 2)
    np.testing.assert_array_equal(outs[3].numpy(), np.maximum(np.minimum(a, 2), -1))  # NaN stays


@pytest.mark.parametrize("rows", [8, 40000])        # stack (<= 64 KiB) and heap temporaries
def test_allocate_and_let(rows):
    A = tir.Buffer("A", (rows,), "float32")
    B = tir.Buffer("B", (rows,), "float32")
    T = tir.Buffer("T", (rows,), "float32", scope="local")
    i, j, v = tir.Var("i"), tir.Var("j"), tir.Var("v", "float32")
    body = tir.Allocate(T, tir.seq(
        tir.For(i, 0, rows, "serial", tir.LetStmt(v, A[i] + 1.0, tir.BufferStore(T, v * v, (i,)))),
        tir.For(j, 0, rows, "serial",
                tir.BufferStore(B, T[rows - 1 - j] - tir.Let(v, A[j], v * 2.0), (j,)))))
    mod = build(tir.PrimFunc([A, B], body, "tmp"))
    a = np.random.default_rng(2).standard_normal(rows).astype("float32")
    out = nd.empty((rows,), "float32")
    mod["tmp"](nd.array(a), out)
    np.testing.assert_allclose(out.numpy(), ((a + 1) ** 2)[::-1] - 2 * a, rtol=1e-6, atol=1e-6)


def test_deep_expression_does_not_recurse():
    n, depth = 1, 3000
    A, B = tir.Buffer("A", (n,), "float32"), tir.Buffer("B", (n,), "float32")
    i = tir.Var("i")
    e = A[i]
    for _ in range(depth):
        e = e + 1.0
    mod = build(tir.PrimFunc([A, B], tir.For(i, 0, n, "serial", tir.BufferStore(B, e, (i,))), "deep"))
    out = nd.empty((n,), "float32")
    mod["deep"](nd.array(np.zeros(n, "float32")), out)
    np.testing.assert_allclose(out.numpy(), np.full(n, depth, "float32"))


def test_build_accepts_list_and_dict():
    f = _elementwise("f", "float32", (4,), lambda a, b: a - b)
    g = _elementwise("g", "float32", (4,), lambda a, b: a * b)
    assert sorted(build([f, g]).function_names) == ["f", "g"]
    mod = build({"sub": f, "mul": g})
    assert sorted(mod.function_names) == ["mul", "sub"]
    a, b, out = nd.array(np.full(4, 3, "float32")), nd.array(np.full(4, 2, "float32")), nd.empty((4,))
    mod["mul"](a, b, out)
    np.testing.assert_array_equal(out.numpy(), np.full(4, 6, "float32"))


def test_codegen_errors():
    f = _elementwise("f", "float32", (4,), lambda a, b: a + b)
    with pytest.raises(CompileError, match="two functions"):
        build([f, f])
    with pytest.raises(CompileError, match="not a C identifier"):
        build(tir.PrimFunc(f.params, f.body, "bad name"))
    with pytest.raises(CompileError, match="target"):
        build(f, target="cuda")
    stray = tir.Var("stray")
    A = tir.Buffer("A", (4,), "int32")
    with pytest.raises(CompileError, match="stray"):
        codegen_llvm([tir.PrimFunc([A], tir.BufferStore(A, stray, (0,)), "g")])


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_min_max_match_numpy_bitwise(kind, dtype):
    """Float min / max as numpy's minimum / maximum (and the C backend's rb_minf / rb_maxf): NaN
    in either operand gives NaN, a tie (also -0 vs +0) gives the second operand, on the scalar
    and the vector path (the select form that replaced llvm.minimum / llvm.maximum)."""
    values = [np.nan, -np.inf, -1.5, -0.0, 0.0, 2.0, np.inf]
    a, b = (np.array(v, dtype=dtype) for v in zip(*[(x, y) for x in values for y in values]))
    n = a.size
    n_pad = -(-n // 16) * 16
    A, B = tir.Buffer("A", (n_pad,), dtype), tir.Buffer("B", (n_pad,), dtype)
    lo, hi = tir.Buffer("LO", (n_pad,), dtype), tir.Buffer("HI", (n_pad,), dtype)
    i, j = tir.Var("i"), tir.Var("j")
    k = i * 16 + j
    body = tir.For(i, 0, n_pad // 16, "serial", tir.For(j, 0, 16, kind, tir.seq(
        tir.BufferStore(lo, tir.min(A[k], B[k]), (k,)),
        tir.BufferStore(hi, tir.max(A[k], B[k]), (k,)))))
    mod = build(tir.PrimFunc([A, B, lo, hi], body, "minmax"))
    pad = np.zeros(n_pad - n, dtype)
    outs = [nd.empty((n_pad,), dtype) for _ in range(2)]
    mod["minmax"](nd.array(np.concatenate([a, pad])), nd.array(np.concatenate([b, pad])), *outs)
    bits = "uint32" if dtype == "float32" else "uint64"
    for got, want in ((outs[0].numpy()[:n], np.minimum(a, b)), (outs[1].numpy()[:n], np.maximum(a, b))):
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[~nan].view(bits), want[~nan].view(bits))
