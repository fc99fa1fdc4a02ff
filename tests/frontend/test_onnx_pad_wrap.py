"""Pad's mode="wrap" (converters/pad_wrap.py) against onnxruntime (exact), on the debug
interpreter and the graph executor; the other modes still go to tensor.py's converter.

Node test it makes pass: test_wrap_pad."""
import numpy as np
import pytest
from onnx import helper

from .conftest import assert_close, make_model, run_ort, run_relay


@pytest.mark.parametrize("executor", ["debug", "graph"])
@pytest.mark.parametrize("shape,pads,axes", [((3, 4), [1, 2, 2, 1], None), ((2, 3, 4), [0, 5, 0, 0, 1, 3], None),
                                             ((3, 4), [2, 3], [-1]), ((4, 2), [0, 0, 0, 0], None)])
def test_wrap_pad(executor, shape, pads, axes):
    inputs = ["x", "pads", "", "axes"] if axes is not None else ["x", "pads"]
    inits = {"pads": np.array(pads, np.int64)} | ({"axes": np.array(axes, np.int64)} if axes is not None else {})
    model = make_model([helper.make_node("Pad", inputs, ["y"], mode="wrap")], [("x", "float32", list(shape))],
                       [("y", "float32", None)], inits=inits, opset=19)
    x = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_other_modes_still_pad(mode):
    model = make_model([helper.make_node("Pad", ["x", "pads"], ["y"], mode=mode)], [("x", "float32", [3, 3])],
                       [("y", "float32", None)], inits={"pads": np.array([1, 2, 2, 1], np.int64)}, opset=19)
    x = np.arange(9, dtype="float32").reshape(3, 3)
    assert_close(run_relay(model, {"x": x}, "graph"), run_ort(model, {"x": x}))
