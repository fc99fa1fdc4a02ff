"""Kernels compile in a process pool (codegen/llvm_pool.py) with results identical to compiling
them one by one here; small builds stay in-process; a pool that breaks or cannot answer makes
the build compile in-process instead of failing or hanging; an LLVM error in a worker reaches
the caller as the CompileError it is. Kernels are checked against numpy."""
import multiprocessing
import os
import time

import numpy as np
import pytest

from relay_backend import config, nd, te
from relay_backend.codegen import build, llvm_pool, llvm_target
from relay_backend.codegen.llvm import codegen_llvm
from relay_backend.errors import CompileError

pytestmark = pytest.mark.compile
N_KERNELS = 4


def _funcs():
    """Kernels exp(x) * k + tanh(x) for k = 1..N_KERNELS, vectorized."""
    funcs = []
    for k in range(1, N_KERNELS + 1):
        a = te.placeholder((1024,), "float32", name="A")
        b = te.compute(a.shape, lambda i, k=k: te.exp(a[i]) * float(k) + te.tanh(a[i]), name="B")
        sch = te.create_schedule([b])
        _, inner = sch[b].split(b.op.axis[0], factor=16)
        sch[b].vectorize(inner)
        funcs.append(te.lower(sch, [a, b], name=f"kernel_{k}"))
    return funcs


def _units():
    return [(codegen_llvm([f])[0], f.name) for f in _funcs()]


@pytest.fixture
def any_size_is_parallel(monkeypatch):
    """Let a handful of small kernels go to the pool (normally they compile in-process)."""
    monkeypatch.setattr(llvm_pool, "PARALLEL_MIN_IR_BYTES", 0)
    yield
    llvm_pool.shutdown_pool()


def test_parallel_results_are_identical_to_serial(any_size_is_parallel):
    spec = llvm_target.machine_spec()
    done = []
    before = llvm_target.compile_count()
    parallel = llvm_pool.compile_units(_units(), spec, on_done=done.append, jobs=2)
    assert llvm_pool.pool_size() == 2                          # it really ran in the pool
    assert sorted(done) == list(range(N_KERNELS))
    assert llvm_target.compile_count() - before == N_KERNELS   # counted here though done there
    serial = llvm_pool.compile_units(_units(), spec, jobs=1)
    assert parallel == serial                                  # same object bytes, same IR


def test_a_model_compiled_in_the_pool_computes_the_right_values(any_size_is_parallel, monkeypatch):
    monkeypatch.setenv("RB_NO_DISK_CACHE", "1")
    monkeypatch.setenv("RB_COMPILE_JOBS", "2")
    config.reload()
    try:
        module = build(_funcs())
    finally:
        monkeypatch.undo()
        config.reload()
    assert module.build_stats == {"kernels": N_KERNELS, "compiled": N_KERNELS, "from_cache": 0}
    x = np.linspace(-3, 3, 1024).astype("float32")
    for k in range(1, N_KERNELS + 1):
        out = nd.empty((1024,), "float32")
        module[f"kernel_{k}"](nd.array(x), out)
        np.testing.assert_allclose(out.numpy(), np.exp(x) * k + np.tanh(x), rtol=3e-6, atol=1e-6)


def test_small_builds_compile_in_process():
    units = _units()
    assert not llvm_pool.want_parallel([t for t, _ in units[:2]], jobs=8)   # too few kernels
    assert not llvm_pool.want_parallel(["x" * 100] * 8, jobs=8)             # too little IR
    assert not llvm_pool.want_parallel(["x" * 100_000] * 8, jobs=1)         # one job
    assert llvm_pool.want_parallel(["x" * 100_000] * 8, jobs=2)


def _die(*args):
    os._exit(3)


def test_a_broken_pool_falls_back_to_compiling_here(any_size_is_parallel, monkeypatch):
    llvm_pool.shutdown_pool()
    monkeypatch.setattr(llvm_pool, "_compile_in_worker", _die)   # the workers forked next die
    spec = llvm_target.machine_spec()
    results = llvm_pool.compile_units(_units(), spec, jobs=2)
    assert results == llvm_pool.compile_units(_units(), spec, jobs=1)
    assert llvm_pool.pool_size() == 0                            # the broken pool was dropped


def _hang():
    time.sleep(30)


