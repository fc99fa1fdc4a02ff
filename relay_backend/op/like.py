"""Shape-from-another-tensor operators (TVM v0.18 names): reshape_like, broadcast_to_like,
collapse_sum_like, collapse_sum_to, full_like and slice_like.

Each takes its target shape from a second input's type (collapse_sum_to: from a constant shape
tensor, kept in its attrs as TVM's InitOpAttrs), so only that input's type matters, never its
values. Patterns as TVM's: reshape_like INJECTIVE (a reshape), broadcast_to_like BROADCAST,
collapse_sum_* COMM_REDUCE (the gradient of a broadcast: summed over the broadcast axes, float16
added up in float32), full_like ELEMWISE, slice_like INJECTIVE.
"""
import dataclasses

import numpy as np

from .. import te
from ..ir import expr as _expr
from ..ir.attrs import Attrs, as_int_tuple
from ..ir.dims import dim_to_str, is_static, shape_to_str
from ..ir.shape_math import broadcast_shapes, dims_differ, prod
from ..ir.types import TensorType
from . import index_math as IM
from . import samples as S
from .accumulation import acc_dtype
from .compute_common import cast as te_cast
from .constructor_docs import documented
from .creation import InitOpAttrs
from .index_rules import fail
from .pattern import OpPattern
from .registry import Sample, defop, get
from .relations import expect_tensor
from .static_args import static_ints


def _two(op_name, arg_types, second="like"):
    return (expect_tensor(arg_types[0], f"{op_name} data"), expect_tensor(arg_types[1], f"{op_name} {second}"))


def _types_of(*arrays):
    return [TensorType(a.shape, str(a.dtype)) for a in arrays]


# --- reshape_like -------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ReshapeLikeAttrs(Attrs):
    lhs_begin: int = 0
    lhs_end: int = None
    rhs_begin: int = 0
    rhs_end: int = None

    def __post_init__(self):
        for name in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, int(value))


def _span(begin, end, ndim):
    """[begin, end) over `ndim` dims (negatives from the end, end None: to the end)."""
    begin = begin + ndim if begin < 0 else begin
    end = ndim if end is None else end + ndim if end < 0 else end
    return begin, end


def _reshape_like_rel(arg_types, attrs):
    op = "reshape_like"
    data, like = _two(op, arg_types, "shape_like")
    lb, le = _span(attrs.lhs_begin, attrs.lhs_end, data.ndim)
    rb, re_ = _span(attrs.rhs_begin, attrs.rhs_end, like.ndim)
    if not (0 <= lb <= le <= data.ndim and 0 <= rb <= re_ <= like.ndim):
        raise fail(op, f"the spans [{attrs.lhs_begin}, {attrs.lhs_end}) of data and [{attrs.rhs_begin}, "
                       f"{attrs.rhs_end}) of shape_like are out of range or empty-reversed", data, like)
    shape = tuple(data.shape[:lb]) + tuple(like.shape[rb:re_]) + tuple(data.shape[le:])
    have, want = prod(data.shape), prod(shape)
    if is_static(have) and is_static(want) and int(have) != int(want):
        raise fail(op, f"data has {int(have)} elements but the shape {shape_to_str(shape)} holds {int(want)}",
                   data, like)
    return TensorType(shape, data.dtype)


def _reshape_like_compute(attrs, inputs, out_type):
    """A row-major copy into the output shape (a reshape moves no element)."""
    x, like = inputs
    ishape, lshape = IM.te_dims(x), IM.te_dims(like)
    lb, le = _span(attrs.lhs_begin, attrs.lhs_end, x.ndim)
    rb, re_ = _span(attrs.rhs_begin, attrs.rhs_end, like.ndim)
    oshape = ishape[:lb] + lshape[rb:re_] + ishape[le:]
    return [IM.compute(RESHAPE_LIKE, oshape, lambda *i: x[tuple(IM.unravel(IM.ravel(i, oshape), ishape))])]


