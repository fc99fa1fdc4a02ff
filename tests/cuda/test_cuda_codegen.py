"""tir -> CUDA codegen on hand-written GPU schedules: kernel splitting and launch shapes,
cross-thread reductions through shared memory, barriers, the errors for schedules that cannot
run on a GPU, nvcc PTX, and the CUDAModule (sources, export/load, no GPU here)."""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.codegen import build, codegen_cuda
from relay_backend.codegen.cuda_compile import find_nvcc
from relay_backend.errors import CompileError, RelayError, SerializationError
from relay_backend.runtime import load_module, nd
from relay_backend.runtime.cuda_module import CUDAModule
from relay_backend.runtime.ndarray import cuda_device_count

from .emulator import EmulationError, Emulator, gxx

pytestmark = pytest.mark.compile
needs_gxx = pytest.mark.skipif(gxx() is None, reason="the CUDA emulation needs a C++ compiler")
needs_nvcc = pytest.mark.skipif(not find_nvcc(), reason="nvcc (CUDA toolkit) is not installed")
BX, TX = te.thread_axis("blockIdx.x"), te.thread_axis("threadIdx.x")


def _vexp():
    n = te.var("n")
    a = te.placeholder((n,), "float32", name="a")
    b = te.compute((n,), lambda i: te.exp(a[i]) + 1.0, name="b")
    s = te.create_schedule(b)
    bx, tx = s[b].split(b.op.axis[0], factor=64)
    s[b].bind(bx, BX)
    s[b].bind(tx, TX)
    return te.lower(s, [a, b], "vexp")


def _rowsum(rows=16, cols=1000, threads=128, name="rowsum"):
    x = te.placeholder((rows, cols), "float32", name="x")
    k = te.reduce_axis((0, cols), "k")
    out = te.compute((rows,), lambda i: te.sum(x[i, k], axis=k), name="out")
    s = te.create_schedule(out)
    ko, ki = s[out].split(k, factor=threads)
    s[out].reorder(out.op.axis[0], ki, ko)
    s[out].bind(out.op.axis[0], BX)
    s[out].bind(ki, TX)
    return te.lower(s, [x, out], name)


def _argmax_rows():
    """A tuple reduction (index, value) across threads, then an injective consumer."""
    x = te.placeholder((5, 300), "float32", name="x")
    k = te.reduce_axis((0, 300), "k")
    argmax = te.comm_reducer(
        lambda a, b: (te.if_then_else(a[1] >= b[1], a[0], b[0]), te.max(a[1], b[1])),
        lambda t0, t1: (tir.const(-1, t0), tir.min_value(t1)), name="argmax")
    idx, val = te.compute((5,), lambda i: argmax((k.var, x[i, k]), axis=k), name="am")
    s = te.create_schedule([idx, val])
    ko, ki = s[idx].split(k, factor=64)
    s[idx].reorder(idx.op.axis[0], ki, ko)
    s[idx].bind(idx.op.axis[0], BX)
    s[idx].bind(ki, TX)
    return te.lower(s, [x, idx, val], "argmax_rows")


def test_kernels_and_launch_shapes():
    source, plans = codegen_cuda([_vexp(), _rowsum()])
    vexp, rowsum = plans
    assert [k.block for k in vexp.kernels] == [(64, 1, 1)]
    assert vexp.kernels[0].grid == (("//", ("+", "n", 63), 64), 1, 1)     # over the shape var
    assert rowsum.kernels[0].grid == (16, 1, 1) and rowsum.kernels[0].block == (128, 1, 1)
    assert 'extern "C" __global__ void __launch_bounds__(64) vexp_kernel0(' in source
    assert "__shared__ float red_buf0[128];" in source and "__syncthreads();" in source
    assert "rb_expf" in source and "__expf" in source        # the fast exp


@needs_gxx
def test_emulated_kernels_match_numpy():
    emu = Emulator([_vexp(), _rowsum(), _rowsum(3, 7, 8, name="rowsum_small"), _argmax_rows()])
    a = np.random.default_rng(0).uniform(-2, 2, 1000).astype("float32")
    b = np.zeros_like(a)
    emu.run("vexp", a, b)
    np.testing.assert_allclose(b, np.exp(a) + 1, rtol=1e-6)
    for name, shape in (("rowsum", (16, 1000)), ("rowsum_small", (3, 7))):
        x = np.random.default_rng(2).random(shape).astype("float32")
        out = np.zeros(shape[0], "float32")
        emu.run(name, x, out)
        np.testing.assert_allclose(out, x.sum(1), rtol=1e-5)
    x = np.random.default_rng(1).random((5, 300)).astype("float32")
    idx, val = np.zeros(5, "int32"), np.zeros(5, "float32")
    emu.run("argmax_rows", x, idx, val)
    np.testing.assert_array_equal(idx, x.argmax(1))
    np.testing.assert_array_equal(val, x.max(1))


@needs_gxx
def test_emulator_catches_a_barrier_some_threads_skip():
    """A kernel where half the threads return before __syncthreads: the emulator refuses it, so
    the codegen's barrier placement is really checked."""
    emu = Emulator([_vexp()])
    bad = emu.source.replace("b[(int64_t)", "if (threadIdx.x < 32) return; __syncthreads(); b[(int64_t)", 1)
    assert bad != emu.source
    broken = Emulator.from_source(bad, emu.plans)
    with pytest.raises(EmulationError, match="wait at __syncthreads"):
        broken.run("vexp", np.ones(100, "float32"), np.zeros(100, "float32"))
    emu.run("vexp", np.ones(100, "float32"), np.zeros(100, "float32"))     # the original is fine


