"""Symbolic-shape cases of the qnn ops (registered into symbolic_expectations' table): the data's
symbolic dims pass through; per-channel parameters match the quantization axis."""
import numpy as np

import relay_backend as relay

from .symbolic_expectations import H, M, N, W, _v, case


def _s(value=0.1):
    return relay.const(np.float32(value))


def _z(value=0):
    return relay.const(np.int32(value))


case("qnn.quantize", "Tensor[(n, 3), uint8]")(
    lambda: relay.qnn.op.quantize(_v("x", (N, 3)), _s(), _z(128), out_dtype="uint8"))
case("qnn.quantize:per-channel", "Tensor[(n, m), int8]")(
    lambda: relay.qnn.op.quantize(_v("x", (N, M)), _v("s", (M,)), _v("z", (M,), "int32"), axis=1))
case("qnn.dequantize", "Tensor[(n, m), float32]")(
    lambda: relay.qnn.op.dequantize(_v("q", (N, M), "int8"), _s(), _z()))
case("qnn.requantize", "Tensor[(n, h, w), int8]")(
    lambda: relay.qnn.op.requantize(_v("q", (N, H, W), "int32"), _v("s", (H,)), _z(), _s(), _z(), axis=1))
for _name in ("add", "subtract", "mul"):
    case(f"qnn.{_name}", "Tensor[(n, m, 3), int8]")(
        lambda _name=_name: getattr(relay.qnn.op, _name)(_v("a", (N, 1, 3), "int8"), _v("b", (N, M, 1), "int8"),
                                                         _s(), _z(), _s(), _z(), _s(), _z()))
case("qnn.conv2d", "Tensor[(n, 8, h - 2, w - 2), int32]")(
    lambda: relay.qnn.op.conv2d(_v("x", (N, 3, H, W), "int8"), _v("k", (8, 3, 3, 3), "int8"), _z(), _z(), _s(),
                                _s(), kernel_size=(3, 3), channels=8))
case("qnn.conv2d_transpose", "Tensor[(n, 4, h * 2 + 1, w + 2), int32]")(
    lambda: relay.qnn.op.conv2d_transpose(_v("x", (N, 3, H, W), "uint8"), _v("k", (3, 4, 3, 3), "int8"), _z(128),
                                          _z(), _s(), _v("ks", (4,)), strides=(2, 1)))
case("qnn.dense", "Tensor[(n, 16), int32]")(
    lambda: relay.qnn.op.dense(_v("x", (N, 8), "uint8"), _v("w", (16, 8), "uint8"), _z(128), _z(128), _s(),
                               _s(), units=16))
case("qnn.batch_matmul", "Tensor[(n, h, w), int32]")(
    lambda: relay.qnn.op.batch_matmul(_v("a", (N, H, 8), "int8"), _v("b", (N, W, 8), "int8"), _z(), _z(),
                                      _s(), _s()))
case("qnn.concatenate", "Tensor[(n, m + 3), int8]")(
    lambda: relay.qnn.op.concatenate([_v("a", (N, M), "int8"), _v("b", (N, 3), "int8")], [_s(), _s(0.2)],
                                     [_z(), _z(1)], _s(), _z(), axis=1))
for _name in ("rsqrt", "sigmoid", "tanh", "exp", "erf", "sqrt", "hardswish", "log", "abs"):
    case(f"qnn.{_name}", "Tensor[(n, m), uint8]")(
        lambda _name=_name: getattr(relay.qnn.op, _name)(_v("x", (N, M), "uint8"), _s(), _z(128), _s(0.2), _z(128)))
case("qnn.leaky_relu", "Tensor[(n, 3), int8]")(
    lambda: relay.qnn.op.leaky_relu(_v("x", (N, 3), "int8"), 0.1, _s(), _z(), _s(), _z()))
case("qnn.avg_pool2d", "Tensor[(n, 3, h // 2, w // 2), int8]")(
    lambda: relay.qnn.op.avg_pool2d(_v("x", (N, 3, H, W), "int8"), _s(), _z(), _s(), _z(), (2, 2), (2, 2), (0, 0),
                                    (1, 1), layout="NCHW"))
case("qnn.simulated_quantize", "Tensor[(n, m), float32]")(
    lambda: relay.qnn.op.simulated_quantize(_v("x", (N, M)), _v("s", (M,)), _v("z", (M,), "int32"), axis=1))
case("qnn.simulated_dequantize", "Tensor[(n, 3), float32]")(
    lambda: relay.qnn.op.simulated_dequantize(_v("x", (N, 3)), _s(), _z(), in_dtype="uint8"))
case("qnn.softmax", "Tensor[(n, m), int8]")(
    lambda: relay.qnn.op.softmax(_v("x", (N, M), "int8"), _s(), _z(), _s(1 / 256), _z(-128)))
