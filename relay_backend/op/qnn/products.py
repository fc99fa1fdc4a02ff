"""qnn.conv2d, qnn.conv2d_transpose, qnn.dense and qnn.batch_matmul (TVM v0.18
src/relay/qnn/op/convolution.cc, convolution_transpose.cc, dense.cc, batch_matmul.cc): integer products of two quantized tensors, accumulated in int32
(out_dtype), with the zero points taken out:

    out = op(int32(data) - input_zero_point, int32(weight) - kernel_zero_point)

The scales only describe the result (its scale is input_scale * kernel_scale, the caller's
requantize uses it). The canonical form subtracts the zero points first (in int16 when both
operands are 8-bit, which cannot overflow) and runs the float op's integer kernel (nn.conv2d /
nn.dense / nn.batch_matmul with out_dtype int32): a padded border then holds zeros, which is
TVM's padding with the zero point (the transposed convolution has no padded border: the cells
its strides leave between the input's are zeros of the centred input, as in TVM's legalization
to nn.conv2d_transpose of int16 operands). That product is the same integer whatever the order of the
terms TVM's four-term expansion sums.

The kernel's zero point and scale are per-tensor or per output channel (conv2d and
conv2d_transpose: the kernel layout's O axis; dense: the weight's rows); the data's are
per-tensor. conv2d_transpose takes TVM's dtypes (data int8/uint8/int16/uint16, kernel int8/uint8,
out_dtype int16/int32/int64), and with groups > 1 its kernel scale, as TVM's relation has it,
holds I * O values (one per output channel of a depthwise transpose).
"""
import numpy as np

from ...ir.shape_math import mul
from ...ir.types import TensorType
from .. import tensor as _t
from ..nn.conv import CONV2D as NN_CONV2D, Conv2DAttrs
from ..nn.conv_transpose import CONV2D_TRANSPOSE as NN_CONV2D_TRANSPOSE, TRANSPOSE_PARAMETERS, Conv2DTransposeAttrs
from ..nn.dense import BATCH_MATMUL as NN_BATCH_MATMUL, DENSE as NN_DENSE, BatchMatmulAttrs, DenseAttrs
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop, register_op_attr
from . import _common as Q
from .qnn_docs import PRODUCT, PRODUCT_PARAMETERS
from .quantize import CANONICALIZE

DATA_DTYPES = ("int8", "uint8", "int16")
OUT_DTYPES = ("int32", "int64")
# the dtypes (data, kernel, out_dtype) an op takes; conv2d_transpose's are TVM's QnnConv2DTransposeRel's
PRODUCT_DTYPES = (DATA_DTYPES, DATA_DTYPES, OUT_DTYPES)
TRANSPOSE_DTYPES = (("int8", "uint8", "int16", "uint16"), ("int8", "uint8"), ("int16", "int32", "int64"))


def _product_rel(op_name, float_op, names, kernel_axis, dtypes=PRODUCT_DTYPES, scale_channels=None):
    """The float op's relation on the operands (the kernel given the data's dtype), with the
    qnn checks: integer operands and accumulation of `dtypes`, the four parameters (the kernel's
    per channel of `kernel_axis`, or for the scale `scale_channels(attrs, kernel shape)`)."""
    data_dtypes, kernel_dtypes, out_dtypes = dtypes

    def rel(arg_types, attrs):
        data = Q.check_data(op_name, arg_types[0], names[0], data_dtypes)
        kernel = Q.check_data(op_name, arg_types[1], names[1], kernel_dtypes)
        out_dtype = attrs.out_dtype or "int32"
        if out_dtype not in out_dtypes:
            raise Q.C.rel_error(op_name, f"out_dtype must be {' or '.join(out_dtypes)}, got {out_dtype}", data=data)
        out = float_op.rel([data, TensorType(kernel.shape, data.dtype)], attrs.with_(out_dtype=out_dtype))
        channels = kernel.shape[kernel_axis(attrs)] if kernel_axis is not None else None
        scales = scale_channels(attrs, kernel.shape) if scale_channels is not None else channels
        for i, (what, dtype, ch) in enumerate(((names[2], "int32", None), (names[3], "int32", channels),
                                               (names[4], "float32", None), (names[5], "float32", scales))):
            Q.check_qparam(op_name, arg_types[i + 2], what, dtype, ch)
        return out
    return rel


