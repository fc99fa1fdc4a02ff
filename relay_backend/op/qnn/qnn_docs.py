"""The numpydoc meanings of the parameters the qnn constructors share.

Every qnn op takes its operands' quantization parameters as inputs: a quantized integer q stands
for the real value scale * (q - zero_point). The conversions (quantize, dequantize, requantize,
the simulated pair), the unary ops, the binary ops (add / subtract / mul), the products (conv2d,
dense) and the pools all name these parameters alike, so each constructor's docstring writes
only what is its own and `@documented(QNN_PARAMETERS)` (or PRODUCT_PARAMETERS,
QNN_POOL_PARAMETERS) completes it from these tables.
"""
from ..nn.conv_docs import CONV_PARAMETERS
from ..nn.pool import POOL_PARAMETERS
from ..nn.pool_nd import POOL_ND_PARAMETERS

QNN_PARAMETERS = {
    "data": ("relay.Expr", "The input tensor: real values (float) for quantize and simulated_quantize, "
                           "quantized integers (float ones for simulated_dequantize) for the other ops."),
    "x": ("relay.Expr", "The quantized input tensor, int8 or uint8."),
    "scale": ("relay.Expr", "The scale of `x`'s quantization (a q of `x` stands for scale * (q - "
                            "zero_point)), a float32 scalar."),
    "zero_point": ("relay.Expr", "The zero point of `x`'s quantization (the integer that stands for 0), "
                                 "an int32 scalar."),
    "input_scale": ("relay.Expr", "The scale of the input's quantization (a q stands for scale * (q - zero "
                                  "point)), float32."),
    "input_zero_point": ("relay.Expr", "The zero point of the input's quantization (the integer that "
                                       "stands for 0), int32."),
    "output_scale": ("relay.Expr", "The scale of the result's quantization, float32."),
    "output_zero_point": ("relay.Expr", "The zero point of the result's quantization, int32."),
    "axis": ("int", "The axis of the input that 1-D (per-channel) scales and zero points run along; "
                    "scalar ones apply to every element."),
    "out_dtype": ("str", "The dtype of the result: int8, uint8, int16, uint16 or int32 for the ops "
                         "that quantize, float32 or float16 for dequantize."),
    "lhs": ("relay.Expr", "The left quantized operand; its shape is broadcast against `rhs` by numpy's "
                          "rules."),
    "rhs": ("relay.Expr", "The right quantized operand, of the dtype of `lhs`; its shape is broadcast "
                          "against `lhs` by numpy's rules."),
    "lhs_scale": ("relay.Expr", "The scale of `lhs`'s quantization, float32: a scalar, or one per "
                                "channel along `lhs_axis`."),
    "lhs_zero_point": ("relay.Expr", "The zero point of `lhs`'s quantization, int32: a scalar, or one "
                                     "per channel along `lhs_axis`."),
    "rhs_scale": ("relay.Expr", "The scale of `rhs`'s quantization, float32: a scalar, or one per "
                                "channel along `rhs_axis`."),
    "rhs_zero_point": ("relay.Expr", "The zero point of `rhs`'s quantization, int32: a scalar, or one "
                                     "per channel along `rhs_axis`."),
    "lhs_axis": ("int", "The axis of `lhs` that its per-channel scale and zero point run along."),
    "rhs_axis": ("int", "The axis of `rhs` that its per-channel scale and zero point run along."),
}
QUANTIZED_LIKE_X = ("result", "relay.Expr", "The result in the output's quantization, of the shape and dtype "
                                            "of `x`.")

# qnn.conv2d and qnn.dense: the convolution's attributes plus the kernel's quantization
PRODUCT_PARAMETERS = {
    **CONV_PARAMETERS,
    **QNN_PARAMETERS,
    "data": ("relay.Expr", "The quantized input, int8, uint8 or int16 (for conv2d in `data_layout`)."),
    "kernel": ("relay.Expr", "The quantized convolution kernel, in `kernel_layout`."),
    "weight": ("relay.Expr", "The quantized weights, (units, input features)."),
    "input_scale": ("relay.Expr", "The scale of the input's quantization, float32. It does not change the "
                                  "integers computed: the result's scale is input_scale * kernel_scale."),
    "kernel_zero_point": ("relay.Expr", "The zero point of the kernel's quantization, int32: a scalar, or "
                                        "one per output channel."),
    "kernel_scale": ("relay.Expr", "The scale of the kernel's quantization, float32: a scalar, or one per "
                                   "output channel. Like input_scale it only describes the result."),
    "units": ("None or int", "The number of output features (rows of `weight`), when known; None reads "
                             "it from `weight`."),
    "out_dtype": ("str", "The dtype of the accumulation and of the result, int32 or int64."),
}
PRODUCT = ("result", "relay.Expr", "The integer result, with the zero points taken out, in `out_dtype`.")

# qnn.avg_pool2d: the pooling window plus the quantization parameters
QNN_POOL_PARAMETERS = {**POOL_PARAMETERS, **QNN_PARAMETERS,
                       "data": ("relay.Expr", "The quantized input, in `layout`."),
                       "count_include_pad": POOL_ND_PARAMETERS["count_include_pad"]}

__all__ = ["QNN_PARAMETERS", "QUANTIZED_LIKE_X", "PRODUCT_PARAMETERS", "PRODUCT", "QNN_POOL_PARAMETERS"]
