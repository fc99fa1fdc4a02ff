"""The dyn transform operators (TVM v0.18 names): dyn.reshape, dyn.broadcast_to, dyn.tile,
dyn.squeeze, dyn.expand_dims, dyn.strided_slice, dyn.full, dyn.zeros, dyn.ones.

Each is its static op with the shape-like attrs given as tensors (see common.py). The static
front doors (`relay.reshape(x, newshape)` with a non-constant Relay expression, ...) build these.
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import AttrsError, TypeInferenceError
from ...ir import expr as _expr
from ...ir.attrs import Attrs, always_printed, check_choice
from ...ir.types import TensorType
from .. import index_math as IM
from .. import samples as S
from ..compute_common import cast as te_cast
from ..constructor_docs import documented
from ..creation import FILL_PARAMETERS, FULL, ONES, ZEROS, InitOpAttrs
from ..indexing import STRIDED_SLICE, StridedSliceAttrs
from ..registry import Sample
from ..relations import expect_tensor
from ..reshape import RESHAPE, ReshapeAttrs
from ..transform import (BROADCAST_TO, EXPAND_DIMS, SQUEEZE, TILE, ExpandDimsAttrs, ShapeAttrs,
                         SqueezeAttrs, TileAttrs)
from .common import any_shape, defdyn, load_index, read_ints, shape_arg, te_out_shape


def _i64(values):
    return np.array(values, dtype="int64")


def _flat_copy(name):
    """A compute whose output is the input's elements in row-major order under the run-time
    output shape (reshape, squeeze and expand_dims move no element)."""
    def compute(attrs, inputs, out_type):
        x = inputs[0]
        ishape, oshape = IM.te_dims(x), te_out_shape(out_type, "out")
        return [te.compute(oshape, lambda *i: x[tuple(IM.unravel(IM.ravel(i, oshape), ishape))],
                           name=name, tag="injective")]
    return compute


# --- dyn.reshape ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DynReshapeAttrs(Attrs):
    allowzero: bool = False


def _reshape_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "dyn.reshape data")
    newshape = shape_arg(arg_types[1], "dyn.reshape", "newshape")
    return TensorType(any_shape(int(newshape.shape[0])), data.dtype)


def _reshape_static(attrs, values):
    newshape = read_ints(values[1], "dyn.reshape", "newshape")
    bad = [v for v in newshape if v in (-2, -4)]
    if bad:
        raise AttrsError(f"newshape {list(newshape)} uses {bad[0]}, which dyn.reshape does not take (its "
                         f"output rank is the length of newshape); use 0, -1 or -3")
    return RESHAPE, ReshapeAttrs(newshape, attrs.allowzero)


RESHAPE_DYN = defdyn(
    "dyn.reshape", inputs=("data", "newshape"), static_inputs=(0,), attrs=DynReshapeAttrs,
    to_static=_reshape_static, rel=_reshape_rel, compute=_flat_copy("T_reshape"),
    samples=lambda rng: [Sample([S.rand(rng, (2, 3, 4)), _i64([6, -1])], DynReshapeAttrs()),
                         Sample([S.rand(rng, (2, 3, 4), "int32"), _i64([0, -3])], DynReshapeAttrs()),
                         Sample([S.rand(rng, (4, 2)), np.array([2, 2, 2], "int32")], DynReshapeAttrs())],
    doc="reshape(data, newshape read at run time): codes 0, -1, -3 as in reshape")


# --- dyn.broadcast_to / dyn.tile --------------------------------------------------------------------
def _broadcast_to_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "dyn.broadcast_to data")
    shape = shape_arg(arg_types[1], "dyn.broadcast_to", "shape")
    return TensorType(any_shape(int(shape.shape[0])), data.dtype)


def _broadcast_to_compute(attrs, inputs, out_type):
    x = inputs[0]
    oshape, dims = te_out_shape(out_type, "out"), IM.te_dims(x)
    lead = len(oshape) - len(dims)
    return [te.compute(oshape, lambda *i: x[IM.broadcast_index(i[lead:], dims)], name="T_broadcast_to",
                       tag="broadcast")]


BROADCAST_TO_DYN = defdyn(
    "dyn.broadcast_to", inputs=("data", "shape"), static_inputs=(0,),
    to_static=lambda attrs, v: (BROADCAST_TO, ShapeAttrs(read_ints(v[1], "dyn.broadcast_to", "shape"))),
    rel=_broadcast_to_rel, compute=_broadcast_to_compute,
    samples=lambda rng: [Sample([S.rand(rng, (3, 1)), _i64([2, 3, 4])]),
                         Sample([S.rand(rng, (1,), "int32"), np.array([5], "int32")])],
    doc="broadcast_to(data, shape read at run time)")


def _tile_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "dyn.tile data")
    reps = shape_arg(arg_types[1], "dyn.tile", "reps")
    return TensorType(any_shape(max(data.ndim, int(reps.shape[0]))), data.dtype)


def _tile_compute(attrs, inputs, out_type):
    x = inputs[0]
    oshape, dims = te_out_shape(out_type, "out"), IM.te_dims(x)
    lead = len(oshape) - len(dims)
    return [te.compute(oshape, lambda *i: x[tuple(IM.wrap_index(k, d) for k, d in zip(i[lead:], dims))],
                       name="T_tile", tag="broadcast")]


TILE_DYN = defdyn(
    "dyn.tile", inputs=("data", "reps"), static_inputs=(0,),
    to_static=lambda attrs, v: (TILE, TileAttrs(read_ints(v[1], "dyn.tile", "reps"))),
    rel=_tile_rel, compute=_tile_compute,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3)), _i64([2, 1])]),
                         Sample([S.rand(rng, (3,), "float64"), _i64([2, 1, 2])])],
    doc="tile(data, reps read at run time)")


# --- dyn.squeeze / dyn.expand_dims ------------------------------------------------------------------
def _squeeze_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "dyn.squeeze data")
    axis = shape_arg(arg_types[1], "dyn.squeeze", "axis")
    rank = data.ndim - int(axis.shape[0])
    if rank < 0:
        raise TypeInferenceError(f"dyn.squeeze: {int(axis.shape[0])} axes to drop from a tensor of rank {data.ndim}")
    return TensorType(any_shape(rank), data.dtype)


SQUEEZE_DYN = defdyn(
    "dyn.squeeze", inputs=("data", "axis"), static_inputs=(0,),
    to_static=lambda attrs, v: (SQUEEZE, SqueezeAttrs(read_ints(v[1], "dyn.squeeze", "axis"))),
    rel=_squeeze_rel, compute=_flat_copy("T_squeeze"),
    samples=lambda rng: [Sample([S.rand(rng, (1, 3, 1)), _i64([0, 2])]),
                         Sample([S.rand(rng, (2, 1), "int32"), np.array([-1], "int32")])],
    doc="squeeze(data, axis read at run time)")


@dataclasses.dataclass(frozen=True)
class DynExpandDimsAttrs(Attrs):
    num_newaxis: int = 1

    def __post_init__(self):
        object.__setattr__(self, "num_newaxis", int(self.num_newaxis))
        if self.num_newaxis < 0:
            raise AttrsError(f"dyn.expand_dims: num_newaxis must be >= 0, got {self.num_newaxis}")


def _expand_dims_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "dyn.expand_dims data")
    shape_arg(arg_types[1], "dyn.expand_dims", "axis", ndim=0)
    return TensorType(any_shape(data.ndim + attrs.num_newaxis), data.dtype)


EXPAND_DIMS_DYN = defdyn(
    "dyn.expand_dims", inputs=("data", "axis"), static_inputs=(0,), attrs=DynExpandDimsAttrs,
    to_static=lambda attrs, v: (EXPAND_DIMS, ExpandDimsAttrs(read_ints(v[1], "dyn.expand_dims", "axis")[0],
                                                             attrs.num_newaxis)),
    rel=_expand_dims_rel, compute=_flat_copy("T_expand_dims"),
    samples=lambda rng: [Sample([S.rand(rng, (2, 3)), np.array(1, "int64")], DynExpandDimsAttrs(2)),
                         Sample([S.rand(rng, (4,), "int32"), np.array(-1, "int32")], DynExpandDimsAttrs())],
    doc="expand_dims(data, axis read at run time, num_newaxis)")


# --- dyn.strided_slice ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DynStridedSliceAttrs(Attrs):
    slice_mode: str = "end"

    def __post_init__(self):
        check_choice("slice_mode", self.slice_mode, ("end", "size"))


def _strided_slice_rel(arg_types, attrs):
    """Axes named by begin are Any; the rest keep their dims (TVM's dynamic StridedSliceRel)."""
    op = "dyn.strided_slice"
    data = expect_tensor(arg_types[0], f"{op} data")
    lengths = {int(shape_arg(t, op, what).shape[0]) for t, what in zip(arg_types[1:], ("begin", "end", "strides"))}
    if len(lengths) != 1:
        raise TypeInferenceError(f"{op}: begin, end and strides must have the same length, got {sorted(lengths)}")
    (num,) = lengths
    if num > data.ndim:
        raise TypeInferenceError(f"{op}: {num} begin values for a tensor of rank {data.ndim}")
    return TensorType(any_shape(num) + tuple(data.shape[num:]), data.dtype)


def _strided_slice_static(attrs, values):
    op = "dyn.strided_slice"
    begin, end, strides = (read_ints(v, op, what) for v, what in zip(values[1:], ("begin", "end", "strides")))
    return STRIDED_SLICE, StridedSliceAttrs(begin, end, strides, None, attrs.slice_mode)


def _slice_start(begin, stride, size):
    """numpy's first index of x[begin::stride] over an axis of `size` (begin, stride: run-time values)."""
    start = tir.if_then_else(begin < 0, begin + size, begin)
    zero = tir.const(0, "int32")
    up = IM.clamp(start, zero, size)
    down = IM.clamp(start, tir.const(-1, "int32"), size - 1)
    return tir.if_then_else(stride > 0, up, down)


def _strided_slice_compute(attrs, inputs, out_type):
    x, begin, _, strides = inputs
    dims, oshape = IM.te_dims(x), te_out_shape(out_type, "out")
    num = int(begin.shape[0])
    size_mode = attrs.slice_mode == "size"

    def body(*i):
        index = []
        for k, (ik, d) in enumerate(zip(i, dims)):
            if k >= num:
                index.append(ik)
                continue
            stride = tir.const(1, "int32") if size_mode else load_index(strides, k)
            index.append(_slice_start(load_index(begin, k), stride, IM.dim_expr(d)) + ik * stride)
        return x[tuple(index)]
    return [te.compute(oshape, body, name="T_strided_slice_dynamic", tag="injective")]


STRIDED_SLICE_DYN = defdyn(
    "dyn.strided_slice", inputs=("data", "begin", "end", "strides"), static_inputs=(0,),
    attrs=DynStridedSliceAttrs, to_static=_strided_slice_static, rel=_strided_slice_rel,
    compute=_strided_slice_compute,
    samples=lambda rng: [
        Sample([S.rand(rng, (5, 6)), _i64([1, -5]), _i64([4, 6]), _i64([2, 1])], DynStridedSliceAttrs()),
        Sample([S.rand(rng, (6, 3)), _i64([-1]), _i64([-7]), _i64([-2])], DynStridedSliceAttrs()),
        Sample([S.rand(rng, (4, 5), "int32"), np.array([1, 0], "int32"), np.array([2, -1], "int32"),
                np.array([1, 1], "int32")], DynStridedSliceAttrs("size"))],
    doc="strided_slice(data, begin, end, strides read at run time)")


# --- dyn.full / dyn.zeros / dyn.ones ----------------------------------------------------------------
def _init_dyn_attrs(attrs, values, k):
    return InitOpAttrs(read_ints(values[k], "dyn.full", "shape"), attrs.dtype)


def _full_rel(arg_types, attrs):
    fill = expect_tensor(arg_types[0], "dyn.full fill_value")
    shape = shape_arg(arg_types[1], "dyn.full", "shape")
    if fill.ndim != 0:
        raise TypeInferenceError(f"dyn.full: fill_value must be a scalar, got rank {fill.ndim}")
    return TensorType(any_shape(int(shape.shape[0])), attrs.dtype or fill.dtype)


def _init_rel(op_name):
    def rel(arg_types, attrs):
        shape = shape_arg(arg_types[0], op_name, "shape")
        return TensorType(any_shape(int(shape.shape[0])), attrs.dtype)
    return rel


def _fill_compute(value_of):
    def compute(attrs, inputs, out_type):
        dtype = out_type.dtype
        return [te.compute(te_out_shape(out_type, "out"), lambda *i: value_of(inputs, dtype),
                           name="T_full", tag="elemwise")]
    return compute


FULL_DYN = defdyn(
    "dyn.full", inputs=("fill_value", "shape"), static_inputs=(0,), attrs=InitOpAttrs,
    to_static=lambda attrs, v: (FULL, _init_dyn_attrs(attrs, v, 1)), rel=_full_rel,
    compute=_fill_compute(lambda inputs, dtype: te_cast(inputs[0][()], dtype)),
    samples=lambda rng: [Sample([np.array(2.5, "float32"), _i64([2, 3])], InitOpAttrs((), "float32")),
                         Sample([np.array(7, "int32"), np.array([4], "int32")], InitOpAttrs((), ""))],
    doc="full(fill_value, shape read at run time)")
ZEROS_DYN = defdyn(
    "dyn.zeros", inputs=("shape",), static_inputs=(), attrs=InitOpAttrs,
    to_static=lambda attrs, v: (ZEROS, _init_dyn_attrs(attrs, v, 0)), rel=_init_rel("dyn.zeros"),
    compute=_fill_compute(lambda inputs, dtype: tir.const(0, dtype)),
    samples=lambda rng: [Sample([_i64([2, 3])], InitOpAttrs((), "float32")),
                         Sample([np.array([4], "int32")], InitOpAttrs((), "int32"))],
    doc="zeros(shape read at run time)")
ONES_DYN = defdyn(
    "dyn.ones", inputs=("shape",), static_inputs=(), attrs=InitOpAttrs,
    to_static=lambda attrs, v: (ONES, _init_dyn_attrs(attrs, v, 0)), rel=_init_rel("dyn.ones"),
    compute=_fill_compute(lambda inputs, dtype: tir.const(1, dtype)),
    samples=lambda rng: [Sample([_i64([3, 1, 2])], InitOpAttrs((), "float64")),
                         Sample([np.array([0], "int32")], InitOpAttrs((), "float32"))],
    doc="ones(shape read at run time)")


# --- Python constructors (relay.op.dyn._make in TVM) -------------------------------------------------
def reshape(data, newshape, allowzero=False):
    """dyn.reshape: reshape to a shape known only at run time.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    newshape : relay.Expr
        A 1-D integer tensor, the target shape (relay.reshape's codes 0, -1 and -3 allowed).
    allowzero : bool, optional
        If True, a 0 in `newshape` is a size-zero dimension rather than "copy the input's".
        Defaults to False.

    Returns
    -------
    result : relay.Expr
        The reshaped tensor.
    """
    return RESHAPE_DYN(data, newshape, attrs=DynReshapeAttrs(allowzero))


def broadcast_to(data, shape):
    """dyn.broadcast_to: broadcast to a shape known only at run time.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    shape : relay.Expr
        A 1-D integer tensor, the target shape.

    Returns
    -------
    result : relay.Expr
        The broadcast tensor.
    """
    return BROADCAST_TO_DYN(data, shape)


def tile(data, reps):
    """dyn.tile: numpy.tile with repetitions known only at run time.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    reps : relay.Expr
        A 1-D integer tensor, the number of copies along each axis.

    Returns
    -------
    result : relay.Expr
        The tiled tensor.
    """
    return TILE_DYN(data, reps)


def squeeze(data, axis):
    """dyn.squeeze: remove length-1 axes chosen at run time.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    axis : relay.Expr
        A 1-D integer tensor, the axes to remove (each of length 1).

    Returns
    -------
    result : relay.Expr
        The squeezed tensor.
    """
    return SQUEEZE_DYN(data, axis)


def expand_dims(data, axis, num_newaxis=1):
    """dyn.expand_dims: insert length-1 axes at a position known only at run time.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    axis : relay.Expr
        A 0-d integer tensor, where the new axes go.
    num_newaxis : int, optional
        How many axes to insert. Defaults to 1.

    Returns
    -------
    result : relay.Expr
        The tensor with `num_newaxis` more dimensions.
    """
    return EXPAND_DIMS_DYN(data, axis, attrs=DynExpandDimsAttrs(num_newaxis))


def strided_slice(data, begin, end, strides, slice_mode="end"):
    """dyn.strided_slice: a strided slice whose bounds are known only at run time.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    begin : relay.Expr
        A 1-D integer tensor, the start on each leading axis.
    end : relay.Expr
        A 1-D integer tensor of begin's length, the stop (or the sizes in "size" mode).
    strides : relay.Expr
        A 1-D integer tensor of begin's length, the step on each axis.
    slice_mode : str, optional
        "end" (the default) or "size", as in relay.strided_slice.

    Returns
    -------
    result : relay.Expr
        The slice.
    """
    return STRIDED_SLICE_DYN(data, begin, end, strides, attrs=DynStridedSliceAttrs(slice_mode))


# the shape and dtype of dyn.full, dyn.zeros and dyn.ones (constructor_docs completes their docstrings)
DYN_FILL_PARAMETERS = {**FILL_PARAMETERS, "shape": ("relay.Expr", "A 1-D integer tensor, the shape of the result.")}


@documented(DYN_FILL_PARAMETERS)
def full(fill_value, shape, dtype=""):
    """dyn.full: a tensor filled with one value, of a shape known only at run time.

    Parameters
    ----------
    fill_value : relay.Expr
        The scalar every element takes.
    dtype : str, optional
        The dtype of the result; "" (the default) keeps fill_value's.

    Returns
    -------
    result : relay.Expr
        The filled tensor.
    """
    if not isinstance(fill_value, _expr.Expr):
        fill_value = _expr.const(fill_value, dtype or None)
    return FULL_DYN(fill_value, shape, attrs=InitOpAttrs((), dtype))


@documented(DYN_FILL_PARAMETERS, ("result", "relay.Expr", "The tensor of zeros."))
def zeros(shape, dtype="float32"):
    """dyn.zeros: a tensor of zeros of a shape known only at run time."""
    return ZEROS_DYN(shape, attrs=InitOpAttrs((), dtype))


@documented(DYN_FILL_PARAMETERS, ("result", "relay.Expr", "The tensor of ones."))
def ones(shape, dtype="float32"):
    """dyn.ones: a tensor of ones of a shape known only at run time."""
    return ONES_DYN(shape, attrs=InitOpAttrs((), dtype))


__all__ = ["reshape", "broadcast_to", "tile", "squeeze", "expand_dims", "strided_slice", "full", "zeros", "ones"]
