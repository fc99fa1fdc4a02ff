"""Compiling a model's kernels while the rest of it is still being lowered.

A cold build lowers every kernel of the model (schedule, te -> tir: Python, one core) before
codegen compiles any of them, so the compile pool's workers (llvm_pool) sat idle through all
of lowering: DenseNet-121 lowers for 1.7 s while the second core waits. Within
`compiling_ahead(target, ir_of)` (relay.build opens it around its executor's codegen), the
walk over main (te_compiler/lower_main.py) hands each kernel to `submit` as soon as it is
lowered, and the kernel goes to the pool at once:

    submit(units):     for each kernel not on disk and not handed over yet:
                           its cache key (llvm_cache.unit_key), its IR (ir_of), a pool Future
    compile_kernels:   each missing kernel: take(key) -> the Future's (object, IR), else compile

so LLVM runs beside the rest of lowering. The result is the same: a kernel compiles to the
same bytes in a worker or in-process, and compile_kernels still reads the disk cache first
and stores what it took. Nothing goes ahead for a model of fewer than AHEAD_MIN_KERNELS
kernels (they compile in-process without starting a pool, as llvm_pool decides), with one
compile job, for code this process cannot run, or for another target than the session's. A
kernel whose IR cannot be made, or whose compile fails in the pool, is simply not taken:
compile_kernels then meets the same error where it reports it. Kernels handed over but never
asked for (a concatenation the memory planner made free) are dropped when the session ends.
"""
import contextlib
import contextvars
import dataclasses
import gc
import os
import threading

from .. import cache
from ..target import as_target
from . import llvm_cache, llvm_pool, llvm_target

AHEAD_MIN_KERNELS = 8     # a model with fewer kernels compiles as before (in-process when small)

_SESSION = contextvars.ContextVar("relay_backend_llvm_ahead", default=None)
_TOTALS = {"sessions": 0, "submitted": 0, "taken": 0}     # of this process, for stats()
_TOTALS_LOCK = threading.Lock()


@dataclasses.dataclass
class _Session:
    target_text: str
    spec: object
    has_openmp: bool
    ir_of: object
    waiting: list = dataclasses.field(default_factory=list)    # (key, unit) not yet in the pool
    futures: dict = dataclasses.field(default_factory=dict)    # key -> Future
    seen: set = dataclasses.field(default_factory=set)         # keys handed over
    stats: dict = dataclasses.field(default_factory=lambda: {"submitted": 0, "taken": 0})
    closed: bool = False                                         # no pool: stop handing over


@contextlib.contextmanager
def compiling_ahead(target, ir_of):
    """Within: kernels `submit` is given for `target` compile in the pool while lowering goes
    on, and `take` hands their results to compile_kernels.

    Parameters
    ----------
    target : str or Target
        The llvm target the build compiles its kernels for; any other kind makes this a no-op.
    ir_of : callable
        ir_of(prim_func, has_openmp) -> the LLVM IR text codegen compiles for the kernel.

    Yields
    ------
    stats : dict or None
        {"submitted": kernels handed to the pool, "taken": of them, those compile_kernels
        used}, or None when nothing can go ahead here.
    """
    target = as_target(target)
    if target.kind.name != "llvm" or llvm_pool.compile_jobs() < 2 or _SESSION.get() is not None:
        yield None
        return
    spec = llvm_target.machine_spec(target)
    if not spec.runs_here:             # cross-compiled code bypasses the disk cache and its keys
        yield None
        return
    session = _Session(str(target), spec, bool(llvm_target.libgomp_path()), ir_of)
    _count("sessions")
    token = _SESSION.set(session)
    try:
        with llvm_pool.heap_frozen():
            yield session.stats
    finally:
        _SESSION.reset(token)
        for future in session.futures.values():
            future.cancel()


def submit(units, target) -> None:
    """Hand kernels (PrimFuncs or codegen KernelRecords) lowered for `target` to the pool, when a
    session for that target is open and the model has reached AHEAD_MIN_KERNELS kernels."""
    session = _SESSION.get()
    if session is None or session.closed or str(as_target(target)) != session.target_text:
        return
    for unit in units:
        key = llvm_cache.unit_key(unit, session.spec, session.target_text, session.has_openmp)
        if key is None or key in session.seen or _on_disk(key):
            continue
        session.seen.add(key)
        session.waiting.append((key, unit))
    if len(session.seen) >= AHEAD_MIN_KERNELS:
        _hand_over(session)
        gc.freeze()


def _on_disk(key: str) -> bool:
    path = cache.entry_path(llvm_cache.CACHE_KIND, key)
    return path is not None and os.path.isfile(path)


def _hand_over(session: _Session) -> None:
    waiting, session.waiting = session.waiting, []
    for key, unit in waiting:
        try:
            ir_text, what = llvm_cache.compile_unit(unit, lambda prim: session.ir_of(prim, session.has_openmp))
        except Exception:  # noqa: BLE001 - compile_kernels makes this IR again and reports the error
            continue
        future = llvm_pool.submit(ir_text, session.spec, what)
        if future is None:
            session.closed = True
            return
        session.futures[key] = future
        session.stats["submitted"] += 1
        _count("submitted")


def take(key: str):
    """The (object bytes, optimised IR) of the kernel with cache key `key`, compiled ahead in
    this session (waiting for it if it is still compiling), or None: not handed over, or its
    compile failed (the caller compiles it and reports the error)."""
    session = _SESSION.get()
    future = session.futures.pop(key, None) if session is not None else None
    if future is None:
        return None
    try:
        result = future.result()
    except Exception:  # noqa: BLE001 - a broken pool or a failed compile: compiled again by the caller
        return None
    llvm_target.count_compiles()
    session.stats["taken"] += 1
    _count("taken")
    return result


def _count(what: str) -> None:
    with _TOTALS_LOCK:
        _TOTALS[what] += 1


def stats() -> dict:
    """This process's counts: sessions opened (builds that could compile ahead), kernels
    submitted to the pool ahead, and of those the ones a build took."""
    with _TOTALS_LOCK:
        return dict(_TOTALS)


__all__ = ["AHEAD_MIN_KERNELS", "compiling_ahead", "stats", "submit", "take"]
