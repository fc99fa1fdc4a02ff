"""strided_set (TVM v0.18 name): data with the slice data[begin:end:strides] (numpy's rules:
negatives from the end, bounds clamped, negative strides walk backwards) replaced by v. begin,
end and strides are 1-D integer tensors read at run time; axes past their length are taken
whole, and a missing stride is 1. INJECTIVE.

v must have the slice's shape: the reference (debug executor) raises an InputError when it does
not; a compiled kernel cannot raise, so it clamps its reads of v to v's bounds.
"""
import numpy as np

from .. import te, tir
from ..errors import InputError
from ..ir import expr as _expr
from ..ir.dims import is_static
from ..ir.types import TensorType
from . import index_math as IM
from . import samples as S
from .index_rules import expect_int, fail
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor

_BOUNDS = ("begin", "end", "strides")


def _strided_set_rel(arg_types, attrs):
    op = "strided_set"
    data, v = (expect_tensor(t, f"{op} {w}") for t, w in zip(arg_types[:2], ("data", "v")))
    types = tuple(arg_types)
    if v.dtype != data.dtype or v.ndim != data.ndim:
        raise fail(op, f"v must have data's dtype and rank ({data.dtype}, {data.ndim})", *types)
    for t, what in zip(arg_types[2:], _BOUNDS):
        t = expect_tensor(t, f"{op} {what}")
        expect_int(op, t, what, *types)
        if t.ndim != 1 or not is_static(t.shape[0]) or int(t.shape[0]) > data.ndim:
            raise fail(op, f"{what} must be 1-D with a static length <= {data.ndim}", *types)
    return TensorType(data.shape, data.dtype)


def _slices(shape, begin, end, strides):
    out = []
    for a, n in enumerate(shape):
        s = int(strides[a]) if a < len(strides) else 1
        if s == 0:
            raise InputError(f"strided_set: stride 0 on axis {a}; strides must be non-zero")
        b = int(begin[a]) if a < len(begin) else None
        e = int(end[a]) if a < len(end) else None
        out.append(slice(b, e, s))
    return tuple(out)


def _strided_set_ref(x, v, begin, end, strides, attrs):
    out = x.copy()
    index = _slices(x.shape, np.reshape(begin, -1), np.reshape(end, -1), np.reshape(strides, -1))
    want = out[index].shape
    if v.shape != want:
        raise InputError(f"strided_set: v has shape {v.shape} but the slice {index} of data {x.shape} "
                         f"has shape {want}")
    out[index] = v
    return out


def _axis_rule(p, n, b, e, s):
    """(p is in the slice, its position in v) for an axis of size n and bounds b, e, s (int64)."""
    zero, one = tir.const(0, "int64"), tir.const(1, "int64")
    forward = s > zero
    s = te.if_then_else(s == zero, one, s)

    def norm(value, lo, hi):
        value = te.if_then_else(value < zero, value + n, value)
        return tir.min(tir.max(value, lo), hi)
    start = te.if_then_else(forward, norm(b, zero, n), norm(b, -one, n - one))
    stop = te.if_then_else(forward, norm(e, zero, n), norm(e, -one, n - one))
    offset = te.if_then_else(forward, p - start, start - p)
    step = te.if_then_else(forward, s, zero - s)
    inside = te.if_then_else(forward, (p >= start) & (p < stop), (p <= start) & (p > stop))
    return inside & (tir.floormod(offset, step) == zero), tir.floordiv(offset, step)


def _strided_set_compute(attrs, inputs, out_type):
    """An element inside the slice on every axis reads v at its slice position, others data."""
    x, v, begin, end, strides = inputs
    dims, vdims = IM.te_dims(x), IM.te_dims(v)
    lengths = [IM.te_dims(t)[0] for t in (begin, end, strides)]

    def bound(t, length, a, default):
        return t[a].astype("int64") if a < length else default

    def body(*p):
        inside, position = tir.const(True, "bool"), []
        for a, (i, n, vn) in enumerate(zip(p, dims, vdims)):
            n64 = IM.dim_expr(n).astype("int64")
            s = bound(strides, lengths[2], a, tir.const(1, "int64"))
            b = bound(begin, lengths[0], a, te.if_then_else(s > 0, tir.const(0, "int64"), n64 - 1))
            e = bound(end, lengths[1], a, te.if_then_else(s > 0, n64, tir.const(-1, "int64") - n64))
            ok, j = _axis_rule(i.astype("int64"), n64, b, e, s)
            inside = inside & ok
            vmax = IM.dim_expr(vn).astype("int64") - 1
            position.append(tir.min(tir.max(j, tir.const(0, "int64")), tir.max(vmax, 0)).astype("int32"))
        return te.if_then_else(inside, v[tuple(position)], x[p])
    return [IM.compute(STRIDED_SET, dims, body)]


def _i32(*values):
    return np.array(values, "int32")


STRIDED_SET = defop(
    "strided_set", inputs=("data", "v", "begin", "end", "strides"), rel=_strided_set_rel,
    pattern=OpPattern.INJECTIVE, ref=_strided_set_ref, compute=_strided_set_compute, level=4,
    samples=lambda rng: [
        Sample([S.rand(rng, (3, 4)), S.rand(rng, (2, 2)), _i32(0, 1), _i32(2, 4), _i32(1, 2)]),
        Sample([S.rand(rng, (5,), "int32"), S.rand(rng, (2,), "int32"), _i32(-1), _i32(-6), _i32(-3)],
               None, "negative stride"),
        Sample([S.rand(rng, (3, 4), "float64"), S.rand(rng, (1, 4), "float64"), np.array([1], "int64"),
                np.array([2], "int64"), np.array([1], "int64")], None, "fewer bounds than axes"),
        Sample([S.rand(rng, (4,)), S.rand(rng, (4,)), _i32(-100), _i32(100), _i32(1)], None, "clamped bounds")],
    doc="data with data[begin:end:strides] replaced by v")


def strided_set(data, v, begin, end, strides=None):
    """relay.strided_set: data with the slice [begin:end:strides] set to v (bounds as lists or
    1-D integer tensor expressions).

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    v : relay.Expr
        The values written, of the slice's shape.
    begin : list of int or relay.Expr
        The first index of the slice along each leading axis.
    end : list of int or relay.Expr
        One past the last index of the slice along each leading axis.
    strides : None or list of int or relay.Expr, optional
        The step along each leading axis; None means 1 everywhere. Defaults to None.
    Returns
    -------
    result : relay.Expr
        The tensor, of data's type.
    """
    def tensor(value):
        return value if isinstance(value, _expr.Expr) else _expr.const(np.array(list(value), "int32"))
    strides = strides if strides is not None else [1]
    return STRIDED_SET(data, v, tensor(begin), tensor(end), tensor(strides))


__all__ = ["strided_set"]
