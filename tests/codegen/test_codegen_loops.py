"""Loop kinds: vectorized loops emit vector IR, parallel loops run on several threads inside
native code (libgomp), unrolled loops carry unroll metadata; results match numpy exactly
(the kernels here only add, multiply and select on small integers or exact floats)."""
import os
import re

import numpy as np
import pytest

from relay_backend import tir
from relay_backend.codegen import build, codegen_llvm, llvm_target
from relay_backend.runtime import nd

pytestmark = pytest.mark.compile


class ThreadId(tir.Call):
    """omp_get_thread_num(): a codegen-level intrinsic (not in tir.INTRINSICS) for tests."""

    def __init__(self):                # skips tir.Call's name check on purpose
        self.dtype, self.op_name, self.args = "int32", "omp_get_thread_num", ()


def _scale_kernel(n, outer_kind, inner_kind, inner=64):
    X, Y = tir.Buffer("X", (n,), "float32"), tir.Buffer("Y", (n,), "float32")
    io, ii = tir.Var("io"), tir.Var("ii")
    idx = io * inner + ii
    body = tir.For(io, 0, n // inner, outer_kind, tir.For(
        ii, 0, inner, inner_kind, tir.BufferStore(Y, tir.max(X[idx] * 2.0 + 1.0, 0.0), (idx,))))
    return tir.PrimFunc([X, Y], body, "scale")


def test_vectorized_loop_emits_vector_ir():
    if not llvm_target.host_has_feature("avx2"):
        pytest.skip("host CPU has no AVX2; vector width differs")
    func = _scale_kernel(1024, "serial", "vectorized")
    text, _ = codegen_llvm([func])
    assert "<64 x float>" in text          # emitted as vector code (llvm_vector.py), no loop left
    assert "llvm.loop.vectorize.enable" not in text
    mod = build(func)
    assert re.search(r"<(8|16|32|64) x float>", mod.get_source("ll")), "loop was not vectorized"
    x = np.linspace(-2, 2, 1024).astype("float32")
    y = nd.empty((1024,), "float32")
    mod["scale"](nd.array(x), y)
    np.testing.assert_array_equal(y.numpy(), np.maximum(x * 2 + 1, 0))
    assert "ymm" in mod.get_source("asm") or "zmm" in mod.get_source("asm")


def test_unrolled_loop_metadata():
    """A static unrolled loop is unrolled in tir (tir/unroll.py); a symbolic one carries LLVM's
    unroll metadata."""
    func = _scale_kernel(256, "serial", "unrolled", inner=4)
    text, _ = codegen_llvm([func])
    assert "llvm.loop.unroll" not in text and text.count("store float") == 4
    x = np.arange(256, dtype="float32") - 100
    y = nd.empty((256,), "float32")
    build(func)["scale"](nd.array(x), y)
    np.testing.assert_array_equal(y.numpy(), np.maximum(x * 2 + 1, 0))
    i, n = tir.Var("i"), tir.SizeVar("n")
    X, Y = tir.Buffer("X", (n,), "float32"), tir.Buffer("Y", (n,), "float32")
    symbolic = tir.PrimFunc([X, Y], tir.For(i, 0, n, "unrolled", tir.BufferStore(Y, X[i] * 2.0, (i,))), "sym")
    text, _ = codegen_llvm([symbolic])
    assert re.search(r"distinct !\{ (!\d+), !\d+ \}", text) and "llvm.loop.unroll.enable" in text


