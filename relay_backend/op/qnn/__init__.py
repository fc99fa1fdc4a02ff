"""The QNN dialect (tvm.relay.qnn.op): int8/uint8 quantized operators. Each op is typed and has a
numpy reference like every other op, and an "FTVMQnnCanonicalize" rule that writes it with basic
integer/float ops (TVM's QnnCanonicalize); relay.qnn.transform.CanonicalizeOps, which the
default pipeline runs, applies those rules, so the compiled executors run the basic ops.
Importing the package registers the ops."""
from . import quantize, binary, products, concatenate as _concatenate_module, unary, simulated, softmax as _softmax_module  # noqa: F401
from .binary import add, mul, subtract  # noqa: F401
from .products import batch_matmul, conv2d, conv2d_transpose, dense  # noqa: F401
from .concatenate import concatenate  # noqa: F401
from .softmax import softmax  # noqa: F401
from .simulated import SQNN_DTYPE_TO_CODE, simulated_dequantize, simulated_quantize  # noqa: F401
from .unary import (abs, avg_pool2d, erf, exp, hardswish, leaky_relu, log, rsqrt, sigmoid,  # noqa: F401,A004
                    sqrt, tanh)
from .quantize import (current_requantize_config, dequantize, quantize, requantize,  # noqa: F401
                       requantize_config)

__all__ = ["quantize", "dequantize", "requantize", "requantize_config", "current_requantize_config", "add",
           "subtract", "mul", "conv2d", "conv2d_transpose", "dense", "batch_matmul",
           "concatenate", "simulated_quantize", "simulated_dequantize", "SQNN_DTYPE_TO_CODE", "softmax"] + unary.__all__
