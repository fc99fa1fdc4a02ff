"""runtime.Module: argument checks at the boundary, sources, export_library / load_module."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from relay_backend import tir
from relay_backend.codegen import build
from relay_backend.errors import InputError, RelayError, SerializationError
from relay_backend.runtime import load_module, nd

pytestmark = pytest.mark.compile


def _axpy_module():
    """axpy(X: (n, 4) f32, Y: (n, 4) f32, Z: (n, 4) f32): Z = 2X + Y; and neg(A: (3,) i32)."""
    n = tir.Var("n")
    X, Y, Z = (tir.Buffer(name, (n, 4), "float32") for name in "XYZ")
    i, j = tir.Var("i"), tir.Var("j")
    axpy = tir.PrimFunc([X, Y, Z], tir.For(i, 0, n, "parallel", tir.For(
        j, 0, 4, "serial", tir.BufferStore(Z, X[i, j] * 2.0 + Y[i, j], (i, j)))), "axpy",
        {"num_outputs": 1})
    A, B, k = tir.Buffer("A", (3,), "int32"), tir.Buffer("B", (3,), "int32"), tir.Var("k")
    neg = tir.PrimFunc([A, B], tir.For(k, 0, 3, "serial", tir.BufferStore(B, 0 - A[k], (k,))), "neg")
    return build([axpy, neg])


@pytest.fixture(scope="module")
def mod():
    return _axpy_module()


def _f32(*shape):
    return nd.array(np.ones(shape, "float32"))


def test_call_and_lookup(mod):
    x = nd.array(np.arange(8, dtype="float32").reshape(2, 4))
    z = nd.empty((2, 4), "float32")
    mod.get_function("axpy")(x, _f32(2, 4), z)
    np.testing.assert_array_equal(z.numpy(), x.numpy() * 2 + 1)
    assert "axpy" in mod and "neg" in mod and sorted(mod.function_names) == ["axpy", "neg"]
    with pytest.raises(RelayError, match="no function 'nope'"):
        mod["nope"]


@pytest.mark.parametrize("args,pattern", [
    (lambda: (_f32(2, 4), _f32(2, 4)), r"expected 3 arguments"),
    (lambda: (_f32(2, 4), _f32(3, 4), _f32(2, 4)), r"argument 1 \(Y\).*expected 2, got 3.*n=2"),
    (lambda: (_f32(2, 4), _f32(2, 5), _f32(2, 4)), r"axis 1: expected 4, got 5"),
    (lambda: (_f32(2, 4), _f32(2, 4), nd.empty((2, 4), "float64")), r"output 0 \(Z\): dtype float64"),
    (lambda: (_f32(8), _f32(2, 4), _f32(2, 4)), r"rank 1"),
    (lambda: (np.ones((2, 4), "float32"), _f32(2, 4), _f32(2, 4)), r"expected an NDArray"),
])
def test_bad_arguments_raise_input_error(mod, args, pattern):
    with pytest.raises(InputError, match=pattern):
        mod["axpy"](*args())


def test_sources(mod):
    ll = mod.get_source("ll")
    assert "define void @rb_axpy(ptr" in ll and "noalias" in ll
    asm = mod.get_source("asm")
    assert "rb_axpy:" in asm
    with pytest.raises(RelayError, match="unknown format"):
        mod.get_source("cuda")


def test_time_evaluator(mod):
    res = mod.time_evaluator("neg", number=3, repeat=2)(nd.array(np.arange(3, dtype="int32")),
                                                        nd.empty((3,), "int32"))
    assert len(res.results) == 2 and res.mean > 0


def test_export_and_load_in_subprocess(mod, tmp_path):
    path = str(tmp_path / "kernels.so")
    mod.export_library(path)
    script = textwrap.dedent(f"""
        import numpy as np
        from relay_backend.runtime import load_module, nd
        from relay_backend.errors import InputError
        lib = load_module({path!r})
        x = nd.array(np.arange(12, dtype="float32").reshape(3, 4))
        z = nd.empty((3, 4), "float32")
        lib["axpy"](x, nd.array(np.full((3, 4), 0.5, "float32")), z)
        assert np.array_equal(z.numpy(), x.numpy() * 2 + 0.5), z.numpy()
        b = nd.empty((3,), "int32")
        lib["neg"](nd.array(np.array([1, -2, 3], "int32")), b)
        assert b.numpy().tolist() == [-1, 2, -3]
        try:
            lib["axpy"](x, x)
        except InputError as err:
            print("OK", err)
    """)
    env = dict(os.environ, PYTHONPATH=os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("OK") and "expected 3 arguments" in proc.stdout


def test_openmp_runtime_outlives_dropped_libraries(mod, tmp_path):
    """A loaded library with parallel loops links libgomp; dropping it (dlclose) must not unload
    libgomp while its worker threads live: that crashed the process (SIGSEGV) at exit."""
    path = str(tmp_path / "kernels.so")
    mod.export_library(path)
    script = textwrap.dedent(f"""
        import gc
        import numpy as np
        from relay_backend.runtime import load_module, nd
        lib = load_module({path!r})
        x = nd.array(np.ones((3, 4), "float32"))
        z = nd.empty((3, 4), "float32")
        lib["axpy"](x, x, z)
        del lib
        gc.collect()
        print(any("libgomp" in line for line in open("/proc/self/maps")))
    """)
    env = dict(os.environ, PYTHONPATH=os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    if "gomp" in " ".join(open(path, "rb").read().decode("latin-1").split("\0")):
        assert proc.stdout.strip() == "True"


def test_loaded_module_reexports(mod, tmp_path):
    first = str(tmp_path / "a.so")
    mod.export_library(first)
    lib = load_module(first)
    assert lib.function_info("axpy").shape_vars == ("n",)
    second = lib.export_library(str(tmp_path / "b.so"))
    out = nd.empty((3,), "int32")
    load_module(second)["neg"](nd.array(np.array([4, 5, 6], "int32")), out)
    assert out.numpy().tolist() == [-4, -5, -6]


def test_corrupt_and_foreign_files_raise(mod, tmp_path):
    path = tmp_path / "k.so"
    mod.export_library(str(path))
    data = path.read_bytes()

    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF
    (tmp_path / "flip.so").write_bytes(bytes(flipped))
    with pytest.raises(SerializationError, match="checksum"):
        load_module(str(tmp_path / "flip.so"))

    (tmp_path / "trunc.so").write_bytes(data[: len(data) // 2])
    with pytest.raises(SerializationError, match="not a relay_backend library"):
        load_module(str(tmp_path / "trunc.so"))

    (tmp_path / "text.so").write_text("hello")
    with pytest.raises(SerializationError):
        load_module(str(tmp_path / "text.so"))

    with pytest.raises(SerializationError, match="cannot read"):
        load_module(str(tmp_path / "missing.so"))


def test_overwritten_library_is_reloaded(mod, tmp_path):
    """Loading a path again after re-exporting other kernels there gives the new kernels."""
    path = str(tmp_path / "same.so")
    mod.export_library(path)
    assert sorted(load_module(path).function_names) == ["axpy", "neg"]
    A, B, k = tir.Buffer("A", (3,), "int32"), tir.Buffer("B", (3,), "int32"), tir.Var("k")
    twice = tir.PrimFunc([A, B], tir.For(k, 0, 3, "serial", tir.BufferStore(B, A[k] * 2, (k,))), "neg")
    build(twice).export_library(path)
    out = nd.empty((3,), "int32")
    load_module(path)["neg"](nd.array(np.array([1, 2, 3], "int32")), out)
    assert out.numpy().tolist() == [2, 4, 6]


def _aligned(shape, dtype="float32", fill=1.0):
    from relay_backend.runtime.ndarray import aligned_empty
    arr = aligned_empty(shape, dtype)
    arr[...] = fill
    return arr


def test_output_overlapping_an_input_is_rejected(mod):
    from relay_backend.runtime.ndarray import NDArray
    x = _f32(2, 4)
    with pytest.raises(InputError, match=r"output 0 \(Z\) overlaps the memory of argument 0 "
                                         r"\(X\).*must not alias"):
        mod["axpy"](x, _f32(2, 4), x)                  # the same array as input and output
    backing = _aligned((16, 4))                        # 64-byte aligned views into one block
    xs = NDArray(backing[0:8], x.device)               # bytes [0, 128)
    zs = NDArray(backing[8:16], x.device)              # bytes [128, 256): adjacent, disjoint
    mod["axpy"](xs, _f32(8, 4), zs)
    np.testing.assert_array_equal(zs.numpy(), 3.0)
    partial = NDArray(backing[4:12], x.device)         # bytes [64, 192): overlaps xs
    with pytest.raises(InputError, match=r"output 0 \(Z\) overlaps the memory of argument 0"):
        mod["axpy"](xs, _f32(8, 4), partial)
    with pytest.raises(InputError, match=r"output 0 \(Z\) overlaps the memory of argument 1"):
        mod["axpy"](_f32(8, 4), partial, zs)
    y = _f32(2, 4)                                     # two inputs may share memory
    z = nd.empty((2, 4), "float32")
    mod["axpy"](y, y, z)
    np.testing.assert_array_equal(z.numpy(), 3.0)
    a = nd.array(np.arange(3, dtype="int32"))          # no num_outputs: the last is an output
    with pytest.raises(InputError, match=r"neg: argument 1 \(B\) overlaps the memory of "
                                         r"argument 0 \(A\)"):
        mod["neg"](a, a)


def test_output_overlap_is_checked_by_prepare_too(mod):
    x = _f32(2, 4)
    with pytest.raises(InputError, match="overlaps the memory"):
        mod["axpy"].prepare(x, _f32(2, 4), x)


def test_strided_or_misaligned_backing_array_is_rejected(mod):
    from relay_backend.runtime.ndarray import NDArray
    dev = _f32(1).device
    strided = NDArray(_aligned((4, 8))[:, ::2], dev)    # shape (4, 4), not C-contiguous
    with pytest.raises(InputError, match=r"argument 0 \(X\): data is a strided view"):
        mod["axpy"](NDArray(_aligned((4, 8))[:2, ::2], dev), _f32(2, 4), nd.empty((2, 4)))
    with pytest.raises(InputError, match=r"output 0 \(Z\): data is a strided view"):
        mod["axpy"](_f32(4, 4), _f32(4, 4), strided)
    transposed = NDArray(_aligned((4, 2)).T, dev)      # (2, 4) Fortran order
    with pytest.raises(InputError, match=r"argument 1 \(Y\): data is a strided view"):
        mod["axpy"](_f32(2, 4), transposed, nd.empty((2, 4)))
    raw = _aligned((40,), "uint8", 0)
    misaligned = NDArray(raw[1:33].view("float32").reshape(2, 4), dev)   # 1-byte offset
    assert not misaligned.view_numpy().flags.aligned
    with pytest.raises(InputError, match=r"argument 0 \(X\): data is a misaligned view"):
        mod["axpy"](misaligned, _f32(2, 4), nd.empty((2, 4)))
