"""Sparse (CSR / BSR) operators, as TVM v0.18: nn.sparse_dense (dense x sparse^T, or sparse x
dense^T with sparse_lhs), nn.sparse_transpose (the CSR of a square matrix's transpose) and
nn.sparse_add (dense + sparse). A sparse matrix is three tensors: data ((nnz,) for CSR,
(blocks, bs_r, bs_c) for BSR), column indices and row pointers (scipy's layout).

The te computes are gathers with masked reductions over the stored entries (the row extents
are values, not shapes): out[m, n] sums the entries j with indptr[n] <= j < indptr[n + 1].
sparse_transpose ranks every entry by (column, position) and gathers in that order. Index
values outside the matrix are an InputError on the debug executor; kernels clamp them so they
never read outside a buffer (TVM leaves that case undefined).
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import InputError
from ...ir.attrs import Attrs
from ...ir.dims import is_static
from ...ir.shape_math import mul, sub
from ...ir.types import TensorType, TupleType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T


def _sparse_args(op, sparse, **types):
    """Checks the three CSR/BSR tensors (data, indices, indptr); returns (is_bsr, block rows, block cols)."""
    data, indices, indptr = sparse
    if data.ndim not in (1, 3):
        raise C.rel_error(op, f"sparse data must be 1-D (CSR) or 3-D (BSR), got rank {data.ndim}", **types)
    for name, t in (("indices", indices), ("indptr", indptr)):
        if t.ndim != 1 or np.dtype(t.dtype).kind not in "iu":
            raise C.rel_error(op, f"sparse {name} must be a 1-D integer tensor", **types)
    if is_static(indptr.shape[0]) and int(indptr.shape[0]) < 1:
        raise C.rel_error(op, "sparse indptr needs at least one entry (rows + 1)", **types)
    if data.ndim == 3:
        return True, data.shape[1], data.shape[2]
    return False, 1, 1


def _dense_and_sparse(op, arg_types):
    """(dense (M, K) type, (data, indices, indptr) types, all four by name) of a dense x sparse op."""
    dense, data, indices, indptr = (C.tensor_arg(op, t, n) for t, n in
                                    zip(arg_types, ("dense_mat", "sparse_data", "sparse_indices", "sparse_indptr")))
    types = dict(dense_mat=dense, sparse_data=data, sparse_indices=indices, sparse_indptr=indptr)
    C.same_dtype(op, dense_mat=dense, sparse_data=data)
    C.expect_rank(op, dense, 2, "dense_mat", **types)
    return dense, (data, indices, indptr), types


def check_csr(op, data, indices, indptr, rows, cols, block=(1, 1)):
    """Reference-side checks of the index values (clear errors instead of wrong answers)."""
    ptr = np.asarray(indptr, np.int64)
    idx = np.asarray(indices, np.int64)
    nnz = data.shape[0]
    if ptr[0] != 0 or np.any(np.diff(ptr) < 0) or ptr[-1] > nnz:
        raise InputError(f"{op}: indptr {ptr.tolist()} must start at 0, not decrease and end at most at the "
                         f"{nnz} stored entries")
    if idx.size and (idx[:ptr[-1]].min() < 0 or idx[:ptr[-1]].max() * block[1] >= cols):
        raise InputError(f"{op}: a column index in {idx.tolist()} is outside the {cols} columns")
    del rows


def as_dense(op, data, indices, indptr, cols):
    """The dense (rows, cols) matrix of a CSR or BSR triple (float64; duplicates add up)."""
    bsr = data.ndim == 3
    br, bc = (data.shape[1], data.shape[2]) if bsr else (1, 1)
    rows = (len(indptr) - 1) * br
    check_csr(op, data, indices, indptr, rows, cols, (br, bc))
    out = np.zeros((rows, cols))
    for r in range(len(indptr) - 1):
        for j in range(int(indptr[r]), int(indptr[r + 1])):
            c = int(indices[j])
            if bsr:
                out[r * br:(r + 1) * br, c * bc:(c + 1) * bc] += data[j]
            else:
                out[r, c] += data[j]
    return out


def _clamp(value, size):
    return tir.max(tir.min(value.astype("int32"), size - 1), 0)


# --- nn.sparse_dense ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SparseDenseAttrs(Attrs):
    sparse_lhs: bool = False

    def __post_init__(self):
        object.__setattr__(self, "sparse_lhs", bool(self.sparse_lhs))


def _sparse_dense_rel(arg_types, attrs) -> TensorType:
    """dense (M, K), sparse (N, K) -> (M, N); with sparse_lhs (N, N')... -> (rows of sparse, M)."""
    op = "nn.sparse_dense"
    dense, (data, indices, indptr), types = _dense_and_sparse(op, arg_types)
    _, bs_r, _ = _sparse_args(op, (data, indices, indptr), **types)
    rows = mul(sub(indptr.shape[0], 1), bs_r)
    shape = (rows, dense.shape[0]) if attrs.sparse_lhs else (dense.shape[0], rows)
    return TensorType(shape, dense.dtype)


def _sparse_dense_ref(dense, data, indices, indptr, attrs):
    s = as_dense("nn.sparse_dense", data, indices, indptr, dense.shape[1])
    out = s @ dense.astype("float64").T if attrs.sparse_lhs else dense.astype("float64") @ s.T
    return out.astype(dense.dtype)


def _sparse_dense_compute(attrs, inputs, out_type):
    """out[m, r] (or out[r, m] with sparse_lhs) = sum over the entries j of block row r // bs_r
    and the block's columns c of data[j, r % bs_r, c] * dense[m, indices[j] * bs_c + c]."""
    dense, data, indices, indptr = inputs
    acc = T.acc_dtype(dense.dtype)
    bsr = len(data.shape) == 3
    nnz, k = T.dims(data)[0], T.dims(dense)[1]
    bs_r, bs_c = (T.dims(data)[1], T.dims(data)[2]) if bsr else (1, 1)
    rj = te.reduce_axis((0, nnz), "sd_j")
    rc = te.reduce_axis((0, bs_c), "sd_c") if bsr else None

    def value(m, r):
        row = r // bs_r if bsr else r
        inside = tir.all(rj.var >= indptr[row].astype("int32"), rj.var < indptr[row + 1].astype("int32"))
        col = indices[rj.var].astype("int32") * bs_c + (rc.var if bsr else 0)
        stored = data[rj.var, r % bs_r, rc.var] if bsr else data[rj.var]
        term = stored.astype(acc) * dense[m, _clamp(col, k)].astype(acc)
        return te.sum(term, axis=[rj, rc] if bsr else [rj], where=inside)
    shape = [T.dim(d) for d in out_type.shape]
    body = (lambda r, m: value(m, r)) if attrs.sparse_lhs else value
    res = te.compute(shape, body, name="sparse_dense", tag=SPARSE_DENSE.tag)
    return [T.cast_to(res, dense.dtype, SPARSE_DENSE.tag, "sparse_dense_cast")]


def random_csr(rng, rows, cols, density, dtype="float32", block=None):
    """(data, indices, indptr) of a random CSR (or BSR with block (bs_r, bs_c)) matrix."""
    mask = rng.random((rows, cols)) < density
    indptr = np.concatenate([[0], np.cumsum(mask.sum(axis=1))]).astype("int32")
    indices = np.nonzero(mask)[1].astype("int32")
    shape = (len(indices),) + (tuple(block) if block else ())
    return [S.rand(rng, shape, dtype, 0.0, 1.0), indices, indptr]


def _sparse_dense_samples(rng):
    A = SparseDenseAttrs
    n16 = S.FLOAT16_REDUCTION_TERMS
    return [Sample([S.rand(rng, (3, 6))] + random_csr(rng, 4, 6, 0.5), A()),
            Sample([S.rand(rng, (2, 8), "float64")] + random_csr(rng, 3, 4, 0.5, "float64", (2, 2)), A(), "BSR"),
            Sample([S.rand(rng, (3, 5))] + random_csr(rng, 4, 5, 0.4), A(True), "sparse_lhs"),
            Sample([S.rand(rng, (2, n16), "float16", 0, 1), S.rand(rng, (n16,), "float16", 0, 1),
                    np.arange(n16, dtype="int32"), np.array([0, n16 // 2, n16], "int32")], A(),
                   "float16, long rows")]


SPARSE_DENSE = defop("nn.sparse_dense", inputs=("dense_mat", "sparse_data", "sparse_indices", "sparse_indptr"),
                     attrs=SparseDenseAttrs, rel=_sparse_dense_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                     ref=_sparse_dense_ref, compute=_sparse_dense_compute, samples=_sparse_dense_samples, level=1,
                     doc="dense_mat @ as_dense(sparse)^T (sparse_lhs: as_dense(sparse) @ dense_mat^T)")


def _triple(sparse_mat):
    """(data, indices, indptr) of a namedtuple with those fields or a 3-sequence."""
    if hasattr(sparse_mat, "indices"):
        return sparse_mat.data, sparse_mat.indices, sparse_mat.indptr
    data, indices, indptr = sparse_mat
    return data, indices, indptr


def sparse_dense(dense_mat, sparse_mat, sparse_lhs=False):
    """relay.nn.sparse_dense: matrix product with a CSR/BSR matrix (data, indices, indptr).

    Parameters
    ----------
    dense_mat : relay.Expr
        The dense matrix, (M, K).
    sparse_mat : tuple of relay.Expr
        The sparse matrix as (data, indices, indptr) in scipy's layout, or an object with those
        fields: data is (nnz,) for CSR or (blocks, bs_r, bs_c) for BSR.
    sparse_lhs : bool, optional
        If False, the result is dense_mat @ sparse^T, (M, rows of sparse); if True, sparse @
        dense_mat^T, (rows of sparse, M). Defaults to False.

    Returns
    -------
    result : relay.Expr
        The dense product.
    """
    return SPARSE_DENSE(dense_mat, *_triple(sparse_mat), attrs=SparseDenseAttrs(sparse_lhs))


# --- nn.sparse_transpose ------------------------------------------------------------------------------
def _sparse_transpose_rel(arg_types, attrs=None) -> TupleType:
    """(data, indices, indptr) of a square CSR matrix -> the same three types (its transpose)."""
    op = "nn.sparse_transpose"
    data, indices, indptr = (C.tensor_arg(op, t, n) for t, n in zip(arg_types, ("data", "indices", "indptr")))
    types = dict(data=data, indices=indices, indptr=indptr)
    if _sparse_args(op, (data, indices, indptr), **types)[0]:
        raise C.rel_error(op, "expects a CSR matrix (1-D data)", **types)
    return TupleType([data, indices, indptr])


def _sparse_transpose_ref(data, indices, indptr, attrs=None):
    n = len(indptr) - 1
    check_csr("nn.sparse_transpose", data, indices, indptr, n, n)
    nnz = int(indptr[-1])
    rows = np.repeat(np.arange(n), np.diff(indptr.astype(np.int64)))
    order = np.lexsort((np.arange(nnz), indices[:nnz]))        # by column, stable in position
    out_data, out_indices = data.copy(), indices.copy()
    out_data[:nnz], out_indices[:nnz] = data[order], rows[order].astype(indices.dtype)
    counts = np.bincount(indices[:nnz].astype(np.int64), minlength=n)
    out_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(indptr.dtype)
    return out_data, out_indices, out_ptr


def _sparse_transpose_compute(attrs, inputs, out_type):
    """rank(j) = entries in earlier columns + earlier entries of the same column; output k takes
    the entry ranked k (its row is the number of rows that end at or before it); indptr_t[c]
    counts the entries in columns before c."""
    data, indices, indptr = inputs
    nnz, rows = T.dims(data)[0], T.dims(indptr)[0] - 1
    tag = SPARSE_TRANSPOSE.tag
    used = indptr[rows].astype("int32")
    one, zero = tir.const(1, "int32"), tir.const(0, "int32")
    ra = te.reduce_axis((0, nnz), "st_a")

    def rank(j):
        earlier = (indices[ra.var] < indices[j]) | tir.all(indices[ra.var] == indices[j], ra.var < j)
        return te.sum(te.if_then_else(tir.all(earlier, ra.var < used), one, zero), axis=ra)
    ranks = te.compute((nnz,), rank, name="sparse_rank", tag=tag)
    rb = te.reduce_axis((0, nnz), "st_b")
    source = te.compute((nnz,), lambda k: te.sum(te.if_then_else(tir.all(ranks[rb.var] == k, rb.var < used),
                                                                 rb.var, zero), axis=rb), name="sparse_source", tag=tag)
    rr = te.reduce_axis((0, rows), "st_r")
    row_of = te.compute((nnz,), lambda k: te.sum(te.if_then_else(indptr[rr.var + 1].astype("int32") <= source[k],
                                                                 one, zero), axis=rr), name="sparse_row", tag=tag)
    rc = te.reduce_axis((0, nnz), "st_c")
    ptr = te.compute(indptr.shape, lambda c: te.sum(te.if_then_else(
        tir.all(indices[rc.var].astype("int32") < c, rc.var < used), one, zero), axis=rc).astype(indptr.dtype),
        name="sparse_indptr_t", tag=tag)
    keep = lambda k: k < used  # noqa: E731  (entries past indptr[-1] are copied unchanged)
    out_data = te.compute((nnz,), lambda k: te.if_then_else(keep(k), data[source[k]], data[k]),
                          name="sparse_data_t", tag=tag)
    out_indices = te.compute((nnz,), lambda k: te.if_then_else(keep(k), row_of[k].astype(indices.dtype), indices[k]),
                             name="sparse_indices_t", tag=tag)
    return [out_data, out_indices, ptr]


def _sparse_transpose_samples(rng):
    n16 = S.FLOAT16_REDUCTION_TERMS
    side = int(np.ceil(np.sqrt(n16))) + 1
    full = np.arange(side * side)
    return [Sample(random_csr(rng, 5, 5, 0.5)),
            Sample(random_csr(rng, 4, 4, 0.6, "float64")),
            Sample([S.rand(rng, (side * side,), "float16"), (full % side).astype("int32"),
                    (np.arange(side + 1) * side).astype("int32")], None, "float16, a full matrix")]


SPARSE_TRANSPOSE = defop("nn.sparse_transpose", inputs=("sparse_data", "sparse_indices", "sparse_indptr"),
                         rel=_sparse_transpose_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_sparse_transpose_ref,
                         compute=_sparse_transpose_compute, samples=_sparse_transpose_samples, level=5,
                         doc="(data, indices, indptr) of the transpose of a square CSR matrix")


def sparse_transpose(x):
    """relay.nn.sparse_transpose: a TupleWrapper of the transposed CSR (data, indices, indptr).

    Parameters
    ----------
    x : tuple of relay.Expr
        A square CSR matrix as (data, indices, indptr), or an object with those fields.

    Returns
    -------
    result : relay.TupleWrapper
        The (data, indices, indptr) of its transpose.
    """
    from ...ir.expr import TupleWrapper
    return TupleWrapper(SPARSE_TRANSPOSE(*_triple(x)), 3)


# --- nn.sparse_add ---------------------------------------------------------------------------------
def _sparse_add_rel(arg_types, attrs=None) -> TensorType:
    """dense (M, N) + CSR (M, N) -> dense's type."""
    op = "nn.sparse_add"
    dense, (data, indices, indptr), types = _dense_and_sparse(op, arg_types)
    if _sparse_args(op, (data, indices, indptr), **types)[0]:
        raise C.rel_error(op, "expects a CSR matrix (1-D data)", **types)
    if not C.dim_matches(sub(indptr.shape[0], 1), dense.shape[0]):
        raise C.rel_error(op, "the sparse matrix must have the dense matrix's rows (indptr of rows + 1)", **types)
    return dense


def _sparse_add_ref(dense, data, indices, indptr, attrs=None):
    s = as_dense("nn.sparse_add", data, indices, indptr, dense.shape[1])
    return (dense.astype("float64") + s).astype(dense.dtype)


def _sparse_add_compute(attrs, inputs, out_type):
    dense, data, indices, indptr = inputs
    acc = T.acc_dtype(dense.dtype)
    rj = te.reduce_axis((0, T.dims(data)[0]), "sa_j")

    def f(m, n):
        inside = tir.all(rj.var >= indptr[m].astype("int32"), rj.var < indptr[m + 1].astype("int32"),
                         indices[rj.var].astype("int32") == n)
        return te.sum(data[rj.var].astype(acc), axis=rj, where=inside)
    extra = te.compute(dense.shape, f, name="sparse_add_entries", tag=SPARSE_ADD.tag)
    return [te.compute(dense.shape, lambda m, n: (dense[m, n].astype(acc) + extra[m, n]).astype(dense.dtype),
                       name="sparse_add", tag=SPARSE_ADD.tag)]


def _sparse_add_samples(rng):
    n16 = S.FLOAT16_REDUCTION_TERMS
    return [Sample([S.rand(rng, (4, 6))] + random_csr(rng, 4, 6, 0.5)),
            Sample([S.rand(rng, (3, 3), "float64")] + random_csr(rng, 3, 3, 0.7, "float64")),
            Sample([S.rand(rng, (2, n16), "float16")] + random_csr(rng, 2, n16, 0.6, "float16"), None,
                   "float16, long rows")]


SPARSE_ADD = defop("nn.sparse_add", inputs=("dense_mat", "sparse_data", "sparse_indices", "sparse_indptr"),
                   rel=_sparse_add_rel, pattern=OpPattern.OPAQUE, ref=_sparse_add_ref, compute=_sparse_add_compute,
                   samples=_sparse_add_samples, level=1, doc="dense_mat + as_dense(sparse)")


def sparse_add(dense_mat, sparse_mat):
    """relay.nn.sparse_add: a dense matrix plus a CSR matrix (data, indices, indptr).

    Parameters
    ----------
    dense_mat : relay.Expr
        The dense matrix, (M, N).
    sparse_mat : tuple of relay.Expr
        An (M, N) CSR matrix as (data, indices, indptr), or an object with those fields.

    Returns
    -------
    result : relay.Expr
        The dense sum, of dense_mat's type.
    """
    return SPARSE_ADD(dense_mat, *_triple(sparse_mat))


__all__ = ["sparse_dense", "sparse_transpose", "sparse_add", "SparseDenseAttrs"]
