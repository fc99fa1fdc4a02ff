"""Issue 20's convolution targets against onnxruntime, interleaved in one run: a ConvTranspose, a
depthwise 3x3 Conv and a QLinearConv, each one ONNX node imported with frontend.from_onnx and
run by the graph executor at opt_level 3 (as bench_models: AlterOpLayout's NCHWc kernels with
a layout transform on each side of a lone convolution) and at opt_level 2 (the NCHW kernels),
against onnxruntime with 2 intra-op threads and no spinning (bench_models._ort_session). All
nine callables are timed round-robin in one interleaved_medians call, so the machine's noise
hits every row alike; ratio = our median / onnxruntime's on the same workload. Outputs are checked first (float: 1e-3 x max|output|;
quantized: within 1 step, onnxruntime's float requantization vs our fixed point).

    python -m benchmarks.bench_conv_ops [--repeats N] [--one-thread]

--one-thread runs both on one thread (set_num_threads(1), onnxruntime 1 intra-op thread) and
times thread CPU time (time.thread_time), as README's issue-16 one-thread table: the ratio
then measures the kernels, not how the 2-core machine's other load delays a thread pool.

Workloads (the issue's "within 2x of onnxruntime" targets):
    ConvTranspose  1x32x28x28 -> 1x32x56x56, 4x4 kernel, stride 2, pad 1 (DCGAN-style upsampling)
    depthwise Conv 1x32x112x112, 3x3, pad 1, group 32, bias (MobileNet's first depthwise layer)
    QLinearConv    1x64x56x56 uint8 x int8, 64 filters 3x3, pad 1 (bench_qnn's model)
"""
import argparse
import os
import time

import numpy as np

from .bench_models import OPT_LEVEL, _ort_session
from .bench_qnn import SHAPE as QNN_SHAPE, _model as qnn_model
from .common import interleaved_medians


def _float_conv_model(op_type, x_shape, w, b, **attrs):
    """A one-node float32 ONNX model: op_type(x, w, b) with `attrs`."""
    from onnx import TensorProto, helper, numpy_helper
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    node = helper.make_node(op_type, ["x", "w", "b"], ["y"], **attrs)
    graph = helper.make_graph([node], op_type.lower(), [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def workloads(rng):
    """[(label, onnx model, input, tolerance)]: tolerance(onnxruntime's output) is the largest
    |ours - onnxruntime| accepted."""
    x_t = rng.standard_normal((1, 32, 28, 28)).astype("float32")
    w_t = (rng.standard_normal((32, 32, 4, 4)) * 0.1).astype("float32")
    x_d = rng.standard_normal((1, 32, 112, 112)).astype("float32")
    w_d = (rng.standard_normal((32, 1, 3, 3)) * 0.3).astype("float32")
    x_q = rng.integers(0, 256, QNN_SHAPE).astype("uint8")
    return [
        ("conv2d_transpose 32x28x28 -> 32x56x56 4x4 s2",
         _float_conv_model("ConvTranspose", x_t.shape, w_t, rng.standard_normal(32).astype("float32"),
                           strides=[2, 2], pads=[1, 1, 1, 1]), x_t, lambda ref: 1e-3 * np.abs(ref).max()),
        ("depthwise conv2d 32x112x112 3x3",
         _float_conv_model("Conv", x_d.shape, w_d, rng.standard_normal(32).astype("float32"),
                           group=32, pads=[1, 1, 1, 1]), x_d, lambda ref: 1e-3 * np.abs(ref).max()),
        ("qnn conv2d 64x56x56 3x3 uint8/int8", qnn_model(rng), x_q, lambda ref: 1),
    ]


def run(repeats: int = 15, one_thread: bool = False) -> list:
    import relay_backend as relay
    from relay_backend.graph_executor import GraphModule
    from relay_backend.runtime.thread_count import set_num_threads
    if one_thread:
        set_num_threads(1)
    rng = np.random.default_rng(0)
    load = os.getloadavg()[0]
    rows = [("conv_ops: load average (1 min) before building", "load", load, None, 0.0)]
    candidates, groups = {}, []
    for label, model, x, tolerance in workloads(rng):
        sess = _ort_session(model, threads=1 if one_thread else 2)
        if sess is None:
            return rows + [(f"{label}: onnxruntime not installed", "FAILED", 0.0, None, 0.0)]
        mod, params = relay.frontend.from_onnx(model)
        ref = sess.run(None, {"x": x})[0]
        ort_name = f"{label}, onnxruntime {1 if one_thread else 2} thread(s)"
        names = [ort_name]
        candidates[ort_name] = (lambda s, v: lambda: s.run(None, {"x": v}))(sess, x)
        for level in (OPT_LEVEL, 2):
            with relay.transform.PassContext(opt_level=level):
                factory = relay.build(mod, target="llvm", params=params)
            gm = GraphModule(factory["default"](relay.cpu()))
            gm.set_input("x", x)
            gm.run()
            ours = gm.get_output(0).numpy()
            diff = np.abs(ours.astype("float64") - ref.astype("float64")).max()
            name = f"{label}, graph executor opt_level {level}"
            if ours.shape != ref.shape or diff > tolerance(ref.astype("float64")):
                rows.append((f"{name}: differs from onnxruntime (max |diff| {diff:.3g})", "FAILED", 0.0, None, 0.0))
                continue
            candidates[name] = gm.run
            names.append(name)
        groups.append(names)
    timing = interleaved_medians(candidates, repeats, clock=time.thread_time if one_thread else time.perf_counter)
    for names in groups:
        base = timing[names[0]][0]
        for name in names:
            median, spread = timing[name]
            rows.append((name, "ms", median * 1e3, median / base, spread))
    rows.append(("conv_ops: load average (1 min) after timing", "load", os.getloadavg()[0], None, 0.0))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--one-thread", action="store_true")
    args = parser.parse_args()
    for label, unit, median, ratio, spread in run(args.repeats, args.one_thread):
        shown = "" if ratio is None else f"{ratio:6.2f}"
        print(f"{label:70} {median:8.2f} {unit:4} {shown:>6} {spread:5.0%}")
