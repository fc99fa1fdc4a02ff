"""Independent references for the issue-20 indexing ops (tests/op/test_indexing_ops.py checks every
sample of every op against them): plain Python loops over output (or update) positions written
from TVM's documented semantics, separately from each op's numpy `ref`."""
import itertools

import numpy as np

import relay_backend as relay

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


def run_on(expr, *args, kind="vm"):
    """`expr` as a function of its free vars, run on executor `kind` with `args`, as numpy."""
    params = relay.analysis.free_vars(expr)
    mod = relay.IRModule.from_expr(relay.Function(params, expr))
    return relay.create_executor(kind, mod=mod).evaluate()(*args).numpy()
