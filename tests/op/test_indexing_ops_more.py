"""The issue-20 indexing ops beyond gather/scatter on the executors: one_hot and dyn.one_hot, the
*_like ops, matrices and sequences, argwhere/searchsorted, unique/invert_permutation and the
sparse ops (run-time values, data-dependent sizes, DynamicToStatic, relation errors). The
independent references are in indexing_references.py."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import InputError, TypeInferenceError

from .indexing_references import run_on


# --- one_hot and dyn.one_hot ---------------------------------------------------------------------------
def test_one_hot_depth_expression_builds_the_dyn_op_and_dynamic_to_static_undoes_it():
    i = relay.var("i", shape=(3,), dtype="int32")
    on, off = relay.const(1.0), relay.const(0.0)
    depth = relay.var("d", shape=(), dtype="int32")
    assert relay.one_hot(i, on, off, depth, -1, "float32").op.name == "dyn.one_hot"
    assert relay.one_hot(i, on, off, relay.const(4), -1, "float32").op.name == "one_hot"
    dyn = relay.op.get("dyn.one_hot")(i, on, off, relay.const(np.array(4, "int64")),
                                     attrs=relay.op.get("one_hot").attrs_type(0, 0, "float32"))
    mod = relay.transform.DynamicToStatic()(relay.IRModule.from_expr(relay.Function([i], dyn)))
    call = mod["main"].body
    assert call.op.name == "one_hot" and call.attrs.depth == 4 and call.attrs.axis == 0
    assert str(mod["main"].ret_type) == "Tensor[(4, 3), float32]"


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_dyn_one_hot_runs_with_the_depth_read_at_run_time(kind):
    i = relay.var("i", shape=(3,), dtype="int64")
    depth = relay.var("d", shape=(), dtype="int32")
    expr = relay.one_hot(i, relay.const(2.0), relay.const(-1.0), depth, 0, "float32")
    got = run_on(expr, np.array([0, 2, 5], "int64"), np.array(3, "int32"), kind=kind)
    want = np.full((3, 3), -1.0, "float32")
    want[0, 0] = want[2, 1] = 2.0
    np.testing.assert_array_equal(got, want)
    with pytest.raises(InputError, match="depth must be > 0"):
        run_on(expr, np.array([0, 2, 5], "int64"), np.array(0, "int32"), kind=kind)


def test_one_hot_relation_errors():
    i = relay.var("i", shape=(2,), dtype="int32")
    with pytest.raises(TypeInferenceError, match="integer"):
        relay.transform.InferTypeLocal(relay.one_hot(relay.var("f", shape=(2,)), relay.const(1.0),
                                                     relay.const(0.0), 3, -1, "float32"))
    with pytest.raises(TypeInferenceError, match="scalar"):
        relay.transform.InferTypeLocal(relay.one_hot(i, relay.const(np.ones(2, "float32")), relay.const(0.0), 3,
                                                     -1, "float32"))
    with pytest.raises(TypeInferenceError, match="axis 2 is out of range"):
        relay.transform.InferTypeLocal(relay.one_hot(i, relay.const(1.0), relay.const(0.0), 3, 2, "float32"))
    with pytest.raises(TypeInferenceError, match="depth must be > 0"):
        relay.transform.InferTypeLocal(relay.one_hot(i, relay.const(1.0), relay.const(0.0), 0, -1, "float32"))


# --- the *_like ops ------------------------------------------------------------------------------------
def test_like_op_relation_errors():
    x = relay.var("x", shape=(2, 3), dtype="float32")
    cases = [
        (relay.reshape_like(x, relay.var("y", shape=(4, 2))), "6 elements"),
        (relay.broadcast_to_like(x, relay.var("y", shape=(3, 3))), "does not broadcast"),
        (relay.collapse_sum_like(x, relay.var("y", shape=(2, 3, 1))), "cannot be collapsed"),
        (relay.collapse_sum_to(x, (4,)), "cannot be collapsed"),
        (relay.full_like(x, relay.const(np.ones(2, "float32"))), "scalar"),
        (relay.slice_like(x, relay.var("y", shape=(3, 1))), "exceeds data's"),
        (relay.slice_like(x, relay.var("y", shape=(1,)), axes=(1,)), "out of range"),
    ]
    for expr, fragment in cases:
        with pytest.raises(TypeInferenceError, match=fragment):
            relay.transform.InferTypeLocal(expr)


@pytest.mark.parametrize("kind", ["graph", "vm"])
def test_collapse_sum_like_undoes_broadcast_to_like(kind):
    """collapse_sum_like(broadcast_to_like(x, y), x) multiplies x by the copies made."""
    x = relay.var("x", shape=(3, 1), dtype="float32")
    y = relay.var("y", shape=(2, 3, 4), dtype="float32")
    expr = relay.collapse_sum_like(relay.broadcast_to_like(x, y), x)
    xv = np.arange(3, dtype="float32").reshape(3, 1)
    got = run_on(expr, xv, np.zeros((2, 3, 4), "float32"), kind=kind)
    np.testing.assert_allclose(got, xv * 8)


# --- matrices and sequences -----------------------------------------------------------------------------
def test_matrix_set_diag_documented_example():
    data = relay.var("x", shape=(2, 3, 4), dtype="int32")
    diag = relay.var("d", shape=(2, 3), dtype="int32")
    got = run_on(relay.matrix_set_diag(data, diag), np.full((2, 3, 4), 7, "int32"),
               np.array([[1, 2, 3], [4, 5, 6]], "int32"), kind="graph")
    want = np.full((2, 3, 4), 7, "int32")
    for b in range(2):
        for j in range(3):
            want[b, j, j] = 3 * b + j + 1
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_trilu_reads_k_at_run_time(kind):
    x = relay.var("x", shape=(3, 3), dtype="float32")
    k = relay.var("k", shape=(), dtype="int64")
    xv = np.arange(9, dtype="float32").reshape(3, 3)
    for kv in (-1, 0, 2):
        got = run_on(relay.trilu(x, k, upper=False), xv, np.array(kv, "int64"), kind=kind)
        np.testing.assert_array_equal(got, np.tril(xv, kv))


def test_sequence_op_relation_errors():
    x = relay.var("x", shape=(3, 2), dtype="float32")
    cases = [
        (relay.reverse_sequence(x, relay.var("l", shape=(3,), dtype="int32"), 0, 1), "3 entries"),
        (relay.reverse_sequence(x, relay.var("l", shape=(2,), dtype="int32"), 0, 0), "both axis 0"),
        (relay.sequence_mask(x, relay.var("l", shape=(2,), dtype="int32"), axis=2), "axis must be 0 or 1"),
        (relay.sliding_window(x, 0, (4, 1), (1, 1)), "does not fit"),
        (relay.trilu(relay.var("v", shape=(3,)), 0), "rank >= 2"),
        (relay.matrix_set_diag(x, relay.var("d", shape=(3,)), k=0), "longest diagonal's length 2"),
    ]
    for expr, fragment in cases:
        with pytest.raises(TypeInferenceError, match=fragment):
            relay.transform.InferTypeLocal(expr)


# --- argwhere and searchsorted ---------------------------------------------------------------------------
def test_argwhere_count_is_read_at_run_time_on_the_vm_and_refused_by_graph():
    x = relay.var("x", shape=(3, 4), dtype="int32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.argwhere(x)))
    assert str(relay.transform.InferType()(mod)["main"].ret_type) == "Tensor[(?, 2), int32]"
    vm = relay.create_executor("vm", mod=mod).evaluate()
    for density in (0.0, 0.5, 1.0):
        xv = (np.random.default_rng(1).random((3, 4)) < density).astype("int32")
        np.testing.assert_array_equal(vm(xv).numpy(), np.argwhere(xv))
    with pytest.raises(relay.errors.CompileError, match="static shapes"):
        relay.create_executor("graph", mod=mod).evaluate()(np.ones((3, 4), "int32"))


def test_searchsorted_relation_errors():
    seq = relay.var("s", shape=(2, 5), dtype="float32")
    cases = [(relay.searchsorted(seq, relay.var("v", shape=(3,), dtype="float32")), "rank 2"),
             (relay.searchsorted(seq, relay.var("v", shape=(3, 1), dtype="float32")), "outer dim 0"),
             (relay.searchsorted(seq, relay.var("v", shape=(2, 1), dtype="int32")), "dtype")]
    for expr, fragment in cases:
        with pytest.raises(TypeInferenceError, match=fragment):
            relay.transform.InferTypeLocal(expr)


# --- unique and invert_permutation ------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["graph", "vm"])
def test_unique_with_many_ties_and_invert_permutation_of_a_long_permutation(kind):
    rng = np.random.default_rng(3)
    x = relay.var("x", shape=(300,), dtype="int32")
    xv = rng.integers(0, 7, 300).astype("int32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.unique(x, True, True).astuple()))
    out = [o.numpy() for o in relay.create_executor(kind, mod=mod).evaluate()(xv)]
    values, first, inverse, counts = np.unique(xv, return_index=True, return_inverse=True, return_counts=True)
    m = len(values)
    assert out[3].tolist() == [m]
    np.testing.assert_array_equal(out[0][:m], values)
    np.testing.assert_array_equal(out[1][:m], first)
    np.testing.assert_array_equal(out[2], inverse.reshape(-1))
    np.testing.assert_array_equal(out[4][:m], counts)
    assert not out[0][m:].any() and not out[4][m:].any()
    perm = rng.permutation(300).astype("int64")
    p = relay.var("p", shape=(300,), dtype="int64")
    np.testing.assert_array_equal(run_on(relay.invert_permutation(p), perm, kind=kind), np.argsort(perm))


def test_unique_and_invert_permutation_want_a_vector():
    for expr, fragment in [(relay.unique(relay.var("x", shape=(2, 2)))[0], "1-D"),
                           (relay.invert_permutation(relay.var("x", shape=(3,), dtype="float32")), "integer")]:
        with pytest.raises(TypeInferenceError, match=fragment):
            relay.transform.InferTypeLocal(expr)


# --- sparse ------------------------------------------------------------------------------------------------
def test_sparse_to_dense_shape_expression_builds_the_dyn_op_and_dynamic_to_static_undoes_it():
    i = relay.var("i", shape=(2, 2), dtype="int32")
    v = relay.var("v", shape=(2,), dtype="float32")
    shape = relay.var("s", shape=(2,), dtype="int64")
    assert relay.sparse_to_dense(i, shape, v).op.name == "dyn.sparse_to_dense"
    dyn = relay.op.get("dyn.sparse_to_dense")(i, relay.const(np.array([3, 4], "int64")), v,
                                              relay.const(np.array(0, "float32")))
    mod = relay.transform.DynamicToStatic()(relay.IRModule.from_expr(relay.Function([i, v], dyn)))
    assert mod["main"].body.op.name == "sparse_to_dense"
    assert str(mod["main"].ret_type) == "Tensor[(3, 4), float32]"


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_sparse_fill_empty_rows_counts_at_run_time(kind):
    """TVM's documented example through relay.sparse_fill_empty_rows (indicator as bool)."""
    idx = relay.var("i", shape=(4, 2), dtype="int64")
    val = relay.var("v", shape=(4,), dtype="int64")
    shape = relay.var("s", shape=(2,), dtype="int64")
    default = relay.var("d", shape=(1,), dtype="int64")
    expr = relay.sparse_fill_empty_rows(idx, val, shape, default)
    mod = relay.IRModule.from_expr(relay.Function([idx, val, shape, default], expr))
    out = relay.create_executor(kind, mod=mod).evaluate()(
        np.array([[0, 1], [0, 3], [2, 0], [3, 1]], "int64"), np.array([1, 2, 3, 4], "int64"),
        np.array([5, 6], "int64"), np.array([10], "int64"))
    got = [o.numpy() for o in out]
    np.testing.assert_array_equal(got[0], [[0, 1], [0, 3], [1, 0], [2, 0], [3, 1], [4, 0]])
    np.testing.assert_array_equal(got[1], [1, 2, 10, 3, 4, 10])
    np.testing.assert_array_equal(got[2], [False, True, False, False, True])
