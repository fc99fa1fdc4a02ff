"""A quantized convolution: the same ONNX QLinearConv (uint8 activations, int8 weights, per-tensor
scales, int32 bias) imported with frontend.from_onnx and run by the graph executor (qnn.conv2d +
requantize lowered to an int32 conv kernel with the fixed-point requantize fused into it), against
onnxruntime's QLinearConv (2 threads), interleaved in one run.

    python -m benchmarks.bench_qnn [--repeats N]

Shapes: 1x64x56x56, 64 filters 3x3, pad 1 (the float conv2d row of bench_kernels). The outputs are
checked first: within 1 quantized step of onnxruntime (its float requantization vs our fixed
point); the weights are 7-bit so onnxruntime's non-VNNI uint8 x int8 kernels do not saturate.
"""
import argparse

import numpy as np

from .bench_models import _ort_session
from .common import interleaved_medians

SHAPE = (1, 64, 56, 56)
FILTERS = 64


def _model(rng):
    from onnx import TensorProto, helper, numpy_helper
    w = rng.integers(-64, 64, (FILTERS, SHAPE[1], 3, 3)).astype("int8")
    inits = {"w": w, "w_scale": np.array(0.01, "float32"), "w_zp": np.array(0, "int8"),
             "x_scale": np.array(0.02, "float32"), "x_zp": np.array(128, "uint8"),
             "y_scale": np.array(0.5, "float32"), "y_zp": np.array(100, "uint8"),
             "b": rng.integers(-2000, 2000, FILTERS).astype("int32")}
    node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "b"],
                            ["y"], pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "qconv", [helper.make_tensor_value_info("x", TensorProto.UINT8, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def run(repeats: int = 15) -> list:
    import relay_backend as relay
    from relay_backend.graph_executor import GraphModule
    rng = np.random.default_rng(0)
    model = _model(rng)
    x = rng.integers(0, 256, SHAPE).astype("uint8")
    mod, params = relay.frontend.from_onnx(model)
    gm = GraphModule(relay.build(mod, target="llvm", params=params)["default"](relay.cpu()))
    gm.set_input("x", x)
    label = f"qnn conv2d {SHAPE[1]}x{SHAPE[2]}x{SHAPE[3]} 3x3 uint8/int8"
    sess = _ort_session(model)   # 2 threads, no spinning (as every suite)
    if sess is None:
        return [(f"{label}: onnxruntime not installed", "FAILED", 0.0, None, 0.0)]
    gm.run()
    ours, ref = gm.get_output(0).numpy(), sess.run(None, {"x": x})[0]
    if np.abs(ours.astype(int) - ref.astype(int)).max() > 1:
        return [(f"{label}: differs from onnxruntime by more than 1 step", "FAILED", 0.0, None, 0.0)]
    timing = interleaved_medians({"onnxruntime QLinearConv 2 threads": lambda: sess.run(None, {"x": x}),
                                  "graph executor (qnn.conv2d + requantize)": gm.run}, repeats)
    base = timing["onnxruntime QLinearConv 2 threads"][0]
    return [(f"{label}, {name}", "ms", t * 1e3, t / base, spread) for name, (t, spread) in timing.items()]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    for row in run(parser.parse_args().repeats):
        label, unit, median, ratio, spread = row
        print(f"{label:70} {median:8.2f} {unit} {ratio if ratio is None else f'{ratio:6.2f}'} {spread:5.0%}")
