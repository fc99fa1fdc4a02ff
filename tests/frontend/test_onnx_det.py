"""Det (converters/det.py, unrolled LU with partial pivoting) against onnxruntime and numpy,
rtol 1e-4 / atol 1e-5 scaled to |ref| (float32 elimination), on the debug interpreter and the graph
executor: batches, matrices needing row swaps (a zero leading entry), singular ones.

Node tests it makes pass: test_det_2d, test_det_nd."""
import numpy as np
import pytest
from onnx import helper

from relay_backend.errors import RelayError

from .conftest import assert_close, make_model, raises_relay_error, run_ort, run_relay


def _model(shape, dtype="float32"):
    return make_model([helper.make_node("Det", ["x"], ["y"])], [("x", dtype, list(shape))],
                      [("y", dtype, list(shape[:-2]))], opset=11)


@pytest.mark.parametrize("executor", ["debug", "graph"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (4, 2, 2), (2, 3, 5, 5)])
def test_det_matches_onnxruntime(executor, shape):
    x = np.random.default_rng(7).normal(size=shape).astype("float32")
    model = _model(shape)
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}), rtol=1e-4)


@pytest.mark.parametrize("executor", ["debug", "graph"])
def test_det_pivots_and_singular_matrices(executor):
    x = np.array([[[0, 2, 1], [1, 0, 0], [0, 0, 3]],        # needs a swap: -6
                  [[1, 2, 3], [2, 4, 6], [1, 0, 1]],        # singular: 0
                  [[0, 0, 1], [0, 1, 0], [1, 0, 0]],        # a permutation: -1
                  [[2, 0, 0], [0, 0, 0], [0, 0, 5]]], "float64")
    got = run_relay(_model(x.shape, "float64"), {"x": x}, executor)
    assert_close(got, [np.linalg.det(x)], rtol=1e-9, atol=1e-9)


def test_det_rejects_non_square_matrices():
    raises_relay_error(_model((2, 3)), "square matrices", RelayError)
