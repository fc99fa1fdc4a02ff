"""Quantized ONNX ops, as the relay.qnn dialect: QuantizeLinear, DequantizeLinear (per-tensor and
per-axis), QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger, DynamicQuantizeLinear, and
onnxruntime's contrib ops in domain com.microsoft that its quantizer writes: QLinearAdd,
QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearConcat (table keys "com.microsoft.<op>").

Scales and zero points may be graph inputs (known only at run time): the qnn ops take them as
expressions and their lowering handles both. ONNX zero points carry the quantized dtype
(uint8, int8, ...); the qnn ops take int32 zero points and an explicit out_dtype. Float16
scales / inputs compute in float32 and the result is cast back. Blocked quantization
(block_size), 4-bit and float8 types are not supported (a clear error says so).
"""
import numpy as np

from .... import op as _op
from ....op import nn as _nn
from ....op import qnn as _qnn
from .math import matmul as _float_matmul
from .nn import conv_pads, per_dim
from .quantized_blocked import blocked_dequantize, blocked_quantize
from ._registry import converter


def _to_2d(ctx, x, what):
    """(x as NCHW, was_1d) for a 3-D (N, C, W) or 4-D input; other ranks are unsupported."""
    nd = ctx.ndim(x)
    if nd == 3:
        return _op.expand_dims(x, 2), True
    if nd != 4:
        raise ctx.fail(f"{what} has rank {nd}; only 1-D and 2-D {ctx.op} (rank 3 or 4 inputs) are supported")
    return x, False


def _pad4(pads, was_1d):
    """ONNX (b..., e...) -> relay (top, left, bottom, right)."""
    if was_1d:
        return (0, pads[0], 0, pads[1])
    return (pads[0], pads[1], pads[2], pads[3])


def _spatial_attrs(ctx, n):
    """(strides, dilations) of an n-D convolution."""
    return per_dim(ctx, "strides", n, 1), per_dim(ctx, "dilations", n, 1)


def _lift(vals, was_1d, fill=1):
    """A 1-D convolution's per-dim values as the 2-D ones of its (H=1) lifted form."""
    return (fill,) + tuple(vals) if was_1d else tuple(vals)

QUANT_DTYPES = ("int8", "uint8", "int16", "uint16", "int32")


def _zero_point(ctx, zp, default_dtype, what):
    """(int32 zero-point expression, the quantized dtype it names) of an optional zero point."""
    if zp is None:
        return _c(0, "int32"), default_dtype
    dtype = ctx.dtype(zp)
    if dtype not in QUANT_DTYPES:
        raise ctx.fail(f"{what} has type {dtype}; supported quantized types are {list(QUANT_DTYPES)}")
    return _op.cast(zp, "int32"), dtype


def _scale(ctx, scale, what):
    """A float32 scale expression (float16 / float64 scales are cast)."""
    dtype = ctx.dtype(scale)
    if not dtype.startswith("float"):
        raise ctx.invalid(f"{what} must be a float tensor, got {dtype}")
    return scale if dtype == "float32" else _op.cast(scale, "float32")


def _c(value, dtype):
    from ..common import const
    return const(np.array(value, dtype=dtype))


def _axis(ctx, x, scale):
    """The quantization axis: the `axis` attribute (default 1) for a per-axis (1-D, more than one
    value) scale; -1 for a per-tensor one (blocked quantization goes through blocked.py)."""
    axis = int(ctx.attrs.get("axis", 1))
    shape = ctx.shape(scale)
    if len(shape) == 0 or (len(shape) == 1 and shape[0] == 1):
        return -1
    if len(shape) != 1:
        raise ctx.fail(f"a scale of shape {tuple(shape)} is not supported (per-tensor or 1-D per-axis only)")
    return axis


