"""LLVM kernels through the on-disk cache (relay_backend/cache.py): look each kernel's object
code up by its key, compile the missing ones (llvm_pool: in parallel), store them.

The key of a kernel says everything its object code is built from:

    llvm-kernel | content digest of the PrimFunc under a neutral name (tir/content_hash.py) |
    the kernel's symbol | the Target string | triple, CPU name and feature string LLVM compiles
    for (the host's: -mcpu=native) | opt level | whether OpenMP is linked | whether half
    conversions are emulated | compiler digest

and the compiler digest = the package version, the llvmlite and LLVM versions, and a SHA-256
of the sources the code generator is made of (CODEGEN_SOURCES; a test checks it covers every
module codegen imports). So a changed codegen, another LLVM, another CPU or any change to the
lowered kernel (a schedule, a user-registered implementation, a tuning record) never loads a
stale entry, while the same kernel built by any process for the same machine is compiled once.
Entries hold the object file and the optimised IR (zlib), so a module loaded from the cache
still answers get_source("ll") / ("asm") and exports like a freshly compiled one.

The content digest leaves the function's name out (the symbol is a key part of its own), so a
caller that remembers a kernel's content digest (the TECompiler's Relay-level disk records,
te_compiler/disk_records.py) finds its object code under any name without the PrimFunc: a
`KernelRecord` stands for a kernel known by (signature, content digest), and produces its
PrimFunc (lowering it again) only when the object code is not on disk.
"""
import functools
import hashlib
import pathlib
import zlib
from dataclasses import dataclass
from typing import Callable

from .. import cache, progress
from ..config import VERSION
from ..target import as_target
from ..tir.content_hash import UnhashableNode, prim_func_digest
from . import llvm_pool, llvm_target

CACHE_KIND = "llvm"
KEY_FORMAT = "llvm-kernel-v2"
NEUTRAL_NAME = "kernel"      # the name a content digest sees in place of the kernel's own
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


@dataclass(frozen=True)
class KernelRecord:
    """A kernel known by its boundary signature and content digest rather than by its tir:
    `info` (runtime FunctionInfo, under the kernel's name), `content` (kernel_content_digest
    of its PrimFunc) and `prim_func()`, which produces the PrimFunc when its object code must
    be compiled after all (the caller lowers it again)."""

    info: object
    content: str
    prim_func: Callable

    @property
    def name(self) -> str:
        return self.info.name


def sources_digest(parts) -> str:
    """Package version, llvmlite / LLVM versions and a SHA-256 of the sources `parts` (paths
    relative to relay_backend/: files or folders) are made of."""
    import llvmlite
    import llvmlite.binding as llvm
    root = pathlib.Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{VERSION}|llvmlite {llvmlite.__version__}|LLVM "
                            f"{'.'.join(map(str, llvm.llvm_version_info))}".encode())
    for part in parts:
        path = root / part
        for source in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(source.relative_to(root)).encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:24]


@functools.lru_cache(maxsize=None)
def compiler_digest() -> str:
    """sources_digest of CODEGEN_SOURCES: what a kernel's object code is made by."""
    return sources_digest(CODEGEN_SOURCES)


def kernel_content_digest(func):
    """The content digest of a PrimFunc as if it were named NEUTRAL_NAME (equal for one kernel
    under any name), or None when it holds something the digest cannot see."""
    neutral = func.__class__(func.params, func.body, NEUTRAL_NAME,
                             {**func.attrs, "global_symbol": NEUTRAL_NAME})
    try:
        return prim_func_digest(neutral)
    except UnhashableNode:
        return None


def content_key(content: str, symbol: str, spec, target_text: str, has_openmp: bool) -> str:
    """The cache key text of the kernel with content digest `content` named `symbol`,
    compiled for `spec`."""
    return "|".join([KEY_FORMAT, content, symbol, target_text, spec.triple, spec.cpu, spec.tuning_cpu,
                     spec.features, f"O{spec.opt_level}", f"openmp={int(has_openmp)}",
                     f"soft-half={int(llvm_target.host_lacks_half_conversions())}", compiler_digest()])


