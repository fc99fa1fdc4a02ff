"""Run ONNX's whole backend node-test suite through relay_backend and print pass/fail/unsupported
counts by operator.

    python scripts/onnx_node_report.py [--executor debug|graph|vm] [--filter REGEX] [--failures]
                                       [--jobs N] [--passing-list FILE] [--runtime-inputs]

Two ways of counting: by default the ONNX Backend re-imports a model per run with its integer
inputs bound as constants when a converter needs their values (Reshape's shape, Pad's pads, ...
given as graph inputs); --runtime-inputs supplies every graph input at run time instead (shape-like
inputs must then be handled by the dyn ops; a model that needs them bound counts as unsupported).

Tests run in child processes (chunks of 16, --jobs at a time), so a crash in native code marks
that one test as failed instead of ending the report.
"""
import argparse
import collections
import concurrent.futures as cf
import json
import re
import subprocess
import sys

_CHILD = """
import json, sys
from relay_backend.frontend.onnx.node_tests import run_node_test
for name in sys.argv[3:]:
    op, err = run_node_test(name, sys.argv[1], bind_inputs=sys.argv[2] == "bind")
    print(json.dumps([name, op, err]), flush=True)
"""


def _run_chunk(names, executor, timeout=600, bind="bind"):
    """[(name, op, err)] for `names`, run in one child; a crash retries the rest one by one."""
    try:
        proc = subprocess.run([sys.executable, "-c", _CHILD, executor, bind, *names], capture_output=True,
                              text=True, timeout=timeout)
        out, rc = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired as err:
        out, rc = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else (err.stdout or ""), -1
    done = [json.loads(line) for line in out.splitlines() if line.startswith("[")]
    rest = names[len(done):]
    if rc != 0 and rest:
        if len(names) == 1:
            return [(names[0], "?", f"fail: the test process died (exit {rc})")]
        done += [r for n in rest for r in _run_chunk([n], executor, timeout, bind)]
    return [tuple(r) for r in done]


def main(argv=None):
    from relay_backend.frontend.onnx.node_tests import list_node_tests
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--executor", default="debug")
    p.add_argument("--filter", default="")
    p.add_argument("--failures", action="store_true", help="print each failing test and why")
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--passing-list", help="write the names of passing tests to this file")
    p.add_argument("--runtime-inputs", action="store_true",
                   help="supply every graph input at run time (never re-import with integer inputs bound)")
    a = p.parse_args(argv)
    names = [n for n in list_node_tests() if re.search(a.filter, n)]
    chunks = [names[i:i + 16] for i in range(0, len(names), 16)]
    by_op = collections.defaultdict(collections.Counter)
    passing, failures = [], []
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        bind = "runtime" if a.runtime_inputs else "bind"
        for results in pool.map(lambda c: _run_chunk(c, a.executor, bind=bind), chunks):
            for name, op, err in results:
                kind = "pass" if err is None else err.split(":")[0]
                by_op[op][kind] += 1
                (passing.append(name) if err is None else failures.append((name, err)))
    total = collections.Counter()
    print(f"{'operator':32s} {'pass':>5s} {'fail':>5s} {'unsup':>6s}")
    for op in sorted(by_op):
        c = by_op[op]
        total.update(c)
        print(f"{op:32s} {c['pass']:5d} {c['fail']:5d} {c['unsupported']:6d}")
    print(f"{'TOTAL':32s} {total['pass']:5d} {total['fail']:5d} {total['unsupported']:6d}   "
          f"({len(names)} tests, executor={a.executor}, "
          f"{'every input at run time' if a.runtime_inputs else 'integer inputs bound when needed'})")
    if a.failures:
        for name, err in sorted(failures):
            print(f"{name}: {err}")
    if a.passing_list:
        with open(a.passing_list, "w") as f:
            f.write("\n".join(sorted(passing)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
