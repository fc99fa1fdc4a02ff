"""Gathering operators (TVM v0.18 names): gather, gather_nd and adv_index.

All three read the data element each output position names through an index tensor and are
INJECTIVE (one load per element). Indices follow op/index_rules.py: negatives count from the
end, an out-of-range run-time index is clamped, a constant one is an InputError when the call
is built.

  gather(data, axis, indices)          out[p] = data[p with p[axis] = indices[p]]
                                       (indices has data's rank; the output its shape)
  gather_nd(data, indices, batch_dims) indices (M, Y...): out[b, y, x] = data[b, indices[:, b, y], x]
  adv_index((data, i0, i1, ...))       numpy's data[i0, i1, ...] with the index tensors broadcast
"""
import dataclasses

import numpy as np

from .. import tir
from ..ir import expr as _expr
from ..ir.attrs import Attrs, always_printed
from ..ir.dims import dim_to_str, is_static
from ..ir.shape_math import broadcast_shapes, dims_differ
from ..ir.types import TensorType, TupleType
from . import index_math as IM
from . import samples as S
from .compute_common import broadcast_shape
from .index_rules import (check_constant_indices, constant_value, expect_int, fail, known_shape,
                          norm_axis, np_clip_index, te_clip_index)
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor, expect_tuple


def _check_axis_readable(op_name, size, indices, what, *types):
    """Reading from an empty axis is impossible whatever the rule (clamping gives -1)."""
    if is_static(size) and int(size) == 0 and all(is_static(d) and int(d) > 0 for d in indices.shape):
        raise fail(op_name, f"cannot read from {what}, which has size 0, with non-empty indices", *types)


# --- gather -----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class GatherAttrs(Attrs):
    axis: int = always_printed(0)

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))


def _gather_axis(data, indices, attrs):
    op = "gather"
    if data.ndim == 0:
        raise fail(op, "cannot gather from a scalar", data, indices)
    expect_int(op, indices, "indices", data, indices)
    if indices.ndim != data.ndim:
        raise fail(op, f"indices must have the rank of data ({data.ndim}), got rank {indices.ndim}", data, indices)
    axis = norm_axis(op, attrs.axis, data.ndim, data, indices)
    for k, (d, i) in enumerate(zip(data.shape, indices.shape)):
        if k == axis:
            continue
        if is_static(d) and is_static(i):
            if int(i) > int(d):   # smaller is fine: ONNX GatherElements (TVM asks for equal dims)
                raise fail(op, f"indices dim {k} is {int(i)} but data's is {int(d)}; off the axis ({axis}) "
                               f"indices may not be larger than data", data, indices)
        elif dims_differ(d, i):
            raise fail(op, f"indices dim {k} is {dim_to_str(i)} but data's is {dim_to_str(d)}; off the axis "
                           f"({axis}) a dynamic dim must match data's", data, indices)
    _check_axis_readable(op, data.shape[axis], indices, f"axis {axis}", data, indices)
    return axis


def _gather_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "gather data")
    indices = expect_tensor(arg_types[1], "gather indices")
    _gather_axis(data, indices, attrs)
    return TensorType(indices.shape, data.dtype)


def _gather_ref(x, idx, attrs):
    axis = _gather_axis(TensorType(x.shape, str(x.dtype)), TensorType(idx.shape, str(idx.dtype)), attrs)
    if idx.size == 0:
        return np.empty(idx.shape, x.dtype)
    window = tuple(slice(None) if k == axis else slice(0, n) for k, n in enumerate(idx.shape))
    return np.take_along_axis(x[window], np_clip_index(idx, x.shape[axis]), axis=axis)


def _gather_compute(attrs, inputs, out_type):
    """Each output element loads its index, applies the read rule and loads that data element."""
    x, idx = inputs
    axis = _gather_axis(IM.probe_type(x), IM.probe_type(idx), attrs)
    n = IM.te_dims(x)[axis]

    def body(*i):
        return x[i[:axis] + (te_clip_index(idx[i], n),) + i[axis + 1:]]
    return [IM.compute(GATHER, IM.te_dims(idx), body)]


def _ids(rng, shape, low, high, dtype="int32"):
    return rng.integers(low, high, size=shape).astype(dtype)


