"""Run every benchmark suite, print a table of medians and ratios, and write a JSON record.

    python -m benchmarks [--quick] [--json out.json]
"""
import argparse
import datetime
import json
import os
import platform

from . import bench_aot, bench_frontend_passes, bench_kernels, bench_vm

SUITES = {"frontend_passes": bench_frontend_passes, "kernels": bench_kernels, "vm": bench_vm,
          "aot": bench_aot}


def main() -> None:
    parser = argparse.ArgumentParser(description="relay_backend benchmarks")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default="benchmarks/latest.json")
    args = parser.parse_args()
    repeats = 5 if args.quick else 15
    record = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
              "machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.python_version()}",
              "suites": {}}
    print(f"{'benchmark':44} {'median':>10} {'ratio':>7} {'spread':>7}")
    for name, suite in SUITES.items():
        rows = suite.run(repeats=repeats)
        record["suites"][name] = [dict(zip(("name", "unit", "median", "ratio", "spread"), r)) for r in rows]
        for label, unit, median, ratio, spread in rows:
            r = f"{ratio:7.2f}" if ratio is not None else f"{'':7}"
            print(f"{label:44} {median:7.2f} {unit:2} {r} {spread:6.0%}")
    with open(args.json, "w") as f:
        json.dump(record, f, indent=2)
    print(f"\nwritten to {args.json}; ratio = median / the numpy baseline of the same group; "
          "spread = (p90 - p10) / median")


if __name__ == "__main__":
    main()
