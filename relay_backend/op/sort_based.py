"""Operators built on a stable sort (TVM v0.18 names): unique and invert_permutation.

Both kernels sort with op/te_search.py's stable_sort (the sort ops' O(n log n) merge sort in
an extern stage; equal values keep their order, NaN last and equal to NaN, as numpy's) and then count with its prefix sums and binary
searches; OPAQUE (TVM's are extern kernels).

  unique(data, is_sorted, return_counts)
      (unique, indices, inverse_indices, num_unique[, counts]) of a 1-D tensor, all of data's
      length except num_unique (shape (1,)), as TVM's: entries past num_unique[0] are padding,
      0 here (TVM leaves them undefined). indices: the first position of each unique value;
      inverse_indices: each element's unique id; sorted ascending, or in order of first
      appearance with is_sorted=False.
  invert_permutation(data)
      out[data[i]] = i for a permutation; for any 1-D integer tensor it is the stable argsort
      (the inverse when data is a permutation, and well defined when it is not).
"""
import dataclasses

import numpy as np

from .. import te, tir
from ..ir.attrs import Attrs
from ..ir.types import TensorType, TupleType
from ..ir import expr as _expr
from . import index_math as IM
from . import samples as S
from .index_rules import expect_int, fail
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor
from .te_search import greater, inclusive_prefix_sum, lower_bound, materialize, stable_sort


def _vector(op_name, t):
    if t.ndim != 1:
        raise fail(op_name, f"data must be 1-D, got rank {t.ndim}", t)


# --- invert_permutation ---------------------------------------------------------------------------------
def _invert_permutation_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "invert_permutation data")
    _vector("invert_permutation", data)
    expect_int("invert_permutation", data, "data", data)
    return TensorType(data.shape, data.dtype)


def _invert_permutation_compute(attrs, inputs, out_type):
    """The source positions of the stable sort, in data's dtype."""
    x = inputs[0]
    n = IM.te_dims(x)[0]
    _, source = stable_sort(x, n, "T_invert_permutation", INVERT_PERMUTATION.tag)
    return [te.compute((n,), lambda i: source[i].astype(x.dtype), name="T_invert_permutation",
                       tag=INVERT_PERMUTATION.tag)]


INVERT_PERMUTATION = defop(
    "invert_permutation", inputs=("data",), rel=_invert_permutation_rel, pattern=OpPattern.OPAQUE,
    compute=_invert_permutation_compute, level=1,
    ref=lambda x, attrs: np.argsort(x, kind="stable").astype(x.dtype),
    samples=lambda rng: [Sample([rng.permutation(7).astype("int32")]),
                         Sample([rng.permutation(16).astype("int64")]),
                         Sample([np.array([2, 0, 2, 1], "int32")], None, "not a permutation: the stable argsort"),
                         Sample([np.zeros((0,), "int32")], None, "empty")],
    doc="the inverse of a permutation: out[data[i]] = i")


# --- unique --------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class UniqueAttrs(Attrs):
    sorted: bool = True
    return_counts: bool = False

    def __post_init__(self):
        object.__setattr__(self, "sorted", bool(self.sorted))
        object.__setattr__(self, "return_counts", bool(self.return_counts))


def _unique_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "unique data")
    _vector("unique", data)
    fields = [TensorType(data.shape, data.dtype), TensorType(data.shape, "int32"),
              TensorType(data.shape, "int32"), TensorType((1,), "int32")]
    if attrs.return_counts:
        fields.append(TensorType(data.shape, "int32"))
    return TupleType(fields)


def _unique_ref(x, attrs):
    n = x.shape[0]
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if not attrs.sorted:                       # order of first appearance
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values, first, counts, inverse = values[order], first[order], counts[order], rank[inverse]
    m = len(values)

    def padded(a, dtype):
        out = np.zeros(n, dtype)
        out[:m] = a
        return out
    result = (padded(values, x.dtype), padded(first, "int32"), inverse.astype("int32"),
              np.array([m], "int32"))
    return result + ((padded(counts, "int32"),) if attrs.return_counts else ())


