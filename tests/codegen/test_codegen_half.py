"""float16 conversions in the LLVM backend, bit for bit against numpy's astype.

Regression: `cast(float64 -> float16)` segfaulted (LLVM lowered it to a call of
compiler-rt's __truncdfhf2, which the JIT left unresolved). Every conversion to and from
float16 runs in a child process, so a crash is a test failure rather than the end of pytest.
No tolerance: results must equal numpy's bits (NaNs compare as NaN). float64 -> float16 is
checked on values built to expose double rounding (float64 -> float32 -> float16 differs
from numpy on them), so converting through float32 naively fails this test.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from relay_backend import te
from relay_backend.codegen import build, llvm_target
from relay_backend.errors import CompileError

pytestmark = pytest.mark.compile

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_CHILD = textwrap.dedent(r"""
    import sys
    import numpy as np
    from relay_backend import nd, te
    from relay_backend.codegen import build

    INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    HALF = np.arange(0, 0x10000, dtype=np.uint16).view(np.float16)       # every float16

    def kernel(src, dst):
        n = te.var("n")
        a = te.placeholder((n,), name="A", dtype=src)
        b = te.compute((n,), lambda i: a[i].astype(dst), name="B")
        return te.lower(te.create_schedule(b), [a, b], name=f"{src}_to_{dst}")

    def adversarial_f64():
        # every float16, the midpoints between neighbours and values a float32 ulp away
        # from them (where float64 -> float32 -> float16 rounds twice), huge and tiny values
        h = HALF[np.isfinite(HALF) & (HALF.view(np.uint16) < 0x8000)].astype(np.float64)
        h = np.sort(h)
        mids = (h[:-1] + h[1:]) / 2
        near = np.concatenate([mids * (1 + 2.0 ** -30), mids * (1 - 2.0 ** -30),
                               np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)])
        rng = np.random.default_rng(0)
        rand = rng.standard_normal(20000) * np.logspace(-10, 6, 20000)
        special = [65504.0, 65519.999, 65520.0, 65520.000001, 1e300, 2.0 ** -24, 2.0 ** -25,
                   2.0 ** -25 * (1 + 2.0 ** -52), 2.0 ** -26, 5e-324, np.inf, np.nan]
        x = np.concatenate([h, mids, near, rand, special])
        return np.concatenate([x, -x])

    def inputs(src, dst):
        if src == "float16":
            x = HALF
            if dst in INTS:                       # out-of-range float -> int is undefined
                info = np.iinfo(dst)
                x = x[np.isfinite(x) & (x > info.min - 1) & (x < info.max + 1)]
            return x
        if src == "float64":
            return adversarial_f64()
        if src == "float32":
            return adversarial_f64().astype(np.float32)
        if src == "bool":
            return np.array([True, False, True])
        info = np.iinfo(src)
        if info.bits <= 16:
            return np.arange(info.min, info.max + 1).astype(src)     # every value
        edges = [info.min, info.max, 0, 1, 2047, 2049, 65503, 65504, 65505, 65519, 65520, 65536]
        vals = np.concatenate([np.array([v for v in edges if info.min <= v <= info.max], dtype=src),
                               np.random.default_rng(1).integers(info.min, info.max, 5000, dtype=src, endpoint=True)])
        return vals

    pairs = [("float64", "float16"), ("float16", "float64"), ("float32", "float16"),
             ("float16", "float32"), ("bool", "float16"), ("float16", "bool")]
    pairs += [(t, "float16") for t in INTS] + [("float16", t) for t in INTS]
    mod = build([kernel(s, d) for s, d in pairs])
    failures = []
    for src, dst in pairs:
        x = inputs(src, dst)
        out = nd.empty(x.shape, dst)
        mod[f"{src}_to_{dst}"](nd.array(x), out)
        got = out.numpy()
        with np.errstate(all="ignore"):
            want = x.astype(dst)
        if got.dtype.kind == "f":
            same = (got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")) | (np.isnan(got) & np.isnan(want))
        else:
            same = got == want
        if not same.all():
            bad = np.flatnonzero(~same)[:5]
            failures.append(f"{src}->{dst}: {(~same).sum()} of {x.size} differ, e.g. "
                            f"{x[bad].tolist()} -> {got[bad].tolist()} (numpy {want[bad].tolist()})")
    # the reported path: relay cast as a primitive function, jitted by the TECompiler
    import relay_backend as relay
    from relay_backend.backend import te_compiler
    x = relay.var("x", shape=(4, 5), dtype="float64")
    prim = relay.Function([x], relay.cast(x, "float16")).with_attr("Primitive", 1)
    data = adversarial_f64()[:20].reshape(4, 5)
    out = nd.empty((4, 5), "float16")
    te_compiler.TECompiler().jit(prim, "llvm")(nd.array(data), out)
    if out.numpy().view(np.uint16).tolist() != data.astype(np.float16).view(np.uint16).tolist():
        failures.append(f"relay cast float64->float16 gave {out.numpy()} for {data}")
    print("\n".join(failures) if failures else "OK")
    sys.exit(1 if failures else 0)
""")


def test_every_float16_conversion_matches_numpy_bitwise():
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                          cwd=_REPO, timeout=300, env={**os.environ, "RB_DEBUG": "0", "RB_NO_DISK_CACHE": "1"})
    assert proc.returncode >= 0, f"the child process crashed (signal {-proc.returncode}):\n{proc.stderr[-2000:]}"
    assert proc.returncode == 0 and proc.stdout.strip() == "OK", proc.stdout + proc.stderr[-2000:]


def test_naive_double_rounding_would_differ():
    """The f64 -> f16 test inputs really do tell single from double rounding."""
    mid = (np.float64(np.float16(1.0)) + np.float64(np.nextafter(np.float16(1.0), np.float16(2.0)))) / 2
    x = np.array([mid * (1 + 2.0 ** -30)])          # just above a float16 tie
    assert x.astype(np.float16)[0] != x.astype(np.float32).astype(np.float16)[0]


def test_float16_without_f16c_is_a_compile_error(monkeypatch):
    """On an x86 CPU without F16C the half conversions would be unresolved libcalls: refuse
    at build time with a message naming the fix instead of crashing at run time."""
    monkeypatch.setattr(llvm_target, "host_lacks_half_conversions", lambda: True)
    a = te.placeholder((4,), name="A", dtype="float16")
    b = te.compute((4,), lambda i: a[i] + a[i], name="B")
    with pytest.raises(CompileError, match="F16C"):
        build(te.lower(te.create_schedule(b), [a, b], name="add_half"))
