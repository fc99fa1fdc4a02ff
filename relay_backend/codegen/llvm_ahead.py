"""Compiling a model's kernels while the rest of it is still being lowered.

A cold build lowers every kernel of the model (schedule, te -> tir: Python, one core) before
codegen compiles any of them, so the compile pool's workers (llvm_pool) sat idle through all
of lowering: DenseNet-121 lowers for 1.7 s while the second core waits. Within
`compiling_ahead(target, ir_of)` (relay.build opens it around its executor's codegen,
vm.compile around lowering and codegen), the walk over main (te_compiler/lower_main.py, the
VM compiler's) hands each kernel to `submit` (te_compiler.hand_over_early) as soon as it is
lowered, and the kernel goes to the pool at once:

    submit(units):     for each kernel not on disk and not seen yet:
                           its cache key (llvm_cache.unit_key) and its IR (ir_of);
                           once the model is large enough, a pool Future of each
    compile_kernels:   each missing kernel: take(key) -> the Future's (object, IR), else
                           compile it (from its IR made ahead: made_unit(key))

so LLVM runs beside the rest of lowering. The result is the same: a kernel compiles to the
same bytes in a worker or in-process, and compile_kernels still reads the disk cache first
and stores what it took. The pool is used only once the model has AHEAD_MIN_KERNELS kernels
and PARALLEL_MIN_IR_BYTES of IR (llvm_pool's own rule for a build): a small model compiles
in-process as before, without starting a pool, from the IR made here. Nothing goes ahead
with one compile job, for code this process cannot run, or for another target than the
session's. A kernel whose IR cannot be made, or whose compile fails in the pool, is simply
not taken: compile_kernels then meets the same error where it reports it. Kernels handed
over but never asked for (a concatenation the memory planner made free) are dropped when the
session ends.
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
    made: dict = dataclasses.field(default_factory=dict)       # key -> (IR, symbol) not in the pool
    ir_bytes: int = 0                                            # IR made in the session
    futures: dict = dataclasses.field(default_factory=dict)    # key -> Future
    seen: set = dataclasses.field(default_factory=set)         # keys handed over
    closed: bool = False                                         # no pool: stop handing over
    refreeze: bool = False       # the session froze the heap: keep lowering's objects frozen too


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

    What went ahead is counted process-wide by `stats()`.
    """
    target = as_target(target)
    if target.kind.name != "llvm" or llvm_pool.compile_jobs() < 2 or _SESSION.get() is not None:
        yield
        return
    spec = llvm_target.machine_spec(target)
    if not spec.runs_here:             # cross-compiled code bypasses the disk cache and its keys
        yield
        return
    session = _Session(str(target), spec, bool(llvm_target.libgomp_path()), ir_of)
    _count("sessions")
    # frozen as compile_lazily freezes it while it generates IR: each full collection would
    # scan the model and every kernel lowered so far (it took DenseNet-121's main process
    # 0.9 s more CPU); what the session froze is unfrozen when it ends
    session.refreeze = gc.get_freeze_count() == 0
    token = _SESSION.set(session)
    try:
        with llvm_pool.heap_frozen():
            yield
    finally:
        _SESSION.reset(token)
        for future in session.futures.values():
            future.cancel()


def submit(units, target) -> None:
    """Hand kernels (PrimFuncs or codegen KernelRecords) lowered for `target` to the pool, when a
    session for that target is open: each kernel's IR is made now; they go to the pool once the
    model has AHEAD_MIN_KERNELS kernels and llvm_pool.PARALLEL_MIN_IR_BYTES of IR (what would
    make compile_kernels use the pool), then each as it comes."""
    session = _SESSION.get()
    if session is None or session.closed or str(as_target(target)) != session.target_text:
        return
    for unit in units:
        key = llvm_cache.unit_key(unit, session.spec, session.target_text, session.has_openmp)
        if key is None or key in session.seen or _on_disk(key):
            continue
        session.seen.add(key)
        try:
            ir_text, what = llvm_cache.compile_unit(unit, lambda prim: session.ir_of(prim, session.has_openmp))
        except Exception:  # noqa: BLE001 - compile_kernels makes this IR again and reports the error
            continue
        session.made[key] = (ir_text, what)
        session.ir_bytes += len(ir_text)
    if len(session.seen) >= AHEAD_MIN_KERNELS and session.ir_bytes >= llvm_pool.PARALLEL_MIN_IR_BYTES:
        _hand_over(session)
        if session.refreeze:
            gc.freeze()


def _on_disk(key: str) -> bool:
    path = cache.entry_path(llvm_cache.CACHE_KIND, key)
    return path is not None and os.path.isfile(path)


def _hand_over(session: _Session) -> None:
    made, session.made = session.made, {}
    for key, (ir_text, what) in made.items():
        future = llvm_pool.submit(ir_text, session.spec, what)
        if future is None:            # no pool after all: the rest compile as before
            session.closed = True
            session.made.update((k, ir_and_symbol) for k, ir_and_symbol in made.items() if k not in session.futures)
            return
        session.futures[key] = future
        _count("submitted")


def made_unit(key: str):
    """The (IR text, symbol) of the kernel with cache key `key` that this session made but did
    not hand to the pool (a small model), for compile_kernels to compile without making it
    again; None when there is none."""
    session = _SESSION.get()
    return session.made.pop(key, None) if session is not None else None


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


__all__ = ["AHEAD_MIN_KERNELS", "compiling_ahead", "made_unit", "stats", "submit", "take"]
