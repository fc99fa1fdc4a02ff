"""Every math intrinsic the LLVM backend lowers, against numpy/scipy in float64.

Errors are measured in float32 ulps of the float64 reference rounded to float32. The
polynomial float32 functions (exp, log, tanh, sigmoid, erf) must stay within 4 ulps (they
measure <= 2.5); LLVM intrinsics within 1 ulp, glibc's tan/atan/sinh/cosh/log1p within 2,
log2/log10 (log times a constant) within 4.
Special values (0, -0, +-inf, NaN, overflow and underflow boundaries, denormals) must match
exactly. float64 uses libm: 1e-12 relative. float16 computes in float32: 1 half ulp.
"""
import numpy as np
import pytest
from scipy import special

from relay_backend import tir
from relay_backend.codegen import build
from relay_backend.runtime import nd

pytestmark = pytest.mark.compile

UNARY = {
    "exp": (np.exp, 4), "log": (np.log, 4), "tanh": (np.tanh, 4), "sigmoid": (special.expit, 4),
    "erf": (special.erf, 4), "sqrt": (np.sqrt, 1), "fabs": (np.abs, 0), "floor": (np.floor, 0),
    "ceil": (np.ceil, 0), "round": (np.round, 0), "trunc": (np.trunc, 0), "sin": (np.sin, 1),
    "cos": (np.cos, 1), "exp2": (np.exp2, 1), "log2": (np.log2, 4), "log10": (np.log10, 4),
    "rsqrt": (lambda x: 1 / np.sqrt(x), 2), "tan": (np.tan, 2), "atan": (np.arctan, 2),
    "sinh": (np.sinh, 2), "cosh": (np.cosh, 2), "log1p": (np.log1p, 2),
}
SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 1e-40, 1.2e-38, 88.72, 88.73, 88.8,
            -87.3, -103.0, -103.98, -104.5, -110.0, 1.0, 0.5, 0.625, -0.625, 0.9, -0.9, 3.92,
            -3.92, 4.0, 9.0, 2.5, -2.5, 0.4999999, 1.5, -1.5]


def _unary_funcs(dtype, ops):
    n = tir.Var("n")
    funcs = []
    for op in ops:
        A, O, i = tir.Buffer("A", (n,), dtype), tir.Buffer("O", (n,), dtype), tir.Var("i")
        body = tir.For(i, 0, n, "vectorized", tir.BufferStore(O, tir.Call(dtype, op, [A[i]]), (i,)))
        funcs.append(tir.PrimFunc([A, O], body, op))
    return build(funcs)


@pytest.fixture(scope="module")
def f32_module():
    return _unary_funcs("float32", list(UNARY))


def _inputs():
    rng = np.random.default_rng(0)
    return np.concatenate([
        rng.uniform(-10, 10, 20000), rng.standard_normal(20000) * 0.5,
        np.exp(rng.uniform(-103, 88, 20000)), -np.exp(rng.uniform(-103, 88, 5000)),
        np.linspace(-5, 5, 20001), SPECIALS]).astype("float32")


def _run(mod, op, x, dtype):
    out = nd.empty(x.shape, dtype)
    mod[op](nd.array(x), out)
    return out.numpy()


@pytest.mark.parametrize("op", list(UNARY))
def test_float32_ulp_error(f32_module, op):
    ref_fn, max_ulps = UNARY[op]
    x = _inputs()
    got = _run(f32_module, op, x, "float32").astype("float64")
    with np.errstate(all="ignore"):
        want64 = ref_fn(x.astype("float64"))
        want = want64.astype("float32").astype("float64")
    finite = np.isfinite(want)
    # non-finite results (and NaN inputs) must match exactly
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    bad = ~finite & ~same
    assert not bad.any(), f"{op}: x={x[bad][:5]} gave {got[bad][:5]}, want {want[bad][:5]}"
    ulp = np.spacing(np.abs(want[finite]).astype("float32")).astype("float64")
    err = np.abs(got[finite] - want64[finite]) / ulp
    worst = int(np.argmax(err))
    assert err[worst] <= max_ulps + 0.5, (
        f"{op}: {err[worst]:.2f} ulps at x={x[finite][worst]!r} "
        f"(got {got[finite][worst]!r}, want {want64[finite][worst]!r})")


def test_math_loops_are_vectorized(f32_module):
    """The polynomial functions vectorize: no scalar libm call remains for them."""
    ir = f32_module.get_source("ll")
    for name in ("expf", "logf", "tanhf", "erff"):
        assert f"@{name}(" not in ir
    assert "x float>" in ir


@pytest.mark.parametrize("op", ["exp", "log", "tanh", "sigmoid", "erf", "sqrt", "pow", "fmod"])
def test_float64(op):
    ref = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sigmoid": special.expit,
           "erf": special.erf, "sqrt": np.sqrt, "pow": lambda a, b: np.power(a, b),
           "fmod": np.fmod}[op]
    n = 64
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 5, n)
    A, B, O, i = (tir.Buffer("A", (n,), "float64"), tir.Buffer("B", (n,), "float64"),
                  tir.Buffer("O", (n,), "float64"), tir.Var("i"))
    args = [A[i], B[i]] if op in ("pow", "fmod") else [A[i]]
    body = tir.For(i, 0, n, "serial", tir.BufferStore(O, tir.Call("float64", op, args), (i,)))
    mod = build(tir.PrimFunc([A, B, O], body, op))
    y = rng.uniform(0.5, 2, n)
    out = nd.empty((n,), "float64")
    mod[op](nd.array(x), nd.array(y), out)
    want = ref(x, y) if op in ("pow", "fmod") else ref(x)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)


def test_float16_via_float32():
    mod = _unary_funcs("float16", ["exp", "tanh", "sqrt"])
    x = np.linspace(-4, 4, 513).astype("float16")
    for op, ref in (("exp", np.exp), ("tanh", np.tanh), ("sqrt", np.sqrt)):
        got = _run(mod, op, x, "float16").astype("float64")
        with np.errstate(invalid="ignore"):
            want = ref(x.astype("float64"))
        ok = np.isfinite(want)
        ulp = np.spacing(np.abs(want[ok]).astype("float16")).astype("float64")
        assert np.all(np.abs(got[ok] - want[ok]) <= ulp), op


def test_pow_and_isnan_float32():
    n = 8
    A, B = tir.Buffer("A", (n,), "float32"), tir.Buffer("B", (n,), "float32")
    O, M = tir.Buffer("O", (n,), "float32"), tir.Buffer("M", (n,), "bool")
    i = tir.Var("i")
    body = tir.For(i, 0, n, "serial", tir.seq(
        tir.BufferStore(O, tir.Call("float32", "pow", [A[i], B[i]]), (i,)),
        tir.BufferStore(M, tir.Or(tir.Call("bool", "isnan", [A[i]]),
                                  tir.Call("bool", "isinf", [A[i]])), (i,))))
    mod = build(tir.PrimFunc([A, B, O, M], body, "powf"))
    a = np.array([2, 3, 0.5, np.nan, np.inf, 10, 1, 4], "float32")
    b = np.array([3, 0.5, 2, 1, 1, -1, 7, 0.25], "float32")
    o, m = nd.empty((n,), "float32"), nd.empty((n,), "bool")
    mod["powf"](nd.array(a), nd.array(b), o, m)
    np.testing.assert_allclose(o.numpy(), np.power(a, b), rtol=2e-7)
    np.testing.assert_array_equal(m.numpy(), ~np.isfinite(a))
