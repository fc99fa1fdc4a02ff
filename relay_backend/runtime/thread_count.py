"""How many threads parallel kernels use: `set_num_threads(n)` / `num_threads()`.

Parallel loops of LLVM kernels run on relay_backend's thread pool (codegen/llvm_thread_pool.py),
C kernels on GNU OpenMP (libgomp); both take GNU OpenMP's team size, which is, in order:
the last `set_num_threads(n)`, else TVM_NUM_THREADS, else OMP_NUM_THREADS, else every core this
process may use. The setting is threadpoolctl-compatible: it is libgomp's own
`omp_set_num_threads`, so `threadpoolctl.threadpool_info()` reports it and
`threadpoolctl.threadpool_limits(n, user_api="openmp")` changes it too.

libgomp keeps the team size per calling thread; the executors call `apply_to_this_thread()`
before running kernels, so a limit set once holds in every thread that runs a model.
"""
import ctypes
import ctypes.util
import functools
import os
import threading

from .. import config
from ..errors import InputError

_lock = threading.Lock()
_state = {"requested": 0, "generation": 0}     # generation grows with every new limit
_applied = threading.local()                    # .generation this thread last applied
# Iterations an idle libgomp worker (C kernels, exported libraries run without relay_backend)
# spins before it sleeps (GOMP_SPINCOUNT; ~10 us here):
# enough to catch the next kernel of a model run back to back, too short to steal a shared
# core. python -m benchmarks.bench_spin (benchmarks/README.md): 1000 stayed within noise of
# passive waits (no 10-20 ms stalls) while libgomp's default 300000 made MLP b64 2-5x slower.
SPIN_COUNT = 1000


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return max(os.cpu_count() or 1, 1)


def default_num_threads() -> int:
    """TVM_NUM_THREADS, else OMP_NUM_THREADS, else usable_cores()."""
    cfg = config.get()
    return cfg.tvm_num_threads or cfg.omp_num_threads or usable_cores()


def num_threads() -> int:
    """The number of threads parallel kernels use (see the module docstring)."""
    return _state["requested"] or default_num_threads()


def set_num_threads(n: int) -> None:
    """Limit parallel kernels to a number of threads from now on, in every thread.

    Parameters
    ----------
    n : int
        The number of threads, at least 1 (it also sets OMP_NUM_THREADS for libraries loaded
        and programs started later).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"set_num_threads: n must be an int >= 1, got {n!r}")
    with _lock:
        _state["requested"] = n
        _state["generation"] += 1
    os.environ["OMP_NUM_THREADS"] = str(n)   # for a libgomp loaded later and C programs started later
    apply_to_this_thread()


def prepare_openmp_env() -> None:
    """Call before libgomp is first loaded (it reads its settings then): idle workers spin
    SPIN_COUNT iterations, then sleep, unless the user chose (OMP_WAIT_POLICY or
    GOMP_SPINCOUNT); TVM_NUM_THREADS sets the team size as it does in TVM."""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
    tvm_threads = config.get().tvm_num_threads
    if tvm_threads:
        os.environ["OMP_NUM_THREADS"] = str(tvm_threads)
        with _lock:
            if not _state["generation"]:
                _state["requested"], _state["generation"] = tvm_threads, 1


@functools.lru_cache(maxsize=None)
def _libgomp():
    """The process's libgomp (loaded once, after prepare_openmp_env), or None."""
    name = ctypes.util.find_library("gomp")
    if not name:
        return None
    prepare_openmp_env()
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    lib.omp_set_num_threads.argtypes = [ctypes.c_int]
    return lib


def apply_to_this_thread() -> None:
    """Give libgomp the current limit in the calling thread (cheap when it already has it)."""
    generation = _state["generation"]
    if not generation or getattr(_applied, "generation", 0) == generation:
        return
    lib = _libgomp()
    if lib is not None:
        lib.omp_set_num_threads(_state["requested"])
    _applied.generation = generation


__all__ = ["set_num_threads", "num_threads", "default_num_threads", "usable_cores",
           "apply_to_this_thread", "prepare_openmp_env"]
