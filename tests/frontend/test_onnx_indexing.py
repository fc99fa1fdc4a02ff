"""The issue-20 indexing converters (converters/indexing.py): ONNX's node tests for them on the
debug interpreter and the graph executor, and the index rules at import (a constant index out of
range names the node) and at run time (compared with onnxruntime on valid indices)."""
import numpy as np
import pytest
from onnx import helper

from relay_backend.errors import RelayError
from relay_backend.frontend.onnx.node_tests import list_node_tests, run_node_test

import relay_backend as relay

from .conftest import assert_close, make_model, run_ort, run_relay

NODE_TESTS = [
    "test_gather_elements_0", "test_gather_elements_1", "test_gather_elements_negative_indices",
    "test_gathernd_example_float32", "test_gathernd_example_int32", "test_gathernd_example_int32_batch_dim1",
    "test_scatter_elements_with_axis", "test_scatter_elements_with_duplicate_indices",
    "test_scatter_elements_with_negative_indices", "test_scatter_elements_with_reduction_max",
    "test_scatter_elements_with_reduction_min", "test_scatter_elements_without_axis", "test_scatter_with_axis",
    "test_scatter_without_axis", "test_scatternd", "test_scatternd_add", "test_scatternd_max",
    "test_scatternd_min", "test_scatternd_multiply", "test_reversesequence_batch", "test_reversesequence_time",
] + [f"test_{side}{case}" for side in ("tril", "triu") for case in (
    "", "_neg", "_one_row_neg" if side == "tril" else "_one_row", "_out_neg" if side == "tril" else "_out_neg_out",
    "_out_pos", "_pos", "_square", "_square_neg", "_zero")]
# a shape-like input (OneHot's depth) given at run time builds a dyn op, and NonZero/Compress have
# a data-dependent output size: debug and VM run them, the graph executor needs static shapes
DYNAMIC_NODE_TESTS = ["test_onehot_negative_indices", "test_onehot_with_axis", "test_onehot_with_negative_axis",
                      "test_onehot_without_axis", "test_nonzero_example", "test_compress_0", "test_compress_1",
                      "test_compress_default_axis", "test_compress_negative_axis",
                      "test_unique_not_sorted_without_axis", "test_unique_sorted_without_axis",
                      "test_unique_sorted_with_axis", "test_unique_sorted_with_axis_3d",
                      "test_unique_sorted_with_negative_axis"]
_AVAILABLE = set(list_node_tests())


@pytest.mark.parametrize("name,executor", [(n, e) for n in NODE_TESTS for e in ("debug", "graph")]
                         + [(n, e) for n in DYNAMIC_NODE_TESTS for e in ("debug", "vm")])
def test_node_test_passes(name, executor):
    if name not in _AVAILABLE:
        pytest.skip(f"{name} is not in this onnx wheel's node test data")
    op, err = run_node_test(name, executor)
    assert err is None, f"{name} ({op}) on {executor}: {err}"


F = "float32"


def test_constant_scatter_index_out_of_range_names_the_node():
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1, name="put")
    m = make_model([node], [("x", F, [2, 3]), ("u", F, [1, 2])], [("y", F, None)],
                   {"i": np.array([[0, 3]], "int64")})
    with pytest.raises(RelayError, match=r"put.*index 3 is out of range .*\[-3, 2\]"):
        relay.frontend.from_onnx(m)


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_gathernd_batch_dims_with_runtime_indices_match_onnxruntime(kind):
    node = helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=1)
    m = make_model([node], [("x", F, [2, 3, 4]), ("i", "int64", [2, 2, 1])], [("y", F, None)])
    feeds = {"x": np.arange(24, dtype=F).reshape(2, 3, 4), "i": np.array([[[2], [-1]], [[0], [-3]]], "int64")}
    assert_close(run_relay(m, feeds, kind), run_ort(m, feeds))


