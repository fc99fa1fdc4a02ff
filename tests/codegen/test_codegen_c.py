"""C backend (codegen/c.py): hand-written and te-lowered PrimFuncs compiled with the system C
compiler, checked against numpy (the oracle) and against the LLVM backend.

Tolerances: integer results and everything that only adds / multiplies / selects exactly
representable values must match exactly; float32 arithmetic within 1e-6 relative (1e-5 for
reductions, whose order differs); glibc math functions within 2 float32 ulps of the float64
reference (nearbyint, floor, ceil, trunc, fabs exactly); float64 within 1e-12 relative;
float16 within one half-precision ulp. C vs LLVM: the LLVM polynomial math is within 4 ulps
of numpy, so the two backends agree within 6 ulps there, and exactly elsewhere.
"""
import os
import re

import numpy as np
import pytest
from scipy import special

from relay_backend import te, tir
from relay_backend.codegen import build, c as cgen
from relay_backend.codegen import codegen_c
from relay_backend.errors import CompileError, SerializationError
from relay_backend.runtime import load_module, nd

pytestmark = pytest.mark.compile


def _both(funcs, **kw):
    """(C module, LLVM module) for the same PrimFuncs."""
    return cgen.build_c(funcs, **kw), build(funcs, target="llvm")


def _call(mod, name, inputs, out_specs):
    outs = [nd.empty(shape, dtype) for shape, dtype in out_specs]
    mod[name](*[nd.array(x) for x in inputs], *outs)
    return [o.numpy() for o in outs]


def _loop_nest(shape, body_fn, kinds=None):
    idx = [tir.Var(f"i{k}") for k in range(len(shape))]
    stmt = body_fn(idx)
    for var, ext, kind in reversed(list(zip(idx, shape, kinds or ["serial"] * len(shape)))):
        stmt = tir.For(var, 0, ext, kind, stmt)
    return stmt


def _elementwise(name, dtype, shape, fn, nin=2):
    ins = [tir.Buffer(f"A{k}", shape, dtype) for k in range(nin)]
    out = tir.Buffer("C", shape, dtype)
    body = _loop_nest(shape, lambda ix: tir.BufferStore(out, fn(*[b[tuple(ix)] for b in ins]), ix))
    return tir.PrimFunc(ins + [out], body, name)


# ---------------------------------------------------------------- hand-written kernels

@pytest.mark.parametrize("dtype", ["float32", "int32", "float16", "float64", "int8", "int64",
                                   "uint8", "uint16"])
def test_elementwise_on_dtypes(dtype):
    shape = (3, 37)
    f = _elementwise("madd", dtype, shape, lambda a, b: a * b + a - b)
    cmod, lmod = _both(f)
    rng = np.random.default_rng(0)
    scale = 3 if dtype.startswith(("int", "uint")) else 20
    a = (rng.standard_normal(shape) * scale).astype(dtype)
    b = (rng.standard_normal(shape) * scale).astype(dtype)
    (got,) = _call(cmod, "madd", [a, b], [(shape, dtype)])
    (llvm,) = _call(lmod, "madd", [a, b], [(shape, dtype)])
    with np.errstate(over="ignore"):
        if dtype == "float16":     # numpy rounds to half after every operation, like the C code
            want = (a * b + a) - b
        else:
            want = a * b + a - b
    if dtype.startswith(("int", "uint")) or dtype == "float16":
        np.testing.assert_array_equal(got, want)
    else:
        # a*b + a may be one FMA (one rounding fewer than numpy): the error scales with the
        # terms, not with a result that cancels
        eps = 1e-6 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(got, want, rtol=eps, atol=eps * float(np.abs(a * b).max()))
        # LLVM contracts a*b + a into an FMA, the C build (-std=c99) does not
        np.testing.assert_allclose(got, llvm, rtol=eps, atol=eps * float(np.abs(a * b).max()))
        return
    np.testing.assert_array_equal(got, llvm)


