"""The main job: build real models, run them through every available executor, print agreement
with an independent numpy forward pass and timings.

    python -m relay_backend.demo            # full run
    python -m relay_backend.demo --quick    # fewer timing repeats (CI)
"""
import argparse
import statistics
import sys
import time

import numpy as np

from . import build_module
from .errors import ExecutorUnavailable
from .testing import seed_cnn

# Executors are tried in this order; one that is not available yet in this version is reported.
EXECUTORS = ("debug", "graph", "vm", "aot")


def _time(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_model(name, mod, params, inputs, reference, repeats, tolerance=1e-4):
    """Run one model through every executor; return rows (model, executor, diff, ms, compile s)."""
    rows = []
    for kind in EXECUTORS:
        start = time.perf_counter()
        try:
            func = build_module.create_executor(kind, mod=mod, params=params).evaluate()
        except ExecutorUnavailable as err:
            rows.append((name, kind, None, None, None, str(err).split(";")[0]))
            continue
        compile_s = time.perf_counter() - start
        out = func(**inputs).numpy()
        diff = float(np.max(np.abs(out.astype("float64") - reference)))
        latency = _time(lambda: func(**inputs), repeats) * 1e3
        status = "ok" if diff <= tolerance * max(1.0, float(np.max(np.abs(reference)))) else "MISMATCH"
        rows.append((name, kind, diff, latency, compile_s, status))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer timing repeats")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 20

    rows = []
    mod, params = seed_cnn.get_workload()
    data = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype("float32")
    reference = seed_cnn.numpy_forward(data, params)
    rows += run_model("seed CNN (conv 3->16, relu, gap, dense 16->10)", mod, params, {"data": data},
                      reference, repeats)

    header = f"{'model':48} {'executor':8} {'max |diff|':>11} {'median ms':>10} {'compile s':>10}  status"
    print(header)
    print("-" * len(header))
    failed = False
    for model, kind, diff, ms, comp, status in rows:
        if diff is None:
            print(f"{model:48} {kind:8} {'-':>11} {'-':>10} {'-':>10}  {status}")
            continue
        failed |= status != "ok"
        print(f"{model:48} {kind:8} {diff:11.2e} {ms:10.3f} {comp:10.3f}  {status}")
    print("\nreference: an independent numpy forward pass (float64)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