def _unbound():
    a = te.placeholder((8,), "float32", name="a")
    b = te.compute((8,), lambda i: a[i] * 2.0, name="b")
    return a, b, te.create_schedule(b)


def test_schedules_that_cannot_run_on_a_gpu_are_errors():
    a, b, s = _unbound()
    with pytest.raises(CompileError, match="not inside any loop bound to blockIdx/threadIdx.*forget to bind"):
        codegen_cuda(te.lower(s, [a, b], "f"))
    a, b, s = _unbound()
    s[b].parallel(b.op.axis[0])
    with pytest.raises(CompileError, match="not inside any loop bound"):
        codegen_cuda(te.lower(s, [a, b], "f"))
    a, b, s = _unbound()
    o, i = s[b].split(b.op.axis[0], factor=4)
    s[b].bind(i, BX)
    with pytest.raises(CompileError, match="blockIdx loops must be outermost|not inside any loop bound"):
        codegen_cuda(te.lower(s, [a, b], "f"))
    a, b, s = _unbound()
    s[b].bind(b.op.axis[0], TX)
    big = te.placeholder((2048,), "float32", name="a")
    c = te.compute((2048,), lambda i: big[i] + 1.0, name="c")
    s2 = te.create_schedule(c)
    s2[c].bind(c.op.axis[0], TX)
    with pytest.raises(CompileError, match="2048x1x1 threads per block exceed the limit of 1024"):
        codegen_cuda(te.lower(s2, [big, c], "g"))
    with pytest.raises(CompileError, match="power-of-two"):
        codegen_cuda(_rowsum(threads=96))


def test_barrier_under_thread_dependent_branch_is_an_error():
    """A cross-thread reduction inside a guard that depends on the thread index (rows bound to
    threadIdx.y with a ragged extent) would leave threads out of its barriers."""
    x = te.placeholder((5, 64), "float32", name="x")
    k = te.reduce_axis((0, 64), "k")
    out = te.compute((5,), lambda i: te.sum(x[i, k], axis=k), name="out")
    s = te.create_schedule(out)
    io, ii = s[out].split(out.op.axis[0], factor=4)
    s[out].reorder(io, ii, k)
    s[out].bind(io, BX)
    s[out].bind(ii, te.thread_axis("threadIdx.y"))
    s[out].bind(k, TX)
    with pytest.raises(CompileError, match="block-wide barrier .* not every thread"):
        codegen_cuda(te.lower(s, [x, out], "ragged"))


@needs_nvcc
def test_build_gives_a_cuda_module_with_ptx(tmp_path):
    mod = build([_vexp(), _rowsum()], "cuda -arch=sm_80")
    assert isinstance(mod, CUDAModule) and mod.type_key == "cuda"
    assert ".target sm_80" in mod.get_source("ptx") and "vexp_kernel0" in mod.get_source("cu")
    assert sorted(mod.function_names) == ["rowsum", "vexp"]
    path = mod.export_library(str(tmp_path / "k.so"))
    loaded = load_module(path)
    assert isinstance(loaded, CUDAModule) and loaded.ptx == mod.ptx
    assert loaded.plans["vexp"] == mod.plans["vexp"]
    with pytest.raises(SerializationError, match="cc= and fcompile= only apply"):
        mod.export_library(str(tmp_path / "x.so"), cc="gcc")
    with pytest.raises(SerializationError, match="no object file"):
        mod.export_library(str(tmp_path / "x.o"))
    if not cuda_device_count()[0]:
        with pytest.raises(RelayError, match="no CUDA device/driver available"):
            nd.array(np.ones(4, "float32"), device=__import__("relay_backend").cuda())
        func = mod["vexp"]
        with pytest.raises(RelayError, match="is on cpu.*runs on cuda"):
            func(nd.array(np.ones(4, "float32")), nd.empty((4,)))


@needs_nvcc
def test_nvcc_errors_are_compile_errors():
    from relay_backend.codegen.cuda_compile import nvcc_ptx
    with pytest.raises(CompileError, match="nvcc rejected the generated source"):
        nvcc_ptx("this is not CUDA", "sm_75")


def _multiply_add():
    """out = a * b + c: the C printer writes it as one RB_FMAF (the CUDA emitter shares it)."""
    a, b, c = (te.placeholder((256,), "float32", name=name) for name in "abc")
    out = te.compute((256,), lambda i: a[i] * b[i] + c[i], name="out")
    s = te.create_schedule(out)
    bx, tx = s[out].split(out.op.axis[0], factor=64)
    s[out].bind(bx, BX)
    s[out].bind(tx, TX)
    return te.lower(s, [a, b, c, out], "multiply_add")


@needs_nvcc
def test_fused_multiply_add_compiles_with_nvcc():
    """RB_FMAF is defined in the prelude part CUDA shares (it used to be C-only: nvcc rejected
    every kernel the printer fused a multiply-add in)."""
    source, _ = codegen_cuda([_multiply_add()])
    assert "RB_FMAF(" in source
    mod = build([_multiply_add()], "cuda -arch=sm_80")
    assert "multiply_add_kernel0" in mod.get_source("ptx")


@needs_gxx
def test_fused_multiply_add_emulated_matches_numpy():
    a, b, c = (np.random.default_rng(k).uniform(-2, 2, 256).astype("float32") for k in range(3))
    out = np.zeros_like(a)
    Emulator([_multiply_add()]).run("multiply_add", a, b, c, out)
    np.testing.assert_allclose(out, a * b + c, rtol=1e-6, atol=1e-6)