def test_matmul_parallel_loop_nest():
    M, K, N = 17, 33, 9
    A, B, C = (tir.Buffer("A", (M, K)), tir.Buffer("B", (K, N)), tir.Buffer("C", (M, N)))
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    body = tir.For(i, 0, M, "parallel", tir.For(j, 0, N, "serial", tir.seq(
        tir.BufferStore(C, tir.const(0.0), (i, j)),
        tir.For(k, 0, K, "serial", tir.BufferStore(C, C[i, j] + A[i, k] * B[k, j], (i, j))))))
    cmod, lmod = _both(tir.PrimFunc([A, B, C], body, "matmul"))
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((M, K)).astype("float32"), rng.standard_normal((K, N)).astype("float32")
    (c,) = _call(cmod, "matmul", [a, b], [((M, N), "float32")])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, _call(lmod, "matmul", [a, b], [((M, N), "float32")])[0],
                               rtol=1e-6, atol=1e-6)
    assert "RB_PARALLEL_FOR" in cmod.get_source("c")


def test_symbolic_shape_two_sizes():
    n = tir.Var("n")
    A, B = tir.Buffer("A", (n, 4)), tir.Buffer("B", (n, 4))
    i, j = tir.Var("i"), tir.Var("j")
    body = tir.For(i, 0, n, "serial", tir.For(j, 0, 4, "serial",
                                              tir.BufferStore(B, A[i, j] * 3.0 + 1.0, (i, j))))
    mod = build(tir.PrimFunc([A, B], body, "affine"), target="c")
    assert mod.type_key == "c" and mod.function_info("affine").shape_vars == ("n",)
    for rows in (1, 1000):
        a = np.arange(rows * 4, dtype="float32").reshape(rows, 4)
        (out,) = _call(mod, "affine", [a], [((rows, 4), "float32")])
        np.testing.assert_array_equal(out, a * 3 + 1)


def test_if_then_else_and_select():
    n = 50
    A, B, C = tir.Buffer("A", (n,)), tir.Buffer("B", (n,)), tir.Buffer("C", (n,), "int32")
    i = tir.Var("i")
    body = tir.For(i, 0, n, "serial", tir.seq(
        tir.BufferStore(B, tir.Select(A[i] > 0.0, A[i], A[i] * 0.5), (i,)),
        tir.IfThenElse(tir.floormod(i, 3).equal(0), tir.BufferStore(C, i * 2, (i,)),
                       tir.BufferStore(C, tir.const(-1), (i,)))))
    mod = build(tir.PrimFunc([A, B, C], body, "branch"), target="c")
    a = np.linspace(-3, 3, n).astype("float32")
    b, c = _call(mod, "branch", [a], [((n,), "float32"), ((n,), "int32")])
    np.testing.assert_array_equal(b, np.where(a > 0, a, a * np.float32(0.5)))
    idx = np.arange(n)
    np.testing.assert_array_equal(c, np.where(idx % 3 == 0, idx * 2, -1))


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
def test_integer_division_semantics(dtype):
    f = _elementwise("divs", dtype, (8,),
                     lambda a, b: tir.floordiv(a, b) * 27 + tir.floormod(a, b) * 9
                     + tir.truncdiv(a, b) * 3 + tir.truncmod(a, b))
    a = np.array([7, -7, 7, -7, 0, 9, -9, 5], dtype=dtype)
    b = np.array([2, 2, -2, -2, 3, 3, 3, -5], dtype=dtype)
    (out,) = _call(build(f, target="c"), "divs", [a, b], [((8,), dtype)])
    trunc_div = np.trunc(a / b).astype(dtype)
    want = (a // b) * 27 + (a % b) * 9 + trunc_div * 3 + (a - trunc_div * b)
    np.testing.assert_array_equal(out, want)


def test_float_floordiv_mod_and_fmod():
    f = _elementwise("fdiv", "float32", (6,),
                     lambda a, b: tir.floordiv(a, b) * 100.0 + tir.floormod(a, b)
                     + tir.Mod(a, b) * 1000.0)
    a = np.array([7.5, -7.5, 7.5, -7.5, 0.0, 3.0], "float32")
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 0.5], "float32")
    (out,) = _call(build(f, target="c"), "fdiv", [a, b], [((6,), "float32")])
    np.testing.assert_array_equal(out, np.floor(a / b) * 100 + (a - np.floor(a / b) * b)
                                  + np.fmod(a, b) * 1000)


