"""Coordinate operators (TVM v0.18 names): meshgrid and unravel_index. Both INJECTIVE.

  meshgrid(data, indexing)   one grid per input (a tuple of scalars or 1-D tensors of one
                             dtype): grid k repeats input k along axis k ("ij"), with the first
                             two axes swapped for "xy" (numpy's meshgrid);
  unravel_index(indices, shape)
                             the coordinates of flat indices in a tensor of `shape` (a 1-D
                             integer tensor read at run time): output (len(shape),) + indices'
                             shape, in indices' dtype. As topi's formula: floor mod and floor
                             division from the last dim; a 0 in shape is read as 1 (no division
                             by zero in a kernel).
"""
import dataclasses

import numpy as np

from .. import tir
from ..ir import expr as _expr
from ..ir.attrs import Attrs, check_choice
from ..ir.dims import is_static
from ..ir.types import TensorType, TupleType
from . import index_math as IM
from . import samples as S
from .index_rules import expect_int, fail
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor, expect_tuple


# --- meshgrid -------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class MeshgridAttrs(Attrs):
    indexing: str = "ij"

    def __post_init__(self):
        check_choice("indexing", self.indexing, ("ij", "xy"))


def _grid_shape(fields, indexing):
    shape = [1 if t.ndim == 0 else t.shape[0] for t in fields]
    if indexing == "xy" and len(shape) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    return shape


def _meshgrid_rel(arg_types, attrs):
    fields = expect_tuple(arg_types[0], "meshgrid data").fields
    if not fields:
        raise fail("meshgrid", "needs at least one tensor")
    for t in fields:
        if t.dtype != fields[0].dtype:
            raise fail("meshgrid", "every tensor must have one dtype", *fields)
        if t.ndim > 1:
            raise fail("meshgrid", f"every tensor must be a scalar or 1-D, got rank {t.ndim}", *fields)
    shape = _grid_shape(fields, attrs.indexing)
    return TupleType([TensorType(shape, fields[0].dtype) for _ in fields])


def _meshgrid_ref(arrays, attrs):
    return tuple(np.ascontiguousarray(g) for g in np.meshgrid(*[np.reshape(a, (-1,)) for a in arrays],
                                                             indexing=attrs.indexing))


def _meshgrid_compute(attrs, inputs, out_type):
    """Grid k at position i reads input k at i along its axis (axis k, or the swapped one)."""
    dims = [1 if t.ndim == 0 else IM.te_dims(t)[0] for t in inputs]
    if attrs.indexing == "xy" and len(dims) >= 2:
        dims[0], dims[1] = dims[1], dims[0]
    outs = []
    for k, t in enumerate(inputs):
        axis = k
        if attrs.indexing == "xy" and k < 2 and len(inputs) >= 2:
            axis = 1 - k
        outs.append(IM.compute(MESHGRID, dims, lambda *i, t=t, axis=axis: t[()] if t.ndim == 0 else t[i[axis]],
                               suffix=f"_{k}"))
    return outs


MESHGRID = defop(
    "meshgrid", inputs=("data",), attrs=MeshgridAttrs, rel=_meshgrid_rel, pattern=OpPattern.INJECTIVE,
    ref=_meshgrid_ref, compute=_meshgrid_compute, level=3,
    samples=lambda rng: [Sample([[S.rand(rng, (3,)), S.rand(rng, (4,))]], MeshgridAttrs("ij")),
                         Sample([[S.rand(rng, (3,), "int32"), S.rand(rng, (2,), "int32"), S.rand(rng, (), "int32")]],
                                MeshgridAttrs("xy")),
                         Sample([[S.rand(rng, (5,), "float64")]], MeshgridAttrs("xy"), "one input")],
    doc="coordinate grids from 1-D tensors (numpy's meshgrid)")