RESHAPE_LIKE = defop(
    "reshape_like", inputs=("data", "shape_like"), attrs=ReshapeLikeAttrs, rel=_reshape_like_rel,
    pattern=OpPattern.INJECTIVE, compute=_reshape_like_compute, is_reshape=True, level=10,
    ref=lambda x, like, a: x.reshape(_reshape_like_rel(_types_of(x, like), a).shape),
    samples=lambda rng: [
        Sample([S.rand(rng, (2, 6)), S.rand(rng, (3, 4), "int32")], ReshapeLikeAttrs()),
        Sample([S.rand(rng, (1, 2, 3, 4), "float64"), S.rand(rng, (6, 2, 2, 3))],
               ReshapeLikeAttrs(1, None, 0, 3), "TVM's documented example"),
        Sample([S.rand(rng, (4, 6)), S.rand(rng, (2, 2, 5))], ReshapeLikeAttrs(0, -1, 0, -1), "negative ends"),
        Sample([S.rand(rng, (0, 3)), S.rand(rng, (3, 0))], ReshapeLikeAttrs(), "empty")],
    doc="data reshaped to shape_like's dims [rhs_begin, rhs_end) in place of its own [lhs_begin, lhs_end)")


# --- broadcast_to_like ----------------------------------------------------------------------------------
def _broadcast_to_like_rel(arg_types, attrs):
    op = "broadcast_to_like"
    data, like = _two(op, arg_types, "broadcast_type")
    out, _ = broadcast_shapes(data.shape, like.shape)
    if out is None or len(out) != like.ndim or any(dims_differ(o, t) for o, t in zip(out, like.shape)):
        raise fail(op, f"data of shape {shape_to_str(data.shape)} does not broadcast to "
                       f"{shape_to_str(like.shape)}", data, like)
    return TensorType(like.shape, data.dtype)


def _broadcast_to_like_compute(attrs, inputs, out_type):
    x, like = inputs
    oshape = IM.te_dims(like)
    lead = len(oshape) - x.ndim
    return [IM.compute(BROADCAST_TO_LIKE, oshape, lambda *i: x[IM.broadcast_index(i[lead:], IM.te_dims(x))])]


BROADCAST_TO_LIKE = defop(
    "broadcast_to_like", inputs=("data", "broadcast_type"), rel=_broadcast_to_like_rel,
    pattern=OpPattern.BROADCAST, compute=_broadcast_to_like_compute, level=10,
    ref=lambda x, like, a: np.array(np.broadcast_to(x, like.shape)),
    samples=lambda rng: [Sample([S.rand(rng, (3,)), S.rand(rng, (2, 3))]),
                         Sample([S.rand(rng, (2, 1), "int32"), S.rand(rng, (4, 2, 5), "int32")]),
                         Sample([S.rand(rng, (), "float64"), S.rand(rng, (2, 2))], None, "other dtype"),
                         Sample([S.rand(rng, (1, 3)), S.rand(rng, (0, 3))], None, "to empty")],
    doc="data broadcast to the shape of broadcast_type")


# --- collapse_sum_like / collapse_sum_to ------------------------------------------------------------------
def collapse_axes(op_name, data, shape, *types):
    """(leading axes, stretched axes) of data that a broadcast to data's shape from `shape`
    added or stretched: what collapsing sums over."""
    lead = data.ndim - len(shape)
    back, _ = broadcast_shapes(data.shape, shape)
    if lead < 0 or back is None or any(dims_differ(b, d) for b, d in zip(back, data.shape)):
        raise fail(op_name, f"{shape_to_str(shape)} does not broadcast to data's shape "
                            f"{shape_to_str(data.shape)}, so data cannot be collapsed to it", *types)
    stretched = tuple(lead + k for k, d in enumerate(shape)
                      if is_static(d) and int(d) == 1 and not (is_static(data.shape[lead + k])
                                                               and int(data.shape[lead + k]) == 1))
    return tuple(range(lead)), stretched


def _collapse_like_rel(arg_types, attrs):
    data, like = _two("collapse_sum_like", arg_types, "collapse_type")
    collapse_axes("collapse_sum_like", data, like.shape, data, like)
    return TensorType(like.shape, data.dtype)