def test_casts_bool_min_max_and_nan():
    n = 6
    A = tir.Buffer("A", (n,))
    M, I8, F, X = (tir.Buffer("M", (n,), "bool"), tir.Buffer("I8", (n,), "int8"),
                   tir.Buffer("F", (n,), "float64"), tir.Buffer("X", (n,)))
    i = tir.Var("i")
    x = A[i]
    body = tir.For(i, 0, n, "serial", tir.seq(
        tir.BufferStore(M, tir.Or(x > 1.0, tir.Not(x.equal(x))), (i,)),
        tir.BufferStore(I8, tir.Cast("int8", tir.Select(x.equal(x), x, tir.const(0.0))), (i,)),
        tir.BufferStore(F, tir.Cast("float64", x) * tir.const(2.0, "float64"), (i,)),
        tir.BufferStore(X, tir.max(tir.min(x, 2.0), -1.0), (i,))))
    func = tir.PrimFunc([A, M, I8, F, X], body, "casts")
    a = np.array([-3.5, 0.5, 1.5, 2.75, np.nan, 100.0], dtype="float32")
    specs = [((n,), d) for d in ("bool", "int8", "float64", "float32")]
    outs = _call(build(func, target="c"), "casts", [a], specs)
    np.testing.assert_array_equal(outs[0], (a > 1) | np.isnan(a))
    np.testing.assert_array_equal(outs[1], np.nan_to_num(a).astype("int8"))
    np.testing.assert_array_equal(outs[2], a.astype("float64") * 2)
    np.testing.assert_array_equal(outs[3], np.maximum(np.minimum(a, 2), -1))   # NaN stays


@pytest.mark.parametrize("rows", [8, 40000])     # stack array (<= 64 KiB) and workspace
def test_allocate_and_let(rows):
    A, B = tir.Buffer("A", (rows,)), tir.Buffer("B", (rows,))
    T = tir.Buffer("T", (rows,), scope="local")
    i, j, v = tir.Var("i"), tir.Var("j"), tir.Var("v", "float32")
    body = tir.Allocate(T, tir.seq(
        tir.For(i, 0, rows, "serial", tir.LetStmt(v, A[i] + 1.0, tir.BufferStore(T, v * v, (i,)))),
        tir.For(j, 0, rows, "serial",
                tir.BufferStore(B, T[rows - 1 - j] - tir.Let(v, A[j], v * 2.0), (j,)))))
    mod = build(tir.PrimFunc([A, B], body, "tmp"), target="c")
    src = mod.get_source("c")
    assert ("RB_ALIGNED64" in src.split("rb_tmp_compute")[1]) == (rows == 8)
    assert mod["tmp"].needs_workspace == (rows != 8)
    a = np.random.default_rng(2).standard_normal(rows).astype("float32")
    (out,) = _call(mod, "tmp", [a], [((rows,), "float32")])
    np.testing.assert_allclose(out, ((a + 1) ** 2)[::-1] - 2 * a, rtol=1e-6, atol=1e-6)


def test_workspace_per_thread_and_symbolic_allocation():
    """A big temporary inside a parallel loop gets one workspace slot per thread; a symbolic
    one is sized from the shape variables."""
    n, W = tir.Var("n"), 20000                   # 80 KB per thread: workspace, not stack
    A, B = tir.Buffer("A", (n, W)), tir.Buffer("B", (n, W))
    T = tir.Buffer("T", (W,), scope="local")
    S = tir.Buffer("S", (n,), scope="global")
    i, j, k, r = tir.Var("i"), tir.Var("j"), tir.Var("k"), tir.Var("r")
    body = tir.Allocate(S, tir.seq(
        tir.For(r, 0, n, "serial", tir.BufferStore(S, tir.Cast("float32", r) * 10.0, (r,))),
        tir.For(i, 0, n, "parallel", tir.Allocate(T, tir.seq(
            tir.For(j, 0, W, "serial", tir.BufferStore(T, A[i, j] + S[i], (j,))),
            tir.For(k, 0, W, "vectorized", tir.BufferStore(B, T[W - 1 - k], (i, k))))))))
    mod = cgen.build_c(tir.PrimFunc([A, B], body, "ws"))
    assert re.search(r"rb_max_threads\(\) \* \d+", mod.get_source("c"))
    for rows in (3, 37):
        a = np.arange(rows * W, dtype="float32").reshape(rows, W) % 1000
        (out,) = _call(mod, "ws", [a], [((rows, W), "float32")])
        np.testing.assert_array_equal(out, (a + 10 * np.arange(rows, dtype="float32")[:, None])
                                      [:, ::-1])
    assert mod["ws"].workspace_size([37]) > mod["ws"].workspace_size([3]) >= W * 4


