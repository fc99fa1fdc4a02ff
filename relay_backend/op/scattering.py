"""Scattering operators (TVM v0.18 names): scatter_elements and scatter_nd.

Both copy `data` and combine `updates` into it at positions an index tensor names, by a
reduction: update (replace), add, mul, min, max, and for scatter_elements also mean. They are
OPAQUE extern kernels as TVM's topi ones: the data is copied, then one sequential pass combines
each update into its position, in index order (op/index_rules.py's `scatter_step`), so duplicate
positions give exactly TVM's sequential result: the last update wins, adds accumulate.
A negative index counts from the end; an update still out of range is dropped (a constant one
is an InputError when the call is built).

  scatter_elements(data, indices, updates, axis, reduction)
      indices and updates have one shape, of data's rank:
      out[p with p[axis] = indices[q]] = f(.., updates[q]) for q over indices' positions
  scatter_nd(data, indices, updates, mode)
      indices (M, Y...), updates (Y..., X_M...):  out[indices[:, y], x] = f(.., updates[y, x])

Work is O(output + updates): one copy, one visit per update.
"""
import dataclasses

import numpy as np

from .. import te, tir
from ..tir import ir_builder
from ..ir.attrs import Attrs, check_choice
from ..ir.dims import dim_to_str, is_static
from ..ir.shape_math import dims_differ
from ..ir.types import TensorType
from . import index_math as IM
from . import samples as S
from .constructor_docs import documented
from .algorithm.loops import flat
from .index_rules import (SCATTER_REDUCTIONS, check_constant_indices, constant_value, expect_int, fail,
                          known_shape, norm_axis, np_fold, np_from_end, scatter_step, te_valid_index)
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor


def _check_updates_dtype(op, data, updates, reduction, *types):
    if updates.dtype != data.dtype:
        raise fail(op, f"updates must have data's dtype {data.dtype}, got {updates.dtype}", *types)
    if data.dtype == "bool" and reduction not in ("update", "min", "max"):
        raise fail(op, f"reduction {reduction!r} is arithmetic and bool data has none; use update, min "
                       f"or max, or cast the data", *types)


def _scatter_stage(opdef, reduction, inputs, for_each_update):
    """The output as one extern stage: a copy of data (inputs[0]), then the statements of
    for_each_update(ib, ins, combine_at) writing each update into its position, in index order,
    with combine_at(position, value): out[position] = step(out[position], value)."""
    data = inputs[0]
    step = scatter_step(reduction, data.dtype)

    def build(ins, outs):
        ib = ir_builder.create()
        source, target, out = ib.buffer_ptr(flat(ins[0])), ib.buffer_ptr(flat(outs[0])), ib.buffer_ptr(outs[0])
        with ib.for_range(0, ins[0].size(), name="c") as c:
            target[c] = source[c]

        def combine_at(position, value):
            out[position] = step(out[position], value)
        for_each_update(ib, [ib.buffer_ptr(b) for b in ins], combine_at)
        return ib.get()
    return te.extern(IM.te_dims(data), list(inputs), build, name=f"T_{opdef.name}", tag=opdef.tag,
                     dtype=data.dtype)


# --- scatter_elements -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ScatterElementsAttrs(Attrs):
    axis: int = 0
    reduction: str = "update"

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))
        check_choice("reduction", self.reduction, SCATTER_REDUCTIONS)


def _scatter_elements_axis(data, indices, updates, attrs):
    op = "scatter_elements"
    types = (data, indices, updates)
    expect_int(op, indices, "indices", *types)
    _check_updates_dtype(op, data, updates, attrs.reduction, *types)
    if indices.ndim != data.ndim or updates.ndim != data.ndim:
        raise fail(op, f"indices and updates must have data's rank {data.ndim}", *types)
    if data.ndim == 0:
        raise fail(op, "cannot scatter into a scalar", *types)
    axis = norm_axis(op, attrs.axis, data.ndim, *types)
    for k, (d, i, u) in enumerate(zip(data.shape, indices.shape, updates.shape)):
        if dims_differ(i, u):
            raise fail(op, f"indices and updates differ in dim {k}: {dim_to_str(i)} vs {dim_to_str(u)}", *types)
        if k != axis and is_static(d) and is_static(i) and int(i) > int(d):
            raise fail(op, f"indices dim {k} ({dim_to_str(i)}) exceeds data's ({dim_to_str(d)})", *types)
    return axis


def _scatter_rel(op_name, check):
    """A scatter relation: `check(data, indices, updates, attrs)` validates, the output is data's type."""
    def rel(arg_types, attrs):
        data, indices, updates = (expect_tensor(t, f"{op_name} {w}")
                                  for t, w in zip(arg_types, ("data", "indices", "updates")))
        check(data, indices, updates, attrs)
        return TensorType(data.shape, data.dtype)
    return rel


