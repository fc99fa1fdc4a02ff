"""The kernel cache key's compiler digest covers the code generator: every part of the package
that a module in CODEGEN_SOURCES imports is itself in CODEGEN_SOURCES, so editing any code the
generated object depends on makes old entries stale instead of serving them. Kernels the key
cannot see whole, and cross-compiled kernels, are compiled and never cached."""
import pathlib

import numpy as np

from relay_backend import cache, nd, te
from relay_backend.codegen import build, llvm_cache, llvm_thread_pool
from tests.meta.test_layering import PKG, _imported_modules


def _files(part: str):
    path = PKG / part
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def test_codegen_sources_are_closed_under_imports():
    covered = {part.removesuffix(".py") for part in llvm_cache.CODEGEN_SOURCES}
    missing = set()
    for part in llvm_cache.CODEGEN_SOURCES:
        for path in _files(part):
            missing |= {(str(pathlib.Path(path).relative_to(PKG)), parts[0])
                        for parts, _ in _imported_modules(path) if parts and parts[0] not in covered}
    assert not missing, f"imported by codegen but not in CODEGEN_SOURCES: {sorted(missing)}"


def test_a_kernel_the_digest_cannot_see_is_compiled_and_never_cached(cache_dir):
    llvm_thread_pool.ensure_loaded()      # the process's first kernels load (and cache) the pool
    entries = cache.info().entries
    for _ in range(2):
        a = te.placeholder((8,), "float32", name="A")
        b = te.compute(a.shape, lambda i: a[i] * 3.0, name="B")
        func = te.lower(te.create_schedule([b]), [a, b], name="triple")
        func.attrs["opaque"] = object()
        module = build(func)
        assert module.build_stats == {"kernels": 1, "compiled": 1, "from_cache": 0}
        out = nd.empty((8,), "float32")
        module["triple"](nd.array(np.arange(8, dtype="float32")), out)
        np.testing.assert_array_equal(out.numpy(), np.arange(8) * 3.0)
    assert cache.info().entries == entries


def test_cross_compiled_kernels_bypass_the_disk_cache(cache_dir):
    """Code this host cannot run is compiled every time and never stored (only kernels the host
    can load are shared); the same kernel for the host is stored, then served."""
    def kernel():
        a = te.placeholder((8,), "float32", name="A")
        b = te.compute(a.shape, lambda i: a[i] * 5.0, name="B")
        return te.lower(te.create_schedule([b]), [a, b], name="times_five")

    llvm_thread_pool.ensure_loaded()      # as above: the pool's own entry is not a kernel's
    entries = cache.info().entries
    for _ in range(2):
        foreign = build(kernel(), "llvm -mtriple=aarch64-linux-gnu")
        assert not foreign.runnable
        assert foreign.build_stats == {"kernels": 1, "compiled": 1, "from_cache": 0}
    assert cache.info().entries == entries
    assert build(kernel()).build_stats["compiled"] == 1
    host = build(kernel())
    assert host.build_stats == {"kernels": 1, "compiled": 0, "from_cache": 1}
    out = nd.empty((8,), "float32")
    host["times_five"](nd.array(np.arange(8, dtype="float32")), out)
    np.testing.assert_array_equal(out.numpy(), np.arange(8) * 5.0)