def test_unroll_left_to_llvm():
    """te's unroll(axis, explicit=False): one loop carrying llvm.loop.unroll.full reaches LLVM
    (explicit: 16 copies of the store), LLVM unrolls it (no loop branch left in the optimized
    IR), and both compute the same values."""
    from relay_backend import te
    x = te.placeholder((64, 16), "float32", name="x")
    k = te.reduce_axis((0, 16), "k")
    y = te.compute((64,), lambda i: te.sum(x[i, k] * 2.0, axis=k), name="y")
    out = {}
    for explicit in (True, False):
        s = te.create_schedule(y.op)
        s[y].unroll(y.op.reduce_axis[0], explicit=explicit)
        func = te.lower(s, [x, y], "rowsum")
        text, _ = codegen_llvm([func])
        loops = [n for n in tir.walk(func.body) if isinstance(n, tir.For) and n.kind == "unrolled"]
        assert len(loops) == 1 and loops[0].annotations.get("unroll_explicit", True) is explicit
        assert ("llvm.loop.unroll.full" in text) is not explicit
        assert text.count("fadd contract float") == (16 if explicit else 1)
        mod = build(func)
        assert mod.get_source("ll").count("!llvm.loop") <= 1            # only the serial row loop
        data = np.arange(64 * 16, dtype="float32").reshape(64, 16) % 5
        result = nd.empty((64,), "float32")
        mod["rowsum"](nd.array(data), result)
        out[explicit] = result.numpy()
        np.testing.assert_array_equal(out[explicit], (data * 2).sum(axis=1))


def test_no_unroll_keeps_the_loop():
    """te's no_unroll(axis): the serial loop carries llvm.loop.unroll.disable and is still a loop
    after -O3: with both loops marked, one vector store is left (without, LLVM fully unrolls the
    14-iteration loop of one vector each); both compute the same values."""
    from relay_backend import te
    x = te.placeholder((64, 14, 16), "float32", name="x")
    y = te.compute((64, 14, 16), lambda i, j, v: tir.max(x[i, j, v] + 1.0, tir.const(0.0, "float32")), name="y")
    data = (np.arange(64 * 14 * 16, dtype="float32").reshape(64, 14, 16) % 7) - 3
    stores = {}
    for rolled in (False, True):
        s = te.create_schedule(y.op)
        s[y].vectorize(y.op.axis[2])
        if rolled:
            s[y].no_unroll(y.op.axis[0])
            s[y].no_unroll(y.op.axis[1])
        func = te.lower(s, [x, y], "shift")
        text, _ = codegen_llvm([func])
        assert ("llvm.loop.unroll.disable" in text) is rolled
        mod = build(func)
        optimized = mod.get_source("ll")
        stores[rolled] = optimized.count("store <16 x float>")
        result = nd.empty((64, 14, 16), "float32")
        mod["shift"](nd.array(data), result)
        np.testing.assert_array_equal(result.numpy(), np.maximum(data + 1, 0))
    assert stores[True] == 1 and stores[False] >= 14, stores


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or os.environ.get("OMP_NUM_THREADS") == "1",
                    reason="needs at least two cores / OpenMP threads")
def test_parallel_loop_uses_several_threads():
    """The loop calls the thread pool and a worker thread (thread id > 0; the caller is always
    0) runs part of it once awake. Which threads run what depends on the scheduler: the first
    calls may find the worker still starting (the caller runs every block itself), and on a
    busy machine waking the worker can preempt the caller, so the worker runs every block. So
    the test asks only that a worker ran something, and that every static block (half the
    iterations, one block per thread) was run whole by one thread."""
    if not llvm_target.libgomp_path():
        pytest.skip("libgomp not available")
    n = 1 << 16
    O = tir.Buffer("O", (n,), "int32")
    i = tir.Var("i")
    mod = build(tir.PrimFunc([O], tir.For(i, 0, n, "parallel",
                                          tir.BufferStore(O, ThreadId(), (i,))), "tids"))
    assert "rb_parallel_for" in mod.get_source("ll") and "GOMP_parallel" not in mod.get_source("ll")
    out = nd.empty((n,), "int32")
    for _ in range(2000):                 # a worker that sleeps wakes within microseconds
        mod["tids"](out)
        tids = out.numpy()
        if (tids > 0).any():
            break
    assert (tids > 0).any(), f"only the caller (thread id 0) ran the loop in 2000 calls"
    threads = int(tids.max()) + 1
    per = n // (2 * threads)
    assert all(len(set(tids[k * per:(k + 1) * per].tolist())) == 1 for k in range(threads))


