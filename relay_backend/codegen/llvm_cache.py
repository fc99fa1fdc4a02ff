"""LLVM kernels through the on-disk cache (relay_backend/cache.py): look each kernel's object
code up by its key, compile the missing ones (llvm_pool: in parallel), store them.

The key of a kernel says everything its object code is built from:

    llvm-kernel | content digest of the PrimFunc (tir/content_hash.py) | the Target string |
    triple, CPU name and feature string LLVM compiles for (the host's: -mcpu=native) |
    opt level | whether OpenMP is linked | whether half conversions are emulated | compiler digest

and the compiler digest = the package version, the llvmlite and LLVM versions, and a SHA-256
of the sources the code generator is made of (CODEGEN_SOURCES; a test checks it covers every
module codegen imports). So a changed codegen, another LLVM, another CPU or any change to the
lowered kernel (a schedule, a user-registered implementation, a tuning record) never loads a
stale entry, while the same kernel built by any process for the same machine is compiled once.
Entries hold the object file and the optimised IR (zlib), so a module loaded from the cache
still answers get_source("ll") / ("asm") and exports like a freshly compiled one.
"""
import functools
import hashlib
import pathlib
import zlib
from dataclasses import dataclass

from .. import cache, progress
from ..config import VERSION
from ..target import as_target
from ..tir.content_hash import UnhashableNode, prim_func_digest
from . import llvm_pool, llvm_target

CACHE_KIND = "llvm"
KEY_FORMAT = "llvm-kernel-v1"
# the parts of the package (relative to relay_backend/) a kernel's object code depends on
CODEGEN_SOURCES = ("codegen", "tir", "runtime", "target.py", "config.py", "errors.py",
                   "diagnostics.py", "cache.py", "progress.py", "docstrings.py")


@dataclass
class CompiledKernel:
    """One kernel's relocatable object code and optimised LLVM IR; `from_cache` says whether
    they were loaded from disk rather than compiled by this build."""

    object_code: bytes
    ir: str
    from_cache: bool = False


@functools.lru_cache(maxsize=None)
def compiler_digest() -> str:
    """Package version, llvmlite / LLVM versions and a digest of CODEGEN_SOURCES."""
    import llvmlite
    import llvmlite.binding as llvm
    root = pathlib.Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{VERSION}|llvmlite {llvmlite.__version__}|LLVM "
                            f"{'.'.join(map(str, llvm.llvm_version_info))}".encode())
    for part in CODEGEN_SOURCES:
        path = root / part
        for source in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(source.relative_to(root)).encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:24]


def kernel_key(func, spec, target_text: str, has_openmp: bool):
    """The cache key text of one PrimFunc compiled for `spec`, or None when the function holds
    something its content digest cannot see (it is then compiled, never cached)."""
    try:
        content = prim_func_digest(func)
    except UnhashableNode:
        return None
    return "|".join([KEY_FORMAT, content, target_text, spec.triple, spec.cpu, spec.features,
                     f"O{spec.opt_level}", f"openmp={int(has_openmp)}",
                     f"soft-half={int(llvm_target.host_lacks_half_conversions())}", compiler_digest()])


def target_kernel_key(func, target="llvm"):
    """kernel_key of `func` as codegen.build(func, target) computes it (tools and tests use it
    to find a kernel's cache entry)."""
    target = as_target(target)
    return kernel_key(func, llvm_target.machine_spec(target), str(target),
                      bool(llvm_target.libgomp_path()))


def _decode(parts):
    try:
        return CompiledKernel(parts["object"], zlib.decompress(parts["ll"]).decode(), True)
    except (KeyError, zlib.error, UnicodeDecodeError):
        return None


def compile_kernels(funcs, spec, target_text: str, has_openmp: bool, ir_of) -> list:
    """[CompiledKernel] for `funcs`, in order: from the disk cache where an entry exists, else
    compiled from `ir_of(func)` (the LLVM IR text of one kernel) and stored. Code this process
    cannot run (cross-compiled: `spec.foreign`) bypasses the disk cache: only kernels the host
    can load and check are shared with other processes."""
    funcs = list(funcs)
    if spec.runs_here:
        keys = [kernel_key(f, spec, target_text, has_openmp) for f in funcs]
    else:
        keys = [None] * len(funcs)
    results = [None] * len(funcs)
    for i, key in enumerate(keys):
        parts = cache.load(CACHE_KIND, key) if key is not None else None
        results[i] = _decode(parts) if parts is not None else None
    missing = [i for i, r in enumerate(results) if r is None]
    hits = len(funcs) - len(missing)
    progress.begin("compiled", total=len(funcs), note=f"{hits} from cache" if hits else "")
    progress.advance("compiled", hits)
    units = [(ir_of(funcs[i]), str(funcs[i].attrs.get("global_symbol", funcs[i].name)))
             for i in missing]
    compiled = llvm_pool.compile_units(units, spec, on_done=lambda _: progress.advance("compiled"))
    entries = []
    for i, (object_code, ir) in zip(missing, compiled):
        results[i] = CompiledKernel(object_code, ir)
        if keys[i] is not None:
            entries.append((CACHE_KIND, keys[i], {"object": object_code,
                                                  "ll": zlib.compress(ir.encode(), 6)}))
    if entries:
        cache.store_many(entries)
    return results


__all__ = ["CompiledKernel", "compile_kernels", "compiler_digest", "kernel_key", "target_kernel_key",
           "CODEGEN_SOURCES"]
