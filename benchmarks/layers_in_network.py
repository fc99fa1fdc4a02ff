"""ResNet-50's convolutions inside the network, ours against onnxruntime's, one thread each.

    python -m benchmarks.layers_in_network [--rounds 15] [--image 224]

A convolution timed alone finds its weights in cache; inside the network each layer's weights
(100 MB in all) come from memory, which is what separates the layers of a small map and many
channels. So both sides are timed in the network: onnxruntime (1 intra-op thread) with its
profiler on, which records each node's time, and our graph executor's kernels called in graph
order on one thread (thread CPU time, time.thread_time), the two alternating round by round.
Each figure is the median over the rounds (onnxruntime's first, warm-up run dropped). The
convolutions are paired by their order in the graph (both keep the ONNX order; our fused
kernel holds the conv with its bias / residual add / relu, onnxruntime's fused Conv likewise).
"""
import argparse
import collections
import json
import os
import re
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--image", type=int, default=224)
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    import tempfile

    import onnxruntime as ort

    import relay_backend as relay
    from relay_backend.testing import onnx_models

    from .bench_aot import graph_workload
    relay.runtime.set_num_threads(1)
    model, data, _, _, graph = graph_workload(onnx_models.resnet50, {"image": args.image})
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.enable_profiling = True
    opts.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    ours = collections.defaultdict(list)
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    for _ in range(args.rounds + 1):
        session.run(None, {"data": data})
        for nid, call in graph._node_execs:
            start = time.thread_time()
            call()
            ours[nid].append(time.thread_time() - start)
    theirs, order = collections.defaultdict(list), []
    with open(session.end_profiling()) as f:
        for event in json.load(f):
            if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
                name = event["name"][:-len("_kernel_time")]
                if name not in theirs:
                    order.append((name, event["args"].get("op_name"), event["args"].get("output_type_shape")))
                theirs[name].append(event["dur"] / 1e3)
    our_rows = [(graph.graph.nodes[nid].func_name.replace("tvmgen_default_fused_", ""),
                 1e3 * statistics.median(t[1:])) for nid, t in ours.items()]
    their_rows = [(op, shape, statistics.median(theirs[name][1:])) for name, op, shape in order]
    print(f"all kernels: ours {sum(t for _, t in our_rows):.2f} ms, onnxruntime's nodes "
          f"{sum(t for _, _, t in their_rows):.2f} ms")
    pairs = list(zip([r for r in our_rows if "conv2d" in r[0]], [r for r in their_rows if r[0] == "Conv"]))
    for (name, mine), (_, shape, other) in pairs:
        out = shape[0]["float"] if shape else "?"
        print(f"{re.sub(r'_[0-9]+$', '', name)[:56]:56} out {str(out):18} ours {mine:6.3f}  "
              f"ort {other:6.3f} ms  {mine / other:5.2f}x")
    print(f"convolutions: ours {sum(p[0][1] for p in pairs):.2f} ms, onnxruntime {sum(p[1][2] for p in pairs):.2f} ms")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
