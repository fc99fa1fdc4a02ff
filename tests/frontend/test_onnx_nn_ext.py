"""The converters of converters/nn_ext.py on cases ONNX's node tests leave out, against
onnxruntime (the independent reference): ConvTranspose whose output_shape asks past the full
extent (negative pads), 3-D and grouped transposed convolutions, GroupNormalization's two
opsets, SoftmaxCrossEntropyLoss's second output, Upsample with scales known only at run time,
and 3-D / ceil_mode pools. Tolerance: assert_close's default (1e-5, scaled to the output)."""
import numpy as np
import pytest
from onnx import helper

from .conftest import assert_close, make_model, run_ort, run_relay

F = "float32"
RNG = np.random.default_rng(0)


def _rand(*shape):
    return RNG.standard_normal(shape).astype(F)


@pytest.mark.parametrize("attrs,x_shape,w_shape", [
    (dict(strides=[3, 2], output_shape=[10, 8]), (1, 2, 3, 3), (2, 3, 3, 3)),             # negative end pad
    (dict(strides=[2, 2], output_shape=[9, 9], auto_pad="SAME_UPPER"), (1, 1, 4, 4), (1, 1, 3, 3)),
    (dict(strides=[2, 1], pads=[1, 0, 0, 1], output_padding=[1, 0], group=2), (1, 4, 3, 4), (4, 1, 3, 2)),
    (dict(strides=[2, 2, 1], dilations=[1, 2, 1]), (1, 2, 2, 3, 2), (2, 2, 2, 2, 2)),
    (dict(strides=[2], auto_pad="SAME_LOWER"), (2, 3, 5), (3, 2, 3)),
])
@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_conv_transpose_matches_onnxruntime(attrs, x_shape, w_shape, kind):
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)
    bias = _rand(w_shape[1] * attrs.get("group", 1))
    m = make_model([node], [("x", F, list(x_shape))], [("y", F, None)], {"w": _rand(*w_shape), "b": bias}, opset=17)
    feeds = {"x": _rand(*x_shape)}
    assert_close(run_relay(m, feeds, kind), run_ort(m, feeds))


@pytest.mark.parametrize("opset,per", [(18, "group"), (21, "channel")])
def test_group_normalization_both_opsets(opset, per):
    c, groups = 6, 3
    n = groups if per == "group" else c
    node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=groups, epsilon=1e-3)
    m = make_model([node], [("x", F, [2, c, 3, 2])], [("y", F, None)],
                   {"s": _rand(n), "b": _rand(n)}, opset=opset)
    feeds = {"x": _rand(2, c, 3, 2)}
    assert_close(run_relay(m, feeds), run_ort(m, feeds))


def test_softmax_cross_entropy_loss_with_log_prob_output():
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["s", "t", "w"], ["loss", "log_prob"], reduction="mean",
                            ignore_index=1)
    m = make_model([node], [("s", F, [3, 4, 2]), ("t", "int64", [3, 2])], [("loss", F, None), ("log_prob", F, None)],
                   {"w": np.abs(_rand(4)) + 0.5}, opset=13)
    feeds = {"s": _rand(3, 4, 2), "t": np.array([[0, 1], [3, 2], [1, 1]], "int64")}
    for kind in ("debug", "graph"):
        assert_close(run_relay(m, feeds, kind), run_ort(m, feeds))


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_upsample_with_run_time_scales_uses_the_dyn_op(kind):
    node = helper.make_node("Upsample", ["x", "scales"], ["y"], mode="linear")
    m = make_model([node], [("x", F, [1, 2, 3, 4]), ("scales", F, [4])], [("y", F, None)], opset=9)
    x = _rand(1, 2, 3, 4)
    for scales in ([1, 1, 2, 2], [1, 1, 3, 1.5]):
        feeds = {"x": x, "scales": np.array(scales, F)}
        assert_close(run_relay(m, feeds, kind), run_ort(m, feeds))


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_5d_upsample_with_run_time_scales_refuses_a_fractional_length(kind):
    """5-D Upsample with run-time scales runs dyn.nn.upsampling3d, whose lengths and coordinates
    follow round(in * scale) and out / in: exact while every in * scale is whole; otherwise (and
    for a batch or channel scale other than 1) the run stops with an InputError instead of
    giving onnxruntime a different answer."""
    from relay_backend.errors import InputError
    node = helper.make_node("Upsample", ["x", "scales"], ["y"], mode="linear")
    m = make_model([node], [("x", F, [1, 1, 3, 2, 3]), ("scales", F, [5])], [("y", F, None)], opset=9)
    x = _rand(1, 1, 3, 2, 3)
    feeds = {"x": x, "scales": np.array([1, 1, 2, 1.5, 1], F)}
    assert_close(run_relay(m, feeds, kind), run_ort(m, feeds))
    for bad in ([1, 1, 1.5, 2, 1], [2, 1, 1, 1, 1]):
        with pytest.raises(InputError):
            run_relay(m, {"x": x, "scales": np.array(bad, F)}, kind)


@pytest.mark.parametrize("op,attrs,shape", [
    ("MaxPool", dict(kernel_shape=[2, 3, 2], strides=[2, 2, 1], pads=[1, 0, 1, 0, 1, 0]), (1, 2, 4, 5, 3)),
    # ceil_mode with count_include_pad=0 (with 1, onnxruntime divides a partial window by the cells
    # inside the pads while ONNX's reference and node tests count the ceil extension too; we
    # follow the node tests)
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 0, 1], ceil_mode=1), (1, 1, 6, 7)),
    ("AveragePool", dict(kernel_shape=[3], strides=[2], pads=[1, 1]), (2, 3, 8)),
    ("LpPool", dict(kernel_shape=[2, 2], strides=[1, 2], p=3), (1, 2, 4, 5)),
])
def test_pools_match_onnxruntime(op, attrs, shape):
    m = make_model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", F, list(shape))], [("y", F, None)], opset=18)
    feeds = {"x": _rand(*shape)}
    assert_close(run_relay(m, feeds, "graph"), run_ort(m, feeds))