def _collapse_to_rel(arg_types, attrs):
    op = "collapse_sum_to"
    data, shape = _two(op, arg_types, "shape")
    if shape.ndim != 1 or not is_static(shape.shape[0]) or np.dtype(shape.dtype).kind not in "iu":
        raise fail(op, "shape must be a 1-D integer tensor of static length", data, shape)
    if len(attrs.shape) != int(shape.shape[0]):
        raise fail(op, f"the shape attribute {attrs.shape} must be the value of the shape input "
                       f"(length {dim_to_str(shape.shape[0])}); build the call with relay.collapse_sum_to",
                   data, shape)
    collapse_axes(op, data, attrs.shape, data, shape)
    return TensorType(attrs.shape, data.dtype)


def _collapse_ref(x, target_shape):
    lead, stretched = collapse_axes("collapse_sum", TensorType(x.shape, str(x.dtype)), tuple(target_shape))
    acc = acc_dtype(str(x.dtype))
    total = np.sum(x.astype(acc), axis=lead + stretched, keepdims=True, dtype=acc)
    return total.reshape(target_shape).astype(x.dtype)


def _collapse_compute(op_name, target_dims):
    """The compute of a collapse op whose target dims are `target_dims(attrs, inputs)`."""
    def compute(attrs, inputs, out_type):
        """out[i] = sum of data over the leading axes and, where out's dim is 1 and data's is
        not, over that axis too (added up in acc_dtype, then cast)."""
        op, x = get(op_name), inputs[0]
        oshape = target_dims(attrs, inputs)
        lead, stretched = collapse_axes(op_name, IM.probe_type(x), IM.probe_type(te.placeholder(oshape)).shape)
        dims = IM.te_dims(x)
        raxes = {a: te.reduce_axis((0, dims[a]), f"k{a}") for a in lead + stretched}
        acc = acc_dtype(x.dtype)

        def body(*i):
            index = tuple(raxes[a].var if a in raxes else i[a - len(lead)] for a in range(x.ndim))
            value = te_cast(x[index], acc)
            return te.sum(value, axis=list(raxes.values())) if raxes else value
        total = IM.compute(op, oshape, body, suffix="_sum" if acc != x.dtype else "")
        if total.dtype == x.dtype:
            return [total]
        return [IM.compute(op, oshape, lambda *i: te_cast(total[i], x.dtype))]
    return compute


def _collapse_samples(rng):
    many = S.FLOAT16_REDUCTION_TERMS
    return [Sample([S.rand(rng, (2, 3, 4)), S.rand(rng, (3, 1))]),
            Sample([S.rand(rng, (4, 5), "int32"), S.rand(rng, (5,), "int32")]),
            Sample([S.rand(rng, (2, 3), "float64"), S.rand(rng, (2, 3), "float64")], None, "nothing to collapse"),
            Sample([S.rand(rng, (many, 2), "float16", 0, 1), S.rand(rng, (1, 2), "float16")], None,
                   "float16 sums in float32"),
            Sample([S.rand(rng, (0, 3)), S.rand(rng, (3,))], None, "empty sum")]


COLLAPSE_SUM_LIKE = defop(
    "collapse_sum_like", inputs=("data", "collapse_type"), rel=_collapse_like_rel,
    pattern=OpPattern.COMM_REDUCE, level=10, ref=lambda x, like, a: _collapse_ref(x, like.shape),
    compute=_collapse_compute("collapse_sum_like", lambda attrs, inputs: IM.te_dims(inputs[1])),
    samples=_collapse_samples, doc="data summed over the axes a broadcast from collapse_type's shape added")


def _shape_tensor(shape):
    return np.array(shape, "int32")


COLLAPSE_SUM_TO = defop(
    "collapse_sum_to", inputs=("data", "shape"), attrs=InitOpAttrs, rel=_collapse_to_rel,
    pattern=OpPattern.COMM_REDUCE, level=4, ref=lambda x, shape, a: _collapse_ref(x, a.shape),
    compute=_collapse_compute("collapse_sum_to", lambda attrs, inputs: attrs.shape),
    samples=lambda rng: [Sample([S.rand(rng, (2, 3, 4)), _shape_tensor((3, 1))], InitOpAttrs((3, 1), "")),
                         Sample([S.rand(rng, (4, 2), "int64"), _shape_tensor((2,))], InitOpAttrs((2,), "")),
                         Sample([S.rand(rng, (3, 2), "float16"), _shape_tensor(())], InitOpAttrs((), ""),
                                "to a scalar"),
                         Sample([S.rand(rng, (S.FLOAT16_REDUCTION_TERMS, 1), "float16", 0, 1), _shape_tensor((1,))],
                                InitOpAttrs((1,), ""), "float16 sums in float32")],
    doc="data summed over the axes a broadcast from `shape` added")


