"""LocalBuilder and LocalRunner: measurement on this machine in worker processes (pebble pools).

LocalBuilder compiles `n_parallel` configs at a time in a pool of worker processes; a build
that runs past `timeout` is killed (BUILD_TIMEOUT) and one that kills its worker is recorded
(COMPILE_HOST), the pool replacing the worker. LocalRunner times each candidate in a process of
its own, one at a time (a measurement never shares the cores with another), killed after
`timeout` seconds (RUN_TIMEOUT); a candidate that crashes its process (a signal, e.g. an
out-of-bounds read) is recorded as RUNTIME_DEVICE; the tuner goes on either way. Before the
first run of a task the runner computes the outputs of the task's default config on seeded
random inputs, and each candidate must reproduce them on the same inputs (WRONG_ANSWER
otherwise): a config is only fast if it is right.

Workers are forked from a forkserver that has relay_backend imported (no kernel ever ran in
it, so no OpenMP pool is copied into a child), which makes a fresh process per candidate cheap.
As with any multiprocessing pool, a tuning script must keep its tuning code under
`if __name__ == "__main__":` (worker processes import the main module).
"""
import atexit
import multiprocessing
import shutil
import signal
import sys
import tempfile
import weakref
from concurrent.futures import TimeoutError as FutureTimeout

try:
    from pebble import ProcessExpired, ProcessPool
except ImportError:              # the [tune] extra: only measuring needs it (new_pool says so)
    ProcessPool = None

    class ProcessExpired(Exception):
        """Stands in for pebble's exception while pebble is not installed (never raised)."""

from ...errors import TuningError
from .jobs import build_job, config_payload, reference_job, run_job, task_payload
from .measure import Builder, MeasureErrorNo, MeasureResult, Runner, error_result, from_build

BUILD_WORKER_TASKS = 64         # a build worker is replaced after this many builds (LLVM leaks a little)
REFERENCE_TIMEOUT_MIN = 60.0    # seconds the default config may take to build and run once
CACHE_FLUSH_BYTES = 64 << 20    # copied to evict the caches: twice this machine family's 32 MiB L3
_POOLS = weakref.WeakSet()


