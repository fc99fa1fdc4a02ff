"""The thread pool parallel loops run on (codegen/llvm_thread_pool.py) and the shim linked
libraries carry (codegen/llvm_parallel_shim.py): results match numpy when a worker is late or
asleep (the caller takes its block), when two Python threads run kernels at once, in a forked
child, with one thread, and in an exported library loaded by relay_backend (the process's
pool) or by plain dlopen (GNU OpenMP); an idle worker yields its core before it sleeps, as
set by set_idle_policy and TVM_THREAD_POOL_SPIN_COUNT."""
import ctypes
import os
import time

import numpy as np
import pytest

from relay_backend import tir
from relay_backend.codegen import build, llvm_target, llvm_thread_pool
from relay_backend.errors import InputError
from relay_backend.runtime import nd
from relay_backend.runtime.shared_library import LAUNCHER_SYMBOL, SharedLibrary

from ..python_script import printed_after
from ..threads import failures_in_threads

pytestmark = pytest.mark.skipif(not llvm_target.libgomp_path(),
                                reason="libgomp is not installed: parallel loops run serially")
TWO_THREADS = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or os.environ.get("OMP_NUM_THREADS") == "1",
                                 reason="needs two cores / OpenMP threads")


def _affine_kernel(n: int, name: str = "affine"):
    """Y[i] = X[i] * 3 + 1 over a parallel loop of n iterations."""
    i = tir.Var("i")
    X, Y = tir.Buffer("X", (n,), "float32"), tir.Buffer("Y", (n,), "float32")
    return tir.PrimFunc([X, Y], tir.For(i, 0, n, "parallel",
                                        tir.BufferStore(Y, X[i] * 3.0 + 1.0, (i,))), name)


def _check(mod, n, name="affine", seed=0):
    x = np.random.default_rng(seed).standard_normal(n).astype("float32")
    y = nd.empty((n,), "float32")
    mod[name](nd.array(x), y)
    # float32 rounding of x * 3 + 1 (one with FMA contraction, two without)
    np.testing.assert_allclose(y.numpy(), x.astype("float64") * 3 + 1, rtol=1e-6, atol=1e-6)


@TWO_THREADS
def test_the_caller_takes_the_blocks_of_a_late_worker():
    """A tiny loop ends long before a sleeping worker wakes: the caller runs the worker's
    static block itself (counted as stolen) and returns without waiting for it."""
    mod = build(_affine_kernel(64))
    before = llvm_thread_pool.stats()
    for seed in range(50):
        _check(mod, 64, seed=seed)
    after = llvm_thread_pool.stats()
    assert after["regions"] - before["regions"] == 50
    assert after["stolen_blocks"] > before["stolen_blocks"]


@TWO_THREADS
def test_an_awake_worker_runs_chunks(tries: int = 1000):
    """Large loops give the worker time to join: it runs dynamic chunks of some of them. (On a
    loaded machine, e.g. beside another test process, the worker may get no core for the whole
    of the first runs, so the test runs until one job has a worker chunk, at most `tries`.)"""
    mod = build(_affine_kernel(1 << 20))
    before = llvm_thread_pool.stats()["worker_chunks"]
    for seed in range(tries):
        _check(mod, 1 << 20, seed=seed)
        if seed >= 29 and llvm_thread_pool.stats()["worker_chunks"] > before:
            return
    pytest.fail(f"no worker ran a chunk in {tries} loops of 2**20 iterations")


def test_two_python_threads_run_kernels_at_once():
    """The second caller finds the pool busy and runs its loop serially: both stay correct."""
    mod = build(_affine_kernel(1 << 16))

    def work(seed):
        for k in range(40):
            _check(mod, 1 << 16, seed=seed * 100 + k)
        return True
    assert not failures_in_threads(work, 3)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_its_own_workers():
    mod = build(_affine_kernel(1 << 18))
    _check(mod, 1 << 18)                       # the parent's pool has started its workers
    pid = os.fork()
    if pid == 0:                               # child: the pool's threads did not come along
        code = 1
        try:
            for seed in range(20):
                _check(mod, 1 << 18, seed=seed)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_one_thread_runs_serially():
    script = ("import numpy as np, relay_backend as relay\n"
              "from relay_backend.codegen import llvm_thread_pool\n"
              "relay.runtime.set_num_threads(1)\n"
              "x = relay.var('x', shape=(1 << 20,))\n"
              "g = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))))['default'](relay.cpu())\n"
              "a = np.linspace(-2, 2, 1 << 20).astype('float32')\n"
              "for _ in range(5):\n"
              "    g.run(x=a)\n"
              "np.testing.assert_allclose(g.get_output(0).numpy(), np.exp(a), rtol=1e-5)\n"
              "print('STATS', llvm_thread_pool.stats()['regions'])\n")
    assert printed_after(script, "STATS") == "0"


def _export(tmp_path, n):
    path = str(tmp_path / "affine.so")
    build(_affine_kernel(n)).export_library(path)
    return path


def test_a_library_loaded_by_relay_backend_uses_the_process_pool(tmp_path):
    path = _export(tmp_path, 1 << 16)
    lib = SharedLibrary(path)
    slot = lib.address(LAUNCHER_SYMBOL)
    assert slot and ctypes.c_void_p.from_address(slot).value == llvm_thread_pool.ensure_loaded()
    _call_exported(lib.address, 1 << 16)


