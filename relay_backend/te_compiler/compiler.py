"""TECompiler: lowers primitive functions once per (function, target) and compiles them.

    compiler = relay_backend.backend.te_compiler.get()
    cached = compiler.lower(prim_func, "llvm")        # CachedFunc: name, te tensors, PrimFuncs
    kernel = compiler.jit(prim_func, "llvm")          # native callable: inputs then outputs
    kernel(x_nd, y_nd, out_nd)

Equal functions (up to alpha-renaming) share one cache entry; `items()` shows use counts.
Compiled kernels are also kept on disk (relay_backend/cache.py, through codegen's kernel
cache) so another process skips LLVM; `stats` counts builds that ran LLVM and builds served
entirely from disk.

A kernel's schedule depends on the tuning configs the dispatch context gave its tunable
implementations (autotvm): the lowering records every (workload, config) it was answered, and
a cached kernel is reused only while the current contexts answer the same (otherwise the
function is lowered again, kept as another variant of the same key). The configs also enter
the on-disk key: the PrimFunc carries their digest as its "autotvm_configs" attribute, which
the content digest (tir/content_hash.py) of the disk cache's key covers.
"""
import hashlib
import threading
import time
import weakref

from .. import cache, codegen, diagnostics, progress
from ..autotvm.env import note_untuned, recording_untuned
from ..autotvm.task.dispatcher import queries_still_hold, recording_queries
from ..codegen import llvm_ahead
from ..docstrings import shared_parameters
from ..errors import CompileError
from ..ir.expr import Function, GlobalVar
from ..runtime.module import Module
from ..target import as_target
from . import disk_records
from .cache import CachedFunc, CCacheKey, CCacheValue
from .external import lower_external
from .lower import _to_primfunc, lower_to_te
from .naming import NameSupply, kernel_name

_TIR_LOG = diagnostics.get_logger("tir")
# the PrimFunc attribute holding tuning_digest() of a kernel's tuning configs
TUNING_ATTR = "autotvm_configs"

# the parameters of lower and jit (shared_parameters completes their docstrings)
LOOKUP_PARAMETERS = {
    "func_or_key": ("Function or CCacheKey", "A primitive (fused) Relay function, or the cache key of "
                                             "one, whose own target then wins over `target`."),
    "target": ("str or Target", "What the kernel is compiled for."),
}


