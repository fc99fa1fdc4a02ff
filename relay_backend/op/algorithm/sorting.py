"""argsort, sort and topk (TVM's relay.argsort / sort / topk): a stable sort along one axis.

Ties keep their input order in both directions (TVM's CPU kernels use std::stable_sort, and
its topk breaks ties by the lower index), NaN counts as the largest value (last ascending,
first descending). topk returns the first k of the sorted order: values, indices or both
(`ret_type`); k < 1 means the whole axis. Indices have the dtype attribute (int32 default).
Every kernel is an extern stage running the merge sort of loops.py once per row, O(n log n).
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...tir import stmt as Stmt
from ...errors import AttrsError, TypeInferenceError
from ...ir.attrs import Attrs, always_printed
from ...ir.expr import Constant, Expr, TupleWrapper
from ...ir.types import TensorType, TupleType
from .. import samples as S
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..relations import expect_tensor, normalize_axes
from ..tensor import CastAttrs
from . import loops as L

_RET_TYPES = ("both", "values", "indices")


def _index_dtype(op_name, dtype):
    return CastAttrs(dtype).dtype if dtype else "int32"


@dataclasses.dataclass(frozen=True)
class ArgsortAttrs(Attrs):
    axis: int = always_printed(-1)
    is_ascend: bool = always_printed(True)
    dtype: str = always_printed("int32")

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))
        object.__setattr__(self, "is_ascend", bool(self.is_ascend))
        object.__setattr__(self, "dtype", _index_dtype("argsort", self.dtype))


@dataclasses.dataclass(frozen=True)
class SortAttrs(Attrs):
    axis: int = always_printed(-1)
    is_ascend: bool = always_printed(True)

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))
        object.__setattr__(self, "is_ascend", bool(self.is_ascend))


@dataclasses.dataclass(frozen=True)
class TopKAttrs(Attrs):
    k: int = always_printed(1)
    axis: int = always_printed(-1)
    ret_type: str = always_printed("both")
    is_ascend: bool = always_printed(False)
    dtype: str = always_printed("int32")

    def __post_init__(self):
        if self.k is not None:
            object.__setattr__(self, "k", int(self.k))
        object.__setattr__(self, "axis", int(self.axis))
        object.__setattr__(self, "is_ascend", bool(self.is_ascend))
        object.__setattr__(self, "dtype", _index_dtype("topk", self.dtype))
        if self.ret_type not in _RET_TYPES:
            raise AttrsError(f"topk: ret_type must be one of {_RET_TYPES}, got {self.ret_type!r}")


# --- relations ---------------------------------------------------------------------------------
def sort_axis(op_name, data, axis) -> int:
    """The non-negative axis of `data` (rank >= 1) the op sorts along."""
    if len(data.shape) == 0:
        raise TypeInferenceError(f"{op_name}: needs a tensor of rank >= 1, got a scalar {data}")
    return normalize_axes(axis, len(data.shape), f"{op_name}: axis")[0]


def _argsort_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "data")
    sort_axis("argsort", data, attrs.axis)
    return TensorType(data.shape, attrs.dtype)


def _sort_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "data")
    sort_axis("sort", data, attrs.axis)
    return data


def topk_type(data, attrs, k_dim):
    """The output type of topk on `data` with `k_dim` elements kept along the axis."""
    axis = sort_axis("topk", data, attrs.axis)
    shape = tuple(data.shape[:axis]) + (k_dim,) + tuple(data.shape[axis + 1:])
    values, indices = TensorType(shape, data.dtype), TensorType(shape, attrs.dtype)
    return {"both": TupleType([values, indices]), "values": values, "indices": indices}[attrs.ret_type]


def kept(attrs, n):
    """How many elements topk keeps of an axis of n (k < 1: all; at most n)."""
    if attrs.k is None or attrs.k < 1:
        return n
    return min(attrs.k, n) if isinstance(n, int) else attrs.k


def _topk_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "data")
    axis = sort_axis("topk", data, attrs.axis)
    n = data.shape[axis]
    if attrs.k is not None and attrs.k >= 1 and isinstance(n, int) and attrs.k > n:
        raise TypeInferenceError(f"topk: k={attrs.k} is larger than the axis ({n} elements along axis {axis} "
                                 f"of {data})")
    return topk_type(data, attrs, kept(attrs, int(n) if isinstance(n, int) else n))


# --- numpy references --------------------------------------------------------------------------
def stable_argsort_ref(x, axis, ascending):
    """numpy's stable argsort (NaN last); descending keeps ties in input order, NaN first."""
    if ascending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - flipped, axis)


def _argsort_ref(x, attrs):
    return stable_argsort_ref(x, attrs.axis, attrs.is_ascend).astype(attrs.dtype)


def _sort_ref(x, attrs):
    return np.take_along_axis(x, stable_argsort_ref(x, attrs.axis, attrs.is_ascend), attrs.axis)