def test_a_pool_that_does_not_answer_is_not_used(any_size_is_parallel, monkeypatch):
    llvm_pool.shutdown_pool()
    monkeypatch.setattr(llvm_pool, "_probe", _hang)
    monkeypatch.setattr(llvm_pool, "PROBE_TIMEOUT_S", 0.5)
    before = {p.pid for p in multiprocessing.active_children()}
    start = time.perf_counter()
    results = llvm_pool.compile_units(_units(), llvm_target.machine_spec(), jobs=2)
    assert time.perf_counter() - start < 25                      # did not wait for the workers
    assert len(results) == N_KERNELS and llvm_pool.pool_size() == 0
    deadline = time.time() + 10
    while {p.pid for p in multiprocessing.active_children()} - before and time.time() < deadline:
        time.sleep(0.05)
    assert not {p.pid for p in multiprocessing.active_children()} - before   # none left hanging


def test_an_llvm_error_in_a_worker_reaches_the_caller(any_size_is_parallel):
    units = _units()
    units[2] = ("define void @broken( {", "broken_kernel")
    with pytest.raises(CompileError, match="LLVM rejected the IR generated for broken_kernel"):
        llvm_pool.compile_units(units, llvm_target.machine_spec(), jobs=2)


def _compile_in_a_forked_child():
    spec = llvm_target.machine_spec()
    parallel = llvm_pool.compile_units(_units(), spec, jobs=2)
    assert parallel == llvm_pool.compile_units(_units(), spec, jobs=1)


def test_a_process_forked_from_this_one_makes_its_own_pool(any_size_is_parallel):
    llvm_pool.compile_units(_units(), llvm_target.machine_spec(), jobs=2)
    assert llvm_pool.pool_size() == 2                            # the parent's pool exists
    child = multiprocessing.get_context("fork").Process(target=_compile_in_a_forked_child)
    child.start()
    child.join(timeout=60)                                       # the inherited pool would hang it
    if child.is_alive():
        child.kill()
    assert child.exitcode == 0


def test_a_worker_that_cannot_answer_does_not_hang_stopping_the_pool(any_size_is_parallel, monkeypatch):
    """A worker frozen mid-way (here SIGSTOP; in life one forked while another thread held a lock)
    is killed after EXIT_JOIN_S instead of making stopping the pool (and so the exit of the
    process, which stops it at exit) wait forever."""
    import signal
    llvm_pool.shutdown_pool()
    before = {child.pid for child in multiprocessing.active_children()}
    llvm_pool.compile_units(_units(), llvm_target.machine_spec(), jobs=2)
    workers = [child for child in multiprocessing.active_children() if child.pid not in before]
    assert llvm_pool.pool_size() == 2 and len(workers) == 2          # the pool's own workers only
    os.kill(workers[0].pid, signal.SIGSTOP)
    monkeypatch.setattr(llvm_pool, "EXIT_JOIN_S", 2.0)
    start = time.monotonic()
    llvm_pool.shutdown_pool()
    assert time.monotonic() - start < 15.0
    assert not workers[0].is_alive()


def test_units_made_on_demand_compile_as_they_come(any_size_is_parallel):
    """compile_lazily asks for each unit once, in order, and gives the same results as
    compiling the finished list: units go to the pool while later ones are still being made."""
    spec = llvm_target.machine_spec()
    units = _units()
    asked = []

    def unit_at(i):
        asked.append(i)
        return units[i]
    done = []
    lazily = llvm_pool.compile_lazily(len(units), unit_at, spec, on_done=done.append, jobs=2)
    assert asked == list(range(N_KERNELS)) and sorted(done) == list(range(N_KERNELS))
    assert llvm_pool.pool_size() == 2
    assert lazily == llvm_pool.compile_units(units, spec, jobs=1)


def test_the_heap_is_frozen_while_compiling_and_released_after():
    """compile_lazily keeps the objects that existed on entry out of garbage collection while
    it runs (gc.freeze) and releases them after; a freeze made by the caller stays."""
    import gc
    assert gc.get_freeze_count() == 0
    seen = []

    def unit_at(i):
        seen.append(gc.get_freeze_count())
        return _units()[i]
    llvm_pool.compile_lazily(2, unit_at, llvm_target.machine_spec(), jobs=1)
    assert min(seen) > 0 and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        with llvm_pool.heap_frozen():
            pass
        assert gc.get_freeze_count() > 0                  # the caller's freeze is kept
    finally:
        gc.unfreeze()