class TECompiler:
    """The cache of lowered and compiled primitive functions."""

    def __init__(self):
        self._cache = {}           # StructuralKey -> [(CCacheKey, CCacheValue)], one per tuning variant
        self._names = {}           # mod_name -> NameSupply
        self._listeners = []       # fn(event, name) for progress displays
        self._libraries = {}       # (target, ids of CachedFuncs) -> (CachedFuncs, weakref to Module)
        self._libraries_lock = threading.Lock()
        self._last_library = None  # the last Module built stays cached while nothing uses it
        # lowered: kernels lowered to tir; recalled: taken from a disk record instead (not lowered)
        self.stats = {"lowered": 0, "recalled": 0, "llvm_builds": 0, "disk_hits": 0}
        self._unwritten_records = []   # disk_records entries, written with the next build

    def add_listener(self, fn) -> None:
        """Register a function told about every kernel lowered (a progress bar hooks in here).

        Parameters
        ----------
        fn : callable
            Called as fn(event, kernel_name), with event "lowered".
        """
        self._listeners.append(fn)

    def remove_listener(self, fn) -> None:
        """Unregister a function add_listener registered.

        Parameters
        ----------
        fn : callable
            The same function object.
        """
        self._listeners.remove(fn)

    # -- lowering -------------------------------------------------------------------------------
    def _key(self, func_or_key, target) -> CCacheKey:
        if isinstance(func_or_key, CCacheKey):
            return func_or_key
        if not isinstance(func_or_key, Function):
            raise CompileError(f"TECompiler expects a primitive relay Function or a CCacheKey, got "
                               f"{type(func_or_key).__name__}")
        return CCacheKey(func_or_key, as_target(target))

    def _lookup(self, key: CCacheKey, mod_name) -> CCacheValue:
        variants = self._cache.setdefault(key.structural_key, [])
        for _, value in variants:
            cached = value.cached_func
            if queries_still_hold(key.target, cached.tuning_queries):
                for target, workload in cached.untuned:     # this build warns as a fresh one would
                    note_untuned(target, workload)
                return value
        value = CCacheValue(self._lower(key, mod_name))
        variants.append((key, value))
        return value

    def _lower(self, key: CCacheKey, mod_name) -> CachedFunc:
        supply = self._names.setdefault(mod_name, NameSupply())
        name = kernel_name(key.source_func, mod_name, supply)
        compiler = key.source_func.attrs.get("Compiler")
        if compiler is not None:
            return lower_external(key, str(compiler), name)
        record_key = disk_records.record_key(key.source_func, key.target)
        record = disk_records.load(record_key) if record_key is not None else None
        if record is not None and queries_still_hold(key.target, record.queries):
            return self._recalled(key, name, record)
        cached = self._lower_now(key, name)
        if record_key is not None:
            prim = cached.funcs[name]
            made = disk_records.make(record_key, prim, cached.implementations, cached.tuning_queries,
                                     [workload for _, workload in cached.untuned])
            if made is not None:
                cached.kernel = made[0].kernel(name, lambda: prim)
                with self._libraries_lock:
                    self._unwritten_records.append(made[1])
        return cached

    def _write_records(self) -> None:
        """Store the records of the kernels lowered since the last build, in one batch."""
        with self._libraries_lock:
            entries, self._unwritten_records = self._unwritten_records, []
        if entries:
            cache.store_many(entries)

    def _recalled(self, key: CCacheKey, name: str, record) -> CachedFunc:
        """The CachedFunc of a disk record: deferred, lowered only if something asks for its tir."""
        for workload in record.untuned:          # this build warns as the lowering would
            note_untuned(key.target, workload)
        self.stats["recalled"] += 1
        self._announce(name)
        cached = CachedFunc.deferred(
            key.target, name, lambda: self._lower_now(key, name),
            implementations=list(record.implementations), tuning_queries=record.queries,
            untuned=tuple((key.target, workload) for workload in record.untuned))
        cached.kernel = record.kernel(name, lambda: next(iter(cached.funcs.values())))
        return cached

    def _announce(self, name: str) -> None:
        progress.advance("lowered")
        for fn in self._listeners:
            fn("lowered", name)

    def _lower_now(self, key: CCacheKey, name: str) -> CachedFunc:
        """Lower the function for real: te, schedule, tir."""
        start = time.perf_counter()
        with recording_queries() as queries, recording_untuned() as untuned:
            lowered = lower_to_te(key.source_func, key.target)
            prim = _to_primfunc(lowered, key.target, name, key.source_func)
        queries = tuple(dict.fromkeys(queries))
        if queries:                     # the configs enter the disk key with the PrimFunc's content
            prim.attrs[TUNING_ATTR] = tuning_digest(queries)
        self.stats["lowered"] += 1
        self._announce(name)
        if diagnostics.wants(3) or diagnostics.dumping():
            from ..tir.printer import func_to_str
            text = func_to_str(prim)
            _TIR_LOG.debug("TIR of %s (%.1f ms):\n%s", name, (time.perf_counter() - start) * 1e3, text)
            diagnostics.dump("tir", name, text)
        return CachedFunc(key.target, name, GlobalVar(name), lowered.inputs, lowered.outputs,
                          {name: prim}, lowered.implementations, queries, tuple(dict.fromkeys(untuned)))

    @shared_parameters(LOOKUP_PARAMETERS)
    def lower(self, func_or_key, target="llvm", mod_name="default") -> CachedFunc:
        """The lowered form of a primitive function (tvm's TECompiler.lower): lowered once per
        structurally equal function and target, then taken from the cache.

        Parameters
        ----------
        mod_name : str, optional
            The prefix of the kernel's name, as the module being built names its kernels. Defaults
            to "default".

        Returns
        -------
        cached : CachedFunc
            The kernel's name, te inputs and outputs and tir PrimFuncs.
        """
        value = self._lookup(self._key(func_or_key, target), mod_name)
        value.use_count += 1
        return value.cached_func

    # -- compiling ------------------------------------------------------------------------------
    def _compile(self, key: CCacheKey, value: CCacheValue):
        if value.module is not None:
            return value.module
        cached = value.cached_func
        if cached.external_module is not None:
            value.module = cached.external_module
        else:
            value.module = self._codegen(cached.units(), key.target)
        return value.module

    def _codegen(self, funcs, target):
        """codegen.build, counting whether LLVM ran or the disk cache served every kernel; then
        the records of the kernels lowered so far are written."""
        module = codegen.build(funcs, target=target)
        self._write_records()
        stats = module.build_stats
        if stats.get("compiled"):
            self.stats["llvm_builds"] += 1
        elif stats.get("from_cache"):
            self.stats["disk_hits"] += 1
        return module

    @shared_parameters(LOOKUP_PARAMETERS)
    def jit(self, func_or_key, target="llvm"):
        """A native callable for a primitive function, compiled once (tvm's TECompiler.jit).

        Returns
        -------
        kernel : runtime.Function
            Call it with the input NDArrays, then the output NDArrays it writes into.
        """
        key = self._key(func_or_key, target)
        value = self._lookup(key, None)
        value.use_count += 1
        module = self._compile(key, value)
        return module[value.cached_func.func_name]

    def build(self, cached_funcs, target="llvm"):
        """One runtime Module holding the kernels of several lowered functions (used by executors).

        The same kernels (a model built again) give the same Module while it is in use, or when it
        was the last one built: kernels keep no state, so sharing is safe, and a rebuild then
        costs no LLVM run (nor a disk-cache read). Each LLVM optimization run leaks ~50 KB inside
        llvmlite (its pass builders' instrumentation callbacks are never freed), so building one
        model in a loop without the disk cache would otherwise grow the process without bound.

        Parameters
        ----------
        cached_funcs : iterable of CachedFunc
            What lower returned for each kernel; those of external codegens are imported into the
            Module.
        target : str or Target, optional
            What the kernels are compiled for. Defaults to "llvm".

        Returns
        -------
        module : runtime.Module
            The kernels, by name.
        """
        cached_funcs = tuple(cached_funcs)
        target = as_target(target)
        key = (str(target), tuple(id(cf) for cf in cached_funcs))
        with self._libraries_lock:
            kept = self._libraries.get(key)
            module = kept[1]() if kept is not None else None
        if module is not None:
            return module
        funcs, externals = {}, []
        for cf in cached_funcs:
            if cf.external_module is not None:
                externals.append(cf.external_module)
            funcs.update(cf.units())
        module = self._codegen(funcs, target) if funcs or not externals else Module([], {})
        for ext in dict.fromkeys(externals):              # imported once each, in order
            module.import_module(ext)
        with self._libraries_lock:
            self._libraries = {k: v for k, v in self._libraries.items() if v[1]() is not None}
            # the CachedFuncs are kept so their ids cannot be reused by other functions
            self._libraries[key] = (cached_funcs, weakref.ref(module))
            self._last_library = module
        return module

    def module_for(self, cached: CachedFunc):
        """The compiled Module holding one lowered function's kernel (compiled now if needed).

        Parameters
        ----------
        cached : CachedFunc
            What lower returned; a CompileError when it is not in this compiler's cache.

        Returns
        -------
        module : runtime.Module
            The Module.
        """
        for key, value in self.items():
            if value.cached_func is cached:
                return self._compile(key, value)
        raise CompileError(f"{cached.func_name} is not in this TECompiler's cache")

    # -- inspection -----------------------------------------------------------------------------
    def items(self) -> list:
        """(CCacheKey, CCacheValue) pairs of every cached function (each tuning variant)."""
        return [pair for variants in self._cache.values() for pair in variants]

    def clear(self) -> None:
        """Forget every lowered function, kernel name and built Module (tvm's TECompiler.clear); the
        disk cache is kept.
        """
        self._cache.clear()
        self._names.clear()
        with self._libraries_lock:
            self._libraries.clear()
            self._last_library = None


def tuning_digest(queries) -> str:
    """A digest of the (workload, config fingerprint) pairs a kernel's lowering was answered.

    Parameters
    ----------
    queries : iterable of tuple
        What recording_queries collected while the kernel was lowered.

    Returns
    -------
    digest : str
        32 hex digits, the same in every process for the same pairs (in any order).
    """
    return hashlib.sha256(repr(sorted(map(repr, queries))).encode()).hexdigest()[:32]


_GLOBAL = TECompiler()


def hand_over_early(cached) -> None:
    """Give a kernel this build has just lowered (a CachedFunc, under the name it is compiled
    by) to codegen's compile-ahead session (codegen/llvm_ahead.py): within relay.build and
    vm.compile its object code is compiled in the pool while the rest of the model is lowered.
    Callers hand over only kernels lowered by this build: one taken from this compiler's memory
    may be served by a module built before, without any compile."""
    if cached.external_module is None:
        llvm_ahead.submit(cached.units().values(), cached.target)


def get() -> TECompiler:
    """The process-wide TECompiler (tvm.relay.backend.te_compiler.get())."""
    return _GLOBAL
