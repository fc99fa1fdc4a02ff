"""COO sparse-tensor operators (TVM v0.18 names): sparse_to_dense, sparse_reshape and
sparse_fill_empty_rows (relay.dyn.sparse_to_dense, with the output shape read at run time,
is in op/dyn/indexing.py). All OPAQUE, as TVM's.

  sparse_to_dense(sparse_indices, sparse_values, default_value; output_shape)
      a dense tensor of default_value with sparse_values written at sparse_indices (0-D: one
      index, 1-D: N indices, 2-D: N index tuples); values a scalar for all or one per index. A
      repeated index keeps its last value; a negative index counts from the end; one still out
      of range is dropped (op/index_rules.py's write rule). The kernel sorts the flat targets
      (op/te_search.py) and each output element binary-searches them: O(N log N + size log N).
  sparse_reshape(sparse_indices, prev_shape, new_shape)
      (the indices of the same elements in a tensor of new_shape, new_shape with its -1
      resolved); the shapes are 1-D tensors read at run time.
  sparse_fill_empty_rows(sparse_indices, sparse_values, dense_shape, default_value)
      (indices, values, empty_row_indicator): every row of dense_shape[0] with no entry gets one
      at column 0 holding default_value; indices must be sorted by row (TensorFlow's
      fill_empty_rows, TVM's rules). The output length depends on the values: the VM's shape
      function counts the empty rows.
"""
import dataclasses

import numpy as np

from .. import te, tir
from ..errors import InputError
from ..ir import expr as _expr
from ..ir.attrs import Attrs, always_printed, as_int_tuple
from ..ir.dims import dim_to_str
from ..ir.shape_math import dims_differ
from ..ir.types import Any, TensorType, TupleType
from . import index_math as IM
from . import samples as S
from .constructor_docs import documented
from .dyn.common import te_out_shape
from .index_rules import expect_int, fail, np_from_end
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor
from .te_search import inclusive_prefix_sum, lower_bound, materialize, stable_sort


# --- sparse_to_dense -------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SparseToDenseAttrs(Attrs):
    output_shape: tuple = always_printed(())

    def __post_init__(self):
        shape = as_int_tuple(self.output_shape, name="output_shape")
        if any(d < 0 for d in shape):
            raise InputError(f"sparse_to_dense: output_shape {shape} has a negative dim")
        object.__setattr__(self, "output_shape", shape)


def sparse_to_dense_types(op_name, arg_types, rank):
    """(indices, values, default) checked for an output of `rank` dims; returns the values dtype."""
    indices, values, default = (expect_tensor(t, f"{op_name} {w}") for t, w in
                                zip(arg_types, ("sparse_indices", "sparse_values", "default_value")))
    types = (indices, values, default)
    expect_int(op_name, indices, "sparse_indices", *types)
    if indices.ndim > 2:
        raise fail(op_name, f"sparse_indices must be 0-D, 1-D or 2-D, got rank {indices.ndim}", *types)
    tuple_len = indices.shape[1] if indices.ndim == 2 else 1
    if dims_differ(tuple_len, rank):
        raise fail(op_name, f"index tuples of length {dim_to_str(tuple_len)} for an output of rank {rank}", *types)
    count = indices.shape[0] if indices.ndim else 1
    if values.ndim > 1 or (values.ndim == 1 and dims_differ(values.shape[0], count)):
        raise fail(op_name, f"sparse_values must be a scalar or hold one value per index ({dim_to_str(count)})",
                   *types)
    if default.ndim != 0 or default.dtype != values.dtype:
        raise fail(op_name, f"default_value must be a scalar of sparse_values' dtype {values.dtype}", *types)
    return values.dtype


def _sparse_to_dense_rel(arg_types, attrs):
    dtype = sparse_to_dense_types("sparse_to_dense", arg_types, len(attrs.output_shape))
    return TensorType(attrs.output_shape, dtype)


def sparse_to_dense_ref(indices, values, default, output_shape):
    """numpy: default everywhere, then each valid index in order (so the last of a repeat wins)."""
    out = np.full(output_shape, np.asarray(default), dtype=np.asarray(values).dtype)
    tuples = np.asarray(indices).reshape(-1, len(output_shape)) if np.ndim(indices) == 2 else \
        np.asarray(indices).reshape(-1, 1)
    if out.size == 0 or tuples.shape[0] == 0:
        return out
    coords = [np_from_end(tuples[:, c], n) for c, n in enumerate(output_shape)]
    valid = np.all([(c >= 0) & (c < n) for c, n in zip(coords, output_shape)], axis=0)
    vals = np.broadcast_to(np.asarray(values), (tuples.shape[0],))
    flat = np.ravel_multi_index(tuple(np.where(valid, c, 0) for c in coords), output_shape)
    flat, vals = flat[valid][::-1], vals[valid][::-1]
    targets, last = np.unique(flat, return_index=True)
    out.reshape(-1)[targets] = vals[last]
    return out


