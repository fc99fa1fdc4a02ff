"""Counting and searching operators (TVM v0.18 names): argwhere and searchsorted.

  argwhere(condition)    the coordinates of the non-zero elements, row-major, as an
                         (count, rank) int32 tensor; the count depends on the values, so the
                         relation gives Any and the VM's shape function counts them (as TVM's
                         data-dependent shape function reads the data); OPAQUE.
  searchsorted(sorted_sequence, values, right, dtype)
                         for each value, its insertion position in the innermost axis of
                         sorted_sequence (first such position, or last with right=True);
                         OPAQUE as TVM's (an extern there).

Both kernels count and search with op/te_search.py: a prefix count in O(n log n) and a binary
search per output in O(log n); nothing is quadratic in the input size.
"""
import dataclasses

import numpy as np

from .. import te, tir
from ..errors import AttrsError
from ..ir.attrs import Attrs
from ..ir.dims import dim_to_str
from ..ir.shape_math import dims_differ
from ..ir.types import Any, TensorType
from . import index_math as IM
from . import samples as S
from .compute_common import cast as te_cast
from .dyn.common import te_out_shape
from .index_rules import fail
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor
from .te_search import inclusive_prefix_sum, lower_bound, materialize


# --- argwhere -----------------------------------------------------------------------------------------
def _argwhere_rel(arg_types, attrs):
    condition = expect_tensor(arg_types[0], "argwhere condition")
    return TensorType((Any(), condition.ndim), "int32")


def _argwhere_ref(condition, attrs):
    condition = np.asarray(condition)
    return np.argwhere(condition).astype("int32").reshape(int(np.count_nonzero(condition)), condition.ndim)


def _argwhere_shape_func(attrs, arrays):
    condition = np.asarray(arrays[0])
    return TensorType((int(np.count_nonzero(condition)), condition.ndim), "int32")


def _argwhere_compute(attrs, inputs, out_type):
    """Row k holds the coordinates of the flat position where the running count of non-zeros
    first reaches k + 1."""
    x = inputs[0]
    dims = IM.te_dims(x)
    n = IM.prod_dims(dims) if dims else 1
    tag = ARGWHERE.tag
    nonzero = te.compute((n,), lambda f: te_cast(te_cast(x[tuple(IM.unravel(f, dims))], "bool"), "int32"),
                         name="T_argwhere_nonzero", tag=tag)
    counts = inclusive_prefix_sum(nonzero, n, "T_argwhere", tag)
    rows, rank = te_out_shape(out_type, "argwhere")
    position = materialize((rows,), lambda k: lower_bound(lambda p: counts[p], n, lambda c: c >= k + 1),
                           "T_argwhere_position", tag)

    def body(k, d):
        coords = IM.unravel(position[k], dims)
        return IM.select_chain([(d == j, c) for j, c in enumerate(coords)]) if coords else tir.const(0, "int32")
    return [te.compute((rows, rank), body, name="T_argwhere", tag=tag)]


ARGWHERE = defop(
    "argwhere", inputs=("condition",), rel=_argwhere_rel, pattern=OpPattern.OPAQUE, ref=_argwhere_ref,
    shape_func=_argwhere_shape_func, compute=_argwhere_compute, level=10,
    samples=lambda rng: [Sample([rng.random((3, 4)) < 0.4]),
                         Sample([S.rand(rng, (2, 3, 2), "int32", -1, 1)]),
                         Sample([np.array([0.0, -1.5, np.nan, 0.0, 2.0], "float32")], None, "NaN is non-zero"),
                         Sample([np.zeros((2, 2), "float64")], None, "none"),
                         Sample([np.array(3, "int64")], None, "a scalar"),
                         Sample([np.zeros((0, 3), "bool")], None, "empty")],
    doc="the coordinates of the non-zero elements, one row each, row-major")


# --- searchsorted ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SearchSortedAttrs(Attrs):
    right: bool = False
    dtype: str = "int32"

    def __post_init__(self):
        object.__setattr__(self, "right", bool(self.right))
        try:
            dtype = str(np.dtype(self.dtype))
        except TypeError as err:
            raise AttrsError(f"searchsorted: unknown dtype {self.dtype!r}") from err
        if np.dtype(dtype).kind not in "iu":
            raise AttrsError(f"searchsorted: dtype must be an integer type, got {dtype}")
        object.__setattr__(self, "dtype", dtype)


