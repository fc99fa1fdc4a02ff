"""qnn.add, qnn.subtract and qnn.mul (TVM v0.18 src/relay/qnn/op/add.cc, subtract.cc, mul.cc):
broadcasting arithmetic on two quantized tensors with their own (scale, zero point), producing
the output's (scale, zero point) in the lhs dtype.

    add:      requant(a -> out) + requant(b -> out) - zp_out          (each requant to int32)
    subtract: requant(a -> out) - requant(b -> out) + zp_out
    mul:      requant((a - zp_a) * (b - zp_b), scale s_a * s_b (float32), zero point 0 -> out)

requant is the fixed-point requantize (UPWARD ties, int64 compute), then the sum is saturated to
the dtype. The lhs (rhs) parameters are per-tensor or per-channel along lhs_axis (rhs_axis);
the output's are per-tensor.
"""
import dataclasses

import numpy as np

from ...ir.attrs import Attrs
from ...ir.types import TensorType
from .. import tensor as _t
from ..constructor_docs import constructor_doc
from ..pattern import OpPattern
from ..registry import Sample, defop, register_op_attr
from ..relations import broadcast_shape
from . import _common as Q
from .qnn_docs import QNN_PARAMETERS
from .quantize import CANONICALIZE, rescale_to_expr, rescale_values, scale_ratio, scale_ratio_expr

BINARY_DTYPES = ("int8", "uint8", "int16", "int32")
INPUTS = ("lhs", "rhs", "lhs_scale", "lhs_zero_point", "rhs_scale", "rhs_zero_point", "output_scale",
          "output_zero_point")


@dataclasses.dataclass(frozen=True)
class BroadcastAttrs(Attrs):
    lhs_axis: int = -1
    rhs_axis: int = -1

    def __post_init__(self):
        object.__setattr__(self, "lhs_axis", int(self.lhs_axis))
        object.__setattr__(self, "rhs_axis", int(self.rhs_axis))


def _binary_rel(op_name):
    def rel(arg_types, attrs):
        lhs = Q.check_data(op_name, arg_types[0], "lhs", BINARY_DTYPES)
        rhs = Q.check_data(op_name, arg_types[1], "rhs", BINARY_DTYPES)
        if lhs.dtype != rhs.dtype:
            raise Q.C.rel_error(op_name, f"lhs and rhs must have the same dtype, got {lhs.dtype} and "
                                         f"{rhs.dtype}", lhs=lhs, rhs=rhs)
        _, lch = Q.axis_channels(op_name, lhs, attrs.lhs_axis, lhs=lhs)
        _, rch = Q.axis_channels(op_name, rhs, attrs.rhs_axis, rhs=rhs)
        for i, (what, dtype, ch) in enumerate((("lhs_scale", "float32", lch), ("lhs_zero_point", "int32", lch),
                                               ("rhs_scale", "float32", rch), ("rhs_zero_point", "int32", rch),
                                               ("output_scale", "float32", None),
                                               ("output_zero_point", "int32", None))):
            Q.check_qparam(op_name, arg_types[i + 2], what, dtype, ch)
        return TensorType(broadcast_shape(lhs.shape, rhs.shape, lhs, rhs), lhs.dtype)
    return rel


def _np_params(lhs, rhs, params, attrs):
    """(lhs scale, lhs zp, rhs scale, rhs zp, out scale, out zp) shaped to broadcast against
    lhs / rhs (and the output)."""
    ls, lz, rs, rz, os_, oz = params
    nl, nr = lhs.ndim, rhs.ndim
    return (Q.np_param(ls, nl, attrs.lhs_axis), Q.np_param(lz, nl, attrs.lhs_axis).astype("int32"),
            Q.np_param(rs, nr, attrs.rhs_axis), Q.np_param(rz, nr, attrs.rhs_axis).astype("int32"),
            np.asarray(os_).reshape(()), np.asarray(oz).reshape(()).astype("int32"))


def _to_output(x, scale, zp, out_scale, out_zp):
    """x (its own parameters) requantized to the output's, as int32."""
    with np.errstate(over="ignore"):
        shifted = x.astype("int32") - zp
    return rescale_values(shifted, scale_ratio(scale, out_scale), out_zp, out_dtype="int32")


def _add_sub_ref(sign):
    def ref(lhs, rhs, *rest):
        *params, attrs = rest
        ls, lz, rs, rz, os_, oz = _np_params(lhs, rhs, params, attrs)
        a = _to_output(lhs, ls, lz, os_, oz)
        b = _to_output(rhs, rs, rz, os_, oz)
        with np.errstate(over="ignore"):
            out = a + b - oz if sign > 0 else a - b + oz
        return np.clip(out, *Q.qrange(lhs.dtype)).astype(lhs.dtype)
    return ref


def _mul_ref(lhs, rhs, *rest):
    *params, attrs = rest
    ls, lz, rs, rz, os_, oz = _np_params(lhs, rhs, params, attrs)
    with np.errstate(over="ignore"):
        prod = (lhs.astype("int32") - lz) * (rhs.astype("int32") - rz)
    new_scale = ls.astype("float32") * rs.astype("float32")
    return rescale_values(prod, scale_ratio(new_scale, os_), oz, out_dtype=str(lhs.dtype))


def _shaped(args, types, attrs):
    """The parameter expressions shaped like _np_params, and the lhs / rhs ranks."""
    nl, nr = types[0].ndim, types[1].ndim
    axes = (attrs.lhs_axis, attrs.lhs_axis, attrs.rhs_axis, attrs.rhs_axis, -1, -1)
    ranks = (nl, nl, nr, nr, 0, 0)
    return [Q.param_expr(p, t, n, ax) for p, t, n, ax in zip(args[2:], types[2:8], ranks, axes)]


def _to_output_expr(x, scale, zp, out_scale, out_zp):
    shifted = _t.cast(x, "int32")
    if Q.same_constant(scale, out_scale) and Q.same_constant(zp, out_zp):
        return shifted                          # TVM's RequantizeOrUpcast: only the cast
    if not Q.is_const_scalar(zp, 0):
        shifted = _t.subtract(shifted, zp)
    return rescale_to_expr(shifted, scale_ratio_expr(scale, out_scale), out_zp, out_dtype="int32")


def _saturate(x, dtype):
    return _t.cast(_t.clip(x, *Q.qrange(dtype)), dtype)


def _add_sub_canonical(sign):
    def canonical(attrs, args, types):
        ls, lz, rs, rz, os_, oz = _shaped(args, types, attrs)
        a = _to_output_expr(args[0], ls, lz, os_, oz)
        b = _to_output_expr(args[1], rs, rz, os_, oz)
        out = _t.add(a, b) if sign > 0 else _t.subtract(a, b)
        if not Q.is_const_scalar(oz, 0):
            out = _t.subtract(out, oz) if sign > 0 else _t.add(out, oz)
        return _saturate(out, types[0].dtype)
    return canonical


def _mul_canonical(attrs, args, types):
    ls, lz, rs, rz, os_, oz = _shaped(args, types, attrs)
    a, b = _t.cast(args[0], "int32"), _t.cast(args[1], "int32")
    if not Q.is_const_scalar(lz, 0):
        a = _t.subtract(a, lz)
    if not Q.is_const_scalar(rz, 0):
        b = _t.subtract(b, rz)
    cl, cr = Q.constant_value(ls), Q.constant_value(rs)
    if cl is not None and cr is not None:
        new_scale = Q.const_of(cl.astype("float32") * cr.astype("float32"))
    else:
        new_scale = _t.multiply(ls, rs)
    return rescale_to_expr(_t.multiply(a, b), scale_ratio_expr(new_scale, os_), oz, out_dtype=types[0].dtype)


def _samples(rng):
    def q(shape, dtype="int8"):
        return Q.random_q(rng, shape, dtype)

    def s():
        return Q.random_scale(rng)

    def z(dtype="int8"):
        return Q.random_zp(rng, dtype)
    return [Sample([q((2, 3)), q((2, 3)), s(), z(), s(), z(), s(), z()], BroadcastAttrs()),
            Sample([q((2, 1, 4), "uint8"), q((3, 1), "uint8"), s(), z("uint8"), s(), z("uint8"), s(), z("uint8")],
                   BroadcastAttrs(), "broadcasting, uint8"),
            Sample([q((2, 3)), q((3,)), rng.uniform(0.01, 0.1, 3).astype("float32"), np.zeros(3, "int32"),
                    s(), z(), s(), z()], BroadcastAttrs(lhs_axis=1), "per-channel lhs"),
            Sample([q((4,)), q((4,)), np.float32(0.05), np.int32(2), np.float32(0.05), np.int32(2),
                    np.float32(0.05), np.int32(2)], BroadcastAttrs(), "all parameters equal"),
            Sample([q((0, 2)), q((2,)), s(), z(), s(), z(), s(), z()], BroadcastAttrs(), "empty")]


def _defop(name, ref, canonical, doc):
    op = defop(name, inputs=INPUTS, attrs=BroadcastAttrs, rel=_binary_rel(name), pattern=OpPattern.BROADCAST,
               ref=ref, level=11, samples=_samples, doc=doc)
    register_op_attr(name, CANONICALIZE, canonical)
    return op


ADD = _defop("qnn.add", _add_sub_ref(1), _add_sub_canonical(1), "quantized a + b")
SUBTRACT = _defop("qnn.subtract", _add_sub_ref(-1), _add_sub_canonical(-1), "quantized a - b")
MUL = _defop("qnn.mul", _mul_ref, _mul_canonical, "quantized a * b")


BROADCAST_RESULT = ("result", "relay.Expr", "The result in the output's quantization, in the dtype of `lhs` "
                                            "and the broadcast shape of the operands.")


def _ctor(op):
    def ctor(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale, output_zero_point,
             lhs_axis=-1, rhs_axis=-1):
        return op(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
                  output_zero_point, attrs=BroadcastAttrs(lhs_axis, rhs_axis))
    ctor.__name__ = op.name.split(".")[1]
    ctor.__doc__ = constructor_doc(f"relay.qnn.op.{ctor.__name__}: {op.doc}, each input with its own scale "
                                   "and zero point.", ctor, QNN_PARAMETERS, BROADCAST_RESULT)
    return ctor


add, subtract, mul = _ctor(ADD), _ctor(SUBTRACT), _ctor(MUL)

__all__ = ["add", "subtract", "mul", "BroadcastAttrs"]