def sparse_to_dense_compute(inputs, out_dims, name, tag):
    """Sort the valid flat targets (invalid ones become -1), then each output element finds
    the last index aimed at it by a binary search."""
    indices, values, default = inputs
    count = IM.te_dims(indices)[0] if indices.ndim else 1
    rank = len(out_dims)

    def coordinate(i, c):
        return indices[()] if indices.ndim == 0 else indices[i] if indices.ndim == 1 else indices[i, c]

    def target(i):
        from .index_rules import te_valid_index
        flat, valid = tir.const(0, "int64"), tir.const(True, "bool")
        for c, n in enumerate(out_dims):
            ok, pos = te_valid_index(coordinate(i, c), n)
            flat = flat * IM.dim_expr(n).astype("int64") + pos.astype("int64")
            valid = valid & ok
        return te.if_then_else(valid, flat, tir.const(-1, "int64"))
    keys = te.compute((count,), target, name=f"{name}_targets", tag=tag)
    ordered, source = stable_sort(keys, count, f"{name}_sort", tag)

    def body(*p):
        flat = IM.ravel(p, out_dims).astype("int64") if rank else tir.const(0, "int64")
        after = lower_bound(lambda k: ordered[k], count, lambda e: e > flat)
        last = tir.max(after - 1, 0)
        hit = (after > 0) & (ordered[last] == flat)
        value = values[()] if values.ndim == 0 else values[source[last]]
        return te.if_then_else(hit, value, default[()])
    return [te.compute(tuple(out_dims), body, name=name, tag=tag)]


def _sparse_to_dense_samples(rng):
    f32 = np.float32
    return [Sample([np.array([[0, 0], [1, 2]], "int32"), np.array([1, 2], f32), np.array(0, f32)],
                   SparseToDenseAttrs((3, 4)), "TVM's example"),
            Sample([np.array([3, 1, 3, -1], "int64"), np.array([5, 6, 7, 8], "int32"), np.array(-1, "int32")],
                   SparseToDenseAttrs((5,)), "1-D indices, a repeat (last wins), negative"),
            Sample([np.array(2, "int32"), np.array(9.5, "float64"), np.array(1.5, "float64")],
                   SparseToDenseAttrs((4,)), "one index, scalar value"),
            Sample([np.array([[0, 1], [7, 0], [1, 1]], "int32"), np.array(3, f32), np.array(0.5, f32)],
                   SparseToDenseAttrs((2, 2)), "scalar value, an index out of range dropped"),
            Sample([np.zeros((0, 2), "int32"), np.zeros((0,), f32), np.array(4, f32)], SparseToDenseAttrs((2, 3)),
                   "no entries")]


SPARSE_TO_DENSE = defop(
    "sparse_to_dense", inputs=("sparse_indices", "sparse_values", "default_value"), attrs=SparseToDenseAttrs,
    rel=_sparse_to_dense_rel, pattern=OpPattern.OPAQUE, level=3, samples=_sparse_to_dense_samples,
    ref=lambda i, v, d, attrs: sparse_to_dense_ref(i, v, d, attrs.output_shape),
    compute=lambda attrs, inputs, out_type: sparse_to_dense_compute(inputs, attrs.output_shape,
                                                                   "T_sparse_to_dense", SPARSE_TO_DENSE.tag),
    doc="a dense tensor of default_value with sparse_values at sparse_indices")


# --- sparse_reshape -------------------------------------------------------------------------------------------
def _sparse_reshape_rel(arg_types, attrs):
    op = "sparse_reshape"
    indices, prev, new = (expect_tensor(t, f"{op} {w}") for t, w in
                          zip(arg_types, ("sparse_indices", "prev_shape", "new_shape")))
    types = (indices, prev, new)
    for t, what in zip(types, ("sparse_indices", "prev_shape", "new_shape")):
        expect_int(op, t, what, *types)
    if indices.ndim != 2 or prev.ndim != 1 or new.ndim != 1:
        raise fail(op, "sparse_indices must be 2-D, prev_shape and new_shape 1-D", *types)
    if dims_differ(indices.shape[1], prev.shape[0]):
        raise fail(op, f"index tuples of length {dim_to_str(indices.shape[1])} for a shape of "
                       f"{dim_to_str(prev.shape[0])} dims", *types)
    return TupleType([TensorType((indices.shape[0], new.shape[0]), indices.dtype),
                      TensorType((new.shape[0],), new.dtype)])


