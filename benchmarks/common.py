"""Timing helpers shared by the benchmark suites: interleaved repeats, medians, noise."""
import statistics
import time


def interleaved_medians(candidates: dict, repeats: int = 15, warmup: int = 2) -> dict:
    """Time each callable `repeats` times, interleaving them so machine noise hits all alike.

    Returns {name: (median_seconds, relative_spread)} where spread = (p90 - p10) / median.
    """
    for fn in candidates.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in candidates}
    for _ in range(repeats):
        for name, fn in candidates.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    out = {}
    for name, times in samples.items():
        times.sort()
        median = statistics.median(times)
        lo, hi = times[len(times) // 10], times[(len(times) * 9) // 10]
        out[name] = (median, (hi - lo) / median if median else 0.0)
    return out