def _fold_in_order(out, flat_targets, flat_updates, reduction):
    """Combine updates into the flat array `out` in order (valid targets only)."""
    if reduction == "update":      # the last update aimed at a position wins
        reversed_targets = flat_targets[::-1]
        uniq, first = np.unique(reversed_targets, return_index=True)
        out[uniq] = flat_updates[::-1][first]
    elif reduction in ("add", "mul", "min", "max"):
        ufunc = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}[reduction]
        ufunc.at(out, flat_targets, flat_updates)
    else:
        for t, u in zip(flat_targets, flat_updates):
            out[t] = np_fold(reduction, out[t], u)
    return out


def _scatter_elements_ref(x, idx, upd, attrs):
    axis = _scatter_elements_axis(*(TensorType(a.shape, str(a.dtype)) for a in (x, idx, upd)), attrs)
    out = np.array(x, copy=True).reshape(-1)
    if idx.size == 0:
        return out.reshape(x.shape)
    target = np_from_end(idx, x.shape[axis])
    valid = (target >= 0) & (target < x.shape[axis])
    pos = list(np.indices(idx.shape))
    pos[axis] = target
    flat = np.ravel_multi_index(tuple(np.where(valid, p, 0) for p in pos), x.shape)
    return _fold_in_order(out, flat[valid], upd[valid], attrs.reduction).reshape(x.shape)


def _scatter_elements_compute(attrs, inputs, out_type):
    """One pass over indices' positions q (row-major, so q[axis] ascending along each line): the
    update goes to q with q[axis] replaced by indices[q], when that is in range and q's other
    coordinates lie inside data."""
    data, idx, upd = inputs
    axis = _scatter_elements_axis(IM.probe_type(data), IM.probe_type(idx), IM.probe_type(upd), attrs)

    def for_each_update(ib, ins, combine_at):
        dims, idims = ins[0].shape, ins[1].shape
        with ib.for_range(0, IM.prod_dims(idims), name="q") as r:
            q = tuple(IM.unravel(r, idims))
            ok, target = te_valid_index(ins[1][q], dims[axis])
            for a in range(len(dims)):
                if a != axis:
                    ok = ok & (q[a] < dims[a])
            with ib.if_scope(ok):
                combine_at(q[:axis] + (target,) + q[axis + 1:], ins[2][q])
    return [_scatter_stage(SCATTER_ELEMENTS, attrs.reduction, inputs, for_each_update)]


def _scatter_samples(rng):
    def ids(shape, low, high, dtype="int32"):
        return rng.integers(low, high, size=shape).astype(dtype)
    f32 = S.rand(rng, (4, 3))
    return [Sample([f32, ids((2, 3), 0, 4), S.rand(rng, (2, 3))], ScatterElementsAttrs(0)),
            Sample([S.rand(rng, (3, 5), "int32"), np.array([[1, 1, -1], [0, 4, 4]], "int64"),
                    S.rand(rng, (2, 3), "int32")], ScatterElementsAttrs(1, "add"), "duplicates, negative"),
            Sample([S.rand(rng, (2, 4), "float64"), np.array([[3, 3, 0, 7]], "int32"), S.rand(rng, (1, 4), "float64")],
                   ScatterElementsAttrs(-1, "mul"), "out of range dropped"),
            Sample([S.rand(rng, (5,)), np.array([2, 2, 2, 0], "int32"), S.rand(rng, (4,))],
                   ScatterElementsAttrs(0, "mean"), "mean of duplicates"),
            Sample([S.rand(rng, (5,), "int32"), np.array([2, 2, 1], "int32"), S.rand(rng, (3,), "int32")],
                   ScatterElementsAttrs(0, "mean"), "int mean truncates"),
            Sample([S.rand(rng, (3, 3)), ids((3, 2), 0, 3), S.rand(rng, (3, 2))], ScatterElementsAttrs(0, "min")),
            Sample([S.rand(rng, (3, 3), "float16"), ids((3, 3), 0, 3), S.rand(rng, (3, 3), "float16")],
                   ScatterElementsAttrs(1, "max")),
            Sample([S.rand(rng, (4,)), np.array([3, 3, 1], "int32"), S.rand(rng, (3,))],
                   ScatterElementsAttrs(0), "duplicates: last wins"),
            Sample([S.rand(rng, (2, 2)), np.zeros((0, 2), "int32"), np.zeros((0, 2), "float32")],
                   ScatterElementsAttrs(0, "add"), "empty updates"),
            Sample([_small_integers(rng, (4,)), ids((S.FLOAT16_REDUCTION_TERMS,), 0, 4),
                    _small_integers(rng, (S.FLOAT16_REDUCTION_TERMS,))], ScatterElementsAttrs(0, "add"),
                   "many float16 duplicates, added in float16 as TVM's kernel (whole numbers: exact in any order)")]