def test_deep_expression_and_long_statement_chain():
    n, depth = 1, 3000
    A, B = tir.Buffer("A", (n,)), tir.Buffer("B", (n,))
    i = tir.Var("i")
    e = A[i]
    for _ in range(depth):
        e = e + 1.0
    mod = build(tir.PrimFunc([A, B], tir.For(i, 0, n, "serial", tir.BufferStore(B, e, (i,))),
                             "deep"), target="c")
    (out,) = _call(mod, "deep", [np.zeros(n, "float32")], [((n,), "float32")])
    np.testing.assert_array_equal(out, np.full(n, depth, "float32"))
    # 10,000 statements: codegen only (iterative, no recursion limit)
    C = tir.Buffer("C", (10000,), "int32")
    src = codegen_c(tir.PrimFunc([C], tir.seq(*[tir.BufferStore(C, tir.const(k), (k,))
                                                for k in range(10000)]), "chain"))
    assert src.count("C[") == 10000


# ---------------------------------------------------------------- math intrinsics

UNARY = {   # op: (numpy reference, max float32 ulps for glibc)
    "exp": (np.exp, 1), "exp2": (np.exp2, 1), "log": (np.log, 1), "log2": (np.log2, 1),
    "log10": (np.log10, 2), "log1p": (np.log1p, 2), "tanh": (np.tanh, 2), "sqrt": (np.sqrt, 0),
    "rsqrt": (lambda x: 1 / np.sqrt(x), 1), "erf": (special.erf, 2), "sigmoid": (special.expit, 2),
    "fabs": (np.abs, 0), "floor": (np.floor, 0), "ceil": (np.ceil, 0), "round": (np.round, 0),
    "trunc": (np.trunc, 0), "sin": (np.sin, 1), "cos": (np.cos, 1), "tan": (np.tan, 2),
    "asin": (np.arcsin, 2), "acos": (np.arccos, 2), "atan": (np.arctan, 2),
    "sinh": (np.sinh, 2), "cosh": (np.cosh, 2),
}
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 1e-40, 1.2e-38, 88.72, 88.73, -103.98,
            -110.0, 1.0, 0.5, -0.5, 2.5, -2.5, 0.4999999, 1.5, -1.5, 0.9, -0.9]


def _unary_funcs(dtype, ops):
    funcs = []
    for op in ops:
        n = tir.Var("n")
        A, O, i = tir.Buffer("A", (n,), dtype), tir.Buffer("O", (n,), dtype), tir.Var("i")
        body = tir.For(i, 0, n, "vectorized", tir.BufferStore(O, tir.Call(dtype, op, [A[i]]), (i,)))
        funcs.append(tir.PrimFunc([A, O], body, op))
    return funcs


POLY = ("exp", "log", "tanh", "sigmoid", "erf")     # c_math.py polynomials: <= 4 ulps


@pytest.fixture(scope="module", params=["poly", "libm"])
def f32_modules(request):
    funcs = _unary_funcs("float32", list(UNARY))
    options = ["-DRB_LIBM_MATH"] if request.param == "libm" else []
    return cgen.build_c(funcs, options=options), build(funcs), request.param


def _math_inputs():
    rng = np.random.default_rng(0)
    return np.concatenate([rng.uniform(-10, 10, 4000), rng.standard_normal(4000) * 0.5,
                           np.exp(rng.uniform(-100, 88, 4000)), np.linspace(-5, 5, 2001),
                           SPECIALS]).astype("float32")


def _ulps(got, want64):
    ulp = np.spacing(np.abs(want64).astype("float32")).astype("float64")
    return np.abs(got.astype("float64") - want64) / ulp


