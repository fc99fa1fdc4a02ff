"""runtime.benchmark: TVM's time evaluator (warm-up, number x repeat, min_repeat_ms growth, zero
time limit, cooldown, f_preproc by global name) and the executors' `benchmark` built on it."""
import time

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import RelayError
from relay_backend.runtime.benchmark import (GOLDEN_RATIO, BenchmarkResult, benchmark, time_evaluator,
                                             time_per_call)
from relay_backend.runtime.packed_module import PackedModule


class _Counter:
    def __init__(self, sleep=0.0):
        self.calls = 0
        self.sleep = sleep
        self.args = []
        self.durations = []

    def __call__(self, *args):
        self.calls += 1
        self.args.append(args)
        if self.sleep:
            start = time.perf_counter()
            time.sleep(self.sleep)
            self.durations.append(time.perf_counter() - start)


def test_evaluator_warms_up_then_runs_repeat_times_number():
    fn = _Counter()
    result = time_evaluator(fn, number=4, repeat=3)("a", 1)
    assert isinstance(result, BenchmarkResult)
    assert fn.calls == 1 + 3 * 4 and set(fn.args) == {("a", 1)}
    assert len(result.results) == 3 and all(r >= 0 for r in result.results)


def test_min_repeat_ms_grows_number_by_at_least_the_golden_ratio():
    fn = _Counter(sleep=0.001)
    result = time_evaluator(fn, number=1, repeat=1, min_repeat_ms=10)()
    # first batch: 1 call (< 10 ms); then number grows to >= max(10 / t + 1, 1.618) until 10 ms
    assert fn.calls >= 1 + 1 + int(GOLDEN_RATIO)
    # seconds per call, not per batch (a batch of >= 2 calls would exceed every single call;
    # bounded by the calls' own durations, not a wall-clock constant a loaded machine can break)
    assert 0.0009 <= result.results[0] <= max(fn.durations) * 1.05
    assert time_per_call(_Counter(sleep=0.001), number=1, min_repeat_ms=5) >= 0.0009


def test_zero_time_measurements_stop_after_the_limit():
    fn = _Counter()
    clock = iter(range(10 ** 6))
    ticks = []

    def frozen_clock():                  # every measurement reads the same time: zero duration
        ticks.append(next(clock))
        return 0.0

    real = time.perf_counter
    time.perf_counter = frozen_clock
    try:
        result = time_evaluator(fn, number=1, repeat=1, min_repeat_ms=1000, limit_zero_time_iterations=3)()
    finally:
        time.perf_counter = real
    assert result.results == [0.0] and fn.calls == 1 + 3      # warm-up + 3 zero-time tries


def test_statistics_match_numpy_and_arguments_are_checked():
    result = benchmark(_Counter(), repeat=7, number=2)
    r = np.array(result.results)
    assert result.mean == pytest.approx(r.mean()) and result.median == pytest.approx(np.median(r))
    assert result.std == pytest.approx(r.std()) and result.min == r.min() and result.max == r.max()
    fn = _Counter()
    benchmark(fn, repeat=2, number=1, warmup=False)
    assert fn.calls == 2
    with pytest.raises(RelayError, match="number must be an int >= 1"):
        time_evaluator(fn, number=0)
    with pytest.raises(RelayError, match="expected a function"):
        time_evaluator(3)


def test_module_time_evaluator_runs_f_preproc_by_global_name():
    calls = []
    relay.register_func("test.benchmark.preproc", lambda *a: calls.append(("pre", a)), override=True)
    try:
        mod = PackedModule("Test", {"f": lambda *a: calls.append(("f", a))})
        result = mod.time_evaluator("f", relay.cpu(), number=2, repeat=2, f_preproc="test.benchmark.preproc",
                                    cache_flush_bytes=1024)(7)
    finally:
        relay.remove_global_func("test.benchmark.preproc")
    assert len(result.results) == 2
    assert calls == [("f", (7,)), ("pre", (7,)), ("f", (7,)), ("f", (7,)),
                     ("pre", (7,)), ("f", (7,)), ("f", (7,))]
    with pytest.raises(RelayError, match="has no function 'g'"):
        mod.time_evaluator("g", relay.cpu())
    with pytest.raises(RelayError, match="Cannot find global function 'test.benchmark.none'"):
        mod.time_evaluator("f", relay.cpu(), f_preproc="test.benchmark.none")