def test_parallel_captures_symbolic_shape_let_and_outer_loop():
    n = tir.Var("n")
    A, B = tir.Buffer("A", (n, 8), "float32"), tir.Buffer("B", (n, 8), "float32")
    T = tir.Buffer("T", (8,), "float32", scope="local")
    r, i, j, k, s = tir.Var("r"), tir.Var("i"), tir.Var("j"), tir.Var("k"), tir.Var("s", "float32")
    # for r in 2: s = r+1; parallel i in n: T = A[i]*s (per-thread temp); B[i] += rev(T)
    body = tir.For(r, 0, 2, "serial", tir.LetStmt(s, tir.Cast("float32", r + 1), tir.For(
        i, 0, n, "parallel", tir.Allocate(T, tir.seq(
            tir.For(j, 0, 8, "serial", tir.BufferStore(T, A[i, j] * s, (j,))),
            tir.For(k, 0, 8, "vectorized",
                    tir.BufferStore(B, B[i, k] + T[7 - k], (i, k))))))))
    mod = build(tir.PrimFunc([A, B], body, "acc"))
    for rows in (3, 501):
        a = np.arange(rows * 8, dtype="float32").reshape(rows, 8)
        b = nd.array(np.zeros((rows, 8), "float32"))
        mod["acc"](nd.array(a), b)
        np.testing.assert_array_equal(b.numpy(), 3 * a[:, ::-1])


def test_parallel_falls_back_to_serial_without_openmp(monkeypatch):
    monkeypatch.setattr(llvm_target, "libgomp_path", lambda: "")
    func = _scale_kernel(512, "parallel", "serial")
    mod = build(func)
    assert "rb_parallel_for" not in mod.get_source("ll")
    x = np.linspace(-3, 3, 512).astype("float32")
    y = nd.empty((512,), "float32")
    mod["scale"](nd.array(x), y)
    np.testing.assert_array_equal(y.numpy(), np.maximum(x * 2 + 1, 0))


def test_nested_parallel_runs_inner_serially():
    n = 32
    O = tir.Buffer("O", (n, n), "int32")
    i, j = tir.Var("i"), tir.Var("j")
    body = tir.For(i, 0, n, "parallel", tir.For(j, 0, n, "parallel",
                                                tir.BufferStore(O, i * n + j, (i, j))))
    mod = build(tir.PrimFunc([O], body, "nest"))
    assert mod.get_source("ll").count("@GOMP_parallel(") <= 2     # one call + one declaration
    out = nd.empty((n, n), "int32")
    mod["nest"](out)
    np.testing.assert_array_equal(out.numpy(), np.arange(n * n).reshape(n, n))


def test_vectorize_width_reaches_the_loop_metadata():
    """Stage.vectorize(axis, width) lowers to a For annotation and llvm.loop.vectorize.width;
    the result is the same sum, and a width that is not a power of two is refused."""
    from relay_backend import te
    from relay_backend.errors import CompileError
    a = te.placeholder((4, 96), "int16", name="a")
    r = te.reduce_axis((0, 96), "r")
    out = te.compute((4,), lambda i: te.sum(a[i, r].astype("int32") * a[i, r].astype("int32"), axis=[r]), name="sq")
    s = te.create_schedule([out])
    s[out].vectorize(r, 32)
    func = te.lower(s, [a, out], "sq")
    text, _ = codegen_llvm([func])
    assert re.search(r'!"llvm.loop.vectorize.width", i32 32', text)
    x = np.random.default_rng(0).integers(-300, 300, (4, 96)).astype("int16")
    res = nd.empty((4,), "int32")
    build(func)["sq"](nd.array(x), res)
    np.testing.assert_array_equal(res.numpy(), (x.astype("int64") ** 2).sum(axis=1))
    with pytest.raises(CompileError, match="power of two"):
        te.create_schedule([out])[out].vectorize(r, 24)