def _product_ref(float_op, kernel_axis):
    def ref(data, kernel, izp, kzp, iscale, kscale, attrs):
        axis = kernel_axis(attrs) if kernel_axis is not None else 0
        with np.errstate(over="ignore"):
            d = data.astype("int32") - np.asarray(izp, "int32").reshape(())
            k = kernel.astype("int32") - Q.np_param(np.asarray(kzp, "int32"), kernel.ndim, axis)
        return float_op.ref(d, k, attrs.with_(out_dtype=attrs.out_dtype or "int32"))
    return ref


def _centered(x, dtype, zp, zp_type, ndim, axis):
    """(x - zp, its dtype): int16 when x is 8-bit and zp a constant that keeps the difference in
    range (the product kernel reads half the bytes), else int32."""
    value = Q.constant_value(zp)
    wide = "int16" if (dtype in ("int8", "uint8") and value is not None
                       and np.all(np.abs(value.astype("int64")) <= 32000)) else "int32"
    out = _t.cast(x, wide)
    if Q.is_const_scalar(zp, 0):
        return out, wide
    return _t.subtract(out, _t.cast(Q.param_expr(zp, zp_type, ndim, axis), wide)), wide


def _product_canonical(float_op, kernel_axis):
    def canonical(attrs, args, types):
        axis = kernel_axis(attrs) if kernel_axis is not None else 0
        d, dw = _centered(args[0], types[0].dtype, args[2], types[2], types[0].ndim, 0)
        k, kw = _centered(args[1], types[1].dtype, args[3], types[3], types[1].ndim, axis)
        if dw != kw:                    # the product op takes one dtype
            d, k = (_t.cast(d, "int32") if dw == "int16" else d), (_t.cast(k, "int32") if kw == "int16" else k)
        return float_op(d, k, attrs=attrs.with_(out_dtype=attrs.out_dtype or "int32"))
    return canonical


def _defop(name, float_op, names, kernel_axis, samples, doc, dtypes=PRODUCT_DTYPES, scale_channels=None):
    op = defop(name, inputs=names, attrs=float_op.attrs_type,
               rel=_product_rel(name, float_op, names, kernel_axis, dtypes, scale_channels),
               pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_product_ref(float_op, kernel_axis), level=11,
               samples=samples, doc=doc)
    register_op_attr(name, CANONICALIZE, _product_canonical(float_op, kernel_axis))
    return op


_q, _s, _z = Q.random_q, Q.random_scale, Q.random_zp


# --- qnn.conv2d ---------------------------------------------------------------------------------------
def _conv_out_axis(attrs):
    return attrs.kernel_layout.index("O")


