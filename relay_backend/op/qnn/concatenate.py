"""qnn.concatenate (TVM v0.18 src/relay/qnn/op/concatenate.cc): join quantized tensors that each
have their own (scale, zero point) along `axis`, each requantized to the output's parameters
first (in its own dtype, saturating), so the result shares one scale and zero point.

The inputs are a tuple of tensors, a tuple of their (scalar) scales, a tuple of their (scalar)
zero points, and the output's scale and zero point.
"""
import numpy as np

from ...ir.expr import Tuple, TupleGetItem
from ...ir.types import TupleType
from .. import transform as _transform
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop, register_op_attr
from ..transform import CONCATENATE, AxisAttrs
from . import _common as Q
from .qnn_docs import QNN_PARAMETERS
from .quantize import CANONICALIZE, requantize_expr, requantize_values

OP = "qnn.concatenate"


def _params_tuple(t, what, dtype, count):
    if not isinstance(t, TupleType) or len(t.fields) != count:
        raise Q.C.rel_error(OP, f"{what} must be a tuple of {count} values (one per input), got {t}")
    for f in t.fields:
        Q.check_qparam(OP, f, what, dtype)


def _concatenate_rel(arg_types, attrs):
    data = arg_types[0]
    if not isinstance(data, TupleType):
        raise Q.C.rel_error(OP, f"data must be a tuple of tensors, got {data}")
    for i, f in enumerate(data.fields):
        Q.check_data(OP, f, f"data[{i}]", Q.STORAGE_DTYPES)
    _params_tuple(arg_types[1], "input_scales", "float32", len(data.fields))
    _params_tuple(arg_types[2], "input_zero_points", "int32", len(data.fields))
    Q.check_qparam(OP, arg_types[3], "output_scale", "float32")
    Q.check_qparam(OP, arg_types[4], "output_zero_point", "int32")
    return CONCATENATE.rel([data], attrs)


def _concatenate_ref(data, scales, zps, out_scale, out_zp, attrs):
    parts = [requantize_values(x, s, z, out_scale, out_zp, -1, "UPWARD", "int64", str(x.dtype))
             for x, s, z in zip(data, scales, zps)]
    return np.concatenate(parts, axis=attrs.axis)


def _fields(expr, count):
    if isinstance(expr, Tuple):
        return list(expr.fields)
    return [TupleGetItem(expr, i) for i in range(count)]


def _concatenate_canonical(attrs, args, types):
    data, scales, zps, out_scale, out_zp = args
    count = len(types[0].fields)
    parts = []
    for x, xt, s, st, z, zt in zip(_fields(data, count), types[0].fields, _fields(scales, count),
                                   types[1].fields, _fields(zps, count), types[2].fields):
        if Q.same_constant(s, out_scale) and Q.same_constant(z, out_zp):
            parts.append(x)
        else:
            parts.append(requantize_expr(x, xt.ndim, (s, z, out_scale, out_zp), (st, zt, types[3], types[4]),
                                         out_dtype=xt.dtype))
    return _transform.concatenate(parts, attrs.axis)


def _samples(rng):
    def q(shape, dtype="int8"):
        return Q.random_q(rng, shape, dtype)

    def s():
        return Q.random_scale(rng)

    def z(base=0):
        return Q.random_zp(rng, "uint8" if base else "int8", spread=5)
    return [Sample([[q((2, 3)), q((2, 2))], [s(), s()], [z(), z()], s(), z()], AxisAttrs(1)),
            Sample([[q((1, 4), "uint8"), q((2, 4), "uint8"), q((1, 4), "uint8")], [s(), s(), s()],
                    [z(128), z(128), z(128)], s(), z(128)], AxisAttrs(-2), "three uint8 inputs, negative axis"),
            Sample([[q((3,)), q((0,))], [np.float32(0.05)] * 2, [np.int32(1)] * 2, np.float32(0.05), np.int32(1)],
                   AxisAttrs(0), "same parameters, an empty input")]


CONCATENATE_Q = defop(OP, inputs=("data", "input_scales", "input_zero_points", "output_scale", "output_zero_point"),
                      attrs=AxisAttrs, rel=_concatenate_rel, pattern=OpPattern.INJECTIVE, ref=_concatenate_ref,
                      level=11, samples=_samples, doc="inputs requantized to one (scale, zero point), joined")
register_op_attr(OP, CANONICALIZE, _concatenate_canonical)


@documented(QNN_PARAMETERS, ("result", "relay.Expr", "The joined tensor in the output's quantization."))
def concatenate(data, input_scales, input_zero_points, output_scale, output_zero_point, axis):
    """relay.qnn.op.concatenate: join quantized tensors (lists or tuple expressions of the
    tensors, their scales, their zero points) along `axis` in the output's parameters.

    Parameters
    ----------
    data : list of relay.Expr or relay.Expr
        The quantized tensors, of one dtype, as a list or a tuple expression.
    input_scales : list of relay.Expr or relay.Expr
        The float32 scalar scale of each tensor, in the order of `data`.
    input_zero_points : list of relay.Expr or relay.Expr
        The int32 scalar zero point of each tensor, in the order of `data`.
    axis : int
        The axis to join along; negative values count from the last axis.
    """
    return CONCATENATE_Q(*(Tuple(list(v)) if isinstance(v, (list, tuple)) else v
                           for v in (data, input_scales, input_zero_points)),
                         output_scale, output_zero_point, attrs=AxisAttrs(axis))


__all__ = ["concatenate"]