def worker_context():
    """The multiprocessing context workers start from (forkserver with relay_backend loaded)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["relay_backend", "relay_backend.autotvm.measure.jobs"])
    return ctx


def new_pool(workers: int, tasks_per_worker: int):
    """A pebble process pool of `workers` processes, each replaced after `tasks_per_worker`
    tasks (0: never)."""
    if getattr(sys.modules.get("__main__"), "__name__", "") == "__mp_main__":
        raise TuningError("a worker process that was importing the main module started tuning: put the "
                          "script's tuning code under `if __name__ == \"__main__\":` (worker processes "
                          "import the main module, as with any multiprocessing pool)")
    if ProcessPool is None:
        raise TuningError("measuring configs runs them in worker processes with pebble, which is not "
                          "installed: pip install relay_backend[tune] (or pip install pebble)")
    pool = ProcessPool(max_workers=workers, max_tasks=tasks_per_worker, context=worker_context())
    _POOLS.add(pool)
    return pool


@atexit.register
def _stop_pools():
    for pool in list(_POOLS):
        pool.stop()


def describe_death(err: ProcessExpired) -> str:
    """How a worker process ended: the signal that killed it, or its exit code."""
    code = getattr(err, "exitcode", None)
    if isinstance(code, int) and code < 0:
        try:
            return f"the process died from signal {signal.Signals(-code).name}"
        except ValueError:
            return f"the process died from signal {-code}"
    return f"the process exited with code {code}"


class PooledWorkers:
    """A process pool (`_pool`, made on first use) and a scratch directory (`tmp_dir`), both
    released by close() or when the object goes away."""

    _pool = None
    tmp_dir = None

    def close(self):
        """Stop the worker processes and remove the scratch files."""
        if self._pool is not None:
            self._pool.stop()
            self._pool = None
        if self.tmp_dir:
            shutil.rmtree(self.tmp_dir, ignore_errors=True)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass


class LocalBuilder(PooledWorkers, Builder):
    """Compile configs in parallel worker processes (TVM's LocalBuilder; only the default
    build function exists: LLVM through relay_backend.codegen)."""

    def __init__(self, timeout=10, n_parallel=None, build_kwargs=None, build_func="default",
                 do_fork=False, runtime=None):
        super().__init__(timeout, n_parallel, build_kwargs)
        if build_func != "default":
            raise TuningError(f"LocalBuilder: build_func {build_func!r} is not supported; use 'default'")
        self._pool = None
        self.tmp_dir = tempfile.mkdtemp(prefix="rb_autotvm_build_")

    def build(self, measure_inputs) -> list:
        shutil.rmtree(self.tmp_dir, ignore_errors=True)     # the last batch has been run by now
        self.tmp_dir = tempfile.mkdtemp(prefix="rb_autotvm_build_")
        if self._pool is None:
            self._pool = new_pool(self.n_parallel, BUILD_WORKER_TASKS)
        futures = [self._pool.schedule(build_job, args=(task_payload(inp.task), config_payload(inp.config),
                                                        self.tmp_dir), timeout=self.timeout)
                   for inp in measure_inputs]
        results = []
        for future in futures:
            try:
                results.append(from_build(future.result()))
            except FutureTimeout:
                results.append(error_result(MeasureErrorNo.BUILD_TIMEOUT, "",
                                            f"the build took more than {self.timeout} s", self.timeout))
            except ProcessExpired as err:
                results.append(error_result(MeasureErrorNo.COMPILE_HOST, "", describe_death(err), 0.0))
        return results


class LocalRunner(PooledWorkers, Runner):
    """Time each built config in a fresh process (TVM's LocalRunner). number / repeat /
    min_repeat_ms as time_evaluator: 1 + number x repeat runs, each repeat long enough for
    min_repeat_ms; the extremes of repeat > 2 costs are dropped. check_correctness=False skips
    the comparison with the default config (inputs are still random).

    enable_cpu_cache_flush (TVM's) evicts the caches before every repeat by copying
    `cache_flush_bytes` (CACHE_FLUSH_BYTES: beyond the last-level cache) between two buffers,
    so weights and inputs start cold as in a large model; TVM advises number=1 with it (only
    the first call of a repeat is cold). A smaller cache_flush_bytes (e.g. the L2 size) evicts
    only the inner caches, as in a small model whose weights stay in L3 between runs.
    thread_time=True runs the kernels' parallel loops on one thread and times the thread's CPU
    time (time.thread_time), which the other processes of a shared machine inflate far less
    than wall-clock time."""

    def __init__(self, timeout=10, number=4, repeat=3, min_repeat_ms=0, cooldown_interval=0.1,
                 enable_cpu_cache_flush=False, module_loader=None, check_correctness=True,
                 cache_flush_bytes=None, thread_time=False):
        super().__init__(timeout, n_parallel=1)
        for name, value, minimum in (("number", number, 1), ("repeat", repeat, 1), ("min_repeat_ms", min_repeat_ms, 0)):
            if not isinstance(value, int) or value < minimum:
                raise TuningError(f"LocalRunner: {name} must be an int >= {minimum}, got {value!r}")
        flush = CACHE_FLUSH_BYTES if cache_flush_bytes is None else cache_flush_bytes
        if isinstance(flush, bool) or not isinstance(flush, int) or flush < 0:
            raise TuningError(f"LocalRunner: cache_flush_bytes must be an int >= 0, got {cache_flush_bytes!r}")
        self.number, self.repeat, self.min_repeat_ms = number, repeat, min_repeat_ms
        self.cooldown_interval = cooldown_interval
        self.check_correctness = check_correctness
        self.timing = {"cache_flush_bytes": flush if enable_cpu_cache_flush else 0, "thread_time": bool(thread_time)}
        self._pool = None
        self._reference = None
        self.tmp_dir = tempfile.mkdtemp(prefix="rb_autotvm_run_")

    def set_task(self, task):
        self.task = task
        self._reference = None
        return None

    def _pool_once(self):
        if self._pool is None:
            self._pool = new_pool(1, 1)          # one candidate per process, one at a time
        return self._pool

    def reference(self):
        """The .npz of the task's default outputs (made on first use; TuningError if the
        default config itself cannot run: then no candidate can be checked)."""
        if self.check_correctness and self._reference is None:
            limit = max(REFERENCE_TIMEOUT_MIN, 6 * (self.timeout or 0))
            future = self._pool_once().schedule(reference_job, args=(task_payload(self.task), self.tmp_dir),
                                                timeout=limit)
            try:
                self._reference = future.result()
            except (FutureTimeout, ProcessExpired, Exception) as err:  # noqa: BLE001
                why = describe_death(err) if isinstance(err, ProcessExpired) else f"{type(err).__name__}: {err}"
                raise TuningError(f"the default config of task {self.task.name} {self.task.args} could not "
                                  f"be built and run to check candidates against ({why})") from None
        return self._reference

    def run(self, measure_inputs, build_results) -> list:
        reference = self.reference()
        pool = self._pool_once()
        results = []
        for inp, build in zip(measure_inputs, build_results):
            if isinstance(build, MeasureResult):
                results.append(build)
                continue
            future = pool.schedule(run_job, args=(build, reference, self.number, self.repeat, self.min_repeat_ms,
                                                  self.cooldown_interval, self.tmp_dir), kwargs=self.timing,
                                   timeout=self.timeout)
            results.append(collect_run(future.result, self.timeout, build))
        return results


def collect_run(get, timeout, build) -> MeasureResult:
    """The MeasureResult of a scheduled run_job (`get()` waits for it)."""
    try:
        costs, error_no, seconds, stamp = get()
        return MeasureResult(costs, error_no, seconds, stamp)
    except FutureTimeout:
        return error_result(MeasureErrorNo.RUN_TIMEOUT, "", f"the run took more than {timeout} s",
                            timeout + build.time_cost)
    except ProcessExpired as err:
        return error_result(MeasureErrorNo.RUNTIME_DEVICE, "", f"the candidate crashed: {describe_death(err)}",
                            build.time_cost)
