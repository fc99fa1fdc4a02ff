"""relay.nn: neural-network operators, one family per file (dense, conv, pool, norm, softmax,
activation, misc). Importing the package registers the ops; constructors follow tvm.relay.nn."""
from ..tensor import relu  # noqa: F401  (op "nn.relu" is a row of tensor.py's unary table)
from . import activation, conv, conv_nchwc, dense, dense_pack, misc, norm, pool, softmax  # noqa: F401
from . import (conv_nd, conv_transpose, correlation, deformable_conv, fifo_buffer, grad_ops, loss,  # noqa: F401
               norm_ext, pad_ext, pool_nd, rearrange, sparse, upsampling, winograd)
from .activation import leaky_relu, prelu  # noqa: F401
from .conv import conv2d  # noqa: F401
from .conv_nchwc import contrib_conv2d_nchwc, contrib_depthwise_conv2d_nchwc  # noqa: F401
from .dense import batch_matmul, dense, matmul  # noqa: F401
from .dense_pack import contrib_dense_pack  # noqa: F401
from .winograd import (contrib_conv2d_winograd_weight_transform,  # noqa: F401
                       contrib_conv2d_winograd_without_weight_transform)
from .misc import batch_flatten, bias_add, dropout, dropout_raw, pad  # noqa: F401
from .norm import batch_norm, layer_norm, lrn  # noqa: F401
from .pool import (adaptive_avg_pool2d, avg_pool2d, global_avg_pool2d, global_max_pool2d,  # noqa: F401
                   max_pool2d)
from .softmax import fast_softmax, log_softmax, softmax  # noqa: F401
from .conv_nd import conv1d, conv3d  # noqa: F401
from .conv_transpose import conv1d_transpose, conv2d_transpose, conv3d_transpose  # noqa: F401
from .pool_nd import (POOL_ND_NAMES, adaptive_avg_pool1d, adaptive_avg_pool3d, adaptive_max_pool1d,  # noqa: F401
                      adaptive_max_pool2d, adaptive_max_pool3d, avg_pool1d, avg_pool3d, global_avg_pool1d,
                      global_avg_pool3d, global_max_pool1d, global_max_pool3d, max_pool1d, max_pool3d)
from .pad_ext import dilate, mirror_pad  # noqa: F401
from .upsampling import upsampling, upsampling3d  # noqa: F401
from .norm_ext import group_norm, instance_norm, l2_normalize  # noqa: F401
from .loss import cross_entropy, cross_entropy_with_logits, nll_loss  # noqa: F401
from .grad_ops import avg_pool2d_grad, conv2d_backward_weight, max_pool2d_grad  # noqa: F401
from .sparse import sparse_add, sparse_dense, sparse_transpose  # noqa: F401
from .fifo_buffer import fifo_buffer  # noqa: F401
from .correlation import correlation  # noqa: F401
from .deformable_conv import deformable_conv2d  # noqa: F401
from .rearrange import batch_to_space_nd, depth_to_space, space_to_batch_nd, space_to_depth  # noqa: F401

__all__ = ["relu", "leaky_relu", "prelu", "conv2d", "contrib_conv2d_nchwc", "contrib_depthwise_conv2d_nchwc",
           "dense", "contrib_dense_pack", "matmul", "batch_matmul", "batch_flatten", "bias_add", "dropout", "dropout_raw", "pad", "batch_norm", "layer_norm", "lrn", "max_pool2d",
           "avg_pool2d", "global_max_pool2d", "global_avg_pool2d", "adaptive_avg_pool2d", "softmax",
           "log_softmax", "fast_softmax"]
__all__ += ["conv1d", "conv3d", "conv1d_transpose", "conv2d_transpose", "conv3d_transpose"]
__all__ += POOL_ND_NAMES
__all__ += ["depth_to_space", "space_to_depth", "space_to_batch_nd", "batch_to_space_nd", "mirror_pad", "dilate",
            "upsampling", "upsampling3d", "instance_norm", "group_norm", "l2_normalize", "cross_entropy",
            "cross_entropy_with_logits", "nll_loss", "max_pool2d_grad", "avg_pool2d_grad", "conv2d_backward_weight",
            "sparse_dense", "sparse_transpose", "sparse_add", "fifo_buffer", "correlation", "deformable_conv2d",
            "contrib_conv2d_winograd_weight_transform", "contrib_conv2d_winograd_without_weight_transform"]

import sys as _sys  # noqa: E402
from ..keywords import check_namespace as _check_namespace  # noqa: E402

_check_namespace(_sys.modules[__name__], __all__)   # a misspelled keyword names the valid ones