@converter("QuantizeLinear", min_version=10)
def quantize_linear(ctx, inputs):
    x, scale = inputs[0], inputs[1]
    zp_in = inputs[2] if len(inputs) > 2 else None
    out_dtype_attr = int(ctx.attrs.get("output_dtype", 0))
    ctx.attrs.get("saturate")          # float8 only
    default = "uint8"
    if out_dtype_attr:
        from ..common import onnx_dtype
        default = onnx_dtype(out_dtype_attr, "output_dtype")
    zp, out_dtype = _zero_point(ctx, zp_in, default, "y_zero_point")
    if out_dtype not in QUANT_DTYPES[:-1]:
        raise ctx.fail(f"quantizing to {out_dtype} is not supported")
    if int(ctx.attrs.get("block_size", 0)):
        return blocked_quantize(ctx, x, scale, zp_in, out_dtype)
    axis = _axis(ctx, x, scale)
    xf = x if ctx.dtype(x) == "float32" else _op.cast(x, "float32")
    return _qnn.quantize(xf, _scale(ctx, scale, "y_scale"), zp, axis=axis, out_dtype=out_dtype)


@converter("DequantizeLinear", min_version=10)
def dequantize_linear(ctx, inputs):
    x, scale = inputs[0], inputs[1]
    zp_in = inputs[2] if len(inputs) > 2 else None
    dtype = ctx.dtype(x)
    if dtype not in QUANT_DTYPES:
        raise ctx.fail(f"dequantizing {dtype} is not supported (supported: {list(QUANT_DTYPES)})")
    zp, _ = _zero_point(ctx, zp_in, dtype, "x_zero_point")
    if int(ctx.attrs.get("block_size", 0)):
        return blocked_dequantize(ctx, x, scale, zp_in)
    axis = _axis(ctx, x, scale)
    out = _qnn.dequantize(x, _scale(ctx, scale, "x_scale"), zp, axis=axis)
    out_dtype = ctx.dtype(scale)
    return out if out_dtype == "float32" else _op.cast(out, out_dtype)


@converter("DynamicQuantizeLinear", min_version=11)
def dynamic_quantize_linear(ctx, inputs):
    """uint8 quantization with the scale and zero point of x's range (widened to hold 0)."""
    x = inputs[0]
    zero = _c(0.0, "float32")
    hi = _op.maximum(zero, _op.max(x))
    lo = _op.minimum(zero, _op.min(x))
    span = _op.where(_op.equal(hi, lo), _c(1.0, "float32"), _op.subtract(hi, lo))
    scale = _op.divide(span, _c(255.0, "float32"))
    zp_real = _op.clip(_op.subtract(zero, _op.divide(lo, scale)), 0.0, 255.0)
    zp = _op.cast(_op.round(zp_real), "int32")
    y = _qnn.quantize(x, scale, zp, out_dtype="uint8")
    return [y, scale, _op.cast(zp, "uint8")]


# --- convolutions --------------------------------------------------------------------------------------
def _qconv(ctx, x, w, x_zp, w_zp, x_scale, w_scale):
    """qnn.conv2d (int32) of an NCHW / NCW input with the ONNX Conv attributes."""
    wshape = ctx.static_shape(w, "w")
    x2, was_1d = _to_2d(ctx, x, "x")
    kernel = per_dim(ctx, "kernel_shape", 2 - was_1d) or wshape[2:]
    strides, dilations = _spatial_attrs(ctx, 2 - was_1d)
    pads = conv_pads(ctx, ctx.shape(x)[2:], kernel, strides, dilations)
    if was_1d:
        w = _op.expand_dims(w, 2)
    out = _qnn.conv2d(x2, w, x_zp, w_zp, x_scale, w_scale, kernel_size=_lift(kernel, was_1d), channels=wshape[0],
                      strides=_lift(strides, was_1d), padding=_pad4(pads, was_1d),
                      dilation=_lift(dilations, was_1d), groups=int(ctx.attrs.get("group", 1)))
    return out, was_1d


def _unlift(out, was_1d):
    return _op.squeeze(out, axis=[2]) if was_1d else out