def test_a_library_opened_by_plain_dlopen_runs_on_openmp(tmp_path):
    path = _export(tmp_path, 1 << 16)
    lib = ctypes.CDLL(path)
    slot = ctypes.c_void_p.in_dll(lib, LAUNCHER_SYMBOL)
    assert slot.value is None                   # nobody pointed it at a pool: the shim forks OpenMP
    _call_exported(lambda name: ctypes.cast(getattr(lib, name), ctypes.c_void_p).value, 1 << 16)


def _call_exported(address_of, n):
    """Call the exported kernel through its packed C entry point (args: data pointers)."""
    symbol = next(s for s in ("rb_affine", "affine") if address_of(s))
    fn = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)(address_of(symbol))
    x = np.random.default_rng(1).standard_normal(n).astype("float32")
    y = np.zeros(n, "float32")
    args = (ctypes.c_void_p * 2)(x.ctypes.data, y.ctypes.data)
    fn(args, None)
    np.testing.assert_allclose(y, x.astype("float64") * 3 + 1, rtol=1e-6, atol=1e-6)


def _busy_wait(seconds: float) -> None:
    """Keep the calling thread on its core (time.sleep on a VM may oversleep by milliseconds)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _wakeups_after_pauses(mod, pause_s: float, rounds: int = 20) -> int:
    """Rounds (a job, a busy pause, a job) whose second job had to wake a sleeping worker (the
    arrays are made beforehand: making and checking them takes longer than the window)."""
    n = 1 << 16
    x = np.random.default_rng(0).standard_normal(n).astype("float32")
    x_nd, y_nd = nd.array(x), nd.empty((n,), "float32")
    kernel = mod["affine"]
    woken = 0
    for _ in range(rounds):
        kernel(x_nd, y_nd)
        _busy_wait(pause_s)
        before = llvm_thread_pool.stats()["wakeups"]
        kernel(x_nd, y_nd)
        woken += llvm_thread_pool.stats()["wakeups"] > before
    np.testing.assert_allclose(y_nd.numpy(), x.astype("float64") * 3 + 1, rtol=1e-6, atol=1e-6)
    return woken


def _until_a_job_finds_the_worker_awake(mod, tries: int = 2000) -> None:
    """Run jobs until one needs no wakeup and the worker runs chunks of it (on a loaded machine a
    signalled worker may wait milliseconds for a core before it counts itself awake)."""
    for _ in range(tries):
        before = llvm_thread_pool.stats()
        _wakeups_after_pauses(mod, 0, rounds=1)
        after = llvm_thread_pool.stats()
        if after["wakeups"] == before["wakeups"] and after["worker_chunks"] > before["worker_chunks"]:
            return
    pytest.fail(f"the worker never joined a job without a wakeup in {tries} tries")


@TWO_THREADS
def test_an_idle_worker_yields_before_it_sleeps():
    """While in its yield window a worker is awake: jobs after a pause find it without a wakeup.
    With no spin and no window it sleeps after each job, and a job after a pause signals it.
    (The window here is 10 s and the sleeping case's pause 20 ms, so a loaded machine, which may
    keep the worker off a core for milliseconds, does not decide the counts.)"""
    mod = build(_affine_kernel(1 << 16))
    default = llvm_thread_pool.idle_policy()
    assert default == {"spin_ns": llvm_thread_pool.SPIN_NS, "yield_ns": llvm_thread_pool.YIELD_NS,
                       "yield_max": llvm_thread_pool.YIELD_MAX}
    try:
        llvm_thread_pool.set_idle_policy(yield_ns=10_000_000_000)
        _until_a_job_finds_the_worker_awake(mod)
        assert _wakeups_after_pauses(mod, 2e-4) <= 1
        llvm_thread_pool.set_idle_policy(spin_ns=0, yield_ns=0)
        assert _wakeups_after_pauses(mod, 2e-2, rounds=10) >= 5
    finally:
        llvm_thread_pool.set_idle_policy(**default)


def test_idle_policy_rejects_unknown_or_negative_settings():
    with pytest.raises(InputError, match="unknown setting 'spin_count'"):
        llvm_thread_pool.set_idle_policy(spin_count=1)
    with pytest.raises(InputError, match="yield_ns must be an int >= 0"):
        llvm_thread_pool.set_idle_policy(yield_ns=-1)


def test_tvm_thread_pool_spin_count_zero_sleeps_at_once():
    """TVM_THREAD_POOL_SPIN_COUNT=0, as in TVM: an idle worker neither spins nor yields, and every
    job after a pause wakes it; results stay right."""
    script = ("import time, numpy as np\n"
              "from relay_backend import tir\n"
              "from relay_backend.codegen import build, llvm_thread_pool\n"
              "from relay_backend.runtime import nd\n"
              "i = tir.Var('i')\n"
              "X, Y = tir.Buffer('X', (1 << 16,), 'float32'), tir.Buffer('Y', (1 << 16,), 'float32')\n"
              "mod = build(tir.PrimFunc([X, Y], tir.For(i, 0, 1 << 16, 'parallel', "
              "tir.BufferStore(Y, X[i] * 3.0 + 1.0, (i,))), 'affine'))\n"
              "x = np.arange(1 << 16, dtype='float32')\n"
              "for _ in range(5):\n"
              "    y = nd.empty((1 << 16,), 'float32')\n"
              "    mod['affine'](nd.array(x), y)\n"
              "    assert np.array_equal(y.numpy(), x * 3 + 1)\n"
              "    time.sleep(0.01)\n"
              "print('POLICY', sorted(llvm_thread_pool.idle_policy().items()))\n")
    env = {"TVM_THREAD_POOL_SPIN_COUNT": "0"}
    assert printed_after(script, "POLICY", env=env) == "[('spin_ns', 0), ('yield_max', 0), ('yield_ns', 1000000)]"