@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_onehot_with_a_constant_depth_is_static_and_matches_onnxruntime(kind):
    node = helper.make_node("OneHot", ["i", "depth", "values"], ["y"], axis=0)
    m = make_model([node], [("i", "int64", [2, 3])], [("y", F, None)],
                   {"depth": np.array(4, "int64"), "values": np.array([-1.0, 3.0], F)})
    feeds = {"i": np.array([[0, -1, 3], [-4, 2, 1]], "int64")}
    assert_close(run_relay(m, feeds, kind), run_ort(m, feeds))


def numpy_unique_slices(x, axis, is_sorted):
    """The reference for ONNX Unique with an axis: numpy.unique(axis=...) (sorted slices), reordered
    by first appearance when is_sorted is false, as ONNX's reference implementation does."""
    values, first, inverse, counts = np.unique(x, axis=axis, return_index=True, return_inverse=True,
                                               return_counts=True)
    inverse = inverse.reshape(-1)
    if not is_sorted:
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values, first, counts, inverse = np.take(values, order, axis=axis), first[order], counts[order], rank[inverse]
    return [values, first.astype("int64"), inverse.astype("int64"), counts.astype("int64")]


_TIES = np.array([[1, 0, 2], [1, 0, 2], [0, 3, 1], [1, 0, 1], [0, 3, 1], [1, 0, 2]], "int32")
_SLICE_CASES = {
    "rows with ties": (_TIES, 0),
    "columns, negative axis": (_TIES.T.copy(), -1),
    "3-D, middle axis": (np.array([[[1, 1], [0, 1], [1, 1], [0, 1]],
                                   [[2, 0], [2, 0], [2, 0], [2, 0]]], "int64"), 1),
    "float rows, one differs only in the last column": (
        np.array([[0.5, -1.0, 2.0], [0.5, -1.0, 2.0], [0.5, -1.0, 2.5], [-3.0, 7.0, 0.0]], "float32"), 0),
    "all equal": (np.full((4, 3), 5, "int32"), 0),
    "one column (odd width handled)": (np.array([[3], [1], [3], [2]], "int32"), 0),
    "five columns (odd count of pairs)": (np.array([[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [1, 2, 3, 4, 5],
                                                   [0, 9, 9, 9, 9]], "int32"), 0),
    "NaN: every row holding one is its own slice, after the others (numpy's structured compare)": (
        np.array([[np.nan, 1.0], [0.0, 1.0], [np.nan, 1.0], [0.0, 1.0]], "float32"), 0),
    "one slice": (np.array([[4, 2, 9]], "int32"), 0),
    "empty along the axis": (np.zeros((0, 3), "float32"), 0),
    "empty slices": (np.zeros((3, 0), "float32"), 0),
}


@pytest.mark.parametrize("kind", ["debug", "vm"])
@pytest.mark.parametrize("is_sorted", [1, 0])
@pytest.mark.parametrize("case", sorted(_SLICE_CASES))
def test_unique_along_an_axis_matches_numpy(case, is_sorted, kind):
    """Unique with an axis (TVM's unique is 1-D only): the converter ranks the slices and runs
    relay.unique on the ranks; compared with numpy.unique(axis=...)."""
    x, axis = _SLICE_CASES[case]
    node = helper.make_node("Unique", ["x"], ["y", "indices", "inverse", "counts"], axis=axis, sorted=is_sorted)
    m = make_model([node], [("x", x.dtype.name, list(x.shape))],
                   [("y", x.dtype.name, None), ("indices", "int64", None), ("inverse", "int64", None),
                    ("counts", "int64", None)])
    assert_close(run_relay(m, {"x": x}, kind), numpy_unique_slices(x, axis, is_sorted))


def test_unique_axis_out_of_range_is_a_clear_error():
    node = helper.make_node("Unique", ["x"], ["y"], axis=2, name="uniq")
    m = make_model([node], [("x", F, [2, 3])], [("y", F, None)])
    with pytest.raises(RelayError, match=r"uniq.*axis=2 is out of range"):
        relay.frontend.from_onnx(m)