def _searchsorted_rel(arg_types, attrs):
    op = "searchsorted"
    seq = expect_tensor(arg_types[0], f"{op} sorted_sequence")
    values = expect_tensor(arg_types[1], f"{op} values")
    if seq.ndim < 1:
        raise fail(op, "sorted_sequence must have rank >= 1", seq, values)
    if seq.dtype != values.dtype:
        raise fail(op, f"values must have sorted_sequence's dtype {seq.dtype}, got {values.dtype}", seq, values)
    if seq.ndim > 1:
        if values.ndim != seq.ndim:
            raise fail(op, f"values must have sorted_sequence's rank {seq.ndim} (it is not 1-D)", seq, values)
        for a in range(seq.ndim - 1):
            if dims_differ(seq.shape[a], values.shape[a]):
                raise fail(op, f"outer dim {a} differs: {dim_to_str(seq.shape[a])} vs {dim_to_str(values.shape[a])}",
                           seq, values)
    return TensorType(values.shape, attrs.dtype)


def _searchsorted_ref(seq, values, attrs):
    side = "right" if attrs.right else "left"
    if seq.ndim == 1:
        return np.searchsorted(seq, values, side=side).astype(attrs.dtype)
    out = np.empty(values.shape, attrs.dtype)
    for outer in np.ndindex(*seq.shape[:-1]):
        out[outer] = np.searchsorted(seq[outer], values[outer], side=side)
    return out


def _searchsorted_compute(attrs, inputs, out_type):
    """Binary search per value in its row: the first position whose element is >= the value
    (> with right=True)."""
    seq, values = inputs
    n = IM.te_dims(seq)[-1]

    def body(*i):
        row = tuple(i[:-1]) if seq.ndim > 1 else ()
        value = values[i]

        def reaches(element):
            return element > value if attrs.right else element >= value
        return te_cast(lower_bound(lambda p: seq[row + (p,)], n, reaches), attrs.dtype)
    return [IM.compute(SEARCHSORTED, IM.te_dims(values), body)]


SEARCHSORTED = defop(
    "searchsorted", inputs=("sorted_sequence", "values"), attrs=SearchSortedAttrs, rel=_searchsorted_rel,
    pattern=OpPattern.OPAQUE, ref=_searchsorted_ref, compute=_searchsorted_compute, level=6,
    samples=lambda rng: [
        Sample([np.sort(S.rand(rng, (8,))), S.rand(rng, (2, 3), low=-3, high=3)], SearchSortedAttrs()),
        Sample([np.array([1, 2, 2, 2, 5], "int32"), np.array([2, 0, 5, 6, 3], "int32")],
               SearchSortedAttrs(True, "int64"), "ties, right"),
        Sample([np.array([1, 2, 2, 2, 5], "int32"), np.array([2, 0, 5, 6, 3], "int32")],
               SearchSortedAttrs(False), "ties, left"),
        Sample([np.sort(S.rand(rng, (2, 5), "float64"), axis=-1), S.rand(rng, (2, 3), "float64")],
               SearchSortedAttrs(), "batched rows"),
        Sample([np.zeros((0,), "float32"), S.rand(rng, (3,))], SearchSortedAttrs(), "empty sequence")],
    doc="insertion positions of values in the innermost axis of sorted_sequence")


# --- Python constructors with tvm.relay's names --------------------------------------------------------------
def argwhere(condition):
    """relay.argwhere: the coordinates of condition's non-zero elements, one row each.

    Parameters
    ----------
    condition : relay.Expr
        The tensor whose non-zero (true) elements are found.
    Returns
    -------
    result : relay.Expr
        The (count, rank) int32 coordinates, in row-major order.
    """
    return ARGWHERE(condition)


def searchsorted(sorted_sequence, values, right=False, dtype="int32"):
    """relay.searchsorted: where each value would be inserted in sorted_sequence's innermost axis.

    Parameters
    ----------
    sorted_sequence : relay.Expr
        The sequences searched, sorted ascending along the innermost axis; its leading axes
        match those of `values` (or it is 1-D, shared by all).
    values : relay.Expr
        The values whose insertion positions are wanted.
    right : bool, optional
        If False, the first position that keeps the order (before equal elements); if True, the
        last (after them). Defaults to False.
    dtype : str, optional
        The integer dtype of the result. Defaults to "int32".
    Returns
    -------
    result : relay.Expr
        The positions, of the shape of `values`.
    """
    return SEARCHSORTED(sorted_sequence, values, attrs=SearchSortedAttrs(right, dtype))


__all__ = ["argwhere", "searchsorted"]
