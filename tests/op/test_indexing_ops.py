"""The issue-20 indexing ops (gather, scatter, one_hot, the *_like ops, ...) against INDEPENDENT
references: plain Python loops over output (or update) positions written from TVM's documented
semantics, separately from each op's numpy `ref`. Every sample of every op of these modules is
checked, and an op there without a row fails test_table_covers_every_op. Edge cases (constant
indices out of range, duplicates, empty tensors, negative axes) follow.
"""
import itertools

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import InputError, TypeInferenceError
from relay_backend.op import list_ops

MODULES = {"relay_backend.op.gathering", "relay_backend.op.scattering", "relay_backend.op.one_hot_encoding",
           "relay_backend.op.dyn.indexing", "relay_backend.op.like", "relay_backend.op.matrix",
           "relay_backend.op.sequence", "relay_backend.op.search", "relay_backend.op.sort_based",
           "relay_backend.op.coordinates", "relay_backend.op.contrib_reshape", "relay_backend.op.slice_set",
           "relay_backend.op.sparse"}
OPS = [op for op in list_ops() if op.rel.__module__ in MODULES]


# --- the read rule and the write rule, from the docs (negatives from the end, then clamp / drop) -----
def _read(i, n):
    i = int(i)
    i = i + n if i < 0 else i
    return min(max(i, 0), n - 1)


def _write(i, n):
    i = int(i)
    i = i + n if i < 0 else i
    return i if 0 <= i < n else None


def _step(reduction, cur, upd):
    if reduction == "update":
        return upd
    if reduction == "add":
        return cur + upd
    if reduction == "mul":
        return cur * upd
    if reduction == "min":
        return min(cur, upd)
    if reduction == "max":
        return max(cur, upd)
    total = cur + upd                      # mean: halve; ints truncate toward zero
    return total / 2 if isinstance(total, (float, np.floating)) else int(total / 2)


def _gather(x, idx, attrs):
    axis = attrs.axis % x.ndim
    out = np.empty(idx.shape, x.dtype)
    for p in itertools.product(*map(range, idx.shape)):
        q = list(p)
        q[axis] = _read(idx[p], x.shape[axis])
        out[p] = x[tuple(q)]
    return out


def _gather_nd(x, idx, attrs):
    m, b = idx.shape[0], attrs.batch_dims
    out = np.empty(idx.shape[1:] + x.shape[m + b:], x.dtype)
    for y in itertools.product(*map(range, idx.shape[1:])):
        lead = list(y[:b]) + [_read(int(idx[(c,) + y]), x.shape[b + c]) for c in range(m)]
        for rest in itertools.product(*map(range, x.shape[m + b:])):
            out[y + rest] = x[tuple(lead) + rest]
    return out


def _adv_index(inputs, attrs):
    x, *indices = inputs
    bshape = np.broadcast_shapes(*[i.shape for i in indices]) if indices else ()
    out = np.empty(tuple(bshape) + x.shape[len(indices):], x.dtype)
    for b in itertools.product(*map(range, bshape)):
        lead = [_read(np.broadcast_to(i, bshape)[b], x.shape[k]) for k, i in enumerate(indices)]
        for rest in itertools.product(*map(range, x.shape[len(indices):])):
            out[b + rest] = x[tuple(lead) + rest]
    return out


def _scatter_elements(x, idx, upd, attrs):
    out = [[v] for v in x.reshape(-1).tolist()]            # Python numbers, then cast at the end
    axis = attrs.axis % x.ndim
    for q in itertools.product(*map(range, idx.shape)):     # row-major: the order TVM applies them
        t = _write(idx[q], x.shape[axis])
        if t is None:
            continue
        p = list(q)
        p[axis] = t
        flat = int(np.ravel_multi_index(p, x.shape))
        out[flat][0] = _cast_like(_step(attrs.reduction, out[flat][0], upd[q].item()), x.dtype)
    return np.array([v[0] for v in out], x.dtype).reshape(x.shape)


def _cast_like(value, dtype):
    return np.array(value).astype(dtype).item()


def _scatter_nd(x, idx, upd, attrs):
    m = idx.shape[0]
    out = x.copy()
    for y in itertools.product(*map(range, idx.shape[1:])):
        lead = [_write(idx[(c,) + y], x.shape[c]) for c in range(m)]
        if any(t is None for t in lead):
            continue
        for rest in itertools.product(*map(range, x.shape[m:])):
            p = tuple(lead) + rest
            out[p] = _step(attrs.mode, out[p], upd[y + rest])
    return out


