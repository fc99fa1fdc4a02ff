"""AOT executor vs graph executor vs onnxruntime on the same models, interleaved in one run.

Each workload is built once as an ONNX model (relay_backend.testing.onnx_models), imported with
from_onnx and built at opt_level 3 (bench_models.OPT_LEVEL), so every system runs the same graph
with the same weights. Candidates, timed interleaved (common.interleaved_medians):

- onnxruntime with 2 intra-op threads (bench_models' session), when it is importable;
- the graph executor (target "llvm": LLVM kernels called from its Python run loop);
- AOT, target "llvm": the same LLVM-compiled kernel objects linked into the model library,
  the whole model one native call (its outputs must equal the graph executor's bit for bit);
- AOT, target "c -keys=x86,cpu" (aot.c_target_like("llvm")): the same schedules as C kernels
  (codegen/c.py) compiled by cc, what AOT ran before it linked the LLVM kernels.

Every output is checked against onnxruntime (else the debug interpreter) before timing. Rows:
(name, unit, median, ratio, spread), ratio = median / onnxruntime's median for the workload
(the graph executor's without onnxruntime).

`python -m benchmarks.bench_aot [repeats] [--one-thread]`: --one-thread runs every system on
one thread (set_num_threads(1), onnxruntime with 1 intra-op thread) and times this thread's CPU
time (time.thread_time), which other processes on a loaded machine do not inflate.
"""
import time

import numpy as np

import relay_backend as relay
from relay_backend.frontend import from_onnx
from relay_backend.testing import onnx_models

from .bench_models import OPT_LEVEL, ORT, _check, _ort_session
from .common import interleaved_medians


def _workloads():
    return [("MLP 784-512-512-10 b1", onnx_models.mlp, {"batch": 1}),
            ("MLP 784-512-512-10 b64", onnx_models.mlp, {"batch": 64}),
            ("seed CNN", onnx_models.seed_cnn, {}),
            ("ResNet block 64ch 56x56", onnx_models.resnet_block, {})]


def _aot_module(mod, params, target, data):
    with relay.transform.PassContext(opt_level=OPT_LEVEL):
        factory = relay.build(mod, target=target, params=params, executor="aot")
    module = relay.aot.AotModule(factory["default"](relay.cpu(0)))
    module.set_input("data", data)
    return module, factory.workspace_size


def graph_workload(builder, kwargs) -> tuple:
    """(onnx model, input, relay module, params, graph executor with the input set) of one
    workload, built at OPT_LEVEL for the host."""
    model, shape = builder(**kwargs)
    data = np.random.default_rng(0).standard_normal(shape).astype("float32")
    mod, params = from_onnx(model)
    with relay.transform.PassContext(opt_level=OPT_LEVEL):
        graph = relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))
    graph.set_input("data", data)
    return model, data, mod, params, graph


def _workload_rows(label, builder, kwargs, repeats, threads, clock) -> list:
    model, data, mod, params, graph = graph_workload(builder, kwargs)
    aot_llvm, ws_llvm = _aot_module(mod, params, "llvm", data)
    aot_c, ws_c = _aot_module(mod, params, relay.aot.c_target_like("llvm"), data)
    candidates = {"graph executor": graph.run, f"AOT llvm kernels (ws {ws_llvm // 1024} KiB)": aot_llvm.run,
                  f"AOT C kernels (ws {ws_c // 1024} KiB)": aot_c.run}
    session = _ort_session(model, threads)
    if session is not None:
        want = session.run(None, {"data": data})[0].astype("float64")
        candidates = {_ort_name(threads): lambda: session.run(None, {"data": data}), **candidates}
        ref = _ort_name(threads)
    else:
        want = relay.create_executor("debug", mod=mod, params=params).evaluate()(data).numpy()
        ref = "the debug interpreter"
    outputs = {}
    for name, module in (("graph executor", graph), ("AOT llvm", aot_llvm), ("AOT c", aot_c)):
        module.run()
        outputs[name] = module.get_output(0).numpy()
        _check(label, name, outputs[name], want, ref)
    if not np.array_equal(outputs["AOT llvm"], outputs["graph executor"]):
        raise AssertionError(f"{label}: AOT with LLVM kernels differs from the graph executor")
    timing = interleaved_medians(candidates, repeats=repeats * 4, clock=clock)
    base = timing[_ort_name(threads) if session is not None else "graph executor"][0]
    return [(f"{label}, {name}", "ms", median * 1e3, median / base, spread)
            for name, (median, spread) in timing.items()]


def _ort_name(threads: int) -> str:
    return ORT if threads == 2 else f"onnxruntime {threads} thread{'s' if threads > 1 else ''}"


def run(repeats: int = 15, one_thread: bool = False) -> list:
    """One row per workload and system (see the module docstring); `one_thread`: everything on
    one thread, timed in this thread's CPU time."""
    if one_thread:
        relay.runtime.set_num_threads(1)
    threads, clock = (1, time.thread_time) if one_thread else (2, time.perf_counter)
    rows = []
    for label, builder, kwargs in _workloads():
        rows += _workload_rows(label, builder, kwargs, repeats, threads, clock)
    return rows


if __name__ == "__main__":
    import os
    import sys
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    print(f"load average {os.getloadavg()}", flush=True)
    for row in run(int(args[0]) if args else 15, one_thread="--one-thread" in sys.argv):
        print(f"{row[0]:64} {row[2]:8.3f} {row[1]} {row[3]:6.2f} {row[4]:5.0%}")
    print(f"load average {os.getloadavg()}")
