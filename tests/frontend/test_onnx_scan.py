"""Scan (converters/scan.py, unrolled) against onnxruntime, rtol 1e-5 / atol 1e-5 scaled to |ref|,
on the debug interpreter and the graph executor: two states, two scan inputs scanned along
different axes and directions, scan outputs stacked along chosen axes and directions, and opset
8's batched form.

Node tests it makes pass: test_scan_sum, test_scan9_sum."""
import numpy as np
import pytest
from onnx import helper

from relay_backend.errors import RelayError

from .conftest import assert_close, make_model, raises_relay_error, run_ort, run_relay

EXECUTORS = ("debug", "graph")


def _vi(name, shape):
    return helper.make_tensor_value_info(name, 1, shape)


def _body():
    """states (s, p) of shape (2,); slices a, b of shape (2,): s + a, p * b; outputs s + a and a - b."""
    nodes = [helper.make_node("Add", ["s", "a"], ["s2"]), helper.make_node("Mul", ["p", "b"], ["p2"]),
             helper.make_node("Sub", ["a", "b"], ["d"]), helper.make_node("Identity", ["s2"], ["o"])]
    return helper.make_graph(nodes, "body", [_vi(n, [2]) for n in ("s", "p", "a", "b")],
                             [_vi(n, [2]) for n in ("s2", "p2", "o", "d")])


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("attrs", [{}, {"scan_input_axes": [0, 1], "scan_input_directions": [1, 0]},
                                   {"scan_output_axes": [1, -1], "scan_output_directions": [0, 1]},
                                   {"scan_input_axes": [-2, 1], "scan_input_directions": [1, 1],
                                    "scan_output_directions": [1, 0]}])
def test_scan(executor, attrs):
    a_shape = [2, 4] if attrs.get("scan_input_axes", [0])[0] in (1, -1) else [4, 2]
    b_shape = [2, 4] if attrs.get("scan_input_axes", [0, 0])[1] in (1, -1) else [4, 2]
    node = helper.make_node("Scan", ["s0", "p0", "a", "b"], ["s", "p", "o", "d"], body=_body(), num_scan_inputs=2,
                            **attrs)
    model = make_model([node], [("s0", "float32", [2]), ("p0", "float32", [2]), ("a", "float32", a_shape),
                                ("b", "float32", b_shape)], [("s", "float32", None), ("p", "float32", None),
                                                             ("o", "float32", None), ("d", "float32", None)], opset=11)
    rng = np.random.default_rng(4)
    feeds = {"s0": rng.normal(size=2).astype("float32"), "p0": rng.normal(size=2).astype("float32"),
             "a": rng.normal(size=a_shape).astype("float32"), "b": rng.normal(size=b_shape).astype("float32")}
    assert_close(run_relay(model, feeds, executor), run_ort(model, feeds))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("directions", [[0, 0], [1, 0]])
def test_scan_opset8_batched(executor, directions):
    node = helper.make_node("Scan", ["", "s0", "p0", "a", "b"], ["s", "p", "o", "d"], body=_body(), num_scan_inputs=2,
                            directions=directions)
    model = make_model([node], [("s0", "float32", [3, 2]), ("p0", "float32", [3, 2]), ("a", "float32", [3, 4, 2]),
                                ("b", "float32", [3, 4, 2])], [("s", "float32", None), ("p", "float32", None),
                                                               ("o", "float32", None), ("d", "float32", None)], opset=8)
    rng = np.random.default_rng(6)
    feeds = {n: rng.normal(size=s).astype("float32") for n, s in (("s0", (3, 2)), ("p0", (3, 2)), ("a", (3, 4, 2)),
                                                                   ("b", (3, 4, 2)))}
    assert_close(run_relay(model, feeds, executor), run_ort(model, feeds))


def test_scan_rejects_scan_inputs_of_different_lengths():
    node = helper.make_node("Scan", ["s0", "p0", "a", "b"], ["s", "p", "o", "d"], body=_body(), num_scan_inputs=2)
    model = make_model([node], [("s0", "float32", [2]), ("p0", "float32", [2]), ("a", "float32", [4, 2]),
                                ("b", "float32", [3, 2])], [("s", "float32", None), ("p", "float32", None),
                                                            ("o", "float32", None), ("d", "float32", None)], opset=11)
    raises_relay_error(model, "different sequence lengths", RelayError)