def _one_hot(indices, on, off, attrs, depth=None):
    depth = attrs.depth if depth is None else int(depth)
    rank = indices.ndim + 1
    axis = attrs.axis % rank
    shape = list(indices.shape)
    shape.insert(axis, depth)
    out = np.empty(shape, attrs.dtype)
    for p in itertools.product(*map(range, shape)):
        k = p[axis]
        out[p] = on if int(indices[p[:axis] + p[axis + 1:]]) == k else off
    return out


def _dyn_one_hot(indices, on, off, depth, attrs):
    return _one_hot(indices, on, off, attrs, depth)


def _reshape_like(x, like, attrs):
    nd, nl = x.ndim, like.ndim
    lb, rb = attrs.lhs_begin % max(nd, 1), attrs.rhs_begin % max(nl, 1)
    le = nd if attrs.lhs_end is None else attrs.lhs_end % nd if attrs.lhs_end < 0 else attrs.lhs_end
    re_ = nl if attrs.rhs_end is None else attrs.rhs_end % nl if attrs.rhs_end < 0 else attrs.rhs_end
    shape = x.shape[:lb] + like.shape[rb:re_] + x.shape[le:]
    flat = list(x.flat)                                   # row-major order is kept
    out = np.empty(shape, x.dtype)
    for k, p in enumerate(itertools.product(*map(range, shape))):
        out[p] = flat[k]
    return out


def _broadcast_to_like(x, like, attrs):
    out = np.empty(like.shape, x.dtype)
    lead = like.ndim - x.ndim
    for p in itertools.product(*map(range, like.shape)):
        out[p] = x[tuple(0 if d == 1 else i for i, d in zip(p[lead:], x.shape))]
    return out


def _collapse_to(x, shape):
    acc = np.float32 if x.dtype == np.float16 else x.dtype
    out = np.zeros(shape, acc)
    lead = x.ndim - len(shape)
    for p in itertools.product(*map(range, x.shape)):
        q = tuple(0 if d == 1 else i for i, d in zip(p[lead:], shape))
        out[q] += x[p]
    return out.astype(x.dtype)


def _full_like(x, fill, attrs):
    out = np.empty(x.shape, x.dtype)
    out[...] = np.array(fill).astype(x.dtype)
    return out


def _slice_like(x, like, attrs):
    axes = range(min(x.ndim, like.ndim)) if attrs.axes is None else [a % x.ndim for a in attrs.axes]
    ends = [like.shape[a] if a in axes else x.shape[a] for a in range(x.ndim)]
    out = np.empty(ends, x.dtype)
    for p in itertools.product(*map(range, ends)):
        out[p] = x[p]
    return out


def _trilu(x, k, attrs):
    out = x.copy()
    for p in itertools.product(*map(range, x.shape)):
        row, col = p[-2], p[-1]
        if (col - row < int(k)) if attrs.upper else (col - row > int(k)):
            out[p] = 0
    return out


def _matrix_set_diag(x, diag, attrs):
    """TensorFlow's MatrixSetDiagV3 written out: diagonal d (k1 <= d <= k2) is row k2 - d of the
    band (or the one diagonal), element j along it; a short diagonal is padded on the left when
    right-aligned."""
    rows, cols = x.shape[-2:]
    out = x.copy()
    longest = diag.shape[-1]
    for batch in itertools.product(*map(range, x.shape[:-2])):
        for d in range(attrs.k1, attrs.k2 + 1):
            length = min(rows, cols - d) if d >= 0 else min(rows + d, cols)
            right = attrs.super_diag_right_align if d >= 0 else attrs.sub_diag_right_align
            pad = longest - length if right else 0
            for j in range(length):
                r, c = (j, j + d) if d >= 0 else (j - d, j)
                src = diag[batch + ((attrs.k2 - d,) if attrs.k1 != attrs.k2 else ()) + (j + pad,)]
                out[batch + (r, c)] = src
    return out


def _reverse_sequence(x, lengths, attrs):
    seq, batch = attrs.seq_axis % x.ndim, attrs.batch_axis % x.ndim
    out = x.copy()
    n = x.shape[seq]
    for p in itertools.product(*map(range, x.shape)):
        length = min(int(lengths[p[batch]]), n)
        if p[seq] < length:
            q = list(p)
            q[seq] = length - 1 - p[seq]
            out[p] = x[tuple(q)]
    return out


def _sequence_mask(x, valid, attrs):
    out = x.copy()
    for p in itertools.product(*map(range, x.shape)):
        if p[attrs.axis] >= valid[p[1 - attrs.axis]]:
            out[p] = attrs.mask_value
    return out