@pytest.mark.parametrize("op", list(UNARY))
def test_float32_math_vs_numpy_and_llvm(f32_modules, op):
    cmod, lmod, mode = f32_modules
    ref, max_ulps = UNARY[op]
    if mode == "poly" and op in POLY:
        max_ulps = 4
    x = _math_inputs()
    (got,) = _call(cmod, op, [x], [(x.shape, "float32")])
    (llvm,) = _call(lmod, op, [x], [(x.shape, "float32")])
    with np.errstate(all="ignore"):
        want64 = ref(x.astype("float64"))
        want = want64.astype("float32")
    finite = np.isfinite(want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same[~finite].all(), f"{op}: non-finite results differ at x={x[~finite & ~same][:5]}"
    err = _ulps(got[finite], want64[finite])
    assert err.max() <= max_ulps + 0.5, f"{op}: {err.max():.2f} ulps at x={x[finite][err.argmax()]}"
    both = finite & np.isfinite(llvm)
    assert _ulps(got[both], llvm[both].astype("float64")).max() <= 6, op
    if mode == "poly" and op in POLY:         # same polynomials, same order: bitwise equal
        assert ((got.view("uint32") == llvm.view("uint32")) | np.isnan(got)).all(), op


@pytest.mark.parametrize("op", ["exp", "log", "tanh", "sigmoid", "erf", "sqrt", "rsqrt", "pow",
                                "fmod", "atan2", "floor", "round"])
def test_float64_math(op):
    n = 64
    ref = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sigmoid": special.expit,
           "erf": special.erf, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
           "pow": np.power, "fmod": np.fmod, "atan2": np.arctan2, "floor": np.floor,
           "round": np.round}[op]
    binary = op in ("pow", "fmod", "atan2")
    A, B, O, i = (tir.Buffer("A", (n,), "float64"), tir.Buffer("B", (n,), "float64"),
                  tir.Buffer("O", (n,), "float64"), tir.Var("i"))
    body = tir.For(i, 0, n, "serial", tir.BufferStore(
        O, tir.Call("float64", op, [A[i], B[i]] if binary else [A[i]]), (i,)))
    rng = np.random.default_rng(1)
    x, y = rng.uniform(0.1, 5, n), rng.uniform(0.5, 2, n)
    x[:4] = [0.5, 1.5, 2.5, -2.5] if op == "round" else x[:4]
    (out,) = _call(build(tir.PrimFunc([A, B, O], body, op), target="c"), op, [x, y],
                   [((n,), "float64")])
    np.testing.assert_allclose(out, ref(x, y) if binary else ref(x), rtol=1e-12)


def test_pow_isnan_isinf_and_int_math():
    n = 8
    A, B = tir.Buffer("A", (n,)), tir.Buffer("B", (n,))
    O, M = tir.Buffer("O", (n,)), tir.Buffer("M", (n,), "bool")
    I = tir.Buffer("I", (n,), "int32")
    J = tir.Buffer("J", (n,), "int32")
    i = tir.Var("i")
    body = tir.For(i, 0, n, "serial", tir.seq(
        tir.BufferStore(O, tir.Call("float32", "pow", [A[i], B[i]]), (i,)),
        tir.BufferStore(M, tir.Or(tir.Call("bool", "isnan", [A[i]]),
                                  tir.Call("bool", "isinf", [A[i]])), (i,)),
        tir.BufferStore(J, tir.Call("int32", "fabs", [I[i]]) + tir.Call("int32", "floor", [I[i]]),
                        (i,))))
    mod = build(tir.PrimFunc([A, B, I, O, M, J], body, "powf"), target="c")
    a = np.array([2, 3, 0.5, np.nan, np.inf, 10, 1, 4], "float32")
    b = np.array([3, 0.5, 2, 1, 1, -1, 7, 0.25], "float32")
    ints = np.array([-3, 0, 5, -7, 2, -1, 9, -100], "int32")
    o, m, j = _call(mod, "powf", [a, b, ints], [((n,), "float32"), ((n,), "bool"), ((n,), "int32")])
    np.testing.assert_allclose(o, np.power(a, b), rtol=2e-7)
    np.testing.assert_array_equal(m, ~np.isfinite(a))
    np.testing.assert_array_equal(j, np.abs(ints) + ints)


# ---------------------------------------------------------------- float16