def _small_integers(rng, shape):
    """float16 whole numbers 0 or 1: sums of up to 2048 of them are exact in float16."""
    return rng.integers(0, 2, size=shape).astype("float16")


SCATTER_ELEMENTS = defop(
    "scatter_elements", inputs=("data", "indices", "updates"), attrs=ScatterElementsAttrs,
    rel=_scatter_rel("scatter_elements", _scatter_elements_axis), pattern=OpPattern.OPAQUE, ref=_scatter_elements_ref,
    compute=_scatter_elements_compute, samples=_scatter_samples, level=3,
    doc="data with updates combined in along axis at the positions indices name")


# --- scatter_nd ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ScatterNDAttrs(Attrs):
    mode: str = "update"

    def __post_init__(self):
        check_choice("mode", self.mode, ("update", "add", "mul", "min", "max"))


def _scatter_nd_layout(data, indices, updates, attrs):
    """M, the length of the index tuples (indices' first dim), checked against the shapes."""
    op = "scatter_nd"
    types = (data, indices, updates)
    expect_int(op, indices, "indices", *types)
    _check_updates_dtype(op, data, updates, attrs.mode, *types)
    if indices.ndim < 1:
        raise fail(op, "indices must have rank >= 1 (its first dim is the index tuple)", *types)
    m = indices.shape[0]
    if not is_static(m):
        raise fail(op, "the first dim of indices (the index tuple length) must be static", *types)
    m, k = int(m), indices.ndim - 1
    if m > data.ndim:
        raise fail(op, f"index tuples of length {m} for data of rank {data.ndim}", *types)
    if updates.ndim != k + data.ndim - m:
        raise fail(op, f"updates must have rank {k + data.ndim - m} (indices' dims after the first, then "
                       f"data's dims after {m}), got {updates.ndim}", *types)
    expected = tuple(indices.shape[1:]) + tuple(data.shape[m:])
    for a, (u, e) in enumerate(zip(updates.shape, expected)):
        if dims_differ(u, e):
            raise fail(op, f"updates dim {a} is {dim_to_str(u)}, expected {dim_to_str(e)}", *types)
    return m


def _scatter_nd_ref(x, idx, upd, attrs):
    m = _scatter_nd_layout(*(TensorType(a.shape, str(a.dtype)) for a in (x, idx, upd)), attrs)
    out = np.array(x, copy=True)
    n_tuples = int(np.prod(idx.shape[1:]))
    if n_tuples == 0 or out.size == 0:
        return out
    tuples = idx.reshape(m, n_tuples)
    lead = [np_from_end(tuples[c], x.shape[c]) for c in range(m)]
    valid = np.all([(t >= 0) & (t < x.shape[c]) for c, t in enumerate(lead)], axis=0) if m else \
        np.ones(n_tuples, bool)
    tail = int(np.prod(x.shape[m:]))
    lead_flat = np.ravel_multi_index(tuple(np.where(valid, t, 0) for t in lead), x.shape[:m]) if m else \
        np.zeros(n_tuples, "int64")
    targets = (lead_flat[:, None] * tail + np.arange(tail)[None, :])[valid].reshape(-1)
    values = upd.reshape(n_tuples, tail)[valid].reshape(-1)
    return _fold_in_order(out.reshape(-1), targets, values, attrs.mode).reshape(x.shape)


def _scatter_nd_compute(attrs, inputs, out_type):
    """One pass over the index tuples y (row-major): when every entry of indices[:, y] is in
    range, updates[y, x] goes to out[indices[:, y], x] for every x of data's trailing dims."""
    data, idx, upd = inputs
    m = _scatter_nd_layout(IM.probe_type(data), IM.probe_type(idx), IM.probe_type(upd), attrs)

    def for_each_update(ib, ins, combine_at):
        dims, ydims = ins[0].shape, ins[1].shape[1:]
        tail = dims[m:]
        with ib.for_range(0, IM.prod_dims(ydims), name="y") as r:
            y = tuple(IM.unravel(r, ydims))
            ok, lead = tir.const(True, "bool"), ()
            for c in range(m):
                valid, target = te_valid_index(ins[1][(c,) + y], dims[c])
                ok, lead = ok & valid, lead + (target,)
            with ib.if_scope(ok):
                with ib.for_range(0, IM.prod_dims(tail), name="x") as t:
                    x = tuple(IM.unravel(t, tail))
                    combine_at(lead + x, ins[2][y + x])
    return [_scatter_stage(SCATTER_ND, attrs.mode, inputs, for_each_update)]