# --- full_like --------------------------------------------------------------------------------------------
def _full_like_rel(arg_types, attrs):
    data, fill = _two("full_like", arg_types, "fill_value")
    if fill.ndim != 0:
        raise fail("full_like", f"fill_value must be a scalar (0-d tensor), got rank {fill.ndim}", data, fill)
    return TensorType(data.shape, data.dtype)


def _full_like_compute(attrs, inputs, out_type):
    x, fill = inputs
    value = te_cast(fill[()], x.dtype)
    return [IM.compute(FULL_LIKE, IM.te_dims(x), lambda *i: value)]


FULL_LIKE = defop(
    "full_like", inputs=("data", "fill_value"), rel=_full_like_rel, pattern=OpPattern.ELEMWISE,
    compute=_full_like_compute, level=3,
    ref=lambda x, fill, a: np.full(x.shape, np.asarray(fill).astype(x.dtype), x.dtype),
    samples=lambda rng: [Sample([S.rand(rng, (2, 3)), np.array(1.5, "float32")]),
                         Sample([S.rand(rng, (4,), "int32"), np.array(-2.7, "float64")], None, "cast to int"),
                         Sample([S.rand(rng, (), "float64"), np.array(3, "int64")]),
                         Sample([np.zeros((0, 2), "float32"), np.array(1, "float32")], None, "empty")],
    doc="a tensor of data's shape and dtype filled with fill_value")


# --- slice_like --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SliceLikeAttrs(Attrs):
    axes: tuple = None

    def __post_init__(self):
        object.__setattr__(self, "axes", as_int_tuple(self.axes, name="axes"))


def _slice_like_rel(arg_types, attrs):
    op = "slice_like"
    data, like = _two(op, arg_types, "shape_like")
    if attrs.axes is not None and not attrs.axes:
        raise fail(op, "axes cannot be empty (None slices every axis shape_like has)", data, like)
    axes = range(min(data.ndim, like.ndim)) if attrs.axes is None else attrs.axes
    shape = list(data.shape)
    for a in axes:
        k = a + data.ndim if a < 0 else a
        if not 0 <= k < data.ndim or k >= like.ndim:
            raise fail(op, f"axis {a} is out of range for data of rank {data.ndim} and shape_like of rank "
                           f"{like.ndim}", data, like)
        d, t = data.shape[k], like.shape[k]
        if is_static(d) and is_static(t) and int(t) > int(d):
            raise fail(op, f"axis {k}: shape_like's size {int(t)} exceeds data's {int(d)}", data, like)
        shape[k] = t
    return TensorType(shape, data.dtype)


def _slice_like_compute(attrs, inputs, out_type):
    """out[i] = data[i] over the sliced shape (every slice starts at 0)."""
    x, like = inputs
    dims, ldims = list(IM.te_dims(x)), IM.te_dims(like)
    axes = range(min(x.ndim, like.ndim)) if attrs.axes is None else attrs.axes
    for a in axes:
        dims[a % x.ndim] = ldims[a % x.ndim]
    return [IM.compute(SLICE_LIKE, dims, lambda *i: x[i])]


def _slice_like_ref(x, like, attrs):
    shape = _slice_like_rel(_types_of(x, like), attrs).shape
    return np.ascontiguousarray(x[tuple(slice(0, int(d)) for d in shape)])


SLICE_LIKE = defop(
    "slice_like", inputs=("data", "shape_like"), attrs=SliceLikeAttrs, rel=_slice_like_rel,
    pattern=OpPattern.INJECTIVE, compute=_slice_like_compute, ref=_slice_like_ref, level=10,
    samples=lambda rng: [Sample([S.rand(rng, (4, 5)), S.rand(rng, (2, 3))], SliceLikeAttrs()),
                         Sample([S.rand(rng, (3, 4, 5), "int32"), S.rand(rng, (1, 2))], SliceLikeAttrs(),
                                "shape_like of lower rank"),
                         Sample([S.rand(rng, (3, 4, 5), "float64"), S.rand(rng, (2, 4, 1))], SliceLikeAttrs((-1, 0))),
                         Sample([S.rand(rng, (2, 3)), S.rand(rng, (0, 3))], SliceLikeAttrs((0,)), "empty")],
    doc="data sliced from 0 to shape_like's size on the given axes (all that shape_like has)")