def _sliding_window(x, attrs):
    a, win, st = attrs.axis, attrs.window_shape, attrs.strides
    counts = tuple((d - w) // s + 1 for d, w, s in zip(x.shape[a:], win, st))
    out = np.empty(x.shape[:a] + counts + win, x.dtype)
    for p in itertools.product(*map(range, out.shape)):
        lead, w, e = p[:a], p[a:a + len(win)], p[a + len(win):]
        out[p] = x[lead + tuple(wi * s + ei for wi, s, ei in zip(w, st, e))]
    return out


def _argwhere(condition, attrs):
    rows = [p for p in itertools.product(*map(range, condition.shape)) if condition[p]]
    return np.array(rows, "int32").reshape(len(rows), condition.ndim)


def _searchsorted(seq, values, attrs):
    out = np.empty(values.shape, attrs.dtype)
    for p in itertools.product(*map(range, values.shape)):
        row = seq[p[:-1]] if seq.ndim > 1 else seq
        v = values[p]
        out[p] = sum(1 for e in row if (e <= v if attrs.right else e < v))   # row is sorted
    return out


def _invert_permutation(x, attrs):
    """A stable selection sort of positions: out[k] = the k-th position in (value, position) order."""
    order = sorted(range(len(x)), key=lambda i: (int(x[i]), i))
    return np.array(order, x.dtype).reshape(x.shape)


def _same(a, b):
    return a == b or (a != a and b != b)         # NaN is one value, as numpy's unique


def _unique(x, attrs):
    values, first, counts = [], [], []
    for i, v in enumerate(x.tolist()):            # first appearances, in input order
        k = next((j for j, u in enumerate(values) if _same(u, v)), None)
        if k is None:
            values.append(v), first.append(i), counts.append(1)
        else:
            counts[k] += 1
    order = list(range(len(values)))
    if attrs.sorted:                              # numbers ascending, NaN last
        order.sort(key=lambda k: (values[k] != values[k], values[k] if values[k] == values[k] else 0))
    rank = {k: r for r, k in enumerate(order)}
    inverse = [rank[next(k for k, u in enumerate(values) if _same(u, v))] for v in x.tolist()]
    n, m = len(x), len(values)

    def padded(seq, dtype):
        out = np.zeros(n, dtype)
        out[:m] = [seq[k] for k in order]
        return out
    out = (padded(values, x.dtype), padded(first, "int32"), np.array(inverse, "int32").reshape(n),
           np.array([m], "int32"))
    return out + ((padded(counts, "int32"),) if attrs.return_counts else ())


def _meshgrid(arrays, attrs):
    vectors = [np.reshape(a, (-1,)) for a in arrays]
    shape = [len(v) for v in vectors]
    if attrs.indexing == "xy" and len(shape) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    grids = []
    for k, vec in enumerate(vectors):
        axis = (1 - k if k < 2 else k) if attrs.indexing == "xy" and len(shape) >= 2 else k
        grid = np.empty(shape, vec.dtype)
        for p in itertools.product(*map(range, shape)):
            grid[p] = vec[p[axis]]
        grids.append(grid)
    return tuple(grids)


def _unravel_index(indices, shape, attrs):
    dims = [max(int(d), 1) for d in shape]
    flat = np.reshape(indices, (-1,))
    out = np.empty((len(dims), len(flat)), indices.dtype)
    for j, value in enumerate(flat.tolist()):
        for c in range(len(dims)):
            stride = int(np.prod(dims[c + 1:], dtype=np.int64))
            out[c, j] = (value // stride) % dims[c]
    return out.reshape((len(dims),) + indices.shape)


def _reverse_reshape(x, attrs):
    """Read the codes from the right: 0 copies the matching dim from the end, -1 takes the rest."""
    dims, codes, out = list(x.shape[::-1]), list(attrs.newshape[::-1]), []
    src = 0
    for code in codes:
        if code == 0:
            out.append(dims[src])
            src += 1
        elif code == -2:
            out.extend(dims[src:])
            src = len(dims)
        elif code == -3:
            out.append(dims[src] * dims[src + 1])
            src += 2
        else:
            out.append(code)
            src += 1
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        out[out.index(-1)] = x.size // known
    return x.reshape(out[::-1])


def _strided_set(x, v, begin, end, strides, attrs):
    out = x.copy()
    ranges = []
    for a, n in enumerate(x.shape):
        b = int(begin[a]) if a < len(begin) else None
        e = int(end[a]) if a < len(end) else None
        s = int(strides[a]) if a < len(strides) else 1
        ranges.append(list(range(n))[b:e:s])
    for p in itertools.product(*[range(len(r)) for r in ranges]):
        out[tuple(r[i] for r, i in zip(ranges, p))] = v[p]
    return out


def _sparse_to_dense(indices, values, default, attrs, shape=None):
    shape = attrs.output_shape if shape is None else tuple(int(d) for d in shape)
    out = np.full(shape, default, values.dtype)
    tuples = np.reshape(indices, (-1, len(shape))) if indices.ndim == 2 else np.reshape(indices, (-1, 1))
    for i, t in enumerate(tuples.tolist()):
        pos = [_write(c, n) for c, n in zip(t, shape)]
        if None not in pos:
            out[tuple(pos)] = values if values.ndim == 0 else values[i]
    return out


def _dyn_sparse_to_dense(indices, shape, values, default, attrs):
    return _sparse_to_dense(indices, values, default, attrs, shape)


def _sparse_reshape(indices, prev, new, attrs):
    total = int(np.prod(prev))
    known = int(np.prod([d for d in new if d != -1]))
    shape = [total // known if d == -1 else int(d) for d in new]
    out = np.empty((len(indices), len(shape)), indices.dtype)
    for i, t in enumerate(indices.tolist()):
        flat = 0
        for c, n in zip(t, prev):
            flat = flat * int(n) + c
        out[i] = np.unravel_index(flat, shape)
    return out, np.array(shape, new.dtype)


def _sparse_fill_empty_rows(indices, values, shape, default, attrs):
    out_idx, out_val, indicator = [], [], []
    rows = [int(r) for r in indices[:, 0]]
    for r in range(int(shape[0])):
        mine = [i for i, row in enumerate(rows) if row == r]
        indicator.append(0 if mine else 1)
        if not mine:
            out_idx.append([r] + [0] * (indices.shape[1] - 1))
            out_val.append(np.reshape(default, -1)[0])
        for i in mine:
            out_idx.append(list(indices[i]))
            out_val.append(values[i])
    return (np.array(out_idx, indices.dtype).reshape(-1, indices.shape[1]), np.array(out_val, values.dtype),
            np.array(indicator, "int64"))


INDEPENDENT = {"sparse_to_dense": _sparse_to_dense, "dyn.sparse_to_dense": _dyn_sparse_to_dense,
               "sparse_reshape": _sparse_reshape, "sparse_fill_empty_rows": _sparse_fill_empty_rows,
               "meshgrid": _meshgrid, "unravel_index": _unravel_index, "contrib_reverse_reshape": _reverse_reshape,
               "strided_set": _strided_set,
               "invert_permutation": _invert_permutation, "unique": _unique,
               "argwhere": _argwhere, "searchsorted": _searchsorted, "trilu": _trilu, "matrix_set_diag": _matrix_set_diag, "reverse_sequence": _reverse_sequence,
               "sequence_mask": _sequence_mask, "sliding_window": _sliding_window,
               "reshape_like": _reshape_like, "broadcast_to_like": _broadcast_to_like,
               "collapse_sum_like": lambda x, like, attrs: _collapse_to(x, like.shape),
               "collapse_sum_to": lambda x, shape, attrs: _collapse_to(x, tuple(shape.tolist())),
               "full_like": _full_like, "slice_like": _slice_like,
               "gather": _gather, "gather_nd": _gather_nd, "adv_index": _adv_index,
               "scatter_elements": _scatter_elements, "scatter_nd": _scatter_nd,
               "one_hot": _one_hot, "dyn.one_hot": _dyn_one_hot}


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
def _run(expr, *args, kind="vm"):
    params = relay.analysis.free_vars(expr)
    mod = relay.IRModule.from_expr(relay.Function(params, expr))
    return relay.create_executor(kind, mod=mod).evaluate()(*args).numpy()


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
    got = _run(relay.gather(data, 1, i), x, idx, kind=kind)
    np.testing.assert_array_equal(got, [[3, 3], [4, 4], [11, 10]])       # -1 -> 3, 9 -> 3, -9 -> 0
    upd = relay.var("u", shape=(3, 2), dtype="float32")
    got = _run(relay.scatter_elements(data, i, upd, axis=1, reduction="add"), x, idx,
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
    got = _run(expr, x, np.array([10, 20, 30], "float32"), kind=kind)
    np.testing.assert_allclose(got, np.asarray(want, "float32"))


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_scatter_nd_duplicates_add_up(kind):
    data = relay.var("x", shape=(2, 2), dtype="int32")
    upd = relay.var("u", shape=(4,), dtype="int32")
    expr = relay.scatter_nd(data, relay.const(np.array([[0, 0, 1, 0], [1, 1, 0, 1]], "int64")), upd, "add")
    got = _run(expr, np.zeros((2, 2), "int32"), np.array([1, 2, 4, 8], "int32"), kind=kind)
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


def test_reading_an_empty_axis_is_a_type_error_and_empty_results_run():
    empty = relay.var("x", shape=(2, 0), dtype="float32")
    with pytest.raises(TypeInferenceError, match="size 0"):
        relay.transform.InferTypeLocal(relay.gather(empty, 1, relay.var("i", shape=(2, 1), dtype="int32")))
    x = relay.var("x", shape=(2, 3), dtype="float32")
    i = relay.var("i", shape=(2, 0), dtype="int32")
    got = _run(relay.gather(x, 1, i), np.ones((2, 3), "float32"), np.zeros((2, 0), "int32"), kind="graph")
    assert got.shape == (2, 0)


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
    got = _run(expr, np.array([0, 2, 5], "int64"), np.array(3, "int32"), kind=kind)
    want = np.full((3, 3), -1.0, "float32")
    want[0, 0] = want[2, 1] = 2.0
    np.testing.assert_array_equal(got, want)
    with pytest.raises(InputError, match="depth must be > 0"):
        _run(expr, np.array([0, 2, 5], "int64"), np.array(0, "int32"), kind=kind)


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
    got = _run(expr, xv, np.zeros((2, 3, 4), "float32"), kind=kind)
    np.testing.assert_allclose(got, xv * 8)


# --- matrices and sequences -----------------------------------------------------------------------------
def test_matrix_set_diag_documented_example():
    data = relay.var("x", shape=(2, 3, 4), dtype="int32")
    diag = relay.var("d", shape=(2, 3), dtype="int32")
    got = _run(relay.matrix_set_diag(data, diag), np.full((2, 3, 4), 7, "int32"),
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
        got = _run(relay.trilu(x, k, upper=False), xv, np.array(kv, "int64"), kind=kind)
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
    np.testing.assert_array_equal(_run(relay.invert_permutation(p), perm, kind=kind), np.argsort(perm))


def test_unique_and_invert_permutation_want_a_vector():
    for expr, fragment in [(relay.unique(relay.var("x", shape=(2, 2)))[0], "1-D"),
                           (relay.invert_permutation(relay.var("x", shape=(3,), dtype="float32")), "integer")]:
        with pytest.raises(TypeInferenceError, match=fragment):
            relay.transform.InferTypeLocal(expr)


# --- take's modes (issue 20: the variants not covered elsewhere) ---------------------------------------------
@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_take_modes_with_negative_axis_and_batch_dims(kind):
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    data = relay.var("x", shape=(2, 3, 4), dtype="float32")
    idx = relay.var("i", shape=(2, 2), dtype="int64")
    iv = np.array([[-1, 5], [9, -6]], "int64")
    for mode in ("clip", "wrap"):
        got = _run(relay.take(data, idx, axis=-1, batch_dims=1, mode=mode), x, iv, kind=kind)
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
        _run(relay.strided_set(x, v, [0], [4], [2]), np.zeros(4, "float32"), np.ones(3, "float32"), kind="debug")


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


@pytest.mark.parametrize("reduction,left,right,want", [
    ("update", (5, 1), (0, 0), (5, 1)), ("update", (0, 0), (7, 1), (7, 1)), ("update", (5, 1), (7, 1), (7, 1)),
    ("add", (5, 1), (7, 1), (12, 1)), ("mul", (5, 1), (0, 0), (5, 1)), ("min", (0, 0), (-3, 1), (-3, 1)),
    ("max", (5, 1), (7, 1), (7, 1)), ("max", (0, 0), (0, 0), (0, 0))])
def test_scatter_fold_combines_partial_folds_in_order(reduction, left, right, want):
    """A GPU schedule may split the fold; the partial results must combine to the serial fold
    (a side that never started holds no value and is skipped)."""
    from relay_backend import te, tir
    from relay_backend.op.index_rules import sequential_fold
    from relay_backend.tir.functor import substitute
    reducer = sequential_fold(reduction, "int32")
    r = te.reduce_axis((0, 1), "r")
    combiner = reducer((tir.const(0, "int32"), tir.const(0, "int32")), axis=[r])[0].combiner
    binding = dict(zip(combiner.lhs, [tir.const(v, "int32") for v in left]))
    binding.update(zip(combiner.rhs, [tir.const(v, "int32") for v in right]))
    got = tuple(tir.simplify(substitute(e, binding)).value for e in combiner.result)
    assert got == want
