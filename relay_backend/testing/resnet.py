"""ResNet v1 workloads (tvm.relay.testing.resnet's signature and naming, post-activation units).

    mod, params = resnet.get_workload(num_layers=18)                  # 1x3x224x224 -> 1x1000
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32))   # 3x3 stem, no pool
    mod, params = resnet.get_block_workload()                         # one basic block, 64ch 56x56

Basic units (conv3x3-bn-relu-conv3x3-bn, + shortcut, relu) for 18/34, bottleneck units
(1x1-3x3-1x1) for 50/101/152. As in TVM, images of height <= 32 get a 3x3 stride-1 stem and no
max pool. Convolutions have no bias; every batch_norm stays a relay nn.batch_norm call so
SimplifyInference has work to do. `numpy_forward` / `block_numpy_forward` are the same networks
in float64 numpy (testing.numpy_nn), independent of the op references.
"""
import numpy as np

from .. import ir
from ..docstrings import shared_parameters
from ..errors import RelayError
from ..op import nn
from ..op import tensor as T
from . import numpy_nn as F
from .init import FORWARD_PARAMETERS, NETWORK_PARAMETERS, WORKLOAD, create_workload

BN_EPSILON = 2e-5
UNITS = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3), 50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}


def _config(num_layers: int):
    """(units per stage, filters [stem, stage1..4], bottleneck?) for a depth."""
    if num_layers not in UNITS:
        raise RelayError(f"resnet.get_workload: num_layers={num_layers} is not supported; "
                         f"use one of {sorted(UNITS)}")
    if num_layers >= 50:
        return UNITS[num_layers], (64, 256, 512, 1024, 2048), True
    return UNITS[num_layers], (64, 64, 128, 256, 512), False


class _Builder:
    """Creates named weight vars while building the relay graph."""

    def __init__(self, dtype: str):
        self.dtype = dtype
        self.params = []

    def _var(self, name, shape):
        v = ir.var(name, shape=shape, dtype=self.dtype)
        self.params.append(v)
        return v

    def conv(self, x, name, in_ch, out_ch, kernel, stride=1, pad=0):
        w = self._var(f"{name}_weight", (out_ch, in_ch, kernel, kernel))
        return nn.conv2d(x, w, strides=(stride, stride), padding=(pad, pad), channels=out_ch,
                         kernel_size=(kernel, kernel))

    def bn(self, x, name, ch):
        g, b, m, v = (self._var(f"{name}_{p}", (ch,)) for p in ("gamma", "beta", "moving_mean", "moving_var"))
        return nn.batch_norm(x, g, b, m, v, epsilon=BN_EPSILON)[0]

    def unit(self, x, name, in_ch, out_ch, stride, bottleneck):
        """One v1 residual unit; a projection shortcut when shape or channel count changes."""
        if bottleneck:
            mid = out_ch // 4
            y = nn.relu(self.bn(self.conv(x, f"{name}_conv1", in_ch, mid, 1), f"{name}_bn1", mid))
            y = nn.relu(self.bn(self.conv(y, f"{name}_conv2", mid, mid, 3, stride, 1), f"{name}_bn2", mid))
            y = self.bn(self.conv(y, f"{name}_conv3", mid, out_ch, 1), f"{name}_bn3", out_ch)
        else:
            y = nn.relu(self.bn(self.conv(x, f"{name}_conv1", in_ch, out_ch, 3, stride, 1), f"{name}_bn1", out_ch))
            y = self.bn(self.conv(y, f"{name}_conv2", out_ch, out_ch, 3, 1, 1), f"{name}_bn2", out_ch)
        if stride != 1 or in_ch != out_ch:
            x = self.bn(self.conv(x, f"{name}_sc", in_ch, out_ch, 1, stride), f"{name}_sc_bn", out_ch)
        return nn.relu(T.add(y, x))


