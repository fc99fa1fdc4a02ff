"""The quantized one-input ops of TVM v0.18's qnn namespace (src/relay/qnn/op/
unary_elementwise_op.cc, leaky_relu.cc, avg_pool2d.cc).

- qnn.rsqrt, sigmoid, tanh, exp, erf, sqrt, hardswish, log, abs (rows of UNARY): dequantize, the
  float32 op, quantize to the output's parameters in the input's dtype (TVM's default
  canonicalization of these ops). A function undefined at a dequantized value (log / sqrt /
  rsqrt of a negative) gives an unspecified quantized value, as in TVM.
- qnn.leaky_relu: integers only: r = requantize(x -> output parameters); below the input zero
  point the result is r * alpha + zp_out * (1 - alpha), each product a fixed-point multiply.
- qnn.avg_pool2d: the input requantized (int32) to the output's parameters, nn.avg_pool2d on it
  (integer mean), saturated to the input dtype.

Inputs: the data, its scale and zero point, the output's scale and zero point (all per-tensor).
"""
import dataclasses

import numpy as np

from ...ir.attrs import Attrs
from ...ir.expr import const
from ...ir.types import TensorType
from .. import tensor as _t
from ..nn.pool import AVG_POOL2D, POOLED, AvgPool2DAttrs
from ..constructor_docs import constructor_doc, documented
from ..pattern import OpPattern
from ..registry import Sample, defop, get, register_op_attr
from . import _common as Q
from .qnn_docs import QNN_PARAMETERS, QNN_POOL_PARAMETERS, QUANTIZED_LIKE_X
from .fixed_point import rescale_expr, rescale_ref
from .quantize import (CANONICALIZE, DEQUANTIZE, QUANTIZE, DequantizeAttrs, QuantizeAttrs, dequantize_ref,
                       quantize_ref, rescale_to_expr, rescale_values, scale_ratio, scale_ratio_expr)

DTYPES = ("int8", "uint8")
INPUTS = ("x", "scale", "zero_point", "output_scale", "output_zero_point")


def _rel(op_name, out_shape=None):
    def rel(arg_types, attrs):
        x = Q.check_data(op_name, arg_types[0], "x", DTYPES)
        for i, (what, dtype) in enumerate((("scale", "float32"), ("zero_point", "int32"),
                                           ("output_scale", "float32"), ("output_zero_point", "int32"))):
            Q.check_qparam(op_name, arg_types[i + 1], what, dtype)
        return TensorType(x.shape if out_shape is None else out_shape(x, attrs), x.dtype)
    return rel


_q = Q.random_q


# --- dequantize -> float op -> quantize -------------------------------------------------------------------
def _hardswish_np(x):
    return x * (np.clip(x + np.float32(3), np.float32(0), np.float32(6)) / np.float32(6))


def _hardswish_expr(x):
    three, six = const(np.float32(3.0)), const(np.float32(6.0))
    return _t.multiply(x, _t.divide(_t.clip(_t.add(x, three), 0.0, 6.0), six))


def _float_op(name):
    """(numpy function, Relay builder) of the float op `name` (a registry op's reference and
    constructor, so the debug path and the canonical form compute the same function)."""
    op = get(name)
    return (lambda x: op.ref(x, None)), (lambda x: op(x))


UNARY = {"rsqrt": _float_op("rsqrt"), "sigmoid": _float_op("sigmoid"), "tanh": _float_op("tanh"),
         "exp": _float_op("exp"), "erf": _float_op("erf"), "sqrt": _float_op("sqrt"), "log": _float_op("log"),
         "abs": _float_op("abs"), "hardswish": (_hardswish_np, _hardswish_expr)}
# sample value ranges (dequantized) where each function is defined and not flat
_DOMAIN = {"rsqrt": (0.05, 4), "sqrt": (0.0, 4), "log": (0.05, 4), "exp": (-3, 1.5)}


def _unary_ref(fn):
    def ref(x, scale, zp, out_scale, out_zp, attrs):
        real = dequantize_ref(x, scale, zp, DequantizeAttrs())
        with np.errstate(all="ignore"):
            y = np.asarray(fn(real), dtype="float32")
        return quantize_ref(y, out_scale, out_zp, QuantizeAttrs(out_dtype=str(x.dtype)))
    return ref


