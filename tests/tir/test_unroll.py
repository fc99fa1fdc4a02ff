"""tir/unroll.py: `unrolled` loops of static extent become one copy of their body per iteration,
with the constants that makes folded (a Select or IfThenElse on the loop variable keeps only
the side its iteration takes); loops it must leave to LLVM stay loops. Results are checked with
the tir interpreter against numpy formulas written here."""
import numpy as np

from relay_backend import tir
from relay_backend.tir import stmt as S
from relay_backend.tir import unroll
from relay_backend.tir.functor import walk
from relay_backend.tir.interp import run
from relay_backend.tir.unroll import unroll_loops


def _count(node, kind):
    return sum(isinstance(n, kind) for n in walk(node))


def _row_select_kernel():
    """Y[a, j] = row a's own formula of X, written as a select chain on the unrolled a (the
    shape of a Winograd transform): a=0: X0+X1, a=1: X1-X2, a=2: 2*X2."""
    X, Y = tir.Buffer("X", (3, 8), "float32"), tir.Buffer("Y", (3, 8), "float32")
    a, j = tir.Var("a"), tir.Var("j")
    row = lambda k: X[k, j]  # noqa: E731
    value = tir.Select(a == 0, row(0) + row(1), tir.Select(a == 1, row(1) - row(2), row(2) * 2.0))
    body = S.For(a, 0, 3, "unrolled", S.For(j, 0, 8, "serial", S.BufferStore(Y, value, (a, j))))
    return tir.PrimFunc([X, Y], body, "rows")


def test_select_chain_on_the_unrolled_variable_keeps_one_side_per_copy():
    func = _row_select_kernel()
    out = unroll_loops(func)
    loops = [n for n in walk(out.body) if isinstance(n, S.For)]
    assert [loop.kind for loop in loops] == ["serial"] * 3          # the unrolled loop is gone
    assert _count(out.body, tir.Select) == 0                        # every chain decided
    assert _count(out.body, tir.BufferLoad) == 2 + 2 + 1            # only each row's own loads
    x = np.random.default_rng(0).standard_normal((3, 8)).astype("float32")
    y = np.zeros((3, 8), "float32")
    run(out, x, y)
    np.testing.assert_array_equal(y, np.stack([x[0] + x[1], x[1] - x[2], x[2] * 2]))


def test_if_then_else_on_the_variable_and_index_math_fold():
    X, Y = tir.Buffer("X", (16,), "float32"), tir.Buffer("Y", (4,), "float32")
    i = tir.Var("i")
    body = S.For(i, 0, 4, "unrolled", S.IfThenElse(
        i % 2 == 0, S.BufferStore(Y, X[i * 4 + 1], (i,)), S.BufferStore(Y, -X[i * 4], (i,))))
    out = unroll_loops(tir.PrimFunc([X, Y], body, "alt"))
    assert _count(out.body, S.IfThenElse) == 0
    stored = [n for n in walk(out.body) if isinstance(n, S.BufferStore)]
    assert all(isinstance(ix, tir.IntImm) for st in stored for ix in st.indices)
    x = np.arange(16, dtype="float32")
    y = np.zeros(4, "float32")
    run(out, x, y)
    np.testing.assert_array_equal(y, [x[1], -x[4], x[9], -x[12]])


def _kept_loop_kinds(body, *buffers):
    return [n.kind for n in walk(unroll_loops(tir.PrimFunc(list(buffers), body, "k")).body)
            if isinstance(n, S.For)]


def test_loops_left_to_llvm_stay_loops(monkeypatch):
    Y = tir.Buffer("Y", (64,), "float32")
    i, j, n = tir.Var("i"), tir.Var("j"), tir.SizeVar("n")
    symbolic = S.For(i, 0, n, "unrolled", S.BufferStore(Y, 1.0, (i,)))
    assert _kept_loop_kinds(symbolic, Y) == ["unrolled"]
    scratch = tir.Buffer("t", (1,), "float32")
    allocating = S.For(i, 0, 4, "unrolled", S.Allocate(scratch, S.seq(
        S.BufferStore(scratch, 2.0, (0,)), S.BufferStore(Y, scratch[0], (i,)))))
    assert _kept_loop_kinds(allocating, Y) == ["unrolled"]
    parallel = S.For(i, 0, 4, "unrolled", S.For(j, 0, 16, "parallel", S.BufferStore(Y, 1.0, (i * 16 + j,))))
    assert _kept_loop_kinds(parallel, Y) == ["unrolled", "parallel"]
    monkeypatch.setattr(unroll, "MAX_NODES", 10)
    big = S.For(i, 0, 64, "unrolled", S.BufferStore(Y, tir.FloatImm("float32", 1.0) + 2.0, (i,)))
    assert _kept_loop_kinds(big, Y) == ["unrolled"]


def test_nested_unrolled_loops_unroll_inside_out():
    X, Y = tir.Buffer("X", (2, 3), "float32"), tir.Buffer("Y", (2, 3), "float32")
    i, j = tir.Var("i"), tir.Var("j")
    body = S.For(i, 0, 2, "unrolled", S.For(j, 0, 3, "unrolled", S.BufferStore(
        Y, tir.Select(i == j, X[i, j] * 10.0, X[i, j]), (i, j))))
    out = unroll_loops(tir.PrimFunc([X, Y], body, "diag"))
    assert _count(out.body, S.For) == 0 and _count(out.body, S.BufferStore) == 6
    assert _count(out.body, tir.Select) == 0
    x = np.arange(6, dtype="float32").reshape(2, 3) + 1
    y = np.zeros((2, 3), "float32")
    run(out, x, y)
    np.testing.assert_array_equal(y, np.where(np.eye(2, 3, dtype=bool), x * 10, x))


def test_subtrees_without_the_variable_are_rewritten_once_for_every_copy(monkeypatch):
    """Y[i] = X[i] * (X[5] + 1.0): the subtree without i
    goes through the fold callback in the first copy only, the other copies take that rewrite; the
    result is what rewriting each copy on its own gives, and what numpy computes."""
    X, Y = tir.Buffer("X", (8,), "float32"), tir.Buffer("Y", (4,), "float32")
    i = tir.Var("i")
    free = X[5] + 1.0
    body = S.For(i, 0, 4, "unrolled", S.BufferStore(Y, X[i] * free, (i,)))
    folds = []
    original = unroll.fold_constant_node
    monkeypatch.setattr(unroll, "fold_constant_node", lambda n: folds.append(n) or original(n))
    out = unroll_loops(tir.PrimFunc([X, Y], body, "shared_free"))
    folded_free = [n for n in folds if n is free]
    assert len(folded_free) == 1                                    # not once per copy
    stores = [n for n in walk(out.body) if isinstance(n, S.BufferStore)]
    alone = [unroll._with_constant(body.body, i, k) for k in range(4)]
    assert [str(s) for s in stores] == [str(s) for s in alone]
    x = np.arange(8, dtype="float32") - 2.5
    y = np.zeros(4, "float32")
    run(out, x, y)
    np.testing.assert_array_equal(y, x[:4] * (x[5] + 1.0))