@pytest.mark.parametrize("options", [[], ["-DRB_NO_FLOAT16"]])   # _Float16 / bit conversions
def test_float16_conversions_exhaustive(options):
    """Every half bit pattern widens exactly; float32 -> half rounds to nearest even (numpy)."""
    n = tir.Var("n")
    H, F = tir.Buffer("H", (n,), "float16"), tir.Buffer("F", (n,), "float32")
    X, Y = tir.Buffer("X", (n,), "float32"), tir.Buffer("Y", (n,), "float16")
    i = tir.Var("i")
    widen = tir.PrimFunc([H, F], tir.For(i, 0, n, "serial", tir.BufferStore(
        F, tir.Cast("float32", H[i]), (i,))), "widen")
    narrow = tir.PrimFunc([X, Y], tir.For(i, 0, n, "serial", tir.BufferStore(
        Y, tir.Cast("float16", X[i]), (i,))), "narrow")
    mod = cgen.build_c([widen, narrow], options=options)
    halves = np.arange(65536, dtype="uint32").astype("uint16").view("float16")
    (f,) = _call(mod, "widen", [halves], [(halves.shape, "float32")])
    want = halves.astype("float32")
    assert ((f.view("uint32") == want.view("uint32")) | (np.isnan(f) & np.isnan(want))).all()
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 2 ** 32, 200000, dtype="uint64").astype("uint32")
    mids = (halves[np.isfinite(halves)].astype("float32").view("uint32") + (1 << 12))  # ties
    x = np.concatenate([bits, mids.astype("uint32")]).view("float32")
    x = np.concatenate([x, np.float32([65504, 65519.99, 65520, 1e9, 2 ** -25, 2 ** -24, 3e-8])])
    (y,) = _call(mod, "narrow", [x], [(x.shape, "float16")])
    with np.errstate(over="ignore"):
        want = x.astype("float16")
    assert ((y.view("uint16") == want.view("uint16")) | (np.isnan(y) & np.isnan(want))).all()


def test_float16_math_and_arithmetic():
    funcs = _unary_funcs("float16", ["exp", "tanh", "sqrt", "sigmoid"])
    mod = cgen.build_c(funcs)
    x = np.linspace(-4, 4, 513).astype("float16")
    for op, ref in (("exp", np.exp), ("tanh", np.tanh), ("sqrt", np.sqrt),
                    ("sigmoid", special.expit)):
        (got,) = _call(mod, op, [x], [(x.shape, "float16")])
        with np.errstate(invalid="ignore"):
            want = ref(x.astype("float64"))
        ok = np.isfinite(want)
        ulp = np.spacing(np.abs(want[ok]).astype("float16")).astype("float64")
        assert np.all(np.abs(got[ok].astype("float64") - want[ok]) <= ulp), op


# ---------------------------------------------------------------- loops and OpenMP

class ThreadId(tir.Call):
    """omp_get_thread_num(): a codegen-level intrinsic (not in tir.INTRINSICS)."""

    def __init__(self):
        self.dtype, self.op_name, self.args = "int32", "omp_get_thread_num", ()


def _tids_func(n=256):
    O = tir.Buffer("O", (n,), "int32")
    i = tir.Var("i")
    return tir.PrimFunc([O], tir.For(i, 0, n, "parallel", tir.BufferStore(O, ThreadId(), (i,))),
                        "tids")


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or os.environ.get("OMP_NUM_THREADS") == "1",
                    reason="needs at least two cores / OpenMP threads")
def test_parallel_loop_uses_several_threads():
    if not cgen.has_openmp():
        pytest.skip("the C compiler has no OpenMP")
    (tids,) = _call(cgen.build_c(_tids_func()), "tids", [], [((256,), "int32")])
    assert len(set(tids.tolist())) >= 2


def test_builds_without_openmp_with_same_results():
    (tids,) = _call(cgen.build_c(_tids_func(), openmp=False), "tids", [], [((256,), "int32")])
    assert (tids == 0).all()
    X, Y = tir.Buffer("X", (1024,)), tir.Buffer("Y", (1024,))
    io, ii, u = tir.Var("io"), tir.Var("ii"), tir.Var("u")
    idx = io * 64 + ii * 4 + u
    body = tir.For(io, 0, 16, "parallel", tir.For(ii, 0, 16, "vectorized", tir.For(
        u, 0, 4, "unrolled", tir.BufferStore(Y, tir.max(X[idx] * 2.0 + 1.0, 0.0), (idx,)))))
    func = tir.PrimFunc([X, Y], body, "scale")
    x = np.linspace(-2, 2, 1024).astype("float32")
    want = np.maximum(x * 2 + 1, 0)
    for openmp in (False, True):
        mod = cgen.build_c(func, openmp=openmp)
        assert "#pragma GCC unroll 4" in mod.get_source("c")
        np.testing.assert_array_equal(_call(mod, "scale", [x], [((1024,), "float32")])[0], want)