@shared_parameters(NETWORK_PARAMETERS)
def get_net(batch_size: int, num_classes: int, num_layers: int = 50, image_shape=(3, 224, 224),
            dtype: str = "float32") -> ir.Function:
    """The function of a ResNet v1 (data first, then every weight in creation order).

    Parameters
    ----------
    num_layers : int, optional
        The depth: 18 or 34 (basic blocks), or 50, 101 or 152 (bottleneck blocks).
        Defaults to 50.
    image_shape : tuple of int, optional
        The (channels, height, width) of one image; a height of 32 or less takes the CIFAR
        stem (3x3 convolution, no max pool). Defaults to (3, 224, 224).

    Returns
    -------
    func : Function
        The network.
    """
    units, filters, bottleneck = _config(num_layers)
    data = ir.var("data", shape=(batch_size, *image_shape), dtype=dtype)
    b = _Builder(dtype)
    small = image_shape[1] <= 32
    if small:
        x = b.conv(data, "conv0", image_shape[0], filters[0], 3, 1, 1)
    else:
        x = b.conv(data, "conv0", image_shape[0], filters[0], 7, 2, 3)
    x = nn.relu(b.bn(x, "bn0", filters[0]))
    if not small:
        x = nn.max_pool2d(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    in_ch = filters[0]
    for stage, count in enumerate(units, start=1):
        for unit in range(1, count + 1):
            stride = 2 if stage > 1 and unit == 1 else 1
            x = b.unit(x, f"stage{stage}_unit{unit}", in_ch, filters[stage], stride, bottleneck)
            in_ch = filters[stage]
    x = nn.batch_flatten(nn.global_avg_pool2d(x))
    w = ir.var("fc1_weight", shape=(num_classes, in_ch), dtype=dtype)
    bias = ir.var("fc1_bias", shape=(num_classes,), dtype=dtype)
    x = nn.softmax(nn.bias_add(nn.dense(x, w, units=num_classes), bias))
    return ir.Function([data] + b.params + [w, bias], x)


@shared_parameters(NETWORK_PARAMETERS, WORKLOAD)
def get_workload(batch_size: int = 1, num_classes: int = 1000, num_layers: int = 18, image_shape=(3, 224, 224),
                 layout: str = "NCHW", dtype: str = "float32", seed: int = 0):
    """A ResNet v1 with seeded random parameters (tvm.relay.testing.resnet.get_workload).

    The positional order is TVM's: batch_size, num_classes, num_layers, image_shape, layout,
    dtype.

    Parameters
    ----------
    num_layers : int, optional
        The depth (18, 34, 50, 101, 152). Defaults to 18.
    layout : str, optional
        The data layout; only "NCHW" (the default) is supported.
    """
    if layout != "NCHW":
        raise RelayError(f"resnet.get_workload: layout={layout!r} is not supported; use layout=\"NCHW\"")
    return create_workload(get_net(batch_size, num_classes, num_layers, image_shape, dtype), seed)


@shared_parameters(NETWORK_PARAMETERS, WORKLOAD)
def get_block_workload(batch_size: int = 1, channels: int = 64, image_size: int = 56, dtype: str = "float32",
                       seed: int = 0):
    """One basic residual unit with an identity shortcut, with seeded random parameters (the
    benchmark block).

    Parameters
    ----------
    channels : int, optional
        The number of input and output channels. Defaults to 64.
    image_size : int, optional
        The height and width of the input. Defaults to 56.
    """
    data = ir.var("data", shape=(batch_size, channels, image_size, image_size), dtype=dtype)
    b = _Builder(dtype)
    y = b.unit(data, "block", channels, channels, 1, bottleneck=False)
    return create_workload(ir.Function([data] + b.params, y), seed)


# --- independent numpy forward passes -----------------------------------------------------------
def _np_bn(x, params, name):
    return F.batch_norm(x, params[f"{name}_gamma"], params[f"{name}_beta"], params[f"{name}_moving_mean"],
                        params[f"{name}_moving_var"], epsilon=BN_EPSILON)


def _np_unit(x, params, name, stride, bottleneck):
    p = lambda suffix: params[f"{name}_{suffix}_weight"]  # noqa: E731
    if bottleneck:
        y = F.relu(_np_bn(F.conv2d(x, p("conv1")), params, f"{name}_bn1"))
        y = F.relu(_np_bn(F.conv2d(y, p("conv2"), stride, 1), params, f"{name}_bn2"))
        y = _np_bn(F.conv2d(y, p("conv3")), params, f"{name}_bn3")
    else:
        y = F.relu(_np_bn(F.conv2d(x, p("conv1"), stride, 1), params, f"{name}_bn1"))
        y = _np_bn(F.conv2d(y, p("conv2"), 1, 1), params, f"{name}_bn2")
    if f"{name}_sc_weight" in params:
        x = _np_bn(F.conv2d(x, p("sc"), stride), params, f"{name}_sc_bn")
    return F.relu(y + x)


@shared_parameters(FORWARD_PARAMETERS)
def block_numpy_forward(data: np.ndarray, params: dict) -> np.ndarray:
    """get_block_workload's network computed in float64 numpy.

    Parameters
    ----------
    data : numpy.ndarray
        The input, (batch, channels, image_size, image_size).

    Returns
    -------
    output : numpy.ndarray
        The unit's output.
    """
    return _np_unit(np.asarray(data, dtype="float64"), params, "block", 1, bottleneck=False)


@shared_parameters(FORWARD_PARAMETERS)
def numpy_forward(data: np.ndarray, params: dict, num_layers: int = 18) -> np.ndarray:
    """get_workload's network computed in float64 numpy (the stem chosen from the image height,
    as there).

    Parameters
    ----------
    data : numpy.ndarray
        The input batch, NCHW.
    num_layers : int, optional
        The depth the workload was built with. Defaults to 18.

    Returns
    -------
    probabilities : numpy.ndarray
        The softmax output, (batch, num_classes).
    """
    units, _, bottleneck = _config(num_layers)
    x = np.asarray(data, dtype="float64")
    small = x.shape[2] <= 32
    x = F.conv2d(x, params["conv0_weight"], 1 if small else 2, 1 if small else 3)
    x = F.relu(_np_bn(x, params, "bn0"))
    if not small:
        x = F.max_pool2d(x, 3, 2, 1)
    for stage, count in enumerate(units, start=1):
        for unit in range(1, count + 1):
            stride = 2 if stage > 1 and unit == 1 else 1
            x = _np_unit(x, params, f"stage{stage}_unit{unit}", stride, bottleneck)
    x = x.mean(axis=(2, 3))
    return F.softmax(F.dense(x, params["fc1_weight"], params["fc1_bias"]), axis=-1)
