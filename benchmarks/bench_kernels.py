"""Compiled kernels against numpy (and onnxruntime when installed), interleaved in one run.

- the elementwise chain relu(x*2+1) - tanh(x) on 4M float32: one fused te kernel with the
  generic schedule vs numpy op by op (vs onnxruntime, 2 threads);
- nn.dense 1024x1024x1024 with the x86 packed schedule vs numpy's BLAS matmul;
- nn.conv2d 64->64 3x3 pad 1 on 1x64x56x56 with the x86 schedule vs onnxruntime (2 threads)
  and numpy im2col + BLAS matmul.

The kernels are built straight from te (op computes + strategy schedules), so this suite does
not need the te_compiler. ratio = median / the group's first baseline (named in the label).
"""
import numpy as np

from relay_backend import te, tir
from relay_backend.codegen import build
from relay_backend.ir.types import TensorType
from relay_backend.op.nn.conv import Conv2DAttrs
from relay_backend.op.nn.dense import DenseAttrs
from relay_backend.runtime import nd
from relay_backend.strategy import schedule_default, x86_conv, x86_dense

from .common import interleaved_medians

CHAIN_N = 4 * 1024 * 1024


def _ort_session(graph):
    """An onnxruntime session on 2 threads for an onnx graph, or None when not installed."""
    try:
        import onnx
        import onnxruntime as ort
    except ImportError:
        return None
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])
    model.ir_version = min(model.ir_version, 8)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    opts.inter_op_num_threads = 1
    # ORT's workers spin after each run by default; interleaved with our kernels they would hold
    # the second core while we run (measured: 2-5x slower parallel loops), so they sleep instead.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _chain_graph():
    from onnx import TensorProto, helper
    c = lambda name, v: helper.make_tensor(name, TensorProto.FLOAT, [], [v])  # noqa: E731
    nodes = [helper.make_node("Mul", ["x", "two"], ["a"]), helper.make_node("Add", ["a", "one"], ["b"]),
             helper.make_node("Relu", ["b"], ["r"]), helper.make_node("Tanh", ["x"], ["t"]),
             helper.make_node("Sub", ["r", "t"], ["y"])]
    io = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [CHAIN_N])  # noqa: E731
    return helper.make_graph(nodes, "chain", [io("x")], [io("y")], [c("two", 2.0), c("one", 1.0)])


def _conv_graph(w):
    from onnx import TensorProto, helper, numpy_helper
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    return helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 56, 56])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 56, 56])],
                             [numpy_helper.from_array(w, "w")])


def _chain_kernel():
    x = te.placeholder((CHAIN_N,), name="x")
    a = te.compute(x.shape, lambda i: x[i] * 2.0 + 1.0, name="a")
    r = te.compute(x.shape, lambda i: tir.max(a[i], tir.const(0.0, "float32")), name="relu")
    y = te.compute(x.shape, lambda i: r[i] - te.tanh(x[i]), name="y")
    return build(te.lower(schedule_default(None, [y], "llvm"), [x, y], "chain"))["chain"]


def _x86_kernel(compute, schedule, attrs, arrays, out_shape, name):
    phs = [te.placeholder(a.shape, "float32", name=f"in{k}") for k, a in enumerate(arrays)]
    outs = compute(attrs, phs, TensorType(out_shape, "float32"))
    fn = build(te.lower(schedule(attrs, outs, "llvm"), phs + outs, name))[name]
    args = [nd.array(a) for a in arrays] + [nd.empty(out_shape, "float32")]
    return lambda: fn(*args), args[-1]


def _im2col_conv(x, w):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp[0], (3, 3), axis=(1, 2))  # C, OH, OW, 3, 3
    cols = np.ascontiguousarray(win.transpose(0, 3, 4, 1, 2)).reshape(64 * 9, 56 * 56)
    return (w.reshape(64, -1) @ cols).reshape(1, 64, 56, 56)


def _rows(group, timing, baseline):
    base = timing[baseline][0]
    return [(f"{group}, {name}" + (" (baseline)" if name == baseline else ""), "ms", t * 1e3, t / base, spread)
            for name, (t, spread) in timing.items()]


def run(repeats: int = 15) -> list:
    rng = np.random.default_rng(0)
    rows = []

    xs = rng.standard_normal(CHAIN_N).astype("float32")
    chain = _chain_kernel()
    x_nd, y_nd = nd.array(xs), nd.empty((CHAIN_N,), "float32")
    cands = {"numpy op by op": lambda: np.maximum(xs * 2 + 1, 0) - np.tanh(xs),
             "fused te kernel": lambda: chain(x_nd, y_nd)}
    sess = _ort_session(_chain_graph())
    if sess is not None:
        cands["onnxruntime 2 threads"] = lambda: sess.run(None, {"x": xs})
    rows += _rows("relu(x*2+1)-tanh(x) 4M", interleaved_medians(cands, repeats), "numpy op by op")
    np.testing.assert_allclose(y_nd.numpy(), np.maximum(xs * 2 + 1, 0) - np.tanh(xs), atol=1e-5)

    a = rng.standard_normal((1024, 1024)).astype("float32")
    w = rng.standard_normal((1024, 1024)).astype("float32")
    dense, d_out = _x86_kernel(x86_dense.dense_pack_compute, x86_dense.dense_pack_schedule, DenseAttrs(),
                               [a, w], (1024, 1024), "dense")
    timing = interleaved_medians({"numpy BLAS": lambda: a @ w.T, "x86 dense_pack": dense}, repeats)
    rows += _rows("dense 1024^3", timing, "numpy BLAS")
    np.testing.assert_allclose(d_out.numpy(), a @ w.T, rtol=1e-3, atol=1e-3)

    x = rng.standard_normal((1, 64, 56, 56)).astype("float32")
    k = (rng.standard_normal((64, 64, 3, 3)) * 0.1).astype("float32")
    conv, c_out = _x86_kernel(x86_conv.conv2d_nchw_compute, x86_conv.conv2d_nchw_schedule,
                              Conv2DAttrs(padding=(1, 1)), [x, k], (1, 64, 56, 56), "conv")
    cands = {"numpy im2col+BLAS": lambda: _im2col_conv(x, k), "x86 conv2d_nchw": conv}
    sess = _ort_session(_conv_graph(k))
    baseline = "numpy im2col+BLAS"
    if sess is not None:
        cands = {"onnxruntime 2 threads": lambda: sess.run(None, {"x": x}), **cands}
        baseline = "onnxruntime 2 threads"
    rows += _rows("conv2d 64x56x56 3x3", interleaved_medians(cands, repeats), baseline)
    np.testing.assert_allclose(c_out.numpy(), _im2col_conv(x, k), rtol=1e-3, atol=1e-3)
    return rows


if __name__ == "__main__":
    for label, unit, median, ratio, spread in run():
        print(f"{label:52} {median:8.2f} {unit} {ratio:6.2f} {spread:5.0%}")