def _unary_canonical(build):
    def canonical(attrs, args, types):
        x, scale, zp, out_scale, out_zp = args
        real = DEQUANTIZE(x, scale, zp, attrs=DequantizeAttrs())
        return QUANTIZE(build(real), out_scale, out_zp, attrs=QuantizeAttrs(out_dtype=types[0].dtype))
    return canonical


def _unary_samples(name):
    lo, hi = _DOMAIN.get(name, (-4, 4))

    def samples(rng):
        out = []
        for dtype, shape in (("int8", (2, 5)), ("uint8", (3, 4))):
            x = _q(rng, shape, dtype)
            qlo, qhi = Q.qrange(dtype)
            scale = np.float32((hi - lo) / (qhi - qlo))
            zp = np.int32(round(qlo - lo / scale))
            out.append(Sample([x, scale, zp, np.float32(rng.uniform(0.01, 0.05)), np.int32(qlo + 100)]))
        return out
    return samples


def _define_unary(name, fns):
    fn, build = fns
    op = defop(f"qnn.{name}", inputs=INPUTS, rel=_rel(f"qnn.{name}"), pattern=OpPattern.OPAQUE,
               ref=_unary_ref(fn), level=11, samples=_unary_samples(name),
               doc=f"quantize({name}(dequantize(x)))")
    register_op_attr(op.name, CANONICALIZE, _unary_canonical(build))

    def ctor(x, scale, zero_point, output_scale, output_zero_point):
        return op(x, scale, zero_point, output_scale, output_zero_point)
    ctor.__name__ = name
    ctor.__doc__ = constructor_doc(f"relay.qnn.op.{name}: {name} of a quantized tensor, in the output's "
                                   "parameters.", ctor, QNN_PARAMETERS, QUANTIZED_LIKE_X)
    return ctor


_CTORS = {name: _define_unary(name, fns) for name, fns in UNARY.items()}
rsqrt, sigmoid, tanh, exp, erf = (_CTORS[n] for n in ("rsqrt", "sigmoid", "tanh", "exp", "erf"))
sqrt, hardswish, log, abs = (_CTORS[n] for n in ("sqrt", "hardswish", "log", "abs"))  # noqa: A001


# --- qnn.leaky_relu ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class QnnLeakyReluAttrs(Attrs):
    alpha: float = 0.01

    def __post_init__(self):
        object.__setattr__(self, "alpha", float(self.alpha))


def _leaky_relu_ref(x, scale, zp, out_scale, out_zp, attrs):
    zp32, oz = np.int32(zp), np.int32(out_zp)
    with np.errstate(over="ignore"):
        r = rescale_values(x.astype("int32") - zp32, scale_ratio(scale, out_scale), oz, out_dtype="int32")
        neg = rescale_ref(r, np.float64(attrs.alpha)) + rescale_ref(oz, np.float64(1.0 - attrs.alpha))
    out = np.where(x.astype("int32") < zp32, neg, r)
    return np.clip(out, *Q.qrange(x.dtype)).astype(x.dtype)


def _leaky_relu_canonical(attrs, args, types):
    x, scale, zp, out_scale, out_zp = args
    x32 = _t.cast(x, "int32")
    r = rescale_to_expr(_t.subtract(x32, zp), scale_ratio_expr(scale, out_scale), out_zp, out_dtype="int32")
    neg = _t.add(rescale_expr(r, np.float64(attrs.alpha)), rescale_expr(out_zp, np.float64(1.0 - attrs.alpha)))
    out = _t.where(_t.less(x32, zp), neg, r)
    return _t.cast(_t.clip(out, *Q.qrange(types[0].dtype)), types[0].dtype)


LEAKY_RELU = defop("qnn.leaky_relu", inputs=INPUTS, attrs=QnnLeakyReluAttrs, rel=_rel("qnn.leaky_relu"),
                   pattern=OpPattern.OPAQUE, ref=_leaky_relu_ref, level=11,
                   samples=lambda rng: [Sample([_q(rng, (3, 5), "int8"), np.float32(0.05), np.int32(-4),
                                                np.float32(0.04), np.int32(2)], QnnLeakyReluAttrs(0.1)),
                                        Sample([_q(rng, (2, 6), "uint8"), np.float32(0.02), np.int32(128),
                                                np.float32(0.02), np.int32(128)], QnnLeakyReluAttrs(0.25))],
                   doc="quantized leaky relu in fixed point")
