"""Timing: TVM's time evaluator, behind every module's `time_evaluator` and executor `benchmark`.

    evaluate = module.time_evaluator("run", relay_backend.cpu(), number=10, repeat=3)
    result = evaluate()                # BenchmarkResult: mean / median / std / min / max / results

`time_evaluator(func, ...)` wraps any callable as TVM's WrapTimeEvaluator does: one untimed
warm-up call, then `repeat` measurements; each times `number` calls and records the mean
seconds per call. When a measurement took less than `min_repeat_ms`, `number` grows (to what
the last measurement says fills the time, at least by the golden ratio) and the measurement is
redone; `number` stays grown for later repeats, and a run measured as zero time is retried at
most `limit_zero_time_iterations` times. `cooldown_interval_ms` sleeps after every
`repeats_to_cooldown`-th repeat. The graph, AOT and VM `benchmark(...)` methods time their
runtime module's "run" / "invoke" through it, as TVM's do; `benchmark(run_once, ...)` times any
no-argument callable (the debug profiler's per-node timing uses `time_per_call`).
"""
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import RelayError
from .limits import check_tensor_size
from .registry import get_global_func

GOLDEN_RATIO = 1.618
# the timing parameters of every time_evaluator and benchmark (shared_parameters completes the
# docstrings of Module.time_evaluator and of the executors' benchmark methods)
TIMING_PARAMETERS = {
    "device": ("Device", "Accepted for TVM's signature: kernels finish before they return, so the "
                         "timings need no device synchronisation."),
    "number": ("int", "How many calls each measurement averages over (grown to reach min_repeat_ms)."),
    "repeat": ("int", "How many measurements to take; the result holds one mean time per measurement."),
    "min_repeat_ms": ("float", "The least time one measurement lasts, in milliseconds: `number` grows "
                               "until it does. None or 0 means no minimum."),
    "limit_zero_time_iterations": ("int", "How many times a measurement that reads zero time is "
                                          "retried before it is kept."),
    "cooldown_interval_ms": ("float", "A pause after every `repeats_to_cooldown` measurements, in "
                                      "milliseconds."),
    "repeats_to_cooldown": ("int", "How many measurements run between two pauses."),
}
TIMING_PARAMETERS["dev"] = TIMING_PARAMETERS["device"]
TIMING_RESULT = ("result", "BenchmarkResult", "The mean seconds per call of each measurement, with "
                                              "their mean, median, std, min and max.")


@dataclass
class BenchmarkResult:
    """Timings in seconds of `repeat` runs, each the mean over `number` calls (TVM's result)."""

    results: list = field(default_factory=list)

    @property
    def mean(self) -> float:
        return float(np.mean(self.results))

    @property
    def median(self) -> float:
        return float(np.median(self.results))

    @property
    def std(self) -> float:
        return float(np.std(self.results))

    @property
    def min(self) -> float:
        return float(np.min(self.results))

    @property
    def max(self) -> float:
        return float(np.max(self.results))

    def __str__(self) -> str:
        return ("Execution time summary:\n"
                f"{'mean (ms)':>10} {'median (ms)':>12} {'max (ms)':>10} {'min (ms)':>10} {'std (ms)':>10}\n"
                f"{self.mean * 1e3:10.4f} {self.median * 1e3:12.4f} {self.max * 1e3:10.4f} "
                f"{self.min * 1e3:10.4f} {self.std * 1e3:10.4f}")

    def __repr__(self) -> str:
        return f"BenchmarkResult(mean={self.mean * 1e3:.4f} ms, median={self.median * 1e3:.4f} ms)"


