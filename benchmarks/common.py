"""Timing helpers shared by the benchmark suites: interleaved repeats, medians, noise."""
import statistics
import time


def interleaved_medians(candidates: dict, repeats: int = 15, warmup: int = 2, clock=time.perf_counter) -> dict:
    """Time each callable `repeats` times, interleaving them so machine noise hits all alike.
    `clock` is wall time by default; time.thread_time measures one-thread runs in CPU time,
    which other processes on a shared machine do not inflate.

    Returns {name: (median_seconds, relative_spread)} where spread = (p90 - p10) / median.
    """
    for fn in candidates.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in candidates}
    for _ in range(repeats):
        for name, fn in candidates.items():
            start = clock()
            fn()
            samples[name].append(clock() - start)
    out = {}
    for name, times in samples.items():
        times.sort()
        median = statistics.median(times)
        lo, hi = times[len(times) // 10], times[(len(times) * 9) // 10]
        out[name] = (median, (hi - lo) / median if median else 0.0)
    return out
