"""benchmark: the one timing loop behind every executor's `benchmark(...)` and the debug profiler.

`benchmark_module` is the whole `benchmark` method of the graph and AOT modules;
`benchmark(run_once, ...)` times any callable (the VM's invoke); `time_per_call` is one batch.

    result = benchmark(lambda: gmod.run(), repeat=5, number=5, min_repeat_ms=0)
    result.median                      # seconds per call

A run is `repeat` measurements; each calls `run_once` `number` times (more if the batch took
less than `min_repeat_ms`, growing the batch until it does) and records the mean seconds per
call. One warm-up call comes first so lazy setup and cold caches are not timed. The result is
runtime.module's BenchmarkResult (mean / median / std / min / max / results).
"""
import time

from ..errors import RelayError
from .module import BenchmarkResult

MAX_NUMBER = 1 << 20                 # a batch never grows past this many calls


def time_per_call(run_once, number=5, min_repeat_ms=0) -> float:
    """Mean seconds per call of `run_once` over one batch of at least `number` calls that lasts
    at least `min_repeat_ms` (the batch doubles, or jumps to the estimated size, until it does)."""
    n = max(int(number), 1)
    min_ms = min_repeat_ms or 0
    while True:
        start = time.perf_counter()
        for _ in range(n):
            run_once()
        elapsed = time.perf_counter() - start
        if elapsed * 1e3 >= min_ms or n >= MAX_NUMBER:
            return elapsed / n
        n = max(n * 2, int(n * (min_ms / max(elapsed * 1e3, 1e-3)) * 1.1))


def benchmark(run_once, device=None, repeat=5, number=5, min_repeat_ms=0, warmup=True) -> BenchmarkResult:
    """Time `run_once` (a no-argument callable): `repeat` batches, see time_per_call.

    `device` is accepted for TVM's signature; every executor here runs on the cpu, so timing
    needs no device synchronization. `warmup=False` skips the untimed first call.
    """
    del device
    if warmup:
        run_once()
    return BenchmarkResult([time_per_call(run_once, number, min_repeat_ms) for _ in range(int(repeat))])


def benchmark_module(module, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=0,
                     end_to_end=False, **kwargs) -> BenchmarkResult:
    """TVM's `GraphModule.benchmark` for any module with set_input / run / get_num_outputs /
    get_output (the graph and AOT executors). Inputs in kwargs are set once, or, with
    end_to_end=True, on every call, which then also copies every output out to numpy."""
    if func_name != "run":
        raise RelayError(f"benchmark: only func_name='run' is supported, got {func_name!r}")
    if kwargs and not end_to_end:
        module.set_input(**kwargs)

    def once():
        if end_to_end:
            module.set_input(**kwargs)
        module.run()
        if end_to_end:
            for i in range(module.get_num_outputs()):
                module.get_output(i).numpy()

    return benchmark(once, device, repeat, number, min_repeat_ms)


__all__ = ["benchmark", "benchmark_module", "time_per_call", "BenchmarkResult", "MAX_NUMBER"]
