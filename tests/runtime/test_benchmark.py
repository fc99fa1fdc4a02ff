"""runtime.benchmark: the shared timing loop of the graph, AOT (and VM) executors."""
import time

import numpy as np
import pytest

from relay_backend.errors import RelayError
from relay_backend.runtime.benchmark import BenchmarkResult, benchmark, benchmark_module, time_per_call


class _Counter:
    def __init__(self, sleep=0.0):
        self.calls = 0
        self.sleep = sleep

    def __call__(self):
        self.calls += 1
        if self.sleep:
            time.sleep(self.sleep)


def test_benchmark_calls_warmup_then_repeat_times_number():
    fn = _Counter()
    result = benchmark(fn, repeat=3, number=4)
    assert isinstance(result, BenchmarkResult)
    assert fn.calls == 1 + 3 * 4
    assert len(result.results) == 3
    fn = _Counter()
    benchmark(fn, repeat=2, number=0, warmup=False)      # number < 1 still runs one call
    assert fn.calls == 2


def test_statistics_match_numpy():
    result = benchmark(_Counter(), repeat=7, number=2)
    r = np.array(result.results)
    assert result.mean == pytest.approx(r.mean()) and result.median == pytest.approx(np.median(r))
    assert result.std == pytest.approx(r.std()) and result.min == r.min() and result.max == r.max()
    assert (r > 0).all()


def test_min_repeat_ms_grows_the_batch():
    fn = _Counter(sleep=0.001)
    seconds = time_per_call(fn, number=1, min_repeat_ms=20)
    assert fn.calls >= 2, "a 1 ms call cannot fill 20 ms in one call"
    assert 0.0009 <= seconds <= 0.02               # per call, not per batch (sleep >= 1 ms)


class _FakeModule:
    """Records what benchmark_module asks of an executor module."""

    def __init__(self):
        self.log = []

    def set_input(self, **kwargs):
        self.log.append(("set_input", tuple(sorted(kwargs))))

    def run(self):
        self.log.append(("run",))

    def get_num_outputs(self):
        return 2

    def get_output(self, i):
        self.log.append(("get_output", i))
        return type("Out", (), {"numpy": lambda self: np.zeros(1)})()


def test_benchmark_module_sets_inputs_once_or_every_call():
    mod = _FakeModule()
    benchmark_module(mod, repeat=2, number=1, x=1)
    assert mod.log.count(("set_input", ("x",))) == 1 and mod.log.count(("run",)) == 3
    mod = _FakeModule()
    benchmark_module(mod, repeat=2, number=1, end_to_end=True, x=1)
    assert mod.log.count(("set_input", ("x",))) == 3
    assert mod.log.count(("get_output", 1)) == 3


def test_benchmark_module_rejects_other_functions():
    with pytest.raises(RelayError, match="only func_name='run'"):
        benchmark_module(_FakeModule(), func_name="invoke")
