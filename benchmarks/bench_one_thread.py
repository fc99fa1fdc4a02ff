"""The graph executor against onnxruntime on one thread each, timed in thread CPU time.

    python -m benchmarks.bench_one_thread [rounds] [--only resnet50,resnet_block,...] [--kernels]

This is the method of README's issue-16 "One thread, CPU time" table: on a machine shared with
other processes, wall-clock medians of a 2-thread pool move by 2x from run to run, while the CPU
time of the calling thread (time.thread_time) is what other processes barely inflate. Our
kernels run on the calling thread (runtime.set_num_threads(1)), onnxruntime with one intra-op
thread; the two are called interleaved (common.interleaved_medians) and each output is checked
against onnxruntime's first (bench_models' tolerance). Ratio = our median / onnxruntime's.

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

import relay_backend as relay
from relay_backend.testing import onnx_models

from .bench_aot import graph_workload
from .bench_models import _check, _ort_session
from .common import interleaved_medians

WORKLOADS = {"resnet_block": ("ResNet block 64ch 56x56", onnx_models.resnet_block, {}),
             "resnet50": ("ResNet-50 224 b1", onnx_models.resnet50, {"image": 224}),
             "squeezenet": ("SqueezeNet 1.1 224 b1", onnx_models.squeezenet, {"image": 224}),
             "densenet121": ("DenseNet-121 224 b1", onnx_models.densenet121, {"image": 224}),
             "mlp64": ("MLP 784-512-512-10 b64", onnx_models.mlp, {"batch": 64})}


def measure(key: str, rounds: int) -> tuple:
    """(label, ours_ms, ort_ms, ratio, our_spread, ort_spread, graph module) for one workload."""
    label, builder, kwargs = WORKLOADS[key]
    model, data, _, _, graph = graph_workload(builder, kwargs)
    session = _ort_session(model, 1)
    want = session.run(None, {"data": data})[0].astype("float64")
    graph.run()
    _check(label, "graph executor", graph.get_output(0).numpy(), want)
    timing = interleaved_medians({"ours": graph.run, "ort": lambda: session.run(None, {"data": data})},
                                 repeats=rounds, clock=time.thread_time)
    (ours, ours_spread), (ort, ort_spread) = timing["ours"], timing["ort"]
    return label, ours * 1e3, ort * 1e3, ours / ort, ours_spread, ort_spread, graph


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=int, default=15)
    parser.add_argument("--only", default="resnet_block,resnet50")
    parser.add_argument("--kernels", action="store_true", help="also each fused kernel's time")
    args = parser.parse_args()
    relay.runtime.set_num_threads(1)
    print(f"load average {os.getloadavg()}", flush=True)
    for key in args.only.split(","):
        label, ours, ort, ratio, s1, s2, graph = measure(key, args.rounds)
        print(f"{label:28} ours {ours:8.2f} ms  onnxruntime {ort:8.2f} ms  ratio {ratio:5.2f}x  "
              f"spreads {s1:.0%} / {s2:.0%}", flush=True)
        if args.kernels:
            for kind, ms, calls in kernel_times(graph):
                print(f"    {ms:8.3f} ms  x{calls:3d}  {kind}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