def kernel_key(func, spec, target_text: str, has_openmp: bool):
    """The cache key text of one PrimFunc compiled for `spec`, or None when the function holds
    something its content digest cannot see (it is then compiled, never cached)."""
    content = kernel_content_digest(func)
    if content is None:
        return None
    return content_key(content, str(func.attrs.get("global_symbol", func.name)), spec, target_text,
                       has_openmp)


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


def unit_key(item, spec, target_text: str, has_openmp: bool):
    """The cache key of a PrimFunc (kernel_key) or of a KernelRecord (content_key), or None."""
    if isinstance(item, KernelRecord):
        return content_key(item.content, item.name, spec, target_text, has_openmp)
    return kernel_key(item, spec, target_text, has_openmp)


def compile_unit(item, ir_of) -> tuple:
    """The (IR text, symbol) llvm_pool compiles for a PrimFunc or KernelRecord (whose
    prim_func() lowers it again); `ir_of(prim_func)` makes the IR text."""
    prim = item.prim_func() if isinstance(item, KernelRecord) else item
    return ir_of(prim), str(prim.attrs.get("global_symbol", prim.name))


def compile_kernels(funcs, spec, target_text: str, has_openmp: bool, ir_of, ahead=None) -> list:
    """[CompiledKernel] for `funcs` (PrimFuncs or KernelRecords), in order: from the disk cache
    where an entry exists, else from `ahead.take(key)` ((object, IR) of a kernel compiled while
    the model was still being lowered: llvm_ahead.py, or None), else compiled from
    `ahead.made_unit(key)` (its IR, made then) or `ir_of(func)` (the LLVM IR text of one
    PrimFunc; a KernelRecord's prim_func() is asked for it only then); compiled ones are
    stored. Code this process cannot run (cross-compiled: `spec.foreign`) bypasses the disk
    cache: only kernels the host can load and check are shared with other processes."""
    funcs = list(funcs)
    if spec.runs_here:
        keys = [unit_key(f, spec, target_text, has_openmp) for f in funcs]
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
    ready = {}
    if ahead is not None:
        for i in missing:
            done = ahead.take(keys[i]) if keys[i] is not None else None
            if done is not None:
                ready[i] = done
                progress.advance("compiled")
    to_compile = [i for i in missing if i not in ready]

    def unit_at(j: int) -> tuple:
        i = to_compile[j]
        made = ahead.made_unit(keys[i]) if ahead is not None and keys[i] is not None else None
        return made if made is not None else compile_unit(funcs[i], ir_of)
    # each kernel's IR goes to the compile pool as soon as it is generated (llvm_pool)
    compiled = llvm_pool.compile_lazily(len(to_compile), unit_at, spec,
                                        on_done=lambda _: progress.advance("compiled"))
    ready.update(zip(to_compile, compiled))
    entries = []
    for i in missing:
        object_code, ir = ready[i]
        results[i] = CompiledKernel(object_code, ir)
        if keys[i] is not None:
            entries.append((CACHE_KIND, keys[i], {"object": object_code,
                                                  "ll": zlib.compress(ir.encode(), 6)}))
    if entries:
        cache.store_many(entries)
    return results


def support_object(what: str, ir_text: str, spec) -> bytes:
    """The object code of one of codegen's own support modules (the thread pool, the
    parallel-loop shim) for `spec`: from the disk cache (keyed by the IR text itself) when
    present, else compiled and stored, so a second process compiles nothing either. Not
    counted by llvm_target.compile_count(), which counts kernels."""
    key = "|".join([KEY_FORMAT, "support", what, hashlib.sha256(ir_text.encode()).hexdigest(),
                    spec.triple, spec.cpu, spec.tuning_cpu, spec.features, f"O{spec.opt_level}",
                    compiler_digest()])
    cacheable = spec.runs_here
    parts = cache.load(CACHE_KIND, key) if cacheable else None
    if parts is not None and isinstance(parts.get("object"), bytes):
        return parts["object"]
    object_code, _ = llvm_target.compile_object(ir_text, spec, what=what, counted=False)
    if cacheable:
        cache.store(CACHE_KIND, key, {"object": object_code})
    return object_code


__all__ = ["CompiledKernel", "support_object", "KernelRecord", "compile_kernels", "compile_unit", "compiler_digest",
           "content_key", "kernel_content_digest", "kernel_key", "sources_digest", "target_kernel_key", "unit_key",
           "CODEGEN_SOURCES"]
