"""Build time of whole models, each build in a fresh process (the on-disk cache at work).

    python -m benchmarks.bench_compile                     # ResNet-50 and DenseNet-121 at 224
    python -m benchmarks.bench_compile resnet50 squeezenet # any relay_backend.testing.onnx_models builder
    python -m benchmarks.bench_compile --opt-level 3       # as the models suite builds (AlterOpLayout)

For every model, three builds in new processes, in this order: cold with the kernels compiled
in-process (RB_COMPILE_JOBS=1, an empty cache), cold with the compile pool (another empty
cache), and a second process reading the second cache. Each reports the wall time of
`relay.build` alone (not the import or the ONNX import), the CPU time of the process and its
compile workers during the build (wall time on a shared machine mostly measures the other
sessions: compare CPU), and how many LLVM compiles it ran. Not part of `python -m benchmarks`
(a cold DenseNet-121 is minutes of CPU); benchmarks/README.md records a run.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

# argv: builder name, kwargs (JSON), opt_level ("" for PassContext's default). Prints {"wall", "cpu", "llvm"}.
_CHILD = """
import json, resource, sys, time
import relay_backend as relay
from relay_backend.codegen import llvm_pool, llvm_target
from relay_backend.frontend import from_onnx
from relay_backend.testing import onnx_models
model, _ = getattr(onnx_models, sys.argv[1])(**json.loads(sys.argv[2]))
mod, params = from_onnx(model)
def cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime
before = cpu(resource.RUSAGE_SELF)
start = time.perf_counter()
opt = relay.transform.PassContext(opt_level=int(sys.argv[3])) if sys.argv[3] else relay.transform.PassContext.current()
with opt:
    relay.build(mod, target="llvm", params=params)
wall = time.perf_counter() - start
spent = cpu(resource.RUSAGE_SELF) - before
llvm_pool.shutdown_pool()             # the workers' CPU time counts once they are reaped
print(json.dumps({"wall": wall, "cpu": spent + cpu(resource.RUSAGE_CHILDREN),
                  "llvm": llvm_target.compile_count()}))
"""


def build_in_new_process(builder_name: str, kwargs: dict, opt_level: int = None, **env) -> dict:
    """{"wall", "cpu", "llvm"} of `relay.build` of onnx_models.<builder_name>(**kwargs) (at
    `opt_level`, default PassContext's) in a new process with the RB_* settings `env` added to
    this one's environment."""
    full_env = {**os.environ, "RB_PROGRESS": "0", **env}
    level = "" if opt_level is None else str(opt_level)
    proc = subprocess.run([sys.executable, "-c", _CHILD, builder_name, json.dumps(kwargs), level],
                          env=full_env, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"building {builder_name} in a new process failed: {proc.stderr[-800:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def second_process_build_s(builder, kwargs, cache_dir, opt_level: int = None) -> float:
    """build() wall time (at `opt_level`, that of the cold build) in a new process whose disk
    cache (`cache_dir`) holds what a cold build compiled; a RuntimeError if that process runs
    any LLVM compile."""
    result = build_in_new_process(builder.__name__, kwargs, opt_level, RB_CACHE_DIR=cache_dir,
                                  RB_NO_DISK_CACHE="")
    if result["llvm"]:
        raise RuntimeError(f"the second process ran {result['llvm']} LLVM compiles; the disk "
                           f"cache should have served every kernel")
    return result["wall"]


def run(models=("resnet50", "densenet121"), image: int = 224, opt_level: int = None) -> list:
    """Rows (model, build, wall s, CPU s, LLVM compiles) for each model, built at `opt_level`
    (default: PassContext's)."""
    rows = []
    for name in models:
        kwargs = {"image": image}
        serial_dir, pool_dir = tempfile.mkdtemp(prefix="rb_bench_"), tempfile.mkdtemp(prefix="rb_bench_")
        try:
            for label, env in (("cold, in-process (RB_COMPILE_JOBS=1)",
                                {"RB_CACHE_DIR": serial_dir, "RB_COMPILE_JOBS": "1"}),
                               ("cold, compile pool", {"RB_CACHE_DIR": pool_dir}),
                               ("second process (disk cache)", {"RB_CACHE_DIR": pool_dir})):
                result = build_in_new_process(name, kwargs, opt_level, RB_NO_DISK_CACHE="", **env)
                rows.append((name, label, result["wall"], result["cpu"], result["llvm"]))
                print(f"{name:14} {label:38} wall {result['wall']:7.2f} s  CPU {result['cpu']:7.2f} s  "
                      f"LLVM compiles {result['llvm']}", flush=True)
        finally:
            shutil.rmtree(serial_dir, ignore_errors=True)
            shutil.rmtree(pool_dir, ignore_errors=True)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=["resnet50", "densenet121"],
                        help="relay_backend.testing.onnx_models builders")
    parser.add_argument("--opt-level", type=int, default=None, help="PassContext opt_level (default: its own)")
    args = parser.parse_args()
    run(tuple(args.models), opt_level=args.opt_level)
