"""The issue-20 indexing ops (gather, scatter, one_hot, the *_like ops, ...) against INDEPENDENT
references (indexing_references.py: plain Python loops written from TVM's documented semantics,
separately from each op's numpy `ref`). Every sample of every op of these modules is checked, and
an op there without a row fails test_table_covers_every_op. Then the gather/scatter/take edge
cases: constant indices out of range, run-time index rules, duplicate scatter indices, empty
tensors, negative axes; the other families' cases are in test_indexing_ops_more.py.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import InputError, TypeInferenceError
from relay_backend.op import list_ops

from .indexing_references import INDEPENDENT, run_on

MODULES = {"relay_backend.op.gathering", "relay_backend.op.scattering", "relay_backend.op.one_hot_encoding",
           "relay_backend.op.dyn.indexing", "relay_backend.op.like", "relay_backend.op.matrix",
           "relay_backend.op.sequence", "relay_backend.op.search", "relay_backend.op.sort_based",
           "relay_backend.op.coordinates", "relay_backend.op.contrib_reshape", "relay_backend.op.slice_set",
           "relay_backend.op.sparse"}
OPS = [op for op in list_ops() if op.rel.__module__ in MODULES]


def test_table_covers_every_op():
    assert sorted(INDEPENDENT) == sorted(op.name for op in OPS)


def _cases():
    for op in OPS:
        for k, sample in enumerate(op.samples(np.random.default_rng(0))):
            yield pytest.param(op, sample, id=f"{op.name}-{k}")


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_reference_matches_independent(op, sample):
    want = INDEPENDENT[op.name](*sample.inputs, sample.attrs)
    got = op.ref(*sample.inputs, sample.attrs)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
        return
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype == np.float16:     # sums rounded in another order
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
    elif got.dtype.kind == "f" and op.pattern == relay.op.OpPattern.COMM_REDUCE:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


# --- edge cases ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [
    lambda x: relay.gather(x, 1, relay.const(np.array([[0, 3], [1, 0]], "int32"))),
    lambda x: relay.gather(x, -1, relay.const(np.array([[0, -4], [1, 0]], "int32"))),
    lambda x: relay.gather_nd(x, relay.const(np.array([[2], [0]], "int32"))),
    lambda x: relay.adv_index([x, relay.const(np.array([0, 2], "int64"))]),
    lambda x: relay.scatter_elements(x, relay.const(np.array([[5, 0]], "int32")), relay.const(np.ones((1, 2), "float32")), 1),
    lambda x: relay.scatter_nd(x, relay.const(np.array([[1], [-4]], "int32")), relay.const(np.ones(1, "float32"))),
], ids=["gather", "gather-negative", "gather_nd", "adv_index", "scatter_elements", "scatter_nd"])
def test_constant_indices_out_of_range_are_an_input_error(build):
    x = relay.var("x", shape=(2, 3), dtype="float32")
    with pytest.raises(InputError, match="out of range") as err:
        build(x)
    assert "valid indices" in str(err.value)


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_run_time_indices_follow_the_documented_rules(kind):
    x = np.arange(12, dtype="float32").reshape(3, 4)
    i = relay.var("i", shape=(3, 2), dtype="int32")
    data = relay.var("x", shape=(3, 4), dtype="float32")
    idx = np.array([[-1, 9], [0, -9], [3, 2]], "int32")
    got = run_on(relay.gather(data, 1, i), x, idx, kind=kind)
    np.testing.assert_array_equal(got, [[3, 3], [4, 4], [11, 10]])       # -1 -> 3, 9 -> 3, -9 -> 0
    upd = relay.var("u", shape=(3, 2), dtype="float32")
    got = run_on(relay.scatter_elements(data, i, upd, axis=1, reduction="add"), x, idx,
               np.full((3, 2), 100, "float32"), kind=kind)
    want = x.copy()
    want[0, 3] += 100
    want[1, 0] += 100
    want[2, 3] += 100
    want[2, 2] += 100                      # 9 and -9 are dropped
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
@pytest.mark.parametrize("reduction,want", [("update", [0, 30, 0]), ("add", [1, 61, 1]),
                                            ("mul", [1, 6000, 1]), ("mean", [1, 21.375, 1]),
                                            ("min", [1, 1, 1]), ("max", [1, 30, 1])])
def test_duplicate_scatter_indices_fold_in_index_order(kind, reduction, want):
    """Three updates 10, 20, 30 at position 1 (value 1): update keeps the last, mean averages step
    by step (((1 + 10) / 2 + 20) / 2 + 30) / 2 = 21.375, as TVM's in-place loop."""
    data = relay.var("x", shape=(3,), dtype="float32")
    upd = relay.var("u", shape=(3,), dtype="float32")
    expr = relay.scatter_elements(data, relay.const(np.array([1, 1, 1], "int32")), upd, 0, reduction)
    x = np.ones(3, "float32") if reduction != "update" else np.zeros(3, "float32")
    got = run_on(expr, x, np.array([10, 20, 30], "float32"), kind=kind)
    np.testing.assert_allclose(got, np.asarray(want, "float32"))


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_scatter_nd_duplicates_add_up(kind):
    data = relay.var("x", shape=(2, 2), dtype="int32")
    upd = relay.var("u", shape=(4,), dtype="int32")
    expr = relay.scatter_nd(data, relay.const(np.array([[0, 0, 1, 0], [1, 1, 0, 1]], "int64")), upd, "add")
    got = run_on(expr, np.zeros((2, 2), "int32"), np.array([1, 2, 4, 8], "int32"), kind=kind)
    np.testing.assert_array_equal(got, [[0, 11], [4, 0]])