def topk_ref(x, attrs, k=None):
    """topk on numpy data (k overrides attrs.k: dyn.topk's run-time k)."""
    axis = attrs.axis % x.ndim
    count = kept(dataclasses.replace(attrs, k=attrs.k if k is None else k), x.shape[axis])
    order = np.take(stable_argsort_ref(x, axis, attrs.is_ascend), np.arange(count), axis=axis)
    values, indices = np.take_along_axis(x, order, axis), order.astype(attrs.dtype)
    return {"both": [values, indices], "values": values, "indices": indices}[attrs.ret_type]


# --- te computes -------------------------------------------------------------------------------
def sort_kernel(data, axis, descending, outputs, name):
    """An extern stage sorting `data` along `axis`. `outputs` lists (shape, dtype, kind), kind
    "values" or "indices"; each output keeps the first shape[axis] entries of the sorted row."""
    def build(ins, outs):
        src = L.flat(ins[0])
        outer, n, inner = L.row_geometry(ins[0].shape, axis)

        def sort_rows(bufs):
            order = bufs[0]

            def per_row(base):
                writes = []
                for buf, (_, dtype, kind) in zip(outs, outputs):
                    dst, count = L.flat(buf), buf.shape[axis]
                    out_base = tir.floordiv(base, n * inner) * count * inner + tir.floormod(base, inner)

                    def write(k, dst=dst, dtype=dtype, kind=kind, out_base=out_base):
                        value = order[k].astype(dtype) if kind == "indices" else src[base + order[k] * inner]
                        return Stmt.BufferStore(dst, value, [out_base + k * inner])
                    writes.append(L.loop(count, write, "w"))
                key = lambda k: src[base + k * inner]   # noqa: E731
                return Stmt.seq(L.stable_argsort(key, n, bufs, descending), *writes)
            return L.for_each_row(outer, n, inner, per_row)
        return L.with_sort_buffers(n, ins[0].dtype, sort_rows)
    shapes = [list(shape) for shape, _, _ in outputs]
    outs = te.extern(shapes, [data], build, name=name, dtype=[dt for _, dt, _ in outputs], tag=name)
    return outs[0] if len(outs) == 1 else outs


def _argsort_compute(attrs, inputs, out_type):
    x, = inputs
    axis = attrs.axis % len(x.shape)
    return [sort_kernel(x, axis, not attrs.is_ascend, [(x.shape, attrs.dtype, "indices")], "argsort")]


def _sort_compute(attrs, inputs, out_type):
    x, = inputs
    axis = attrs.axis % len(x.shape)
    return [sort_kernel(x, axis, not attrs.is_ascend, [(x.shape, x.dtype, "values")], "sort")]


def topk_compute(attrs, inputs, out_type, k=None):
    """topk of inputs[0]; `k` (a PrimExpr) overrides attrs.k: dyn.topk's run-time k."""
    x = inputs[0]
    axis = attrs.axis % len(x.shape)
    if k is None:
        k = x.shape[axis] if attrs.k is None or attrs.k < 1 else tir.const(attrs.k, "int32")
    shape = list(x.shape[:axis]) + [k] + list(x.shape[axis + 1:])
    types = out_type.fields if isinstance(out_type, TupleType) else [out_type]
    kinds = {"both": ["values", "indices"], "values": ["values"], "indices": ["indices"]}[attrs.ret_type]
    outputs = [(shape, t.dtype, kind) for t, kind in zip(types, kinds)]
    outs = sort_kernel(x, axis, not attrs.is_ascend, outputs, "topk")
    return outs if isinstance(outs, list) else [outs]


# --- samples -----------------------------------------------------------------------------------
def _ties(rng, shape, dtype="float32"):
    """Values with many ties (a few distinct values), so stability is visible."""
    return rng.integers(-3, 3, size=shape).astype(dtype)


def _with_nan(rng, shape):
    x = S.rand(rng, shape)
    x.reshape(-1)[:: 3] = np.nan
    return x


def _argsort_samples(rng):
    return [Sample([_ties(rng, (2, 7))], ArgsortAttrs()),
            Sample([_ties(rng, (3, 4, 5), "int32")], ArgsortAttrs(axis=1, is_ascend=False, dtype="int64")),
            Sample([_with_nan(rng, (9,))], ArgsortAttrs(is_ascend=False)),
            Sample([_with_nan(rng, (2, 5))], ArgsortAttrs(axis=0)),
            Sample([S.rand(rng, (1,))], ArgsortAttrs()),
            Sample([S.rand(rng, (0, 3))], ArgsortAttrs(axis=0)),
            Sample([S.rand(rng, (4, 0))], ArgsortAttrs(axis=-1)),
            Sample([S.rand(rng, (33,), "float64")], ArgsortAttrs(dtype="float32")),
            Sample([S.rand(rng, (6, 3), "float16")], ArgsortAttrs(axis=0, is_ascend=False))]