GATHER = defop(
    "gather", inputs=("data", "indices"), attrs=GatherAttrs, rel=_gather_rel, pattern=OpPattern.INJECTIVE,
    ref=_gather_ref, compute=_gather_compute, level=3,
    samples=lambda rng: [
        Sample([S.rand(rng, (3, 4)), _ids(rng, (2, 4), 0, 3)], GatherAttrs(0)),
        Sample([S.rand(rng, (2, 5), "int32"), _ids(rng, (2, 3), -5, 5, "int64")], GatherAttrs(-1), "negative"),
        Sample([S.rand(rng, (2, 3, 4), "float64"), _ids(rng, (2, 3, 6), -9, 9)], GatherAttrs(2), "out of range"),
        Sample([S.rand(rng, (4,)), _ids(rng, (0,), 0, 4)], GatherAttrs(0), "empty indices"),
        Sample([S.rand(rng, (3, 4)), _ids(rng, (2, 2), 0, 3)], GatherAttrs(0), "indices smaller off the axis")],
    doc="out[p] = data[p with p[axis] replaced by indices[p]]")


# --- gather_nd -----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class GatherNDAttrs(Attrs):
    batch_dims: int = 0
    index_rank: int = None    # indices.shape[0] given ahead (TVM: for dynamic index shapes)

    def __post_init__(self):
        object.__setattr__(self, "batch_dims", int(self.batch_dims))
        if self.index_rank is not None:
            object.__setattr__(self, "index_rank", int(self.index_rank))


def _gather_nd_layout(data, indices, attrs):
    """(M, B): the index tuple length and the batch dims, checked against both shapes."""
    op = "gather_nd"
    if indices.dtype.startswith("float"):
        pass   # TVM casts float indices to int32 (truncating)
    else:
        expect_int(op, indices, "indices", data, indices)
    if indices.ndim < 1:
        raise fail(op, "indices must have rank >= 1 (its first dim is the index tuple)", data, indices)
    m = indices.shape[0]
    if not is_static(m):
        if attrs.index_rank is None:
            raise fail(op, "the first dim of indices (the index tuple length) must be static, or give "
                           "index_rank", data, indices)
        m = attrs.index_rank
    m, b = int(m), attrs.batch_dims
    if b < 0:
        raise fail(op, f"batch_dims must be >= 0, got {b}", data, indices)
    if m + b > data.ndim:
        raise fail(op, f"index tuples of length {m} after {b} batch dim(s) need data of rank >= {m + b}",
                   data, indices)
    if b > indices.ndim - 1:
        raise fail(op, f"batch_dims {b} exceeds the {indices.ndim - 1} dim(s) of indices after the first",
                   data, indices)
    for k in range(b):
        if dims_differ(data.shape[k], indices.shape[k + 1]):
            raise fail(op, f"batch dim {k} differs: data has {dim_to_str(data.shape[k])}, indices "
                           f"{dim_to_str(indices.shape[k + 1])}", data, indices)
    for k in range(m):
        _check_axis_readable(op, data.shape[b + k], TensorType(indices.shape[1:], indices.dtype),
                             f"axis {b + k}", data, indices)
    return m, b


def _gather_nd_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "gather_nd data")
    indices = expect_tensor(arg_types[1], "gather_nd indices")
    m, b = _gather_nd_layout(data, indices, attrs)
    return TensorType(tuple(indices.shape[1:]) + tuple(data.shape[m + b:]), data.dtype)


def _gather_nd_ref(x, idx, attrs):
    m, b = _gather_nd_layout(TensorType(x.shape, str(x.dtype)), TensorType(idx.shape, str(idx.dtype)), attrs)
    out_shape = idx.shape[1:] + x.shape[m + b:]
    if int(np.prod(out_shape)) == 0:
        return np.empty(out_shape, x.dtype)
    idx = idx.astype("int64")   # float indices truncate toward zero, as TVM's cast
    y_shape = idx.shape[1:]
    batch = [np.arange(x.shape[k]).reshape((-1,) + (1,) * (len(y_shape) - k - 1)) for k in range(b)]
    parts = [np_clip_index(idx[k], x.shape[b + k]) for k in range(m)]
    return x[tuple(batch + parts)]


