"""The seed CNN: conv2d 3->16 k3 pad1, relu, global avg pool, flatten, dense 16->10 on 1x3x32x32.

`get_workload()` returns (mod, params) with seeded random params, as tvm.relay.testing does;
`numpy_forward()` is an independent numpy forward pass used to check every executor.
"""
import numpy as np

from .. import ir
from ..docstrings import shared_parameters
from ..op import nn
from .init import FORWARD_PARAMETERS, NETWORK_PARAMETERS, WORKLOAD


@shared_parameters(NETWORK_PARAMETERS, WORKLOAD)
def get_workload(batch_size: int = 1, image_shape=(3, 32, 32), channels: int = 16,
                 num_classes: int = 10, dtype: str = "float32", seed: int = 0):
    """The seed CNN (conv 3x3, relu, global average pool, dense) with seeded random parameters,
    named like their relay variables.

    Parameters
    ----------
    channels : int, optional
        The number of convolution output channels. Defaults to 16.
    """
    data = ir.var("data", shape=(batch_size, *image_shape), dtype=dtype)
    conv_w = ir.var("conv_weight", shape=(channels, image_shape[0], 3, 3), dtype=dtype)
    dense_w = ir.var("dense_weight", shape=(num_classes, channels), dtype=dtype)
    dense_b = ir.var("dense_bias", shape=(num_classes,), dtype=dtype)
    y = nn.conv2d(data, conv_w, padding=(1, 1), channels=channels, kernel_size=(3, 3))
    y = nn.relu(y)
    y = nn.global_avg_pool2d(y)
    y = nn.batch_flatten(y)
    y = nn.dense(y, dense_w, units=num_classes)
    y = nn.bias_add(y, dense_b)
    func = ir.Function([data, conv_w, dense_w, dense_b], y)
    rng = np.random.default_rng(seed)
    fan_in = image_shape[0] * 9
    params = {
        "conv_weight": (rng.standard_normal(conv_w.type_annotation.shape) / np.sqrt(fan_in)).astype(dtype),
        "dense_weight": (rng.standard_normal(dense_w.type_annotation.shape) / np.sqrt(channels)).astype(dtype),
        "dense_bias": rng.uniform(-0.1, 0.1, num_classes).astype(dtype),
    }
    return ir.IRModule.from_expr(func), params


@shared_parameters(FORWARD_PARAMETERS)
def numpy_forward(data: np.ndarray, params: dict) -> np.ndarray:
    """The seed CNN written directly in numpy (an im2col convolution), in float64.

    Parameters
    ----------
    data : numpy.ndarray
        The input batch, NCHW.

    Returns
    -------
    logits : numpy.ndarray
        The dense output, (batch, num_classes).
    """
    x = data.astype("float64")
    w = params["conv_weight"].astype("float64")
    n, c, h, wd = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([padded[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)], axis=2)
    conv = np.einsum("nckhw,ock->nohw", cols, w.reshape(w.shape[0], c, 9))
    pooled = np.maximum(conv, 0).mean(axis=(2, 3))
    return pooled @ params["dense_weight"].astype("float64").T + params["dense_bias"]
