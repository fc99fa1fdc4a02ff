"""Whole models on one thread, in thread CPU time: the graph executor against onnxruntime.

    python -m benchmarks.one_thread_models [--repeats N] [--kernels] MODEL...

MODEL is one of squeezenet, densenet121, resnet50, resnet_block (relay_backend.testing.
onnx_models, 224x224 batch 1 for the networks). Both systems run the same ONNX model on one
thread (relay.runtime.set_num_threads(1); onnxruntime with 1 intra-op thread and no spinning),
timed in this thread's CPU time (time.thread_time), which the other processes of a shared
machine do not inflate the way they inflate wall time; the two are interleaved run by run
(common.interleaved_medians) and the graph executor builds at bench_models.OPT_LEVEL. The
output is checked against onnxruntime first. This is the method of benchmarks/README.md's
"One thread, CPU time" tables of issue 16.

--kernels adds, per fused function name (numbers stripped), the graph executor's summed
median kernel time (each kernel called alone, thread CPU time), slowest first: where a model's
time goes.
"""
import argparse
import collections
import os
import re
import statistics
import time

import numpy as np

import relay_backend as relay
from relay_backend.frontend import from_onnx
from relay_backend.testing import onnx_models

from .bench_models import OPT_LEVEL, _check, _ort_session
from .common import interleaved_medians

MODELS = {"squeezenet": (onnx_models.squeezenet, {"image": 224}),
          "densenet121": (onnx_models.densenet121, {"image": 224}),
          "resnet50": (onnx_models.resnet50, {"image": 224}),
          "resnet_block": (onnx_models.resnet_block, {})}


def _graph_module(model, data):
    mod, params = from_onnx(model)
    with relay.transform.PassContext(opt_level=OPT_LEVEL):
        factory = relay.build(mod, target="llvm", params=params)
    module = factory["default"](relay.cpu(0))
    module.set_input("data", data)
    return module


def model_row(name: str, repeats: int) -> tuple:
    """(name, ours ms, onnxruntime ms, ratio, our spread, their spread): medians of `repeats`
    interleaved runs, thread CPU time."""
    builder, kwargs = MODELS[name]
    model, shape = builder(**kwargs)
    data = np.random.default_rng(0).standard_normal(shape).astype("float32")
    module = _graph_module(model, data)
    session = _ort_session(model, threads=1)
    want = session.run(None, {"data": data})[0].astype("float64")
    module.run()
    _check(name, "graph executor", module.get_output(0).numpy(), want)
    timing = interleaved_medians({"ours": module.run, "ort": lambda: session.run(None, {"data": data})},
                                 repeats=repeats, clock=time.thread_time)
    (ours, ours_spread), (ort, ort_spread) = timing["ours"], timing["ort"]
    return name, ours * 1e3, ort * 1e3, ours / ort, ours_spread, ort_spread, module


def kernel_times(module, repeats: int = 10) -> list:
    """[(fused function name without its number, summed median ms, calls)], slowest first."""
    samples = collections.defaultdict(list)
    for _ in range(repeats):
        for nid, call in module._node_execs:
            start = time.thread_time()
            call()
            samples[nid].append(time.thread_time() - start)
    totals, counts = collections.defaultdict(float), collections.Counter()
    for nid, times in samples.items():
        kind = re.sub(r"(_\d+)+$", "", module.graph.nodes[nid].func_name).replace("tvmgen_default_fused_", "")
        totals[kind] += statistics.median(times) * 1e3
        counts[kind] += 1
    return sorted(((k, v, counts[k]) for k, v in totals.items()), key=lambda row: -row[1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+", choices=sorted(MODELS))
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--kernels", action="store_true")
    args = parser.parse_args(argv)
    relay.runtime.set_num_threads(1)
    print(f"load average {os.getloadavg()}", flush=True)
    for name in args.models:
        name, ours, ort, ratio, ours_spread, ort_spread, module = model_row(name, args.repeats)
        print(f"{name:14s} ours {ours:8.2f} ms (spread {ours_spread:4.0%})  onnxruntime {ort:8.2f} ms "
              f"(spread {ort_spread:4.0%})  ratio {ratio:5.3f}", flush=True)
        if args.kernels:
            for kind, ms, calls in kernel_times(module):
                print(f"    {ms:8.3f} ms  x{calls:3d}  {kind}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
