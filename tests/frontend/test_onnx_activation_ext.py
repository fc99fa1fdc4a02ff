"""Hardmax, Shrink, Mish and Celu (converters/activation_ext.py) against onnxruntime, on the
debug interpreter and the graph executor (tolerance rtol 1e-5, atol 1e-5 scaled to |ref|).

Node tests they make pass: test_hardmax_* (7), test_shrink_hard, test_shrink_soft, test_mish, test_celu."""
import numpy as np
import pytest
from onnx import helper

from relay_backend.errors import RelayError

from .conftest import assert_close, make_model, raises_relay_error, run_ort, run_relay

EXECUTORS = ("debug", "graph")


def _one_node(op, shape, opset, dtype="float32", **attrs):
    return make_model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", dtype, list(shape))],
                      [("y", dtype, list(shape))], opset=opset)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("opset,axis", [(11, 1), (11, 0), (11, 2), (11, -1), (13, 0), (13, 1), (13, -2)])
def test_hardmax_matches_onnxruntime(executor, opset, axis):
    """Before opset 13 the input is coerced to 2-D at axis; from 13 only that axis counts. Integer
    draws make ties common: the first maximal index wins, as in onnxruntime."""
    x = np.random.default_rng(3).integers(0, 3, (2, 3, 4)).astype("float32")
    model = _one_node("Hardmax", x.shape, opset, axis=axis)
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}))


def test_hardmax_rejects_an_axis_out_of_range():
    raises_relay_error(_one_node("Hardmax", (2, 3), 13, axis=2), "axis 2 is out of range", RelayError)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("attrs", [{}, {"lambd": 1.5}, {"lambd": 1.0, "bias": 0.5}])
def test_shrink_matches_onnxruntime(executor, attrs):
    x = np.linspace(-3, 3, 13, dtype="float32").reshape(1, 13)
    model = _one_node("Shrink", x.shape, 13, **attrs)
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_shrink_on_integers_matches_onnxruntime(executor):
    x = np.arange(-5, 6, dtype="int32")
    model = _one_node("Shrink", x.shape, 13, dtype="int32", lambd=2.0, bias=1.0)
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_mish_matches_onnxruntime(executor):
    x = np.linspace(-20, 20, 41, dtype="float32")
    model = _one_node("Mish", x.shape, 18)
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("alpha", [1.0, 0.5, 2.0])
def test_celu_matches_onnxruntime(executor, alpha):
    x = np.linspace(-4, 4, 17, dtype="float32")
    model = _one_node("Celu", x.shape, 13, alpha=alpha)
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}))
