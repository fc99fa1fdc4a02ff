"""relay.nn: neural-network operators, one family per file (dense, conv, pool, norm, softmax,
activation, misc). Importing the package registers the ops; constructors follow tvm.relay.nn."""
from ..tensor import relu  # noqa: F401  (op "nn.relu" is a row of tensor.py's unary table)
from . import activation, conv, dense, misc, norm, pool, softmax  # noqa: F401
from .activation import leaky_relu, prelu  # noqa: F401
from .conv import conv2d  # noqa: F401
from .dense import batch_matmul, dense, matmul  # noqa: F401
from .misc import batch_flatten, bias_add, dropout, dropout_raw, pad  # noqa: F401
from .norm import batch_norm, layer_norm, lrn  # noqa: F401
from .pool import (adaptive_avg_pool2d, avg_pool2d, global_avg_pool2d, global_max_pool2d,  # noqa: F401
                   max_pool2d)
from .softmax import fast_softmax, log_softmax, softmax  # noqa: F401

__all__ = ["relu", "leaky_relu", "prelu", "conv2d", "dense", "matmul", "batch_matmul", "batch_flatten",
           "bias_add", "dropout", "dropout_raw", "pad", "batch_norm", "layer_norm", "lrn", "max_pool2d",
           "avg_pool2d", "global_max_pool2d", "global_avg_pool2d", "adaptive_avg_pool2d", "softmax",
           "log_softmax", "fast_softmax"]

import sys as _sys  # noqa: E402
from ..keywords import check_namespace as _check_namespace  # noqa: E402

_check_namespace(_sys.modules[__name__], __all__)   # a misspelled keyword names the valid ones