def _gather_nd_compute(attrs, inputs, out_type):
    """out[y, x] = data[y[:B], read_rule(indices[0, y]), ..., read_rule(indices[M-1, y]), x]."""
    x, idx = inputs
    m, b = _gather_nd_layout(IM.probe_type(x), IM.probe_type(idx), attrs)
    dims, idims = IM.te_dims(x), IM.te_dims(idx)
    k = len(idims) - 1

    def body(*i):
        y = i[:k]
        pos = []
        for c in range(m):
            j = idx[(c,) + y]
            if j.dtype.startswith("float"):
                j = j.astype("int32")
            pos.append(te_clip_index(j, dims[b + c]))
        return x[tuple(y[:b]) + tuple(pos) + i[k:]]
    return [IM.compute(GATHER_ND, idims[1:] + dims[m + b:], body)]


GATHER_ND = defop(
    "gather_nd", inputs=("data", "indices"), attrs=GatherNDAttrs, rel=_gather_nd_rel, pattern=OpPattern.INJECTIVE,
    ref=_gather_nd_ref, compute=_gather_nd_compute, level=3,
    samples=lambda rng: [
        Sample([S.rand(rng, (3, 4)), _ids(rng, (2, 5), 0, 3)], GatherNDAttrs(), "slices"),
        Sample([S.rand(rng, (3, 4), "int32"), np.array([[0, 2, -1], [3, -4, 1]], "int64")], GatherNDAttrs(),
               "elements, negative"),
        Sample([S.rand(rng, (2, 3, 4), "float64"), _ids(rng, (1, 2, 2), -3, 5)], GatherNDAttrs(batch_dims=1),
               "batch dims, out of range"),
        Sample([S.rand(rng, (2, 3)), np.zeros((2, 0), "int32")], GatherNDAttrs(), "empty indices")],
    doc="gather slices of data at index tuples read along indices' first dim")


# --- adv_index -----------------------------------------------------------------------------------------
def _adv_layout(arg_types):
    """(data, index types, broadcast index shape)."""
    op = "adv_index"
    fields = expect_tuple(arg_types[0], "adv_index inputs").fields
    if len(fields) < 1:
        raise fail(op, "needs a tuple of the data tensor followed by the index tensors")
    data, indices = fields[0], list(fields[1:])
    if len(indices) > data.ndim:
        raise fail(op, f"{len(indices)} index tensors for data of rank {data.ndim}", *fields)
    shape = ()
    for t in indices:
        expect_int(op, t, "every index tensor", *fields)
        shape, _ = broadcast_shapes(shape, t.shape)
        if shape is None:
            raise fail(op, "the index tensors do not broadcast together", *fields)
    for k in range(len(indices)):
        _check_axis_readable(op, data.shape[k], TensorType(shape, "int32"), f"axis {k}", *fields)
    return data, indices, shape


def _adv_index_rel(arg_types, attrs):
    data, indices, shape = _adv_layout(arg_types)
    return TensorType(shape + tuple(data.shape[len(indices):]), data.dtype)


def _adv_index_ref(inputs, attrs):
    x, *indices = inputs
    _adv_layout([_tuple_type(inputs)])
    shape = np.broadcast_shapes(*[np.shape(i) for i in indices]) if indices else ()
    out_shape = tuple(shape) + x.shape[len(indices):]
    if int(np.prod(out_shape)) == 0:
        return np.empty(out_shape, x.dtype)
    return x[tuple(np_clip_index(i, x.shape[k]) for k, i in enumerate(indices))]


def _tuple_type(values):
    return TupleType([TensorType(np.shape(v), str(np.asarray(v).dtype)) for v in values])


def _adv_index_compute(attrs, inputs, out_type):
    """Output position (b..., x...) reads data[read_rule(i_k[b broadcast]) for each k, x...]."""
    x, *indices = inputs
    dims = IM.te_dims(x)
    shape = tuple(d.value if isinstance(d, tir.IntImm) else d
                  for d in broadcast_shape([t.shape for t in indices])) if indices else ()
    nb = len(shape)

    def body(*i):
        b = i[:nb]
        pos = []
        for k, t in enumerate(indices):
            tdims = IM.te_dims(t)
            pos.append(te_clip_index(t[IM.broadcast_index(b[nb - len(tdims):], tdims)], dims[k]))
        return x[tuple(pos) + i[nb:]]
    return [IM.compute(ADV_INDEX, shape + dims[len(indices):], body)]


