"""relay.vision ops: every sample's reference against the independent formulations of
vision_independent.py, then the edge cases the issue names for non-maximum suppression (no box,
one box, ties kept in input order, limits of 0, thresholds <= 0), a large suppression compiled
and checked against numpy, and the constructors' TVM conventions.

Tolerances: float16 1e-2, float32 1e-5, float64 1e-9 (relative and absolute); integers exact.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import AttrsError, TypeInferenceError
from relay_backend.op import get, list_ops

from . import vision_independent as ind

TOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-9}

INDEPENDENT = {
    "vision.get_valid_counts": ind.get_valid_counts,
    "vision.non_max_suppression": ind.non_max_suppression,
    "vision.all_class_non_max_suppression": ind.all_class_non_max_suppression,
    "vision.regular_non_max_suppression": ind.regular_non_max_suppression,
    "vision.roi_align": ind.roi_align,
    "vision.roi_pool": ind.roi_pool,
    "vision.multibox_prior": ind.multibox_prior,
    "vision.multibox_transform_loc": ind.multibox_transform_loc,
    "vision.proposal": ind.proposal,
    "vision.yolo_reorg": ind.yolo_reorg,
}
VISION_OPS = [op for op in list_ops() if op.name.startswith("vision.")]
CASES = [(op, i, s) for op in VISION_OPS for i, s in enumerate(op.samples(np.random.default_rng(5)))]


def _close(got, want, what=""):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if got.dtype.kind == "f":
        tol = TOL[str(got.dtype)]
        np.testing.assert_allclose(got.astype("float64"), want, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=what)


def _all_close(got, want, what):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        _close(g, w, f"{what} output {k}")


def test_every_vision_op_has_an_independent_reference():
    assert sorted(INDEPENDENT) == sorted(op.name for op in VISION_OPS)


@pytest.mark.parametrize("op,i,sample", CASES, ids=[f"{op.name}-{i}" for op, i, _ in CASES])
def test_reference_matches_independent(op, i, sample):
    _all_close(op.ref(*sample.inputs, sample.attrs), INDEPENDENT[op.name](*sample.inputs, sample.attrs),
               f"{op.name} sample {i}")


def _nms_module(n, **kw):
    data = relay.var("data", shape=(1, n, 6))
    count = relay.var("count", shape=(1,), dtype="int32")
    idx = relay.var("idx", shape=(1, n), dtype="int32")
    out = relay.vision.non_max_suppression(data, count, idx, **kw)
    body = out.astuple() if isinstance(out, relay.TupleWrapper) else out
    return relay.IRModule.from_expr(relay.Function([data, count, idx], body))


def _run(mod, *args, kind="graph"):
    out = relay.create_executor(kind, mod=mod).evaluate()(*args)
    return tuple(o.numpy() for o in out) if isinstance(out, (list, tuple)) or hasattr(out, "fields") else out.numpy()


def _boxes(rows):
    return np.array([rows], "float32").reshape(1, -1, 6)


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_nms_no_box_and_one_box(kind):
    empty = _nms_module(0)
    idx, count = _run(empty, np.zeros((1, 0, 6), "float32"), np.array([0], "int32"), np.zeros((1, 0), "int32"),
                      kind=kind)
    assert idx.shape == (1, 0) and count.tolist() == [[0]]
    one = _nms_module(1)
    idx, count = _run(one, _boxes([0, 0.9, 0, 0, 1, 1]), np.array([1], "int32"), np.array([[0]], "int32"),
                      kind=kind)
    assert idx.tolist() == [[0]] and count.tolist() == [[1]]


def test_nms_ties_keep_input_order_and_overlap_decides():
    # boxes 1 and 2 tie on score; 2 overlaps 1 (IoU 0.81), 3 is apart: 1 wins the tie by position
    rows = [[0, 0.5, 5, 5, 6, 6], [0, 0.8, 0, 0, 10, 10], [0, 0.8, 0, 0, 9, 9], [0, 0.8, 20, 20, 30, 30]]
    mod = _nms_module(4, iou_threshold=0.5)
    args = (_boxes(rows), np.array([4], "int32"), np.arange(4, dtype="int32")[None])
    for kind in ("debug", "graph"):
        idx, count = _run(mod, *args, kind=kind)
        assert idx.tolist() == [[1, 3, 0, -1]] and count.tolist() == [[3]]


def test_nms_limits_and_thresholds():
    rows = [[0, 0.9, 0, 0, 4, 4], [1, 0.8, 0, 0, 4, 4], [0, 0.7, 10, 10, 12, 12]]
    args = (_boxes(rows), np.array([3], "int32"), np.arange(3, dtype="int32")[None])
    assert _run(_nms_module(3, max_output_size=0), *args)[1].tolist() == [[0]]
    # a class-aware pass keeps the overlapping box of the other class, force_suppress does not
    assert _run(_nms_module(3), *args)[0].tolist() == [[0, 1, 2]]
    assert _run(_nms_module(3, force_suppress=True), *args)[0].tolist() == [[0, 2, -1]]
    # iou_threshold <= 0: the valid boxes pass unsorted (TVM)
    assert _run(_nms_module(3, iou_threshold=0.0), *args)[0].tolist() == [[0, 1, 2]]
    boxes = _run(_nms_module(3, return_indices=False, top_k=1), *args)
    np.testing.assert_array_equal(boxes[0, 1:], -1)


def test_nms_of_many_boxes_compiles_and_matches_numpy():
    rng = np.random.default_rng(11)
    n = 1500
    data = np.zeros((1, n, 6), "float32")
    data[0, :, 0] = rng.integers(0, 3, n)
    data[0, :, 1] = rng.uniform(0, 1, n)
    corner = rng.uniform(0, 40, (n, 2))
    data[0, :, 2:4], data[0, :, 4:] = corner, corner + rng.uniform(2, 6, (n, 2))
    args = (data, np.array([n], "int32"), np.arange(n, dtype="int32")[None])
    got = _run(_nms_module(n, iou_threshold=0.3), *args)
    attrs = get("vision.non_max_suppression").attrs_type()
    want = get("vision.non_max_suppression").ref(*args, np.array(-1, "int32"), np.array(0.3, "float32"), attrs)
    _all_close(got, want, "1500 boxes")
    assert 0 < want[1][0, 0] < n


@pytest.mark.parametrize("fmt", ["onnx", "tensorflow"])
def test_all_class_nms_without_boxes_and_with_one(fmt):
    for n in (0, 1):
        boxes = relay.var("b", shape=(1, n, 4))
        scores = relay.var("s", shape=(1, 2, n))
        out = relay.vision.all_class_non_max_suppression(boxes, scores, 2, 0.5, 0.0, output_format=fmt)
        mod = relay.IRModule.from_expr(relay.Function([boxes, scores], out.astuple()))
        args = (np.ones((1, n, 4), "float32") * np.array([0, 0, 1, 1], "float32"), np.full((1, 2, n), 0.5, "float32"))
        got = _run(mod, *args)
        want = ind.all_class_non_max_suppression(*args, 2, 0.5, 0.0, get("vision.all_class_non_max_suppression")
                                                 .attrs_type(fmt))
        _all_close(got, want, f"{fmt} with {n} boxes")


def test_get_valid_counts_constructor_takes_a_float_threshold():
    data = relay.var("d", shape=(1, 3, 6))
    out = relay.vision.get_valid_counts(data, 0.25, id_index=-1)
    assert len(out) == 3 and out.tuple_value.args[1].data.numpy().dtype == np.float32


@pytest.mark.parametrize("bad,error", [
    (lambda: relay.vision.roi_align(relay.var("x", shape=(1, 1, 4, 4)), relay.var("r", shape=(2, 5)), (2, 2), 1.0,
                                    mode="min"), AttrsError),
    (lambda: relay.vision.yolo_reorg(relay.var("x", shape=(1, 3, 4, 4)), 2), TypeInferenceError),
    (lambda: relay.vision.roi_pool(relay.var("x", shape=(1, 1, 4, 4)), relay.var("r", shape=(2, 4)), (2, 2), 1.0),
     TypeInferenceError)])
def test_bad_vision_calls_name_the_problem(bad, error):
    with pytest.raises(error):
        relay.transform.InferType()(relay.IRModule.from_expr(bad()))
