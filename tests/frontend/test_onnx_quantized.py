"""The quantized ONNX ops (converters/quantized.py, the relay.qnn dialect) against onnxruntime:
QuantizeLinear / DequantizeLinear per tensor and per axis, QLinearConv with constant (bound)
int8 weights and per-channel scales, ConvInteger, MatMulInteger with per-row / per-column zero
points, QLinearMatMul (saturating as the spec and onnxruntime; ONNX's own int8 node-test data
wraps instead), DynamicQuantizeLinear, and blocked quantization (block_size, opset 21; node tests
test_quantizelinear_blocked_{asymmetric,symmetric}, test_dequantizelinear_blocked).

Tolerance: quantized outputs within 1 step of onnxruntime (its requantization rounds a float
product, ours the 31-bit fixed-point one); integer accumulations (ConvInteger, MatMulInteger)
and dequantized floats exact.
"""
import numpy as np
import pytest
from onnx import helper

from .conftest import make_model, run_ort, run_relay

from relay_backend.errors import OpNotImplemented  # noqa: E402
import relay_backend as relay  # noqa: E402

RNG = np.random.default_rng(0)


def _close_q(outs, refs, steps=1):
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        assert o.shape == r.shape and o.dtype == r.dtype, (o.shape, o.dtype, r.shape, r.dtype)
        if r.dtype.kind == "f":
            np.testing.assert_allclose(o, r, rtol=1e-6, atol=1e-6)
        else:
            assert np.abs(o.astype(int) - r.astype(int)).max(initial=0) <= steps


def _q(shape, dtype):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, size=shape).astype(dtype)


@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_quantize_dequantize_per_axis(kind):
    x = RNG.uniform(-4, 4, (2, 3, 4)).astype("float32")
    scale = np.array([0.02, 0.05, 0.1], "float32")
    zp = np.array([-3, 0, 7], "int8")
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)]
    m = make_model(nodes, [("x", "float32", [2, 3, 4]), ("s", "float32", [3]), ("z", "int8", [3])],
                   [("q", "int8", None), ("y", "float32", None)])
    feeds = {"x": x, "s": scale, "z": zp}
    _close_q(run_relay(m, feeds, kind), run_ort(m, feeds), steps=0)


def _qlinear_conv_model(per_channel: bool):
    # 7-bit weights: onnxruntime's uint8 x int8 kernels on CPUs without VNNI sum pairs of
    # products in saturating int16 (its documented reduce_range), so full-range int8 weights
    # would test its rounding of sums, not ours
    w = RNG.integers(-64, 64, (4, 3, 3, 3)).astype("int8")
    w_scale = np.array([0.01, 0.02, 0.015, 0.03], "float32") if per_channel else np.array(0.02, "float32")
    inits = {"w": w, "w_scale": w_scale, "w_zp": np.zeros(w_scale.shape, "int8"),
             "x_scale": np.array(0.05, "float32"), "x_zp": np.array(128, "uint8"),
             "y_scale": np.array(0.2, "float32"), "y_zp": np.array(120, "uint8"),
             "b": RNG.integers(-500, 500, 4).astype("int32")}
    node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "b"],
                            ["y"], pads=[1, 1, 1, 1], strides=[2, 1])
    return make_model([node], [("x", "uint8", [1, 3, 7, 6])], [("y", "uint8", None)], inits)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_qlinear_conv_matches_onnxruntime(per_channel, kind):
    m = _qlinear_conv_model(per_channel)
    feeds = {"x": _q((1, 3, 7, 6), "uint8")}
    _close_q(run_relay(m, feeds, kind), run_ort(m, feeds))


def test_conv_integer_and_matmul_integer_are_exact():
    conv = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[0, 1, 0, 1])
    m = make_model([conv], [("x", "uint8", [1, 2, 4, 5]), ("w", "uint8", [3, 2, 2, 2])], [("y", "int32", None)],
                   {"xz": np.array(100, "uint8"), "wz": np.array(7, "uint8")})
    feeds = {"x": _q((1, 2, 4, 5), "uint8"), "w": _q((3, 2, 2, 2), "uint8")}
    _close_q(run_relay(m, feeds, "graph"), run_ort(m, feeds), steps=0)
    mm = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    m = make_model([mm], [("a", "uint8", [2, 3, 4]), ("b", "uint8", [4, 5]), ("az", "uint8", []),
                          ("bz", "uint8", [5])], [("y", "int32", None)])
    feeds = {"a": _q((2, 3, 4), "uint8"), "b": _q((4, 5), "uint8"), "az": np.array(9, "uint8"),
             "bz": _q((5,), "uint8")}
    _close_q(run_relay(m, feeds, "graph"), run_ort(m, feeds), steps=0)


def test_matmul_integer_per_row_zero_point():
    """A 1-D a_zero_point holds one value per row of a (onnxruntime rejects it; numpy decides)."""
    mm = helper.make_node("MatMulInteger", ["a", "b", "az"], ["y"])
    m = make_model([mm], [("a", "uint8", [3, 4]), ("b", "uint8", [4, 2]), ("az", "uint8", [3])],
                   [("y", "int32", None)])
    feeds = {"a": _q((3, 4), "uint8"), "b": _q((4, 2), "uint8"), "az": _q((3,), "uint8")}
    want = (feeds["a"].astype(np.int64) - feeds["az"].astype(np.int64)[:, None]) @ feeds["b"].astype(np.int64)
    for kind in ("debug", "vm"):
        np.testing.assert_array_equal(run_relay(m, feeds, kind)[0], want.astype("int32"))


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_qlinear_matmul_saturates_as_onnxruntime(dtype):
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    m = make_model([node], [("a", dtype, [3, 8]), ("b", dtype, [8, 4])], [("y", dtype, None)],
                   {"as": np.array(0.02, "float32"), "az": np.array(3, dtype), "bs": np.array(0.01, "float32"),
                    "bz": np.array(5, dtype), "ys": np.array(0.004, "float32"), "yz": np.array(10, dtype)})
    feeds = {"a": _q((3, 8), dtype), "b": _q((8, 4), dtype)}
    out, ref = run_relay(m, feeds, "graph"), run_ort(m, feeds)
    assert np.isin(ref[0], np.iinfo(dtype).min).any() or np.isin(ref[0], np.iinfo(dtype).max).any()
    _close_q(out, ref)