# --- Python constructors with tvm.relay's names --------------------------------------------------------------
# The parameters the *_like constructors share (constructor_docs completes their docstrings)
LIKE_PARAMETERS = {
    "data": ("relay.Expr", "The input tensor."),
    "shape_like": ("relay.Expr", "The tensor whose shape is copied; its values are not read."),
}


@documented(LIKE_PARAMETERS)
def reshape_like(data, shape_like, lhs_begin=0, lhs_end=None, rhs_begin=0, rhs_end=None):
    """relay.reshape_like: data's dims [lhs_begin, lhs_end) replaced by shape_like's
    [rhs_begin, rhs_end) (the element count must stay the same).

    Parameters
    ----------
    lhs_begin : int, optional
        The first of data's dims replaced. Defaults to 0.
    lhs_end : None or int, optional
        One past the last of data's dims replaced; None means data's rank. Defaults to None.
    rhs_begin : int, optional
        The first of shape_like's dims copied. Defaults to 0.
    rhs_end : None or int, optional
        One past the last of shape_like's dims copied; None means its rank. Defaults to None.
    """
    return RESHAPE_LIKE(data, shape_like, attrs=ReshapeLikeAttrs(lhs_begin, lhs_end, rhs_begin, rhs_end))


@documented(LIKE_PARAMETERS)
def broadcast_to_like(data, broadcast_type):
    """relay.broadcast_to_like: data broadcast to broadcast_type's shape.

    Parameters
    ----------
    broadcast_type : relay.Expr
        The tensor whose shape `data` is broadcast to; its values are not read.
    """
    return BROADCAST_TO_LIKE(data, broadcast_type)


@documented(LIKE_PARAMETERS)
def collapse_sum_like(data, collapse_type):
    """relay.collapse_sum_like: data summed down to collapse_type's shape (undoes a broadcast).

    Parameters
    ----------
    collapse_type : relay.Expr
        The tensor whose shape `data` is summed down to (a shape that broadcasts to data's);
        its values are not read.
    """
    return COLLAPSE_SUM_LIKE(data, collapse_type)


@documented(LIKE_PARAMETERS)
def collapse_sum_to(data, shape):
    """relay.collapse_sum_to: data summed down to `shape` (ints or a constant shape tensor).

    Parameters
    ----------
    shape : int or tuple of int or relay.Constant
        The target shape, one that broadcasts to data's.
    """
    shape = static_ints(shape, "collapse_sum_to", "shape") if not isinstance(shape, (int, np.integer)) \
        else (int(shape),)
    return COLLAPSE_SUM_TO(data, _expr.const(np.array(shape, "int32")), attrs=InitOpAttrs(shape, ""))


@documented(LIKE_PARAMETERS)
def full_like(data, fill_value):
    """relay.full_like: a tensor like data filled with the scalar fill_value.

    Parameters
    ----------
    data : relay.Expr
        The tensor whose shape and dtype the result takes; its values are not read.
    fill_value : relay.Expr or scalar
        The value of every element.
    """
    if not isinstance(fill_value, _expr.Expr):
        fill_value = _expr.const(fill_value)
    return FULL_LIKE(data, fill_value)


@documented(LIKE_PARAMETERS)
def slice_like(data, shape_like, axes=None):
    """relay.slice_like: data sliced to shape_like's sizes on `axes` (None: every axis both have).

    Parameters
    ----------
    axes : None or tuple of int, optional
        The axes sliced (each from 0 to shape_like's length there); None slices every axis the
        two tensors both have. Defaults to None.
    """
    return SLICE_LIKE(data, shape_like, attrs=SliceLikeAttrs(axes))


__all__ = ["reshape_like", "broadcast_to_like", "collapse_sum_like", "collapse_sum_to", "full_like", "slice_like"]