def _count(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise RelayError(f"time_evaluator: {name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def time_evaluator(func, number=10, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                   cooldown_interval_ms=0, repeats_to_cooldown=1, f_preproc=None, clock=None):
    """A callable `evaluator(*args) -> BenchmarkResult` timing `func(*args)` (see module doc).

    In all `func` runs 1 + number x repeat times (more when min_repeat_ms grows `number`).
    `clock` (seconds, e.g. time.thread_time: the calling thread's CPU time) replaces
    time.perf_counter when given.
    """
    clock = clock or time.perf_counter
    if not callable(func):
        raise RelayError(f"time_evaluator: expected a function to time, got {type(func).__name__}")
    start_number = _count(number, "number", 1)
    repeat = _count(repeat, "repeat", 0)
    min_ms = float(min_repeat_ms or 0)
    zero_limit = _count(limit_zero_time_iterations, "limit_zero_time_iterations", 1)
    cooldown = float(cooldown_interval_ms or 0)
    every = _count(repeats_to_cooldown, "repeats_to_cooldown", 1)

    def evaluator(*args) -> BenchmarkResult:
        func(*args)                                  # warm-up: lazy setup, cold caches
        n, results = start_number, []
        for i in range(repeat):
            if f_preproc is not None:
                f_preproc(*args)
            duration_ms, zero_times = 0.0, 0
            while True:
                if duration_ms > 0:
                    n = int(max(min_ms / (duration_ms / n) + 1, n * GOLDEN_RATIO))
                start = clock()
                for _ in range(n):
                    func(*args)
                duration_ms = (clock() - start) * 1e3
                zero_times += duration_ms == 0
                if duration_ms >= min_ms or zero_times >= zero_limit:
                    break
            results.append(duration_ms / 1e3 / n)
            if cooldown > 0 and i % every == 0:
                time.sleep(cooldown / 1e3)
        return BenchmarkResult(results)

    return evaluator


def module_time_evaluator(module, func_name, dev=None, number=10, repeat=1, min_repeat_ms=0,
                          limit_zero_time_iterations=100, cooldown_interval_ms=0, repeats_to_cooldown=1,
                          cache_flush_bytes=0, f_preproc="", clock=None):
    """TVM's `Module.time_evaluator` for any module with `get_function(name)`: `f_preproc` names a
    global function (runtime.registry) run before every repeat with the same arguments, and
    `cache_flush_bytes` > 0 copies that many bytes between two buffers before every repeat, so
    each measurement starts with a cold cache. `dev` is accepted for TVM's signature: a CUDA
    function waits for its device before returning, so the timings need no extra synchronization.
    `clock` as time_evaluator's."""
    del dev
    func = module.get_function(func_name)
    preproc = get_global_func(f_preproc) if f_preproc else None
    flush = int(cache_flush_bytes or 0)
    if flush > 0:
        check_tensor_size((flush,), "uint8", "time_evaluator cache_flush_bytes")
        src, dst = np.ones(flush, np.uint8), np.empty(flush, np.uint8)
        user = preproc

        def preproc(*args):
            np.copyto(dst, src)
            if user is not None:
                user(*args)
    return time_evaluator(func, number, repeat, min_repeat_ms, limit_zero_time_iterations,
                          cooldown_interval_ms, repeats_to_cooldown, preproc, clock)


def time_per_call(run_once, number=5, min_repeat_ms=0) -> float:
    """The mean seconds per call of a function over one measurement (no warm-up).

    Parameters
    ----------
    run_once : callable
        A function of no arguments to time.
    number : int, optional
        The least number of calls the measurement makes (at least 1). Defaults to 5.
    min_repeat_ms : float, optional
        The least time the measurement lasts, in milliseconds; the number of calls grows until
        it does. Defaults to 0.

    Returns
    -------
    seconds : float
        The mean time of one call.
    """
    counter = {"warm": False}

    def once():
        if counter["warm"]:
            run_once()
        counter["warm"] = True          # the evaluator's warm-up call is skipped here
    return time_evaluator(once, max(int(number), 1), 1, min_repeat_ms)().results[0]


def benchmark(run_once, device=None, repeat=5, number=5, min_repeat_ms=0, warmup=True) -> BenchmarkResult:
    """Time `run_once` (a no-argument callable): a warm-up call (unless `warmup=False`), then
    `repeat` measurements of `number` calls, as time_evaluator does.

    `device` is accepted for TVM's signature; CUDA kernels wait for their device before
    returning, so timing needs no extra device synchronization.
    """
    del device
    skip = {"first": not warmup}

    def once():
        if skip["first"]:
            skip["first"] = False
            return
        run_once()
    return time_evaluator(once, max(int(number), 1), int(repeat), min_repeat_ms)()


__all__ = ["BenchmarkResult", "time_evaluator", "module_time_evaluator", "benchmark", "time_per_call", "GOLDEN_RATIO"]
