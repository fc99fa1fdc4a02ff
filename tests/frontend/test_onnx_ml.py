"""ai.onnx.ml Binarizer and ArrayFeatureExtractor (converters/ml.py) against onnxruntime (exact),
on the debug interpreter and the graph executor.

Node tests they make pass: test_ai_onnx_ml_binarizer, test_ai_onnx_ml_array_feature_extractor."""
import numpy as np
import pytest
from onnx import helper

from relay_backend.errors import RelayError

from .conftest import assert_close, raises_relay_error, run_ort, run_relay

EXECUTORS = ("debug", "graph")


def _ml_model(node, inputs, outputs, inits=()):
    from onnx import numpy_helper
    vi = lambda n, d, s: helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(d)), s)  # noqa: E731
    graph = helper.make_graph([node], "g", [vi(*i) for i in inputs], [vi(*o) for o in outputs],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in dict(inits).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dtype,threshold", [("float32", 0.5), ("float64", -1.0), ("int32", 2.0)])
def test_binarizer(executor, dtype, threshold):
    """Against onnxruntime for float32 (its only Binarizer kernel), numpy's x > threshold otherwise."""
    x = np.arange(-6, 6).reshape(3, 4).astype(dtype)
    model = _ml_model(helper.make_node("Binarizer", ["x"], ["y"], domain="ai.onnx.ml", threshold=threshold),
                      [("x", dtype, [3, 4])], [("y", dtype, [3, 4])])
    want = run_ort(model, {"x": x}) if dtype == "float32" else [(x > threshold).astype(dtype)]
    got = run_relay(model, {"x": x}, executor)
    assert got[0].dtype == np.dtype(dtype)
    assert_close(got, want)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("shape,indices", [((3, 4), [0, 3, 3]), ((2, 3, 5), [[4, 0]]), ((6,), [5, 1])])
def test_array_feature_extractor_with_run_time_indices(executor, shape, indices):
    x = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    idx = np.array(indices, np.int64)
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")
    model = _ml_model(node, [("x", "float32", list(shape)), ("i", "int64", list(idx.shape))], [("y", "float32", None)])
    feeds = {"x": x, "i": idx}
    assert_close(run_relay(model, feeds, executor), run_ort(model, feeds))


def test_array_feature_extractor_rejects_a_constant_index_out_of_range():
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")
    model = _ml_model(node, [("x", "float32", [2, 3])], [("y", "float32", None)], {"i": np.array([1, 3], np.int64)})
    raises_relay_error(model, "index 3 is out of range", RelayError)
