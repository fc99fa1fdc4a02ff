"""Compiling many kernel modules at once: a process pool over independent LLVM modules.

Each kernel is its own LLVM module (one optimisation pipeline per kernel, not one monolith),
so a model's kernels are independent units of work. llvmlite serialises every LLVM call of a
process behind one lock, so threads cannot compile in parallel; `compile_units` hands the units
to a concurrent.futures process pool (RB_COMPILE_JOBS workers, default: every core this process
may use) when there are several and enough IR to pay for it, and compiles in-process otherwise.
A unit is IR text in, (object bytes, optimised IR text) out: LLVM is deterministic, so a unit
compiles to the same bytes in a worker or here, and results come back in the order given.

The workers are forked (no re-import of the package, no `if __name__ == "__main__"` guard
needed in the user's script), once, and kept for later builds. Two hazards of forking a
threaded process are closed: the fork happens while holding llvm_target.LLVM_LOCK, so no
relay_backend thread is inside LLVM at that instant, and a fresh pool must answer a probe that
calls into LLVM within PROBE_TIMEOUT_S (catching anything else that held llvmlite's lock). A
pool that fails the probe, breaks (a worker killed) or is unavailable (no fork on this
platform) makes the build compile in-process instead; it never fails a build. Workers are
replaced after RECYCLE_AFTER units, since each LLVM pipeline leaves ~50 KB behind in llvmlite.
`submit` hands over one unit at a time: llvm_ahead.py gives the pool each kernel as soon as the
model's walk has lowered it.
"""
import atexit
import concurrent.futures
import contextlib
import gc
import multiprocessing
import multiprocessing.util
import os
import signal
import sys
import threading
import time
import warnings

from ..config import get as get_config
from . import llvm_target

PARALLEL_MIN_UNITS = 3          # fewer kernels than this compile in-process
PARALLEL_MIN_IR_BYTES = 64 << 10  # ... and so does less IR in all (a few small kernels)
PROBE_TIMEOUT_S = 60.0
RECYCLE_AFTER = 2000
EXIT_JOIN_S = 10.0       # how long stopping the pool waits for its workers before killing them
_POOL = {"executor": None, "jobs": 0, "units": 0, "workers": ()}
_POOL_LOCK = threading.Lock()


@contextlib.contextmanager
def heap_frozen():
    """Within: the objects that exist on entry are out of the garbage collector's scans
    (gc.freeze), unfrozen on exit unless they already were on entry. A cold build generates
    kernel IR in a large heap (the model, its parameters, the lowered kernels): each full
    collection scanned all of it, about a fifth of IR generation's time."""
    already = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        if not already:
            gc.unfreeze()


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def compile_jobs() -> int:
    """How many workers compile in parallel: RB_COMPILE_JOBS, or every usable core."""
    return get_config().compile_jobs or usable_cores()


def _compile_in_worker(ir_text: str, spec, what: str) -> tuple:
    return llvm_target.compile_object(ir_text, spec, what)


def _worker_init() -> None:
    """In each worker: Ctrl-C interrupts the build in the parent, not the idle workers (a dead
    worker would break the pool for the next build)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _probe() -> str:
    import llvmlite.binding as llvm
    return llvm.get_process_triple()          # any call that takes llvmlite's lock


def _fork_available() -> bool:
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _drop_pool(executor) -> None:
    with _POOL_LOCK:
        if _POOL["executor"] is executor:
            _POOL["executor"] = None
    executor.shutdown(wait=False, cancel_futures=True)


def _pool(jobs: int):
    """The shared executor with `jobs` workers (made, forked and probed on first use), or
    None when no working pool can be had."""
    with _POOL_LOCK:
        executor = _POOL["executor"]
        if executor is not None and (_POOL["jobs"] != jobs or _POOL["units"] >= RECYCLE_AFTER):
            executor.shutdown(wait=False)
            executor = _POOL["executor"] = None
        if executor is not None:
            return executor
        if not _fork_available():
            return None
        before = {child.pid for child in multiprocessing.active_children()}
        executor = concurrent.futures.ProcessPoolExecutor(
            max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
            initializer=_worker_init)
        try:
            with llvm_target.LLVM_LOCK, warnings.catch_warnings():
                # forking a threaded process is safe here: see the module docstring
                warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
                with heap_frozen():    # the workers' garbage collector leaves the parent's
                    # objects alone, so their pages stay shared instead of being copied
                    probe = executor.submit(_probe)    # forks every worker now, under the lock
            probe.result(timeout=PROBE_TIMEOUT_S)
        except (OSError, concurrent.futures.TimeoutError, concurrent.futures.process.BrokenProcessPool):
            # no fork (out of memory, process limit) or workers that cannot reach LLVM: stop
            # them, so none is left hanging (exit joins the pool's workers), and compile here
            executor.shutdown(wait=False, cancel_futures=True)
            for child in multiprocessing.active_children():
                if child.pid not in before:
                    child.kill()
            return None
        workers = tuple(child for child in multiprocessing.active_children() if child.pid not in before)
        _POOL.update(executor=executor, jobs=jobs, units=0, workers=workers)
        # a multiprocessing child exits through multiprocessing's exit function, which joins
        # every child process (our idle workers: forever) and skips atexit: stop them first
        multiprocessing.util.Finalize(None, shutdown_pool, exitpriority=10)
        return executor


def pool_size() -> int:
    """How many workers the shared compile pool has (0: none made yet, or dropped)."""
    with _POOL_LOCK:
        return _POOL["jobs"] if _POOL["executor"] is not None else 0


@atexit.register
def shutdown_pool() -> None:
    """Stop the workers (also at exit, before the interpreter tears its modules down, which
    would otherwise leave the pool's cleanup callbacks without their modules)."""
    with _POOL_LOCK:
        executor, _POOL["executor"] = _POOL["executor"], None
        workers, _POOL["workers"] = _POOL["workers"], ()
    if executor is not None:
        stop_workers(executor, workers, EXIT_JOIN_S)


def stop_workers(executor, workers, timeout: float) -> None:
    """Ask `executor`'s idle `workers` to exit, wait at most `timeout` seconds in all, then kill
    those still alive: a worker that can no longer answer (e.g. one forked while another thread
    held a lock it then needed) must not hang the exit of the process that owns it."""
    executor.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + timeout
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            worker.kill()
            worker.join(1.0)


def _forget_pool_after_fork() -> None:
    """In a child forked from this process (by the user, or one of our workers): the parent's
    pool is not the child's to use (its results would go to the parent); start afresh."""
    global _POOL_LOCK
    _POOL_LOCK = threading.Lock()
    _POOL.update(executor=None, jobs=0, units=0, workers=())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)


