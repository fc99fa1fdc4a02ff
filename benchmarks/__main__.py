"""Run every benchmark suite, print a table of medians and ratios, and write a JSON record.

    python -m benchmarks [--quick] [--only models,kernels] [--json out.json]
"""
import argparse
import datetime
import json
import os
import platform
import sys

from relay_backend.progress import progress_bar

from . import bench_aot, bench_frontend_passes, bench_kernels, bench_models, bench_symbolic, bench_vm
from . import bench_conv_ops, bench_qnn

SUITES = {"frontend_passes": bench_frontend_passes, "kernels": bench_kernels, "vm": bench_vm,
          "aot": bench_aot, "models": bench_models, "symbolic": bench_symbolic, "qnn": bench_qnn,
          "conv_ops": bench_conv_ops}


def main() -> None:
    parser = argparse.ArgumentParser(description="relay_backend benchmarks")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default="benchmarks/latest.json")
    parser.add_argument("--only", default="", help="comma-separated suite names (default: all)")
    args = parser.parse_args()
    repeats = 5 if args.quick else 15
    record = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
              "machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.python_version()}",
              "suites": {}}
    print(f"{'benchmark':58} {'median':>10} {'ratio':>7} {'spread':>7}")
    failed = []
    only = [n for n in args.only.split(",") if n]
    chosen = {name: suite for name, suite in SUITES.items() if not only or name in only}
    with progress_bar(total=len(chosen), desc="benchmarks", unit="suite") as bar:
        for name, suite in chosen.items():
            bar.set_postfix_str(name)
            rows = suite.run(repeats=repeats)
            record["suites"][name] = [dict(zip(("name", "unit", "median", "ratio", "spread"), r)) for r in rows]
            failed += [r[0] for r in rows if r[1] == "FAILED"]
            for label, unit, median, ratio, spread in rows:
                r = f"{ratio:7.2f}" if ratio is not None else f"{'':7}"
                bar.write(f"{label:58} {median:7.2f} {unit:2} {r} {spread:6.0%}", file=sys.stdout)
            bar.update(1)
    with open(args.json, "w") as f:
        json.dump(record, f, indent=2)
    print(f"\nwritten to {args.json}; ratio = median / the group's baseline (numpy for kernels, "
          "onnxruntime for models, the graph executor for vm/aot); spread = (p90 - p10) / median")
    if failed:
        print(f"\n{len(failed)} FAILED row(s):\n  " + "\n  ".join(failed), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