def test_dynamic_quantize_linear():
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    m = make_model([node], [("x", "float32", [3, 5])], [("y", "uint8", None), ("s", "float32", None),
                                                        ("z", "uint8", None)], opset=13)
    feeds = {"x": RNG.uniform(-2, 5, (3, 5)).astype("float32")}
    _close_q(run_relay(m, feeds, "graph"), run_ort(m, feeds), steps=0)


@pytest.mark.parametrize("executor", ["debug", "graph"])
@pytest.mark.parametrize("shape,axis,block,dtype", [((3, 4), 1, 2, "uint8"), ((3, 5), 1, 2, "int8"),
                                                    ((4, 3, 2), 0, 3, "int16"), ((2, 6), -1, 4, "uint16")])
def test_blocked_quantization_matches_onnxruntime(executor, shape, axis, block, dtype):
    """QuantizeLinear then DequantizeLinear with per-block scales and zero points (the last block
    may be partial); the quantized values exact, the dequantized ones to float32 rounding."""
    axis_n = axis % len(shape)
    pshape = tuple(-(-d // block) if i == axis_n else d for i, d in enumerate(shape))
    rng = np.random.default_rng(5)
    x = rng.uniform(-30, 30, shape).astype("float32")
    scale = rng.uniform(0.05, 0.5, pshape).astype("float32")
    info = np.iinfo(dtype)
    zp = rng.integers(max(info.min, -20), min(info.max, 20) + 1, pshape).astype(dtype)
    q = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=axis, block_size=block)
    dq = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=axis, block_size=block)
    m = make_model([q, dq], [("x", "float32", list(shape))], [("q", dtype, None), ("y", "float32", None)],
                   {"s": scale, "z": zp}, opset=21)
    _close_q(run_relay(m, {"x": x}, executor), run_ort(m, {"x": x}), steps=0)


def test_blocked_quantization_rejects_a_scale_of_the_wrong_shape():
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1, block_size=2)
    m = make_model([node], [("x", "float32", [2, 4])], [("y", "uint8", None)], {"s": np.ones((2, 3), "float32")},
                   opset=21)
    with pytest.raises(relay.errors.RelayError, match=r"blocks of 2 along axis 1 .* need \(2, 2\)"):
        relay.frontend.from_onnx(m)


def test_qlinear_conv_lowers_to_integer_kernels():
    mod, params = relay.frontend.from_onnx(_qlinear_conv_model(True))
    lib = relay.build(mod, target="llvm", params=params)
    assert "qnn." not in lib.get_graph_json() and "conv2d" in lib.get_graph_json()
    assert '"uint8"' in lib.get_graph_json()      # the quantized type reaches the graph (no float detour)


def _ms_model(nodes, inputs, outputs, inits):
    m = make_model(nodes, inputs, outputs, inits)
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return m


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_com_microsoft_qlinear_binary_matches_onnxruntime(op):
    node = helper.make_node(op, ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"], domain="com.microsoft")
    m = _ms_model([node], [("a", "uint8", [2, 3, 4]), ("b", "uint8", [3, 4])], [("c", "uint8", None)],
                  {"as": np.array(0.03, "float32"), "az": np.array(120, "uint8"), "bs": np.array(0.05, "float32"),
                   "bz": np.array(130, "uint8"), "cs": np.array(0.06, "float32"), "cz": np.array(125, "uint8")})
    feeds = {"a": _q((2, 3, 4), "uint8"), "b": _q((3, 4), "uint8")}
    _close_q(run_relay(m, feeds, "graph"), run_ort(m, feeds))


def test_com_microsoft_qlinear_sigmoid_leaky_relu_concat_match_onnxruntime():
    nodes = [helper.make_node("QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["s"], domain="com.microsoft"),
             helper.make_node("QLinearLeakyRelu", ["x", "xs", "xz", "ys", "yz"], ["l"], alpha=0.2,
                              domain="com.microsoft"),
             helper.make_node("QLinearConcat", ["ys", "yz", "s", "ys", "yz", "x", "xs", "xz"], ["c"], axis=1,
                              domain="com.microsoft")]
    m = _ms_model(nodes, [("x", "int8", [2, 6])], [("s", "int8", None), ("l", "int8", None), ("c", "int8", None)],
                  {"xs": np.array(0.05, "float32"), "xz": np.array(-3, "int8"), "ys": np.array(0.01, "float32"),
                   "yz": np.array(-100, "int8")})
    feeds = {"x": _q((2, 6), "int8")}
    _close_q(run_relay(m, feeds, "graph"), run_ort(m, feeds))


def test_other_custom_domains_stay_unsupported():
    node = helper.make_node("QLinearSoftmax", ["x"], ["y"], domain="com.microsoft")
    m = _ms_model([node], [("x", "uint8", [2])], [("y", "uint8", None)], {})
    with pytest.raises(OpNotImplemented, match="custom domain 'com.microsoft'"):
        relay.frontend.from_onnx(m)
