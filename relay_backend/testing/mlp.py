"""A multi-layer perceptron workload (tvm.relay.testing.mlp).

    mod, params = mlp.get_workload(batch_size=1)                          # TVM's 784-128-64-10
    mod, params = mlp.get_workload(batch_size=1, num_hidden=(512, 512))   # the benchmarks' MLP

`numpy_forward` is the same network in float64 numpy, independent of the op references.
"""
import numpy as np

from .. import ir
from ..docstrings import shared_parameters
from ..op import nn
from . import numpy_nn
from .init import FORWARD_PARAMETERS, NETWORK_PARAMETERS, WORKLOAD, create_workload

DEFAULT_HIDDEN = (128, 64)


@shared_parameters(NETWORK_PARAMETERS)
def get_net(batch_size: int, num_classes: int = 10, image_shape=(1, 28, 28), dtype: str = "float32",
            num_hidden=DEFAULT_HIDDEN) -> ir.Function:
    """The function of a multilayer perceptron: batch_flatten, then dense + bias_add + relu per
    hidden layer, then dense + bias_add + softmax.

    Parameters
    ----------
    num_hidden : tuple of int, optional
        The widths of the hidden layers. Defaults to (128, 64), TVM's network.

    Returns
    -------
    func : Function
        The network, data first, then fc<i>_weight and fc<i>_bias per layer.
    """
    data = ir.var("data", shape=(batch_size, *image_shape), dtype=dtype)
    params = [data]
    x = nn.batch_flatten(data)
    features = int(np.prod(image_shape))
    widths = list(num_hidden) + [num_classes]
    for i, units in enumerate(widths, start=1):
        w = ir.var(f"fc{i}_weight", shape=(units, features), dtype=dtype)
        b = ir.var(f"fc{i}_bias", shape=(units,), dtype=dtype)
        params += [w, b]
        x = nn.bias_add(nn.dense(x, w, units=units), b)
        if i < len(widths):
            x = nn.relu(x)
        features = units
    return ir.Function(params, nn.softmax(x))


@shared_parameters(NETWORK_PARAMETERS, WORKLOAD)
def get_workload(batch_size: int = 1, num_classes: int = 10, image_shape=(1, 28, 28), dtype: str = "float32",
                 num_hidden=DEFAULT_HIDDEN, seed: int = 0):
    """The MLP with seeded random parameters (tvm.relay.testing.mlp.get_workload).

    Parameters
    ----------
    num_hidden : tuple of int, optional
        The widths of the hidden layers (not in TVM's signature). Defaults to (128, 64), TVM's
        network.
    """
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype, num_hidden), seed)


@shared_parameters(FORWARD_PARAMETERS)
def numpy_forward(data: np.ndarray, params: dict) -> np.ndarray:
    """The MLP computed in float64 numpy (an oracle independent of the op references); the layer
    count is read from the fc*_weight params.

    Parameters
    ----------
    data : numpy.ndarray
        The input batch.

    Returns
    -------
    probabilities : numpy.ndarray
        The softmax output, (batch, num_classes).
    """
    x = np.asarray(data, dtype="float64").reshape(data.shape[0], -1)
    layers = sum(1 for name in params if name.startswith("fc") and name.endswith("_weight"))
    for i in range(1, layers + 1):
        x = numpy_nn.dense(x, params[f"fc{i}_weight"], params[f"fc{i}_bias"])
        if i < layers:
            x = numpy_nn.relu(x)
    return numpy_nn.softmax(x, axis=-1)