def _per_channel_zp(ctx, zp, what):
    """A kernel zero point as int32: scalar, or one per output channel."""
    if zp is None:
        return _c(0, "int32")
    _zero_point(ctx, zp, "int8", what)
    return _op.cast(zp, "int32")


@converter("ConvInteger", min_version=10)
def conv_integer(ctx, inputs):
    x, w = inputs[0], inputs[1]
    x_zp, _ = _zero_point(ctx, inputs[2] if len(inputs) > 2 else None, ctx.dtype(x), "x_zero_point")
    w_zp = _per_channel_zp(ctx, inputs[3] if len(inputs) > 3 else None, "w_zero_point")
    one = _c(1.0, "float32")
    out, was_1d = _qconv(ctx, x, w, x_zp, w_zp, one, one)
    return _unlift(out, was_1d)


@converter("QLinearConv", min_version=10)
def qlinear_conv(ctx, inputs):
    x, x_scale, x_zp_in, w, w_scale, w_zp_in, y_scale, y_zp_in = inputs[:8]
    bias = inputs[8] if len(inputs) > 8 else None
    x_zp, _ = _zero_point(ctx, x_zp_in, ctx.dtype(x), "x_zero_point")
    w_zp = _per_channel_zp(ctx, w_zp_in, "w_zero_point")
    y_zp, y_dtype = _zero_point(ctx, y_zp_in, ctx.dtype(x), "y_zero_point")
    xs, ws = _scale(ctx, x_scale, "x_scale"), _scale(ctx, w_scale, "w_scale")
    out, was_1d = _qconv(ctx, x, w, x_zp, w_zp, xs, ws)
    if bias is not None:
        out = _nn.bias_add(out, _op.cast(bias, "int32"), axis=1)
    per_channel = len(ctx.shape(w_scale)) == 1 and ctx.shape(w_scale)[0] != 1
    out = _qnn.requantize(out, _op.multiply(xs, ws), _c(0, "int32"), _scale(ctx, y_scale, "y_scale"), y_zp,
                          axis=1 if per_channel else -1, out_dtype=y_dtype)
    return _unlift(out, was_1d)


# --- matrix products -----------------------------------------------------------------------------------
def _centred(ctx, x, zp, what, row_axis):
    """int32(x) - zp; a 1-D zero point holds one value per row (a) / column (b) of a matrix."""
    out = _op.cast(x, "int32")
    if zp is None:
        return out
    _zero_point(ctx, zp, ctx.dtype(x), what)
    zp32 = _op.cast(zp, "int32")
    shape = ctx.shape(zp)
    if len(shape) == 1 and shape[0] != 1 and row_axis:
        zp32 = _op.expand_dims(zp32, 1)             # a's per-row zero points broadcast along K
    return _op.subtract(out, zp32)


def _int_matmul(ctx, a, a_zp, b, b_zp):
    """ONNX MatMul of two quantized tensors accumulated in int32: qnn.dense for a 2-D product
    with scalar zero points, else the float MatMul's lowering on the centred int32 operands."""
    sa, sb = ctx.shape(a), ctx.shape(b)
    scalar_zps = all(z is None or len(ctx.shape(z)) == 0 or tuple(ctx.shape(z)) == (1,) for z in (a_zp, b_zp))
    if len(sa) == 2 and len(sb) == 2 and scalar_zps:
        one = _c(1.0, "float32")
        za = _zero_point(ctx, a_zp, ctx.dtype(a), "a_zero_point")[0]
        zb = _zero_point(ctx, b_zp, ctx.dtype(b), "b_zero_point")[0]
        za, zb = (_op.reshape(z, ()) for z in (za, zb))
        return _qnn.dense(a, _op.transpose(b, (1, 0)), za, zb, one, one, units=sb[1])
    return _float_matmul(ctx, [_centred(ctx, a, a_zp, "a_zero_point", True),
                               _centred(ctx, b, b_zp, "b_zero_point", False)])