def _conv2d_samples(rng):
    A = Conv2DAttrs
    return [Sample([_q(rng, (1, 3, 6, 6), "int8"), _q(rng, (4, 3, 3, 3), "int8"), _z(rng, "int8"),
                    np.int32(0), _s(rng), _s(rng)], A(padding=(1, 1), channels=4, kernel_size=(3, 3),
                                                      out_dtype="int32")),
            Sample([_q(rng, (2, 2, 5, 7), "uint8"), _q(rng, (3, 2, 2, 3), "uint8"), _z(rng, "uint8"),
                    _z(rng, "uint8", 3), _s(rng), _s(rng, 3)],
                   A(strides=(2, 1), padding=(1, 0, 0, 2), dilation=(1, 2), out_dtype="int32"),
                   "uint8, per-channel kernel zero point, strides, dilation, asymmetric padding"),
            Sample([_q(rng, (1, 4, 5, 5), "uint8"), _q(rng, (4, 2, 3, 3), "int8"), _z(rng, "uint8"),
                    np.int32(0), _s(rng), _s(rng)], A(padding=(1, 1), groups=2, out_dtype="int32"),
                   "uint8 data, int8 kernel, groups"),
            Sample([_q(rng, (1, 5, 5, 2), "int8"), _q(rng, (3, 3, 2, 4), "int8"), _z(rng, "int8"),
                    _z(rng, "int8", 4), _s(rng), _s(rng, 4)],
                   A(padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO", out_dtype="int32"), "NHWC")]


CONV2D = _defop("qnn.conv2d", NN_CONV2D, ("data", "kernel", "input_zero_point", "kernel_zero_point",
                                             "input_scale", "kernel_scale"),
                _conv_out_axis, _conv2d_samples, "int32 convolution of zero-point-centred int8/uint8 tensors")


@documented(PRODUCT_PARAMETERS, PRODUCT)
def conv2d(data, kernel, input_zero_point, kernel_zero_point, input_scale, kernel_scale, kernel_size, channels,
           strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, data_layout="NCHW", kernel_layout="OIHW",
           out_layout="", out_dtype="int32"):
    """relay.qnn.op.conv2d: nn.conv2d of quantized tensors, accumulated in out_dtype (int32).

    Parameters
    ----------
    kernel_size : None or tuple of int
        The kernel's (height, width), when known; None reads it from `kernel`.
    channels : None or int
        The number of output channels, when known; None reads it from `kernel`.
    """
    return CONV2D(data, kernel, input_zero_point, kernel_zero_point, input_scale, kernel_scale,
                  attrs=Conv2DAttrs(strides, padding, dilation, groups, channels, kernel_size, data_layout,
                                    kernel_layout, out_layout, out_dtype))


# --- qnn.conv2d_transpose ---------------------------------------------------------------------------
def _transpose_scale_channels(attrs, kernel_shape):
    """TVM's count of kernel scales: the kernel's O axis, times its I axis with groups > 1."""
    o = kernel_shape[attrs.kernel_layout.index("O")]
    return o if attrs.groups == 1 else mul(kernel_shape[attrs.kernel_layout.index("I")], o)


def _conv2d_transpose_samples(rng):
    A = Conv2DTransposeAttrs
    return [Sample([_q(rng, (1, 3, 4, 4), "int8"), _q(rng, (3, 2, 3, 3), "int8"), _z(rng, "int8"),
                    np.int32(0), _s(rng), _s(rng)], A(strides=(2, 2), padding=(1, 1), output_padding=(1, 1),
                                                      out_dtype="int32")),
            Sample([_q(rng, (2, 2, 3, 5), "uint8"), _q(rng, (2, 3, 2, 3), "uint8"), _z(rng, "uint8"),
                    _z(rng, "uint8", 3), _s(rng), _s(rng, 3)],
                   A(strides=(1, 2), padding=(0, 1, 1, 0), dilation=(2, 1), out_dtype="int32"),
                   "uint8, per-channel kernel zero point, dilation, asymmetric padding"),
            Sample([_q(rng, (1, 4, 3, 3), "uint8"), _q(rng, (4, 1, 2, 2), "int8"), _z(rng, "uint8"),
                    np.int32(0), _s(rng), _s(rng, 4)], A(strides=(2, 2), groups=4, out_dtype="int32"),
                   "uint8 data, int8 kernel, depthwise (groups x 1 kernel scales)"),
            Sample([_q(rng, (1, 3, 3, 2), "int8"), _q(rng, (2, 2, 2, 3), "int8"), _z(rng, "int8"),
                    _z(rng, "int8", 3), _s(rng), _s(rng, 3)],
                   A(strides=(2, 1), data_layout="NHWC", kernel_layout="HWIO", out_dtype="int64"),
                   "NHWC / HWIO, int64 accumulation")]


CONV2D_TRANSPOSE = _defop("qnn.conv2d_transpose", NN_CONV2D_TRANSPOSE,
                          ("data", "weight", "input_zero_point", "kernel_zero_point", "input_scale", "kernel_scale"),
                          _conv_out_axis, _conv2d_transpose_samples,
                          "int32 transposed convolution of zero-point-centred int8/uint8 tensors",
                          TRANSPOSE_DTYPES, _transpose_scale_channels)


@documented({**PRODUCT_PARAMETERS, **TRANSPOSE_PARAMETERS,
             "data": ("relay.Expr", "The quantized input, int8, uint8, int16 or uint16, in `data_layout`."),
             "weight": ("relay.Expr", "The quantized kernel, int8 or uint8, (C_in, C_out / groups, *kernel) "
                                      "in `kernel_layout`."),
             "kernel_scale": ("relay.Expr", "The scale of the kernel's quantization, float32: a scalar, or "
                                            "one per index of the kernel's O axis (times its I axis when "
                                            "groups > 1). Like input_scale it only describes the result."),
             "kernel_zero_point": ("relay.Expr", "The zero point of the kernel's quantization, int32: a scalar, "
                                                 "or one per index of the kernel's O axis."),
             "out_dtype": ("str", "The dtype of the accumulation and of the result, int16, int32 or int64.")},
            PRODUCT)
def conv2d_transpose(data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, strides=(1, 1),
                     padding=(0, 0), dilation=(1, 1), groups=1, channels=None, kernel_size=None, data_layout="NCHW",
                     kernel_layout="IOHW", out_layout="", output_padding=(0, 0), out_dtype="int32"):
    """relay.qnn.op.conv2d_transpose: nn.conv2d_transpose of quantized tensors, accumulated in
    out_dtype (int32)."""
    return CONV2D_TRANSPOSE(data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale,
                            attrs=Conv2DTransposeAttrs(strides, padding, dilation, groups, channels, kernel_size,
                                                       data_layout, kernel_layout, out_layout, output_padding,
                                                       out_dtype))


# --- qnn.dense ----------------------------------------------------------------------------------------
def _dense_samples(rng):
    return [Sample([_q(rng, (3, 8), "int8"), _q(rng, (5, 8), "int8"), _z(rng, "int8"), _z(rng, "int8"),
                    _s(rng), _s(rng)], DenseAttrs(5, "int32")),
            Sample([_q(rng, (2, 3, 6), "uint8"), _q(rng, (4, 6), "uint8"), _z(rng, "uint8"), _z(rng, "uint8", 4),
                    _s(rng), _s(rng, 4)], DenseAttrs(None, "int32"), "uint8, per-unit kernel zero point"),
            Sample([_q(rng, (2, 16), "uint8"), _q(rng, (3, 16), "int8"), _z(rng, "uint8"), np.int32(0),
                    _s(rng), _s(rng)], DenseAttrs(3, "int32"), "uint8 x int8")]


DENSE = _defop("qnn.dense", NN_DENSE, ("data", "weight", "input_zero_point", "kernel_zero_point",
                                           "input_scale", "kernel_scale"),
               lambda attrs: 0, _dense_samples, "int32 dense of zero-point-centred int8/uint8 tensors")


@documented(PRODUCT_PARAMETERS, PRODUCT)
def dense(data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, units, out_dtype="int32"):
    """relay.qnn.op.dense: data @ weight^T of quantized tensors, accumulated in out_dtype."""
    return DENSE(data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale,
                 attrs=DenseAttrs(units, out_dtype))


# --- qnn.batch_matmul ---------------------------------------------------------------------------------
def _bmm_samples(rng):
    return [Sample([_q(rng, (2, 3, 5), "int8"), _q(rng, (2, 4, 5), "int8"), _z(rng, "int8"), _z(rng, "int8"),
                    _s(rng), _s(rng)], BatchMatmulAttrs("int32")),
            Sample([_q(rng, (1, 2, 7), "uint8"), _q(rng, (3, 4, 7), "uint8"), _z(rng, "uint8"), _z(rng, "uint8"),
                    _s(rng), _s(rng)], BatchMatmulAttrs("int32"), "broadcast batch, uint8")]


BATCH_MATMUL = _defop("qnn.batch_matmul", NN_BATCH_MATMUL,
                      ("x", "y", "x_zero_point", "y_zero_point", "x_scale", "y_scale"), None, _bmm_samples,
                      "int32 batch_matmul (y transposed) of zero-point-centred int8/uint8 tensors")


@documented(PRODUCT_PARAMETERS, PRODUCT)
def batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale, out_dtype="int32"):
    """relay.qnn.op.batch_matmul: x (B, M, K) times y (B, N, K) transposed, in out_dtype.

    Parameters
    ----------
    x : relay.Expr
        The quantized left operand, (batch, M, K), int8, uint8 or int16.
    y : relay.Expr
        The quantized right operand, (batch, N, K): each batch's matrix is used transposed.
    x_zero_point, y_zero_point : relay.Expr
        The int32 scalar zero points of `x` and `y`.
    x_scale, y_scale : relay.Expr
        The float32 scalar scales of `x` and `y`; they only describe the result, whose scale is
        x_scale * y_scale.
    """
    return BATCH_MATMUL(x, y, x_zero_point, y_zero_point, x_scale, y_scale,
                        attrs=BatchMatmulAttrs(out_dtype, False, True))


__all__ = ["conv2d", "conv2d_transpose", "dense", "batch_matmul"]