def _resolved_shape(prev, new):
    """new_shape with its -1 taking the rest of prev's element count (truncating, as TVM's; a 0
    among the known dims reads as 1)."""
    total = int(np.prod(prev.astype("int64")))
    known = int(np.prod([max(int(d), 1) for d in new if d != -1]))
    return np.array([total // known if d == -1 else d for d in new], new.dtype)


def _sparse_reshape_ref(indices, prev, new, attrs):
    shape = _resolved_shape(prev, new)
    strides_in = [int(np.prod(prev[k + 1:].astype("int64"))) for k in range(len(prev))]
    flat = indices.astype("int64") @ np.array(strides_in, "int64") if len(prev) else np.zeros(len(indices), "int64")
    out = np.empty((indices.shape[0], len(shape)), indices.dtype)
    rest = flat
    for k in reversed(range(len(shape))):
        d = max(int(shape[k]), 1)
        out[:, k] = rest % d if k else rest
        rest = rest // d
    return out, shape


def _sparse_reshape_compute(attrs, inputs, out_type):
    """Flatten each index tuple by prev_shape, split it by the resolved new_shape (the first dim
    keeps the quotient, as TVM's)."""
    indices, prev, new = inputs
    n_prev, n_new = IM.te_dims(prev)[0], IM.te_dims(new)[0]
    one = tir.const(1, "int64")
    total = one
    for k in range(n_prev):
        total = total * prev[k].astype("int64")
    known = one
    for k in range(n_new):
        known = known * te.if_then_else(new[k] == -1, one, tir.max(new[k].astype("int64"), one))
    shape = te.compute((n_new,), lambda k: te.if_then_else(new[k] == -1, tir.floordiv(total, known).astype(new.dtype),
                                                           new[k]), name="T_sparse_reshape_shape", tag=SPARSE_RESHAPE.tag)

    def element(i, c):
        flat = tir.const(0, "int64")
        for k in range(n_prev):
            flat = flat * prev[k].astype("int64") + indices[i, k].astype("int64")
        value = tir.const(0, "int64")
        for k in reversed(range(1, n_new)):
            d = tir.max(shape[k].astype("int64"), one)
            value = te.if_then_else(c == k, tir.floormod(flat, d), value)
            flat = tir.floordiv(flat, d)
        return te.if_then_else(c == 0, flat, value).astype(indices.dtype)
    return [te.compute((IM.te_dims(indices)[0], n_new), element, name="T_sparse_reshape", tag=SPARSE_RESHAPE.tag),
            shape]


SPARSE_RESHAPE = defop(
    "sparse_reshape", inputs=("sparse_indices", "prev_shape", "new_shape"), rel=_sparse_reshape_rel,
    pattern=OpPattern.OPAQUE, ref=_sparse_reshape_ref, compute=_sparse_reshape_compute, level=3,
    samples=lambda rng: [
        Sample([np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 2, 3]], "int64"),
                np.array([2, 3, 6], "int64"), np.array([9, -1], "int64")], None, "TVM's example"),
        Sample([np.array([[1, 2], [0, 5]], "int32"), np.array([3, 6], "int32"), np.array([2, 3, 3], "int32")]),
        Sample([np.zeros((0, 2), "int64"), np.array([4, 5], "int64"), np.array([-1], "int64")], None, "no entries")],
    doc="the indices of a sparse tensor's entries after a reshape, and the new shape")


# --- sparse_fill_empty_rows ---------------------------------------------------------------------------------
def _fill_rel(arg_types, attrs):
    op = "sparse_fill_empty_rows"
    indices, values, shape, default = (expect_tensor(t, f"{op} {w}") for t, w in zip(
        arg_types, ("sparse_indices", "sparse_values", "dense_shape", "default_value")))
    types = (indices, values, shape, default)
    expect_int(op, indices, "sparse_indices", *types)
    expect_int(op, shape, "dense_shape", *types)
    if indices.ndim != 2 or values.ndim != 1 or shape.ndim != 1:
        raise fail(op, "sparse_indices must be 2-D, sparse_values and dense_shape 1-D", *types)
    if dims_differ(indices.shape[0], values.shape[0]) or dims_differ(indices.shape[1], shape.shape[0]):
        raise fail(op, "sparse_indices must be (number of values, length of dense_shape)", *types)
    if default.dtype != values.dtype or default.ndim > 1:
        raise fail(op, f"default_value must be a scalar or 1-element tensor of {values.dtype}", *types)
    return TupleType([TensorType((Any(), indices.shape[1]), indices.dtype), TensorType((Any(),), values.dtype),
                      TensorType((Any(),), "int64")])