def submit(ir_text: str, spec, what: str, jobs=None):
    """A Future of compile_object(ir_text, spec, what) in the shared pool (its result: (object
    bytes, optimised IR)), or None when there is no pool to give it to (one job, no fork, a
    pool that failed its probe): the caller compiles it itself then. For kernels handed over
    one at a time while a model is still being lowered (llvm_ahead.py)."""
    jobs = compile_jobs() if jobs is None else jobs
    executor = _pool(jobs) if jobs > 1 else None
    if executor is None:
        return None
    try:
        future = executor.submit(_compile_in_worker, ir_text, spec, what)
    except RuntimeError:          # shut down, or broken (BrokenProcessPool is one), meanwhile
        _drop_pool(executor)
        return None
    with _POOL_LOCK:
        _POOL["units"] += 1
    return future


def want_parallel(ir_texts, jobs: int) -> bool:
    """True when `ir_texts` are worth a process pool: several units, enough IR, >1 job."""
    return (jobs > 1 and len(ir_texts) >= PARALLEL_MIN_UNITS
            and sum(len(t) for t in ir_texts) >= PARALLEL_MIN_IR_BYTES)


def compile_units(units, spec, on_done=None, jobs=None) -> list:
    """[(object bytes, optimised IR)] for `units` ([(IR text, what)]), in order. `on_done(i)`
    is called as unit i finishes (a progress bar). Parallel when `want_parallel` says so and a
    pool is available, in-process otherwise; the results are the same either way."""
    units = list(units)
    # biggest first: the last unit to finish is then a small one (less idle tail)
    order = sorted(range(len(units)), key=lambda i: -len(units[i][0]))
    return compile_lazily(len(units), units.__getitem__, spec, on_done, jobs, order)


def compile_lazily(count: int, unit_at, spec, on_done=None, jobs=None, order=None) -> list:
    """compile_units for `count` units made on demand: `unit_at(i)` returns unit i's (IR text,
    what), and is called once per unit, in `order` (default 0..count-1), by this process.

    Making a unit (generating its IR) overlaps with compiling those made before it: each goes
    to the pool as soon as it exists, so the workers compile while this process generates the
    rest (a cold build's IR generation and LLVM's work run side by side instead of one after
    the other). Whether to use the pool at all is decided on the first units (`want_parallel`
    on `count` and on the IR made until it has PARALLEL_MIN_IR_BYTES or all units). The heap
    that exists on entry is kept out of garbage collection meanwhile (`heap_frozen`)."""
    with heap_frozen():
        return _compile_lazily(count, unit_at, spec, on_done, jobs, order)


def _compile_lazily(count, unit_at, spec, on_done, jobs, order) -> list:
    jobs = compile_jobs() if jobs is None else jobs
    order = list(range(count)) if order is None else list(order)
    made = {}
    position = size = 0
    if jobs > 1 and count >= PARALLEL_MIN_UNITS:
        while position < count and size < PARALLEL_MIN_IR_BYTES:
            made[order[position]] = unit_at(order[position])
            size += len(made[order[position]][0])
            position += 1
    results = [None] * count
    executor = _pool(jobs) if size >= PARALLEL_MIN_IR_BYTES else None
    if executor is not None:
        try:
            return _compile_in_pool(executor, order, position, made, unit_at, spec, on_done, results)
        except concurrent.futures.process.BrokenProcessPool:
            _drop_pool(executor)                  # finish in-process what the pool did not
    for i in order:
        if results[i] is None:
            unit = made.pop(i) if i in made else unit_at(i)
            results[i] = llvm_target.compile_object(unit[0], spec, unit[1])
            if on_done is not None:
                on_done(i)
    return results


def _compile_in_pool(executor, order, position, made, unit_at, spec, on_done, results):
    """compile_lazily's pool part: units order[:position] are in `made` already; a unit's text
    stays in `made` until its result is back (an in-process fallback needs it)."""
    futures = {}

    def submit(i):
        futures[executor.submit(_compile_in_worker, made[i][0], spec, made[i][1])] = i

    def collect(finished):
        for future in finished:
            i = futures.pop(future)
            results[i] = future.result()
            made.pop(i, None)
            llvm_target.count_compiles()
            if on_done is not None:
                on_done(i)

    for i in order[:position]:
        submit(i)
    for i in order[position:]:
        made[i] = unit_at(i)
        submit(i)
        collect([f for f in futures if f.done()])
    collect(list(concurrent.futures.as_completed(futures)))
    with _POOL_LOCK:
        _POOL["units"] += len(order)
    return results


__all__ = ["compile_lazily", "compile_units", "heap_frozen", "compile_jobs", "pool_size", "shutdown_pool", "submit",
           "usable_cores", "want_parallel"]