def test_source_is_portable_and_heap_free():
    funcs = (_unary_funcs("float32", list(UNARY)) + [_elementwise(f"e_{d}", d, (5, 7), lambda a, b: tir.max(a, b) - a)
                for d in ("float16", "int8", "uint16", "float64", "int64")])
    src = codegen_c(funcs)
    assert not re.search(r"\b(malloc|calloc|realloc|free|aligned_alloc)\s*\(", src)
    assert src.startswith("/* Generated by relay_backend.codegen.c")
    kernel = src.split("rb_exp_compute")[1].split("}")[0]
    assert "rb_expf(" in kernel and not re.search(r"(?<!rb_)expf\(", kernel)  # vectorizable
    for extra in ([], ["-DRB_LIBM_MATH", "-DRB_NO_FLOAT16"]):      # no warnings either way
        cgen.build_c(funcs, options=["-Werror", "-Wextra", "-Wno-unused-parameter"] + extra)


# ---------------------------------------------------------------- te-lowered kernels

def _te_matmul(n, m, K):
    A, B = te.placeholder((n, K), name="A"), te.placeholder((K, m), name="B")
    k = te.reduce_axis((0, K), "k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def test_te_matmul_tiled_parallel_vectorized():
    A, B, C = _te_matmul(30, 20, 17)
    s = te.create_schedule(C)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 8)
    (k,) = s[C].op.reduce_axis
    ko, ki = s[C].split(k, factor=4)
    s[C].reorder(xo, yo, ko, xi, ki, yi)
    s[C].parallel(xo)
    s[C].unroll(ki)
    s[C].vectorize(yi)
    func = te.lower(s, [A, B, C], "mm")
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-1, 1, (30, 17)).astype("float32"), rng.uniform(-1, 1, (17, 20)).astype("float32")
    cmod, lmod = _both(func)
    (c,) = _call(cmod, "mm", [a, b], [((30, 20), "float32")])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, _call(lmod, "mm", [a, b], [((30, 20), "float32")])[0],
                               rtol=1e-5, atol=1e-6)