def _fill_counts(indices, shape):
    rows = int(np.asarray(shape).reshape(-1)[0]) if np.size(shape) else 0
    present = np.zeros(max(rows, 0), bool)
    first = np.asarray(indices)[:, 0] if np.size(indices) else np.zeros(0, "int64")
    present[first[(first >= 0) & (first < rows)]] = True
    return rows, ~present


def _fill_ref(indices, values, shape, default, attrs):
    rows, empty = _fill_counts(indices, shape)
    fill_idx = np.zeros((int(empty.sum()), indices.shape[1]), indices.dtype)
    fill_idx[:, 0] = np.nonzero(empty)[0]
    all_idx = np.concatenate([indices, fill_idx])
    all_val = np.concatenate([values, np.full(len(fill_idx), np.asarray(default).reshape(-1)[0], values.dtype)])
    order = np.argsort(all_idx[:, 0], kind="stable")
    return all_idx[order], all_val[order], empty.astype("int64")


def _fill_shape_func(attrs, arrays):
    indices, values, shape = (np.asarray(a) for a in arrays[:3])
    rows, empty = _fill_counts(indices, shape)
    total = indices.shape[0] + int(empty.sum())
    return TupleType([TensorType((total, indices.shape[1]), str(indices.dtype)),
                      TensorType((total,), str(values.dtype)), TensorType((rows,), "int64")])


def _fill_compute(attrs, inputs, out_type):
    """Row r is empty when the sorted first column has no r (a binary search). Output position q
    belongs to the row whose first output position (entries of earlier rows plus empty rows
    before it) is the last one <= q; there it is an original entry or the filler."""
    indices, values, _, default = inputs
    n = IM.te_dims(indices)[0]
    last_entry = max(n - 1, 0) if IM.is_static(n) else tir.max(n - 1, 0)
    tag = SPARSE_FILL_EMPTY_ROWS.tag
    (total, width), _, (rows,) = (te_out_shape(t, f"fill{k}") for k, t in enumerate(out_type.fields))

    def entries_before(r):           # entries whose row is < r (rows sorted ascending)
        return lower_bound(lambda i: indices[i, 0].astype("int64"), n, lambda v: v >= r)
    before = materialize((rows,), lambda r: entries_before(r.astype("int64")), "T_fill_before", tag)
    empty = te.compute((rows,), lambda r: te.if_then_else(
        (before[r] >= n) | (indices[tir.min(before[r], last_entry), 0].astype("int64")
                            != r.astype("int64")), tir.const(1, "int64"), tir.const(0, "int64")),
        name="T_fill_empty", tag=tag)
    empty_count = inclusive_prefix_sum(empty, rows, "T_fill_empty", tag)     # empty rows <= r
    start = materialize((rows,), lambda r: before[r] + (empty_count[r] - empty[r]).astype("int32"),
                        "T_fill_start", tag)
    row_of = materialize((total,), lambda q: lower_bound(lambda r: start[r], rows, lambda s: s > q) - 1,
                         "T_fill_row", tag)

    def source(q):                   # (is a filler, the original entry otherwise)
        r = tir.max(row_of[q], 0)
        return empty[r] == 1, tir.min(before[r] + (q - start[r]), last_entry)

    def index_body(q, c):
        filler, i = source(q)
        return te.if_then_else(filler, te.if_then_else(c == 0, tir.max(row_of[q], 0).astype(indices.dtype),
                                                       tir.const(0, indices.dtype)), indices[i, c])

    def value_body(q):
        filler, i = source(q)
        fill = default[()] if default.ndim == 0 else default[0]
        return te.if_then_else(filler, fill, values[i])
    return [te.compute((total, width), index_body, name="T_fill_indices", tag=tag),
            te.compute((total,), value_body, name="T_fill_values", tag=tag),
            te.compute((rows,), lambda r: empty[r], name="T_fill_indicator", tag=tag)]