register_op_attr("qnn.leaky_relu", CANONICALIZE, _leaky_relu_canonical)


@documented(QNN_PARAMETERS, QUANTIZED_LIKE_X)
def leaky_relu(x, alpha, input_scale, input_zero_point, output_scale, output_zero_point):
    """relay.qnn.op.leaky_relu: x for x above its zero point, alpha * x below, quantized.

    Parameters
    ----------
    alpha : float
        The slope for inputs below zero (below the input's zero point).
    """
    return LEAKY_RELU(x, input_scale, input_zero_point, output_scale, output_zero_point,
                      attrs=QnnLeakyReluAttrs(alpha))


# --- qnn.avg_pool2d ---------------------------------------------------------------------------------------
def _avg_pool_ref(x, scale, zp, out_scale, out_zp, attrs):
    with np.errstate(over="ignore"):
        r = rescale_values(x.astype("int32") - np.int32(zp), scale_ratio(scale, out_scale), np.int32(out_zp),
                           out_dtype="int32")
    pooled = AVG_POOL2D.ref(r, attrs)
    return np.clip(pooled, *Q.qrange(x.dtype)).astype(x.dtype)


def _avg_pool_canonical(attrs, args, types):
    x, scale, zp, out_scale, out_zp = args
    shifted = _t.subtract(_t.cast(x, "int32"), zp)
    r = rescale_to_expr(shifted, scale_ratio_expr(scale, out_scale), out_zp, out_dtype="int32")
    pooled = AVG_POOL2D(r, attrs=attrs)
    return _t.cast(_t.clip(pooled, *Q.qrange(types[0].dtype)), types[0].dtype)


def _avg_pool_rel(arg_types, attrs):
    out = AVG_POOL2D.rel([arg_types[0]], attrs)
    return _rel("qnn.avg_pool2d", lambda x, a: out.shape)(arg_types, attrs)


AVG_POOL2D_Q = defop("qnn.avg_pool2d", inputs=("data", "input_scale", "input_zero_point", "output_scale",
                                               "output_zero_point"),
                     attrs=AvgPool2DAttrs, rel=_avg_pool_rel, pattern=OpPattern.OPAQUE, ref=_avg_pool_ref,
                     level=11,
                     samples=lambda rng: [
                         Sample([_q(rng, (1, 2, 5, 5), "int8"), np.float32(0.05), np.int32(3), np.float32(0.08),
                                 np.int32(-1)], AvgPool2DAttrs(pool_size=(2, 2), strides=(2, 2), padding=(1, 1),
                                                               count_include_pad=True)),
                         Sample([_q(rng, (2, 3, 4, 4), "uint8"), np.float32(0.1), np.int32(128), np.float32(0.1),
                                 np.int32(128)], AvgPool2DAttrs(pool_size=(3, 3), padding=(1, 1)))],
                     doc="requantize to the output's parameters, then the integer average pool")
register_op_attr("qnn.avg_pool2d", CANONICALIZE, _avg_pool_canonical)


@documented(QNN_POOL_PARAMETERS, POOLED)
def avg_pool2d(data, input_scale, input_zero_point, output_scale, output_zero_point, pool_size, strides, padding,
               dilation, ceil_mode=False, count_include_pad=True, layout="NHWC", out_layout=""):
    """relay.qnn.op.avg_pool2d: the average pool of a quantized tensor, in the output's parameters."""
    return AVG_POOL2D_Q(data, input_scale, input_zero_point, output_scale, output_zero_point,
                        attrs=AvgPool2DAttrs(pool_size, strides, dilation, padding, layout, out_layout, ceil_mode,
                                             count_include_pad))


__all__ = ["rsqrt", "sigmoid", "tanh", "exp", "erf", "sqrt", "hardswish", "log", "abs", "leaky_relu", "avg_pool2d"]
