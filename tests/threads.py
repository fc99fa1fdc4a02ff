"""Run one check from several Python threads at once, for the tests of what executors and
the thread pool share between threads: each thread's failures are collected and reported in
the test's own thread (an assertion inside a worker thread would not fail the test)."""
import threading


def failures_in_threads(work, count: int) -> list:
    """Call work(seed) for seed in range(count), each in its own thread, all at once; work
    returns True when its checks passed. Returns the failures: (seed, False) for a False
    return, (seed, exception) for one raised."""
    failures = []

    def run(seed):
        try:
            if not work(seed):
                failures.append((seed, False))
        except Exception as err:       # noqa: BLE001 - reported to the test's thread
            failures.append((seed, err))
    threads = [threading.Thread(target=run, args=(seed,)) for seed in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures
