"""qnn.softmax (TVM v0.18 src/relay/qnn/op/softmax.cc): integer-only softmax of an int8 tensor,
Algorithm 1 of https://arxiv.org/abs/2207.01405 as TVM's canonicalization writes it:

    q = x - zp; x0 = round(1 / scale); x = q - max(q)              (all <= 0)
    x_p = x + (x >> 1) - (x >> 4)                                   (x * log2(e), approximately)
    k = clip(x_p / -x0, 0, 20); r = x_p + k * x0                    (integer part, remainder)
    e = ((r >> 1) + x0) << (max(k) - k)                             (2**(x_p / x0), scaled)
    out = ((2**30 / sum(e)) * e) >> 23                              (probabilities * 128)
    requantize(out, 1/128 -> output parameters, int8)

`/` truncates, `>>` is arithmetic (floor); the input scale must be at most 1 (TVM checks it when
it is a constant). The numpy reference follows the same integer steps; the tests hold it to a
float softmax within a few quantized steps.
"""
import numpy as np

from ...errors import TypeInferenceError
from ...ir.expr import const
from ...ir.types import TensorType
from .. import reduce as _reduce, tensor as _t
from ..constructor_docs import documented
from ..indexing import take as _take
from ..nn.softmax import SoftmaxAttrs
from ..pattern import OpPattern
from ..registry import Sample, defop, register_op_attr
from . import _common as Q
from .qnn_docs import QNN_PARAMETERS, QUANTIZED_LIKE_X
from .quantize import CANONICALIZE, rescale_to_expr, rescale_values, scale_ratio, scale_ratio_expr

OP = "qnn.softmax"
M_BITS, OUT_BITS, MAX_K = 30, 8, 20
_POW2 = np.array([1 << k for k in range(MAX_K + 1)], "int32")


def _rel(arg_types, attrs):
    x = Q.check_data(OP, arg_types[0], "x", ("int8",))
    for i, (what, dtype) in enumerate((("scale", "float32"), ("zero_point", "int32"),
                                       ("output_scale", "float32"), ("output_zero_point", "int32"))):
        t = Q.check_qparam(OP, arg_types[i + 1], what, dtype)
        if t.ndim != 0:
            raise Q.C.rel_error(OP, f"{what} must be a scalar, got shape {tuple(t.shape)}", **{what: t})
    if x.ndim:
        Q.C.norm_axis(OP, attrs.axis, x.ndim, x=x)
    return TensorType(x.shape, "int8")


def _trunc_div(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(b == 0, 0, np.abs(a) // np.where(b == 0, 1, np.abs(b)))
    return (np.sign(a) * np.sign(b) * q).astype("int32")


def _softmax_ref(x, scale, zp, out_scale, out_zp, attrs):
    axis = attrs.axis
    x0 = np.int32(np.floor(np.float32(1) / np.float32(scale) + np.float32(0.5)))
    q = x.astype("int32") - np.int32(zp)
    xs = q - q.max(axis=axis, keepdims=True)
    x_p = xs + (xs >> 1) - (xs >> 4)
    k = np.clip(_trunc_div(x_p, np.int32(-x0)), 0, MAX_K)
    r = x_p - k * np.int32(-x0)
    e = ((r >> 1) + x0) * _POW2[k.max(axis=axis, keepdims=True) - k]
    out = (_trunc_div(np.int32(1 << M_BITS), e.sum(axis=axis, keepdims=True, dtype="int32")) * e) \
        >> (M_BITS - (OUT_BITS - 1))
    return rescale_values(out, scale_ratio(np.float32(1.0 / (1 << (OUT_BITS - 1))), out_scale), np.int32(out_zp),
                          out_dtype="int8")


def _i32(value):
    return const(np.int32(value))


def _shr(x, bits):
    return _t.floor_divide(x, _i32(1 << bits))


def _canonical(attrs, args, types):
    x, scale, zp, out_scale, out_zp = args
    s = Q.constant_value(scale)
    if s is not None and float(s) > 1.0:
        raise TypeInferenceError(f"{OP}: the input scale is {float(s)}; it must be at most 1")
    x0 = _t.cast(_t.floor(_t.add(_t.divide(const(np.float32(1.0)), scale), const(np.float32(0.5)))), "int32")
    q = _t.subtract(_t.cast(x, "int32"), zp)
    xs = _t.subtract(q, _reduce.max(q, attrs.axis, keepdims=True))
    x_p = _t.subtract(_t.add(xs, _shr(xs, 1)), _shr(xs, 4))
    neg_x0 = _t.negative(x0)
    k = _t.clip(_t.divide(x_p, neg_x0), 0, MAX_K)
    r = _t.subtract(x_p, _t.multiply(k, neg_x0))
    shift = _t.subtract(_reduce.max(k, attrs.axis, keepdims=True), k)
    e = _t.multiply(_t.add(_shr(r, 1), x0), _take(const(_POW2), shift))
    total = _reduce.sum(e, attrs.axis, keepdims=True)
    out = _shr(_t.multiply(_t.divide(_i32(1 << M_BITS), total), e), M_BITS - (OUT_BITS - 1))
    unit = const(np.float32(1.0 / (1 << (OUT_BITS - 1))))
    return rescale_to_expr(out, scale_ratio_expr(unit, out_scale), out_zp, out_dtype="int8")


def _samples(rng):
    return [Sample([Q.random_q(rng, (3, 7), "int8"), np.float32(0.05), np.int32(-3), np.float32(1 / 256),
                    np.int32(-128)], SoftmaxAttrs(-1)),
            Sample([Q.random_q(rng, (2, 5, 3), "int8"), np.float32(0.1), np.int32(0), np.float32(1 / 256),
                    np.int32(-128)], SoftmaxAttrs(1), "axis 1"),
            Sample([np.zeros((4, 6), "int8"), np.float32(0.02), np.int32(0), np.float32(1 / 128), np.int32(0)],
                   SoftmaxAttrs(-1), "uniform input")]


SOFTMAX = defop(OP, inputs=("x", "scale", "zero_point", "output_scale", "output_zero_point"), attrs=SoftmaxAttrs,
                rel=_rel, pattern=OpPattern.OPAQUE, ref=_softmax_ref, level=11, samples=_samples,
                doc="integer-only softmax of an int8 tensor (arXiv 2207.01405, TVM's canonical form)")
register_op_attr(OP, CANONICALIZE, _canonical)


@documented(QNN_PARAMETERS, QUANTIZED_LIKE_X)
def softmax(x, scale, zero_point, output_scale, output_zero_point, axis=-1):
    """relay.qnn.op.softmax: integer-only softmax along `axis`, int8 in and out.

    Parameters
    ----------
    scale : relay.Expr
        The scale of `x`'s quantization, a float32 scalar; it must be at most 1.
    axis : int, optional
        The axis the probabilities are taken along. Defaults to -1.
    """
    return SOFTMAX(x, scale, zero_point, output_scale, output_zero_point, attrs=SoftmaxAttrs(axis))


__all__ = ["softmax"]
