"""The on-disk kernel cache as the TECompiler sees it, when its directory or entries are not what
it wrote: RB_CACHE_DIR naming a file raises a CacheError naming the path; an entry that is a
directory is left alone (a warning names it) and the kernel is built; a valid entry filed under
another kernel's key (copied by hand, or left by another build) is detected by the key stored
inside every entry and rebuilt, never served; a corrupt entry is rebuilt and replaced. Kernels
are checked against numpy."""
import os
import shutil

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import cache, config, nd
from relay_backend.codegen import llvm_cache
from relay_backend.errors import CacheError, RelayError
from relay_backend.te_compiler.compiler import TECompiler

pytestmark = pytest.mark.compile
X = np.linspace(-1.0, 1.0, 8, dtype="float32")


def _add(constant):
    """A primitive x + constant: every constant gives the same kernel name and signature."""
    x = relay.var("x", shape=(8,))
    return relay.Function([x], relay.add(x, relay.const(constant, "float32"))).with_attr("Primitive", 1)


def _run(kernel):
    out = nd.empty((8,), "float32")
    kernel(nd.array(X), out)
    return out.numpy()


def _entry_path(func):
    """The cache file of `func`'s kernel, as TECompiler.jit lowers and compiles it."""
    cached = TECompiler().lower(func, "llvm", mod_name=None)
    (prim,) = cached.funcs.values()
    return cache.entry_path(llvm_cache.CACHE_KIND, llvm_cache.target_kernel_key(prim, "llvm"))


def test_cache_dir_that_is_a_file_raises_naming_the_path(tmp_path, monkeypatch):
    not_a_dir = tmp_path / "cache-file"
    not_a_dir.write_text("I am a file")
    monkeypatch.setenv("RB_CACHE_DIR", str(not_a_dir))
    monkeypatch.delenv("RB_NO_DISK_CACHE", raising=False)
    config.reload()
    try:
        with pytest.raises(CacheError, match=rf"{not_a_dir}.*is a file, not a directory.*RB_NO_DISK_CACHE=1") as info:
            TECompiler().jit(_add(1.0), "llvm")
        assert isinstance(info.value, RelayError)
    finally:
        monkeypatch.undo()
        config.reload()


def test_cache_entry_that_is_a_directory_is_left_alone_and_the_kernel_built(cache_dir):
    func = _add(3.0)
    path = _entry_path(func)
    os.makedirs(os.path.join(path, "keep-me"))
    with pytest.warns(RuntimeWarning, match=rf"{path}.*is a directory.*remove it"):
        kernel = TECompiler().jit(func, "llvm")
    np.testing.assert_allclose(_run(kernel), X + 3.0, rtol=1e-6)
    assert os.path.isdir(os.path.join(path, "keep-me"))           # nothing of the user's deleted


def test_a_valid_entry_under_another_kernels_key_is_rebuilt_not_served(cache_dir):
    one, two = _add(1.0), _add(2.0)
    first = TECompiler()
    np.testing.assert_allclose(_run(first.jit(one, "llvm")), X + 1.0, rtol=1e-6)
    assert first.stats["llvm_builds"] == 1
    wrong = _entry_path(two)
    shutil.copyfile(_entry_path(one), wrong)                     # x + 1's kernel filed under x + 2
    second = TECompiler()
    np.testing.assert_allclose(_run(second.jit(two, "llvm")), X + 2.0, rtol=1e-6)   # never X + 1
    # lowered (perhaps recalled first from the Relay-level record _entry_path(two) left, then
    # lowered since its object code on disk proved unusable) and compiled
    assert {k: second.stats[k] for k in ("lowered", "llvm_builds", "disk_hits")} == \
        {"lowered": 1, "llvm_builds": 1, "disk_hits": 0}
    third = TECompiler()                                         # the entry was replaced: a hit now
    np.testing.assert_allclose(_run(third.jit(two, "llvm")), X + 2.0, rtol=1e-6)
    assert third.stats["disk_hits"] == 1 and third.stats["llvm_builds"] == 0


def test_a_corrupt_entry_is_replaced(cache_dir):
    func = _add(4.0)
    TECompiler().jit(func, "llvm")
    path = _entry_path(func)
    with open(path, "r+b") as f:
        f.seek(100)
        f.write(b"\xff\xff\xff\xff")
    compiler = TECompiler()
    np.testing.assert_allclose(_run(compiler.jit(func, "llvm")), X + 4.0, rtol=1e-6)
    assert compiler.stats["llvm_builds"] == 1
    again = TECompiler()
    np.testing.assert_allclose(_run(again.jit(func, "llvm")), X + 4.0, rtol=1e-6)
    assert again.stats["disk_hits"] == 1