def test_te_cache_write_compute_at_and_fused_elementwise():
    A, B, C = _te_matmul(8, 6, 5)
    s = te.create_schedule(C)
    CL = s.cache_write(C, "local")
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 3)
    s[CL].compute_at(s[C], yo)
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-1, 1, (8, 5)).astype("float32"), rng.uniform(-1, 1, (5, 6)).astype("float32")
    (c,) = _call(cgen.build_c(te.lower(s, [A, B, C], "mm_local")), "mm_local", [a, b],
                 [((8, 6), "float32")])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)

    X = te.placeholder((10, 8), name="X")
    Y = te.compute((10, 8), lambda i, j: te.exp(X[i, j]) + 1.0, name="Y")
    Z = te.compute((10, 8), lambda i, j: te.sigmoid(Y[i, j]) * te.tanh(Y[i, j] - 2.0), name="Z")
    s = te.create_schedule(Z)
    io, ii = s[Z].split(Z.op.axis[0], factor=4)
    s[Y].compute_at(s[Z], io)
    x = rng.uniform(-2, 2, (10, 8)).astype("float32")
    cmod, lmod = _both(te.lower(s, [X, Z], "fused"))
    (z,) = _call(cmod, "fused", [x], [((10, 8), "float32")])
    y = np.exp(x.astype("float64")) + 1
    np.testing.assert_allclose(z, special.expit(y) * np.tanh(y - 2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(z, _call(lmod, "fused", [x], [((10, 8), "float32")])[0],
                               rtol=1e-5, atol=1e-6)


def test_te_symbolic_reduction():
    n = te.var("n")
    A = te.placeholder((n, 16), name="A")
    k = te.reduce_axis((0, 16), "k")
    R = te.compute((n,), lambda i: te.max(A[i, k], axis=k), name="R")
    s = te.create_schedule(R)
    s[R].parallel(R.op.axis[0])
    mod = cgen.build_c(te.lower(s, [A, R], "rowmax"))
    for rows in (1, 123):
        a = np.random.default_rng(rows).standard_normal((rows, 16)).astype("float32")
        np.testing.assert_array_equal(_call(mod, "rowmax", [a], [((rows,), "float32")])[0],
                                      a.max(axis=1))


# ---------------------------------------------------------------- module behaviour, errors

def test_export_and_load_roundtrip(tmp_path):
    f = _elementwise("sub", "float32", (4,), lambda a, b: a - b)
    mod = build(f, target="c")
    path = mod.export_library(str(tmp_path / "k.so"))
    loaded = load_module(path)
    a, b = np.full(4, 3, "float32"), np.arange(4, dtype="float32")
    np.testing.assert_array_equal(_call(loaded, "sub", [a, b], [((4,), "float32")])[0], a - b)
    big = tir.Buffer("T", (40000,), scope="local")
    O, i = tir.Buffer("O", (1,)), tir.Var("i")
    ws = tir.PrimFunc([O], tir.Allocate(big, tir.seq(
        tir.BufferStore(big, tir.const(1.0), (0,)), tir.BufferStore(O, big[0], (0,)))), "ws")
    with pytest.raises(SerializationError, match="workspace"):
        build(ws, target="c").export_library(str(tmp_path / "w.so"))


def test_errors():
    f = _elementwise("f", "float32", (4,), lambda a, b: a + b)
    with pytest.raises(CompileError, match="two functions"):
        build([f, f], target="c")
    with pytest.raises(CompileError, match="not a C identifier"):
        build(tir.PrimFunc(f.params, f.body, "bad name"), target="c")
    g = _elementwise("f_ws", "float32", (4,), lambda a, b: a * b)
    with pytest.raises(CompileError, match="rb_f_ws"):
        codegen_c([f, g])
    stray = tir.Var("stray")
    A = tir.Buffer("A", (4,), "int32")
    with pytest.raises(CompileError, match="stray"):
        codegen_c(tir.PrimFunc([A], tir.BufferStore(A, stray, (0,)), "g"))
    with pytest.raises(CompileError, match="rejected"):
        cgen.compile_shared("int f( {", cgen.compile_flags(openmp=False))
    with pytest.raises(Exception, match="only 'c' source"):
        build(f, target="c").get_source("ll")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multiply_add_is_fused_as_in_llvm(dtype):
    """a*b + c, a*b - c and c - a*b are one rounding (RB_FMAF / RB_FMA) where the CPU has FMA,
    as the LLVM backend contracts them: (1 + e)^2 - (1 + 2e) is e^2 fused and 0 unfused.
    The transcendental polynomials stay unfused (test_float32_math_vs_numpy_and_llvm checks
    they are bitwise the LLVM ones)."""
    from relay_backend.codegen import llvm_target
    funcs = [_elementwise("fma_add", dtype, (4,), lambda a, b, c: a * b + c, nin=3),
             _elementwise("fma_sub", dtype, (4,), lambda a, b, c: a * b - c, nin=3),
             _elementwise("fma_rsub", dtype, (4,), lambda a, b, c: c - a * b, nin=3)]
    src = codegen_c(funcs)
    assert src.count("RB_FMA") >= 3 + 4       # three kernels + the prelude's macros
    cmod, lmod = _both(funcs)
    eps = np.finfo(dtype).eps ** 0.5 if dtype == "float64" else 2.0 ** -12
    a = np.full(4, 1 + eps, dtype)
    c = np.full(4, 1 + 2 * eps, dtype)
    fused = llvm_target.host_has_feature("fma")
    for name, third in (("fma_add", -c), ("fma_sub", c), ("fma_rsub", c)):
        (got,) = _call(cmod, name, [a, a, third], [((4,), dtype)])
        (llvm,) = _call(lmod, name, [a, a, third], [((4,), dtype)])
        np.testing.assert_array_equal(got, llvm)
        if fused:
            want = np.float64(eps) ** 2 * (-1 if name == "fma_rsub" else 1)
            np.testing.assert_allclose(got, want, rtol=1e-6)
