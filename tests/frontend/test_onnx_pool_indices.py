"""MaxPool's Indices output (converters/pool_indices.py) against onnxruntime (values and indices
exact), on the debug interpreter and the graph executor: pads, strides, dilations, ceil_mode,
storage_order and 1-D / 3-D pools; integer draws make equal maxima common (the first one wins).

Node tests it makes pass: test_maxpool_with_argmax_2d_precomputed_pads,
test_maxpool_with_argmax_2d_precomputed_strides."""
import numpy as np
import pytest
from onnx import helper

from relay_backend.errors import OpNotImplemented

from .conftest import assert_close, make_model, raises_relay_error, run_ort, run_relay


@pytest.mark.parametrize("executor", ["debug", "graph"])
@pytest.mark.parametrize("shape,attrs", [
    ((2, 3, 6, 7), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    ((1, 2, 7, 6), {"kernel_shape": [2, 3], "strides": [2, 2], "storage_order": 1}),
    ((1, 1, 8, 8), {"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 0, 0, 1]}),
    ((1, 2, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ((2, 2, 9), {"kernel_shape": [4], "strides": [3], "pads": [2, 1]}),
    ((1, 2, 4, 5, 4), {"kernel_shape": [2, 2, 2], "strides": [1, 2, 2], "storage_order": 1}),
])
def test_max_pool_indices(executor, shape, attrs):
    x = np.random.default_rng(2).integers(0, 4, shape).astype("float32")
    model = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)], [("x", "float32", list(shape))],
                       [("y", "float32", None), ("i", "int64", None)], opset=12)
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}))


def test_max_pool_indices_of_an_integer_input_are_unsupported():
    model = make_model([helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2])],
                       [("x", "int8", [1, 1, 4, 4])], [("y", "int8", None), ("i", "int64", None)], opset=12)
    raises_relay_error(model, "Indices output of a int8 MaxPool is not supported", OpNotImplemented)