ADV_INDEX = defop(
    "adv_index", inputs=("inputs",), rel=_adv_index_rel, pattern=OpPattern.INJECTIVE,
    ref=_adv_index_ref, compute=_adv_index_compute, level=3,
    samples=lambda rng: [
        Sample([[S.rand(rng, (4, 3)), _ids(rng, (2,), 0, 4)]]),
        Sample([[S.rand(rng, (3, 4, 2), "int32"), _ids(rng, (2, 1), -3, 3, "int64"), _ids(rng, (3,), 0, 6)]],
               None, "broadcast, negative, out of range"),
        Sample([[S.rand(rng, (2, 3), "float64")]], None, "no index tensors")],
    doc="numpy advanced indexing data[i0, i1, ...] with broadcast index tensors")


# --- Python constructors with tvm.relay's names --------------------------------------------------------
def gather(data, axis, indices):
    """relay.gather: out[p] = data[p with p[axis] = indices[p]]; indices has data's rank.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    axis : int
        The axis the indices select along; negative values count from the last axis.
    indices : relay.Expr
        The integer indices, of data's rank; the result has their shape.
    Returns
    -------
    result : relay.Expr
        The gathered tensor, of indices' shape and data's dtype.
    """
    values, shape = constant_value(indices), known_shape(data)
    if values is not None and shape is not None and -len(shape) <= axis < len(shape):
        check_constant_indices("gather", values, shape[axis], f"axis {axis % len(shape)}")
    return GATHER(data, indices, attrs=GatherAttrs(axis))


def gather_nd(data, indices, batch_dims=0, index_rank=None):
    """relay.gather_nd: gather slices of data at the index tuples along indices' first dim,
    after `batch_dims` leading batch dims.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    indices : relay.Expr
        The integer index tuples, (M, Y...): indices[:, y...] addresses the first M axes of
        `data` after the batch axes.
    batch_dims : int, optional
        The number of leading axes that `data` and `indices` (after its first) share as batch
        axes. Defaults to 0.
    index_rank : None or int, optional
        M, the length of the index tuples, when it is given ahead; None reads it from the type
        of `indices`. Defaults to None.
    Returns
    -------
    result : relay.Expr
        The gathered slices, (batch..., Y..., data's remaining axes).
    """
    values, shape = constant_value(indices), known_shape(data)
    if values is not None and shape is not None and values.ndim >= 1 \
            and values.dtype.kind in "iu" and batch_dims + values.shape[0] <= len(shape):
        for k in range(values.shape[0]):
            check_constant_indices("gather_nd", values[k], shape[batch_dims + k],
                                   f"axis {batch_dims + k} (index tuple position {k})")
    return GATHER_ND(data, indices, attrs=GatherNDAttrs(batch_dims, index_rank))


def adv_index(inputs):
    """relay.adv_index: numpy-style data[i0, i1, ...]; `inputs` is [data, i0, i1, ...].

    Parameters
    ----------
    inputs : list of relay.Expr or relay.Expr
        The tensor indexed followed by one integer index tensor per leading axis (a list or a
        Tuple expression); the index tensors broadcast against each other.
    Returns
    -------
    result : relay.Expr
        The indexed tensor: the broadcast index shape followed by the axes not indexed.
    """
    inputs = list(inputs) if not isinstance(inputs, _expr.Expr) else inputs
    if isinstance(inputs, list):
        shape = known_shape(inputs[0])
        for k, idx in enumerate(inputs[1:]):
            values = constant_value(idx)
            if values is not None and shape is not None and k < len(shape):
                check_constant_indices("adv_index", values, shape[k], f"axis {k}")
        inputs = _expr.Tuple(inputs)
    return ADV_INDEX(inputs)


__all__ = ["gather", "gather_nd", "adv_index"]
