"""Timing helpers shared by the benchmark suites: interleaved repeats, medians, noise."""
import random
import statistics
import time

MAX_ROUND_FACTOR = 200     # min_seconds adds at most this many times `repeats` rounds


def interleaved_medians(candidates: dict, repeats: int = 15, warmup: int = 2,
                        clock=time.perf_counter, seed: int = 0, min_seconds: float = 0.0) -> dict:
    """Time each callable `repeats` times, interleaving them so machine noise hits all alike.
    `clock` reads the time (time.thread_time: this thread's CPU time, which other processes
    on a shared machine do not inflate, for code that runs on the calling thread only).

    Each round runs the callables in a new random order (random.Random(seed)), so none always
    runs right after the same other one: what one leaves behind (its threads asleep or
    spinning, its data in the caches) then falls on every other one alike. In a fixed order
    the graph executor always ran right after onnxruntime and found our pool's worker asleep,
    while the VM and AOT, after it, found it awake (README, "The small models' rows").

    min_seconds: keep adding rounds past `repeats` until the rounds have taken this long (wall
    time, at most MAX_ROUND_FACTOR x repeats rounds). The 2-vCPU hosts this suite runs on lose
    a vCPU for 1-2 s every 10-20 s (parallel code then runs at one core's speed while a
    single-threaded loop does not slow down; benchmarks/README.md, "Slow phases"); a
    sub-millisecond model's 60 rounds take a fraction of a second, so one such phase could
    cover every sample of it. A window of several seconds holds a few phases at most, and
    the median passes over them.

    Returns {name: (median_seconds, relative_spread)} where spread = (p90 - p10) / median.
    """
    for fn in candidates.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in candidates}
    order = list(candidates.items())
    rng = random.Random(seed)
    started = time.perf_counter()
    rounds = 0
    while rounds < repeats or (time.perf_counter() - started < min_seconds
                               and rounds < repeats * MAX_ROUND_FACTOR):
        rounds += 1
        rng.shuffle(order)
        for name, fn in order:
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