SPARSE_FILL_EMPTY_ROWS = defop(
    "sparse_fill_empty_rows", inputs=("sparse_indices", "sparse_values", "dense_shape", "default_value"),
    rel=_fill_rel, pattern=OpPattern.OPAQUE, ref=_fill_ref, shape_func=_fill_shape_func, compute=_fill_compute,
    level=3,
    samples=lambda rng: [
        Sample([np.array([[0, 1], [0, 3], [2, 0], [3, 1]], "int64"), np.array([1, 2, 3, 4], "int64"),
                np.array([5, 6], "int64"), np.array([10], "int64")], None, "TVM's example"),
        Sample([np.array([[1, 0, 2]], "int32"), np.array([2.5], "float32"), np.array([3, 2, 4], "int32"),
                np.array(-1.0, "float32")]),
        Sample([np.zeros((0, 2), "int64"), np.zeros((0,), "float64"), np.array([3, 3], "int64"),
                np.array([7.0], "float64")], None, "every row empty"),
        Sample([np.array([[0, 0], [1, 1]], "int64"), np.array([4, 5], "int32"), np.array([2, 2], "int64"),
                np.array([0], "int32")], None, "no row empty")],
    doc="a sparse tensor with an entry of default_value in every empty row")


# --- Python constructors with tvm.relay's names --------------------------------------------------------------
# The parameters relay.sparse_to_dense and dyn.sparse_to_dense share (constructor_docs completes their docstrings)
SPARSE_TO_DENSE_PARAMETERS = {
    "sparse_indices": ("relay.Expr", "The positions written: a scalar (one index), a 1-D tensor of N indices, "
                                     "or an (N, rank) tensor of index tuples."),
    "output_shape": ("tuple of int or relay.Expr", "The shape of the result."),
    "sparse_values": ("relay.Expr", "The values written: a scalar for every position or one per index."),
    "default_value": ("relay.Expr or scalar", "The value of every element no index names."),
}


@documented(SPARSE_TO_DENSE_PARAMETERS)
def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0):
    """relay.sparse_to_dense: a dense tensor of output_shape (ints; a Relay expression builds
    dyn.sparse_to_dense) with sparse_values at sparse_indices, default_value elsewhere."""
    if not isinstance(default_value, _expr.Expr):
        dtype = None
        ty = getattr(sparse_values, "_checked_type_", None) or getattr(sparse_values, "type_annotation", None)
        if isinstance(sparse_values, _expr.Constant):
            dtype = str(sparse_values.data.numpy().dtype)
        elif isinstance(ty, TensorType):
            dtype = ty.dtype
        default_value = _expr.const(np.array(default_value, dtype or "float32"))
    if isinstance(output_shape, _expr.Expr) and not isinstance(output_shape, _expr.Constant):
        from .dyn import indexing as dyn_indexing      # op/dyn builds on this module
        return dyn_indexing.sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value)
    if isinstance(output_shape, _expr.Constant):
        output_shape = tuple(int(d) for d in output_shape.data.numpy().reshape(-1))
    return SPARSE_TO_DENSE(sparse_indices, sparse_values, default_value,
                           attrs=SparseToDenseAttrs(tuple(output_shape)))


def sparse_reshape(sparse_indices, prev_shape, new_shape):
    """relay.sparse_reshape: (new sparse indices, new shape with -1 resolved).

    Parameters
    ----------
    sparse_indices : relay.Expr
        The (N, len(prev_shape)) coordinates of the stored elements.
    prev_shape : relay.Expr
        The dense shape the indices refer to, a 1-D integer tensor.
    new_shape : relay.Expr
        The dense shape wanted, a 1-D integer tensor; one -1 stands for the length that keeps the
        element count.

    Returns
    -------
    result : relay.TupleWrapper
        (the (N, len(new_shape)) coordinates of the same elements, new_shape with its -1 resolved).
    """
    return _expr.TupleWrapper(SPARSE_RESHAPE(sparse_indices, prev_shape, new_shape), 2)


def sparse_fill_empty_rows(sparse_indices, sparse_values, dense_shape, default_value):
    """relay.sparse_fill_empty_rows: (new indices, new values, empty-row indicator as bool), as
    tvm.relay's wrapper returns them.

    Parameters
    ----------
    sparse_indices : relay.Expr
        The (N, rank) coordinates of the stored elements, sorted by row.
    sparse_values : relay.Expr
        The N stored values.
    dense_shape : relay.Expr
        The shape of the dense tensor, a 1-D integer tensor; dense_shape[0] is the row count.
    default_value : relay.Expr
        The scalar stored at column 0 of every row that has no element.

    Returns
    -------
    result : relay.Tuple
        (the indices and the values with one entry added per empty row, in row order, a bool
        vector marking the rows that were empty).
    """
    call = SPARSE_FILL_EMPTY_ROWS(sparse_indices, sparse_values, dense_shape, default_value)
    from .tensor import cast
    return _expr.Tuple([_expr.TupleGetItem(call, 0), _expr.TupleGetItem(call, 1),
                        cast(_expr.TupleGetItem(call, 2), "bool")])


__all__ = ["sparse_to_dense", "sparse_reshape", "sparse_fill_empty_rows"]