def test_relation_errors_name_the_problem():
    x = relay.var("x", shape=(2, 3), dtype="float32")
    cases = [
        (lambda: relay.gather(x, 2, relay.var("i", shape=(2, 3), dtype="int32")), "axis 2 is out of range"),
        (lambda: relay.gather(x, 0, relay.var("i", shape=(2,), dtype="int32")), "rank of data"),
        (lambda: relay.gather(x, 0, relay.var("i", shape=(2, 3), dtype="float32")), "integer"),
        (lambda: relay.gather(x, 0, relay.var("i", shape=(2, 4), dtype="int32")), "may not be larger"),
        (lambda: relay.gather_nd(x, relay.var("i", shape=(3, 1), dtype="int32")), "rank >= 3"),
        (lambda: relay.scatter_elements(x, relay.var("i", shape=(1, 3), dtype="int32"),
                                        relay.var("u", shape=(1, 2), dtype="float32")), "differ in dim 1"),
        (lambda: relay.scatter_elements(x, relay.var("i", shape=(1, 3), dtype="int32"),
                                        relay.var("u", shape=(1, 3), dtype="float64")), "dtype"),
        (lambda: relay.scatter_nd(x, relay.var("i", shape=(1, 2), dtype="int32"),
                                  relay.var("u", shape=(2, 4), dtype="float32")), "updates dim 1"),
        (lambda: relay.adv_index([x, relay.var("i", shape=(2,), dtype="int32"),
                                  relay.var("j", shape=(3,), dtype="int32")]), "broadcast"),
    ]
    for build, fragment in cases:
        with pytest.raises(TypeInferenceError, match=fragment):
            relay.transform.InferTypeLocal(build())


def test_reading_an_empty_axis_is_a_type_error_and_empty_resultsrun_on():
    empty = relay.var("x", shape=(2, 0), dtype="float32")
    with pytest.raises(TypeInferenceError, match="size 0"):
        relay.transform.InferTypeLocal(relay.gather(empty, 1, relay.var("i", shape=(2, 1), dtype="int32")))
    x = relay.var("x", shape=(2, 3), dtype="float32")
    i = relay.var("i", shape=(2, 0), dtype="int32")
    got = run_on(relay.gather(x, 1, i), np.ones((2, 3), "float32"), np.zeros((2, 0), "int32"), kind="graph")
    assert got.shape == (2, 0)


# --- take's modes (issue 20: the variants not covered elsewhere) ---------------------------------------------
@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_take_modes_with_negative_axis_and_batch_dims(kind):
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    data = relay.var("x", shape=(2, 3, 4), dtype="float32")
    idx = relay.var("i", shape=(2, 2), dtype="int64")
    iv = np.array([[-1, 5], [9, -6]], "int64")
    for mode in ("clip", "wrap"):
        got = run_on(relay.take(data, idx, axis=-1, batch_dims=1, mode=mode), x, iv, kind=kind)
        fix = np.clip(iv, 0, 3) if mode == "clip" else np.mod(iv, 4)
        want = np.stack([x[b][:, fix[b]] for b in range(2)])
        np.testing.assert_array_equal(got, want)


def test_take_fast_with_constant_indices_out_of_range_is_an_input_error():
    x = relay.var("x", shape=(2, 3), dtype="float32")
    with pytest.raises(InputError, match="index 3 is out of range"):
        relay.take(x, relay.const(np.array([0, 3], "int32")), axis=1, mode="fast")
    relay.take(x, relay.const(np.array([0, 3], "int32")), axis=1, mode="clip")    # clip defines it


def test_strided_set_reference_rejects_a_v_of_another_shape():
    x = relay.var("x", shape=(4,), dtype="float32")
    v = relay.var("v", shape=(3,), dtype="float32")
    with pytest.raises(InputError, match="shape"):
        run_on(relay.strided_set(x, v, [0], [4], [2]), np.zeros(4, "float32"), np.ones(3, "float32"), kind="debug")


@pytest.mark.parametrize("dtype", ["int32", "float32"])
@pytest.mark.parametrize("reduction", ["update", "add", "mul", "mean", "min", "max"])
@pytest.mark.parametrize("so_far,update", [(5, 7), (-7, 2), (3, -3)])
def test_scatter_step_is_the_numpy_step(reduction, dtype, so_far, update):
    """The kernels' one step of a reduction (tir) equals the reference's (numpy), including
    mean's truncation toward zero for integers."""
    from relay_backend import tir
    from relay_backend.op.index_rules import np_fold, scatter_step
    step = scatter_step(reduction, dtype)(tir.const(so_far, dtype), tir.const(update, dtype))
    got = tir.simplify(step).value
    want = np_fold(reduction, np.asarray(so_far, dtype), np.asarray(update, dtype))
    assert got == want