def _scatter_nd_samples(rng):
    return [Sample([S.rand(rng, (4, 3)), np.array([[1, 3, -1]], "int32"), S.rand(rng, (3, 3))],
                   ScatterNDAttrs(), "rows, negative"),
            Sample([S.rand(rng, (3, 4), "int32"), np.array([[0, 2, 0], [1, 3, 1]], "int64"),
                    S.rand(rng, (3,), "int32")], ScatterNDAttrs("add"), "elements, duplicates add"),
            Sample([S.rand(rng, (2, 2, 3), "float64"), np.array([[[0, 1], [5, 1]]], "int32"),
                    S.rand(rng, (2, 2, 2, 3), "float64")], ScatterNDAttrs("update"), "out of range dropped"),
            Sample([S.rand(rng, (3,)), np.array([[2, 0, 2]], "int32"), S.rand(rng, (3,))], ScatterNDAttrs("mul")),
            Sample([S.rand(rng, (2, 3)), np.array([[1, 1], [2, 2]], "int32"), S.rand(rng, (2,))],
                   ScatterNDAttrs("min")),
            Sample([S.rand(rng, (2, 3)), np.array([[0, 0], [1, 1]], "int32"), S.rand(rng, (2,))],
                   ScatterNDAttrs("max")),
            Sample([S.rand(rng, (2, 3)), np.zeros((1, 0), "int32"), np.zeros((0, 3), "float32")],
                   ScatterNDAttrs("add"), "no updates"),
            Sample([_small_integers(rng, (4,)),
                    rng.integers(0, 4, size=(1, S.FLOAT16_REDUCTION_TERMS)).astype("int32"),
                    _small_integers(rng, (S.FLOAT16_REDUCTION_TERMS,))], ScatterNDAttrs("add"),
                   "many float16 duplicates, added in float16 as TVM's kernel (whole numbers: exact in any order)")]


SCATTER_ND = defop(
    "scatter_nd", inputs=("data", "indices", "updates"), attrs=ScatterNDAttrs, rel=_scatter_rel("scatter_nd", _scatter_nd_layout),
    pattern=OpPattern.OPAQUE, ref=_scatter_nd_ref, compute=_scatter_nd_compute,
    samples=_scatter_nd_samples, level=3,
    doc="data with updates combined in at the index tuples along indices' first dim")


# --- Python constructors with tvm.relay's names --------------------------------------------------------
# The parameters the scatter constructors share (constructor_docs completes their docstrings)
SCATTER_PARAMETERS = {
    "data": ("relay.Expr", "The tensor written into; the result has its type."),
    "updates": ("relay.Expr", "The values combined in, one per index (of the shape of `indices` for "
                              "scatter_elements)."),
}


@documented(SCATTER_PARAMETERS)
def scatter_elements(data, indices, updates, axis=0, reduction="update"):
    """relay.scatter_elements: data with updates combined in along `axis` at `indices`
    (reduction update, add, mul, mean, min or max).

    Parameters
    ----------
    indices : relay.Expr
        The integer positions along `axis`, of data's rank; negative ones count from the end.
    axis : int, optional
        The axis the indices address. Defaults to 0.
    reduction : str, optional
        How an update combines with the element: "update" replaces it, "add", "mul", "mean",
        "min" or "max" combine with it. Defaults to "update".
    """
    values, shape = constant_value(indices), known_shape(data)
    if values is not None and shape is not None and -len(shape) <= int(axis) < len(shape):
        check_constant_indices("scatter_elements", values, shape[int(axis)], f"axis {int(axis) % len(shape)}")
    return SCATTER_ELEMENTS(data, indices, updates, attrs=ScatterElementsAttrs(axis, reduction))


@documented(SCATTER_PARAMETERS)
def scatter_nd(data, indices, updates, mode="update"):
    """relay.scatter_nd: data with updates combined in at the index tuples along indices' first
    dim (mode update, add, mul, min or max).

    Parameters
    ----------
    indices : relay.Expr
        The integer index tuples, (M, Y...): indices[:, y...] addresses the first M axes of
        `data`; updates is (Y..., data's remaining axes).
    mode : str, optional
        How an update combines with the element: "update" replaces it, "add", "mul", "min" or
        "max" combine with it. Defaults to "update".
    """
    values, shape = constant_value(indices), known_shape(data)
    if values is not None and shape is not None and values.ndim >= 1 and values.shape[0] <= len(shape):
        for k in range(values.shape[0]):
            check_constant_indices("scatter_nd", values[k], shape[k], f"axis {k} (index tuple position {k})")
    return SCATTER_ND(data, indices, updates, attrs=ScatterNDAttrs(mode))


__all__ = ["scatter_elements", "scatter_nd"]