def _sort_samples(rng):
    return [Sample([_ties(rng, (2, 7))], SortAttrs()),
            Sample([_with_nan(rng, (3, 5))], SortAttrs(axis=0, is_ascend=False)),
            Sample([S.rand(rng, (17,), "int8", -100, 100)], SortAttrs(is_ascend=False)),
            Sample([S.rand(rng, (1, 1))], SortAttrs()),
            Sample([S.rand(rng, (0,))], SortAttrs())]


def _topk_samples(rng):
    return [Sample([_ties(rng, (2, 7))], TopKAttrs(k=3)),
            Sample([_ties(rng, (3, 6, 2), "int32")], TopKAttrs(k=2, axis=1, ret_type="indices", is_ascend=True,
                                                               dtype="int64")),
            Sample([_with_nan(rng, (8,))], TopKAttrs(k=4, ret_type="values")),
            Sample([S.rand(rng, (4, 5))], TopKAttrs(k=0, axis=0)),
            Sample([S.rand(rng, (5,))], TopKAttrs(k=5, is_ascend=True)),
            Sample([S.rand(rng, (1,))], TopKAttrs(k=1)),
            Sample([S.rand(rng, (3, 0))], TopKAttrs(k=0, axis=1))]


ARGSORT = defop("argsort", inputs=("data",), attrs=ArgsortAttrs, rel=_argsort_rel, pattern=OpPattern.OPAQUE,
                ref=_argsort_ref, compute=_argsort_compute, level=6, samples=_argsort_samples,
                doc="the indices that sort data along axis (stable; NaN largest)")
SORT = defop("sort", inputs=("data",), attrs=SortAttrs, rel=_sort_rel, pattern=OpPattern.OPAQUE,
             ref=_sort_ref, compute=_sort_compute, level=6, samples=_sort_samples,
             doc="data sorted along axis (stable; NaN largest)")
TOPK = defop("topk", inputs=("data",), attrs=TopKAttrs, rel=_topk_rel, pattern=OpPattern.OPAQUE,
             ref=lambda x, attrs: topk_ref(x, attrs), compute=topk_compute, level=6, samples=_topk_samples,
             doc="the k largest (or smallest) elements along axis and their indices")


# The parameters the sorting constructors share (constructor_docs completes their docstrings)
SORT_PARAMETERS = {
    "data": ("relay.Expr", "The input tensor."),
    "axis": ("int, optional", "The axis to sort along; negative values count from the last axis."),
    "is_ascend": ("bool, optional", "If true, the order is ascending (smallest first); if false, descending."),
    "dtype": ("str, optional", "The integer dtype of the indices returned."),
    "k": ("int or relay.Expr, optional", "The number of elements to keep; k < 1 keeps the whole axis."),
    "ret_type": ("str, optional", '"both" for the (values, indices) pair, "values" or "indices" for one of '
                                  "them."),
}
SELECTED = ("result", "relay.Expr or relay.TupleWrapper",
            'The values or indices asked for by `ret_type`; for "both", a TupleWrapper (values, indices).')


@documented(SORT_PARAMETERS, ("result", "relay.Expr", "The indices, data's shape, in `dtype`."))
def argsort(data, axis=-1, is_ascend=1, dtype="int32"):
    """relay.argsort: the indices that sort `data` along `axis` (stable)."""
    return ARGSORT(data, attrs=ArgsortAttrs(axis, is_ascend, dtype))


@documented(SORT_PARAMETERS, ("result", "relay.Expr", "The sorted tensor, of data's type."))
def sort(data, axis=-1, is_ascend=1):
    """relay.sort: `data` sorted along `axis` (stable)."""
    return SORT(data, attrs=SortAttrs(axis, is_ascend))


@documented(SORT_PARAMETERS, SELECTED)
def topk(data, k=1, axis=-1, ret_type="both", is_ascend=False, dtype="int32"):
    """relay.topk: the k largest (smallest with is_ascend) elements along `axis`: a tuple
    (values, indices) for ret_type "both", else the one asked for. A Relay expression k
    gives dyn.topk, whose output size is known at run time. "both" gives a TupleWrapper
    (index it, unpack it, or .astuple() it), as in tvm.relay."""
    if isinstance(k, Constant):
        k = int(k.data.numpy())
    if isinstance(k, Expr):
        from ..dyn.algorithm import dyn_topk      # op/dyn builds on this module
        return dyn_topk(data, k, axis, ret_type, is_ascend, dtype)
    return both_wrapped(TOPK(data, attrs=TopKAttrs(k, axis, ret_type, is_ascend, dtype)), ret_type)


def both_wrapped(call, ret_type):
    """ret_type "both" gives a TupleWrapper (values, indices), as tvm.relay's topk."""
    return TupleWrapper(call, 2) if ret_type == "both" else call


__all__ = ["argsort", "sort", "topk", "ArgsortAttrs", "SortAttrs", "TopKAttrs"]