@converter("MatMulInteger", min_version=10)
def matmul_integer(ctx, inputs):
    a, b = inputs[0], inputs[1]
    a_zp = inputs[2] if len(inputs) > 2 else None
    b_zp = inputs[3] if len(inputs) > 3 else None
    return _int_matmul(ctx, a, a_zp, b, b_zp)


@converter("QLinearMatMul", min_version=10)
def qlinear_matmul(ctx, inputs):
    a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp_in = inputs[:8]
    acc = _int_matmul(ctx, a, a_zp, b, b_zp)
    y_zp, y_dtype = _zero_point(ctx, y_zp_in, ctx.dtype(a), "y_zero_point")
    if ctx.shape(a_scale) not in ((), (1,)) or ctx.shape(b_scale) not in ((), (1,)):
        raise ctx.fail("per-row / per-column QLinearMatMul scales are not supported", "use per-tensor scales")
    in_scale = _op.multiply(_op.reshape(_scale(ctx, a_scale, "a_scale"), ()),
                            _op.reshape(_scale(ctx, b_scale, "b_scale"), ()))
    out = _qnn.requantize(acc, in_scale, _c(0, "int32"), _op.reshape(_scale(ctx, y_scale, "y_scale"), ()),
                          _op.reshape(y_zp, ()), out_dtype=y_dtype)
    return out


# --- onnxruntime's contrib ops (domain com.microsoft), as ORT's quantizer writes them ------------------
MS = "com.microsoft."


def _qparams(ctx, scale, zp, like, what):
    """(scalar float32 scale, scalar int32 zero point) of a per-tensor quantized input."""
    if ctx.shape(scale) not in ((), (1,)):
        raise ctx.fail(f"a per-channel {what}_scale is not supported here", "quantize per tensor")
    zp32 = _zero_point(ctx, zp, ctx.dtype(like), f"{what}_zero_point")[0]
    return _op.reshape(_scale(ctx, scale, f"{what}_scale"), ()), _op.reshape(zp32, ())


def _optional(inputs, i):
    return inputs[i] if len(inputs) > i else None


@converter(MS + "QLinearAdd", MS + "QLinearMul")
def qlinear_binary(ctx, inputs):
    a, b = inputs[0], inputs[3]
    params = [*_qparams(ctx, inputs[1], _optional(inputs, 2), a, "A"),
              *_qparams(ctx, inputs[4], _optional(inputs, 5), b, "B"),
              *_qparams(ctx, inputs[6], _optional(inputs, 7), a, "C")]
    return (_qnn.add if ctx.op == "QLinearAdd" else _qnn.mul)(a, b, *params)


@converter(MS + "QLinearSigmoid", MS + "QLinearLeakyRelu")
def qlinear_unary(ctx, inputs):
    x = inputs[0]
    params = [*_qparams(ctx, inputs[1], _optional(inputs, 2), x, "X"),
              *_qparams(ctx, inputs[3], _optional(inputs, 4), x, "Y")]
    if ctx.op == "QLinearSigmoid":
        return _qnn.sigmoid(x, *params)
    return _qnn.leaky_relu(x, float(ctx.attrs.get("alpha", 0.01)), *params)


@converter(MS + "QLinearConcat")
def qlinear_concat(ctx, inputs):
    """Inputs: Y_scale, Y_zero_point, then (tensor, scale, zero point) per joined input."""
    rest = inputs[2:]
    if len(rest) % 3 or not rest:
        raise ctx.invalid(f"QLinearConcat takes (tensor, scale, zero point) triples after Y_scale and "
                          f"Y_zero_point; got {len(rest)} more inputs")
    tensors = rest[0::3]
    params = [_qparams(ctx, s, z, t, f"input {i}") for i, (t, s, z) in
              enumerate(zip(tensors, rest[1::3], rest[2::3]))]
    out_scale, out_zp = _qparams(ctx, inputs[0], inputs[1], tensors[0], "Y")
    axis = int(ctx.attrs.get("axis"))
    return _qnn.concatenate(tensors, [p[0] for p in params], [p[1] for p in params], out_scale, out_zp,
                            axis=axis)
