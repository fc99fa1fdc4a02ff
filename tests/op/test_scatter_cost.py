"""The scatter kernels cost O(output + updates), as TVM's topi scatter kernels (copy the data,
then one sequential pass over the updates), not output x updates; and larger shapes, with
duplicate and out-of-range indices, still match numpy on the compiled executors."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te, tir
from relay_backend.ir.types import TensorType
from relay_backend.op import get
from relay_backend.op.scattering import ScatterElementsAttrs, ScatterNDAttrs


def _stores_run(stmt, trips=1):
    """How many stores `stmt` runs at most: each store weighted by its enclosing loops' extents."""
    if isinstance(stmt, tir.For):
        extent = tir.simplify(stmt.extent)
        assert isinstance(extent, tir.IntImm), f"loop extent {extent} is not static"
        return _stores_run(stmt.body, trips * extent.value)
    if isinstance(stmt, tir.SeqStmt):
        return sum(_stores_run(s, trips) for s in stmt.seq)
    if isinstance(stmt, tir.IfThenElse):
        return _stores_run(stmt.then_case, trips) + (_stores_run(stmt.else_case, trips) if stmt.else_case else 0)
    if isinstance(stmt, (tir.LetStmt, tir.Allocate)):
        return _stores_run(stmt.body, trips)
    return trips if isinstance(stmt, tir.BufferStore) else 0


def _lowered_stores(name, attrs, shapes, dtypes):
    op = get(name)
    inputs = [te.placeholder(s, d, name=f"in{k}") for k, (s, d) in enumerate(zip(shapes, dtypes))]
    outs = op.compute(attrs, inputs, TensorType(shapes[0], dtypes[0]))
    func = te.lower(te.create_schedule(outs), inputs + list(outs), "scatter")
    return _stores_run(func.body)


@pytest.mark.parametrize("reduction", ["update", "add", "mean"])
def test_scatter_elements_work_is_linear(reduction):
    data, updates = (200, 300), (150, 300)
    stores = _lowered_stores("scatter_elements", ScatterElementsAttrs(0, reduction), [data, updates, updates],
                             ["float32", "int32", "float32"])
    assert stores <= 2 * (np.prod(data) + np.prod(updates)), stores


def test_scatter_nd_work_is_linear():
    data, indices, updates = (120, 40, 30), (2, 500), (500, 30)
    stores = _lowered_stores("scatter_nd", ScatterNDAttrs("add"), [data, indices, updates],
                             ["float32", "int64", "float32"])
    assert stores <= 2 * (np.prod(data) + np.prod(updates)), stores


def _run(expr, args, kind):
    params = relay.analysis.free_vars(expr)
    mod = relay.IRModule.from_expr(relay.Function(params, expr))
    return relay.create_executor(kind, mod=mod).evaluate()(*args).numpy()


def _np_scatter_elements(x, idx, upd, axis, reduction):
    """Sequential numpy loop (TVM's kernel): negative indices from the end, out of range dropped."""
    out = x.copy()
    for q in np.ndindex(*idx.shape):
        j = int(idx[q]) + (x.shape[axis] if idx[q] < 0 else 0)
        if 0 <= j < x.shape[axis]:
            p = list(q)
            p[axis] = j
            p = tuple(p)
            out[p] = {"update": upd[q], "add": out[p] + upd[q], "max": max(out[p], upd[q])}[reduction]
    return out


@pytest.mark.parametrize("kind", ["graph", "vm"])
@pytest.mark.parametrize("reduction", ["update", "add", "max"])
def test_large_scatter_elements_matches_numpy(kind, reduction):
    rng = np.random.default_rng(7)
    x = rng.integers(-50, 50, size=(80, 700)).astype("int32")
    idx = rng.integers(-100, 100, size=(200, 600)).astype("int64")   # duplicates, negatives, some out of range
    upd = rng.integers(-50, 50, size=(200, 600)).astype("int32")
    args = [relay.var(n, shape=a.shape, dtype=str(a.dtype)) for n, a in (("x", x), ("i", idx), ("u", upd))]
    got = _run(relay.scatter_elements(*args, axis=0, reduction=reduction), [x, idx, upd], kind)
    np.testing.assert_array_equal(got, _np_scatter_elements(x, idx, upd, 0, reduction))


@pytest.mark.parametrize("kind", ["graph", "vm"])
def test_large_scatter_nd_matches_numpy(kind):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((300, 50, 20)).astype("float32")
    idx = rng.integers(-320, 320, size=(2, 4000)).astype("int32")
    idx[1] = rng.integers(-50, 50, size=4000)
    upd = rng.standard_normal((4000, 20)).astype("float32")
    want = x.copy()
    for y in range(idx.shape[1]):
        a, b = int(idx[0, y]), int(idx[1, y])
        a, b = a + 300 if a < 0 else a, b + 50 if b < 0 else b
        if 0 <= a < 300 and 0 <= b < 50:
            want[a, b] = upd[y]                                    # update: the last one wins
    args = [relay.var(n, shape=a.shape, dtype=str(a.dtype)) for n, a in (("x", x), ("i", idx), ("u", upd))]
    got = _run(relay.scatter_nd(*args, mode="update"), [x, idx, upd], kind)
    np.testing.assert_array_equal(got, want)