def _unique_compute(attrs, inputs, out_type):
    """Sort (stable), mark where a new value starts, count the starts (the unique ids), then
    find each unique value's first sorted position and each element's group by binary search."""
    x = inputs[0]
    n = IM.te_dims(x)[0]
    tag = UNIQUE.tag
    zero = tir.const(0, "int32")
    ordered, source = stable_sort(x, n, "T_unique_sort", tag)

    def differ(a, b):
        return greater(a, b) | greater(b, a)

    starts = te.compute((n,), lambda p: te.if_then_else(
        p == 0, tir.const(1, "int32"),
        te.if_then_else(differ(ordered[tir.max(p - 1, 0)], ordered[p]), tir.const(1, "int32"), zero)),
        name="T_unique_starts", tag=tag)
    group = inclusive_prefix_sum(starts, n, "T_unique_group", tag)       # 1 + unique id, sorted order
    if IM.is_static(n):
        count = te.compute((1,), lambda i: group[n - 1] if n > 0 else zero, name="T_unique_count", tag=tag)
    else:
        count = te.compute((1,), lambda i: te.if_then_else(n > 0, group[tir.max(n - 1, 0)], zero),
                           name="T_unique_count", tag=tag)

    def group_start(g):             # the first sorted position of group g (n when g >= count)
        return lower_bound(lambda p: group[p], n, lambda c: c >= g + 1)

    def sorted_position(value):     # the first sorted position holding `value`
        return lower_bound(lambda p: ordered[p], n, lambda e: tir.Not(greater(value, e)))

    if attrs.sorted:
        start = materialize((n,), group_start, "T_unique_start", tag)
        first_index = materialize((n,), lambda u: source[tir.min(start[u], n - 1)], "T_unique_first", tag)
        inverse = materialize((n,), lambda i: group[tir.min(sorted_position(x[i]), n - 1)] - 1,
                              "T_unique_inverse", tag)
        value_of = lambda u: ordered[tir.min(start[u], n - 1)]          # noqa: E731
        size_of = lambda u: start[tir.min(u + 1, n - 1)] - start[u]     # noqa: E731
        last_size = lambda u: n - start[u]                              # noqa: E731
    else:
        # an element is the first of its value where the stable sort put it first in its group
        head = materialize((n,), lambda i: source[tir.min(sorted_position(x[i]), n - 1)], "T_unique_head", tag)
        firsts = te.compute((n,), lambda i: te.if_then_else(head[i] == i, tir.const(1, "int32"), zero),
                            name="T_unique_firsts", tag=tag)
        appearance = inclusive_prefix_sum(firsts, n, "T_unique_order", tag)   # 1 + unique id, input order
        first_index = materialize((n,), lambda u: lower_bound(lambda i: appearance[i], n, lambda c: c >= u + 1),
                                  "T_unique_first", tag)
        inverse = materialize((n,), lambda i: appearance[head[i]] - 1, "T_unique_inverse", tag)

        def group_size(u):
            value = x[tir.min(first_index[u], n - 1)]
            begin = sorted_position(value)
            end = lower_bound(lambda p: ordered[p], n, lambda e: greater(e, value))
            return end - begin
        value_of = lambda u: x[tir.min(first_index[u], n - 1)]          # noqa: E731
        size_of = group_size
        last_size = group_size

    def padded(fn, dtype, name):
        return te.compute((n,), lambda u: te.if_then_else(u < count[0], fn(u), tir.const(0, dtype)),
                          name=name, tag=tag)
    outputs = [padded(value_of, x.dtype, "T_unique_values"), padded(lambda u: first_index[u], "int32",
                                                                     "T_unique_indices"),
               te.compute((n,), lambda i: inverse[i], name="T_unique_inverse_indices", tag=tag), count]
    if attrs.return_counts:
        outputs.append(padded(lambda u: te.if_then_else(u + 1 < count[0], size_of(u), last_size(u)), "int32",
                              "T_unique_counts"))
    return outputs


def _unique_samples(rng):
    data = np.array([4, 5, 1, 2, 3, 3, 4, 5], "int32")    # TVM's documented example
    return [Sample([data], UniqueAttrs(False, False), "TVM's example, first appearance"),
            Sample([data], UniqueAttrs(True, True), "TVM's example, sorted with counts"),
            Sample([S.rand(rng, (12,), "int64", 0, 4)], UniqueAttrs(False, True)),
            Sample([np.array([2.5, np.nan, -1.0, 2.5, np.nan, 0.0], "float32")], UniqueAttrs(True, True),
                   "NaN last, one NaN group"),
            Sample([np.array([7], "float64")], UniqueAttrs(False, True), "one element"),
            Sample([np.zeros((0,), "int32")], UniqueAttrs(True, True), "empty")]


UNIQUE = defop(
    "unique", inputs=("data",), attrs=UniqueAttrs, rel=_unique_rel, pattern=OpPattern.OPAQUE,
    ref=_unique_ref, compute=_unique_compute, samples=_unique_samples, level=3,
    doc="the unique elements of a 1-D tensor, their first indices, each element's unique id, their count")


# --- Python constructors with tvm.relay's names --------------------------------------------------------------
def unique(data, is_sorted=True, return_counts=False):
    """relay.unique: (unique, indices, inverse_indices, num_unique[, counts]), padded to data's
    length (entries past num_unique[0] are 0).

    Parameters
    ----------
    data : relay.Expr
        The 1-D input tensor.
    is_sorted : bool, optional
        If True, the unique values come in ascending order; if False, in the order they first
        appear. Defaults to True.
    return_counts : bool, optional
        If True, the result also holds how often each unique value occurs. Defaults to False.

    Returns
    -------
    result : relay.TupleWrapper
        (unique values, the first position of each in `data`, each element's unique id, the
        count of unique values as a (1,) tensor[, the occurrences of each]).
    """
    call = UNIQUE(data, attrs=UniqueAttrs(is_sorted, return_counts))
    return _expr.TupleWrapper(call, 5 if return_counts else 4)


def invert_permutation(data):
    """relay.invert_permutation: out[data[i]] = i.

    Parameters
    ----------
    data : relay.Expr
        A 1-D integer tensor holding a permutation of 0..n-1.
    Returns
    -------
    result : relay.Expr
        The inverse permutation, of data's type.
    """
    return INVERT_PERMUTATION(data)


__all__ = ["unique", "invert_permutation"]