# --- unravel_index ------------------------------------------------------------------------------------------
def _unravel_index_rel(arg_types, attrs):
    op = "unravel_index"
    indices = expect_tensor(arg_types[0], f"{op} indices")
    shape = expect_tensor(arg_types[1], f"{op} shape")
    expect_int(op, indices, "indices", indices, shape)
    expect_int(op, shape, "shape", indices, shape)
    if indices.ndim > 1:
        raise fail(op, f"indices must be a scalar or 1-D, got rank {indices.ndim}", indices, shape)
    if shape.ndim != 1 or not is_static(shape.shape[0]):
        raise fail(op, "shape must be 1-D of static length", indices, shape)
    return TensorType((shape.shape[0],) + tuple(indices.shape), indices.dtype)


def _unravel_index_ref(indices, shape, attrs):
    dims = np.maximum(np.asarray(shape).astype("int64"), 1)
    rest = np.asarray(indices).astype("int64")
    coords = []
    for d in dims[::-1]:
        coords.append(np.mod(rest, d))
        rest = np.floor_divide(rest, d)
    return np.stack(coords[::-1]).astype(indices.dtype) if coords else \
        np.zeros((0,) + np.shape(indices), indices.dtype)


def _unravel_index_compute(attrs, inputs, out_type):
    """Coordinate c of index i: (i // prod(shape[c+1:])) mod shape[c], in int64."""
    indices, shape = inputs
    length = IM.te_dims(shape)[0]
    one = tir.const(1, "int64")

    def body(c, *i):
        rest = indices[i].astype("int64")
        value = tir.const(0, "int64")
        for k in reversed(range(length)):
            d = tir.max(shape[k].astype("int64"), one)
            value = tir.if_then_else(c == k, tir.floormod(rest, d), value)
            rest = tir.floordiv(rest, d)
        return value.astype(indices.dtype)
    return [IM.compute(UNRAVEL_INDEX, (length,) + IM.te_dims(indices), body)]


UNRAVEL_INDEX = defop(
    "unravel_index", inputs=("indices", "shape"), rel=_unravel_index_rel, pattern=OpPattern.INJECTIVE,
    ref=_unravel_index_ref, compute=_unravel_index_compute, level=3,
    samples=lambda rng: [Sample([np.array([22, 41, 37], "int32"), np.array([7, 6], "int32")], None,
                                "TVM's example"),
                         Sample([np.array(17, "int64"), np.array([2, 3, 4], "int64")], None, "scalar index"),
                         Sample([S.rand(rng, (5,), "int32", 0, 40), np.array([3, 0, 5], "int32")], None,
                                "a 0 in shape reads as 1")],
    doc="the coordinates of flat indices in a tensor of the given shape")


# --- Python constructors with tvm.relay's names --------------------------------------------------------------
def meshgrid(data, indexing="ij"):
    """relay.meshgrid: coordinate grids from a list of scalars / 1-D tensors ("ij" or "xy").

    Parameters
    ----------
    data : list of relay.Expr or relay.Expr
        The coordinate vectors, scalars or 1-D tensors of one dtype (a list or a Tuple).
    indexing : str, optional
        "ij" gives grid k the k-th input along axis k; "xy" swaps the first two axes (Cartesian
        indexing, as numpy's default). Defaults to "ij".

    Returns
    -------
    result : relay.TupleWrapper
        One grid per input, each of shape (the length of each input...), with the first two
        lengths swapped for "xy".
    """
    if not isinstance(data, _expr.Expr):
        data = _expr.Tuple(list(data))
    out = MESHGRID(data, attrs=MeshgridAttrs(indexing))
    count = len(data.fields) if isinstance(data, _expr.Tuple) else None
    return _expr.TupleWrapper(out, count) if count is not None else out


def unravel_index(indices, shape):
    """relay.unravel_index: coordinates of flat `indices` in a tensor of `shape`.

    Parameters
    ----------
    indices : relay.Expr
        The flat (row-major) integer indices.
    shape : tuple of int or relay.Expr
        The shape the indices address.
    Returns
    -------
    result : relay.Expr
        The coordinates, (len(shape),) + indices' shape, in indices' dtype.
    """
    if not isinstance(shape, _expr.Expr):
        shape = _expr.const(np.asarray(shape, "int32" if not isinstance(indices, _expr.Constant)
                                       else indices.data.numpy().dtype))
    return UNRAVEL_INDEX(indices, shape)


__all__ = ["meshgrid", "unravel_index"]
