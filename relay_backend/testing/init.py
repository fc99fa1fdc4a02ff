"""Seeded, deterministic parameter initialisation for the built-in workloads.

As tvm.relay.testing's create_workload, every free variable of main other than the data input
becomes a named param; unlike it, batch-norm statistics are random (not 0/1) so that the
normalisation is actually exercised by the numeric checks.
"""
import numpy as np

from .. import ir
from ..docstrings import shared_parameters
from ..errors import RelayError
from ..transform import InferType


def _param_value(name: str, shape, dtype: str, rng) -> np.ndarray:
    """Xavier-uniform weights; small biases/betas; gamma near 1; positive variances."""
    shape = tuple(int(d) for d in shape)
    if name.endswith("_weight") and len(shape) >= 2:
        fan_in = int(np.prod(shape[1:]))
        fan_out = shape[0] * int(np.prod(shape[2:]))
        bound = np.sqrt(6.0 / (fan_in + fan_out))
        value = rng.uniform(-bound, bound, shape)
    elif name.endswith("_gamma"):
        value = rng.uniform(0.8, 1.2, shape)
    elif name.endswith("_moving_var"):
        value = rng.uniform(0.5, 1.5, shape)
    elif name.endswith(("_moving_mean", "_beta", "_bias")):
        value = rng.uniform(-0.1, 0.1, shape)
    else:
        raise RelayError(f"create_workload: no initialiser for param {name!r} {shape}; name it "
                         f"*_weight, *_bias, *_gamma, *_beta, *_moving_mean or *_moving_var")
    return value.astype(dtype)


# the parameters the built-in networks share (shared_parameters completes their docstrings)
NETWORK_PARAMETERS = {
    "batch_size": ("int", "The batch size of the data input."),
    "num_classes": ("int", "The number of output classes."),
    "image_shape": ("tuple of int", "The (channels, height, width) of one image."),
    "dtype": ("str", "The dtype of the data and weights."),
    "seed": ("int", "The seed of the random parameter values."),
}
# ... and the parameters of their numpy oracles (numpy_forward)
FORWARD_PARAMETERS = {"params": ("dict of str to numpy.ndarray", "The params of the workload, by name.")}
WORKLOAD = ("workload", "tuple", "(IRModule, params dict): the network's module, and a numpy array for "
                                 "every parameter but the data, by name.")


@shared_parameters(NETWORK_PARAMETERS, WORKLOAD)
def create_workload(func: ir.Function, seed: int = 0):
    """A workload from a network function: the typed module and seeded random values for every
    parameter but the first (the data), by name (weights Xavier-uniform, gammas and variances
    near 1, betas, means and biases near 0).

    Parameters
    ----------
    func : Function
        The network; parameters after the first are named *_weight, *_bias, *_gamma, *_beta,
        *_moving_mean or *_moving_var.
    """
    mod = InferType()(ir.IRModule.from_expr(func))
    rng = np.random.default_rng(seed)
    params = {}
    for param in mod["main"].params[1:]:
        ty = param.checked_type
        params[param.name_hint] = _param_value(param.name_hint, ty.shape, ty.dtype, rng)
    return mod, params
