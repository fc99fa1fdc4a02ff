"""How long idle OpenMP workers should spin before sleeping: back-to-back small models, one
process per wait policy, interleaved.

    python -m benchmarks.bench_spin [--rounds 4] [--runs 200] [--counts 0,1000,10000,100000]

libgomp reads its wait settings once, when it is loaded, so each candidate runs in its own
process: `passive` (OMP_WAIT_POLICY=passive: workers sleep at once), `spin=N` (GOMP_SPINCOUNT=N:
spin N iterations, then sleep) and `default` (neither set: libgomp's own 300000). Each process
builds the MLP 784-512-512-10 at batch 64 and the ResNet basic block 64ch 56x56 (opt_level 3,
graph executor, 2 threads, the shared on-disk kernel cache so only the first build compiles),
then runs each model `runs` times back to back and reports the median, the 99th percentile
and the maximum wall time per run (the stalls), and the process CPU time per run (what the
spinning costs the rest of the machine). The candidates' processes are interleaved over
`rounds` rounds so load changes hit all alike; the table gives medians over rounds.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

WORKLOADS = (("MLP b64", "mlp", {"batch": 64}), ("ResNet block", "resnet_block", {}))


def _worker(runs: int) -> dict:
    """In the child: {workload: [median, p99, max, cpu per run]} in seconds."""
    import relay_backend as relay
    from relay_backend.frontend import from_onnx
    from relay_backend.testing import onnx_models

    out = {}
    for label, builder, kwargs in WORKLOADS:
        model, shape = getattr(onnx_models, builder)(**kwargs)
        mod, params = from_onnx(model)
        with relay.transform.PassContext(opt_level=3):
            gmod = relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))
        gmod.set_input("data", np.random.default_rng(0).standard_normal(shape).astype("float32"))
        for _ in range(10):
            gmod.run()
        times = []
        cpu0 = time.process_time()
        for _ in range(runs):
            start = time.perf_counter()
            gmod.run()
            times.append(time.perf_counter() - start)
        cpu = (time.process_time() - cpu0) / runs
        out[label] = [float(np.median(times)), float(np.percentile(times, 99)), max(times), cpu]
    return out


def _env(policy: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["OMP_NUM_THREADS"] = "2"
    if policy == "passive":
        env["OMP_WAIT_POLICY"] = "passive"
    elif policy.startswith("spin="):
        env["GOMP_SPINCOUNT"] = policy.split("=", 1)[1]
    return env


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--counts", default="1000,10000,100000")
    parser.add_argument("--worker", action="store_true")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.runs)))
        return
    policies = ["passive"] + [f"spin={c}" for c in args.counts.split(",") if c] + ["default"]
    results = {p: [] for p in policies}
    for _ in range(args.rounds):
        for policy in policies:
            proc = subprocess.run([sys.executable, "-m", "benchmarks.bench_spin", "--worker",
                                   "--runs", str(args.runs)], env=_env(policy), capture_output=True,
                                  text=True, check=True)
            results[policy].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; medians over {args.rounds} rounds, ms")
    print(f"{'policy':14} {'workload':13} {'median':>8} {'p99':>8} {'max':>8} {'cpu/run':>8}")
    for policy in policies:
        for label, _, _ in WORKLOADS:
            rows = np.array([r[label] for r in results[policy]]) * 1e3
            med = np.median(rows, axis=0)
            print(f"{policy:14} {label:13} {med[0]:8.3f} {med[1]:8.3f} {med[2]:8.3f} {med[3]:8.3f}")


if __name__ == "__main__":
    main()
