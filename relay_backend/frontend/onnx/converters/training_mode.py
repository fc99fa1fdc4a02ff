"""The training-mode forms of Dropout (opset 12+) and BatchNormalization (opset 14+); the inference
forms stay with nn.py's converters, which these delegate to.

BatchNormalization with training_mode=1 normalizes with the batch's own statistics (mean and
population variance over every axis but the channel axis 1) and also returns the running
statistics blended with them: running * momentum + batch * (1 - momentum).

Dropout with training_mode true (a constant or a run-time bool) zeroes each element with
probability `ratio` and scales the kept ones by 1 / (1 - ratio); the mask output says which were
kept. The draws come from relay's threefry generator keyed by the node's `seed` (0 when absent), so
they are the same on every run and executor, but they are not the numbers numpy's generator gives
ONNX's reference (see node_tests: such node tests are reported as random draws). With ratio 0
nothing is dropped and the output is the input exactly.
"""
import numpy as np

from .... import op as _op
from ....op import random as _random
from ..common import const
from ._registry import TABLE, converter

_INFERENCE_DROPOUT = TABLE["Dropout"].fn
_INFERENCE_BATCH_NORM = TABLE["BatchNormalization"].fn


def _scalar(ctx, expr, what, dtype):
    if int(np.prod([int(d) for d in ctx.static_shape(expr, what)], dtype=np.int64)) != 1:
        raise ctx.invalid(f"{what} must be a scalar, got shape {ctx.shape(expr)}")
    return _op.cast(_op.reshape(expr, ()), dtype)


@converter("Dropout")
def dropout(ctx, inputs):
    """Dropout: training mode here (threefry draws), inference by nn.py's converter."""
    x = inputs[0]
    training = inputs[2] if ctx.since >= 12 and len(inputs) > 2 else None
    known = None if training is None else ctx.maybe_value(training)
    if training is None or (known is not None and not bool(np.asarray(known).reshape(-1)[0])):
        return _INFERENCE_DROPOUT(ctx, inputs[:2])
    seed = int(ctx.attrs.get("seed", 0)) & 0xFFFFFFFF     # an int attribute here (RandomUniform's is a float)
    dtype = ctx.dtype(x)
    ratio = inputs[1] if len(inputs) > 1 and inputs[1] is not None else const(np.array(0.5, "float32"))
    known_ratio = ctx.maybe_value(ratio)
    if known_ratio is not None and not 0 <= float(np.asarray(known_ratio).reshape(-1)[0]) <= 1:
        raise ctx.invalid(f"ratio must lie in [0, 1], got {float(np.asarray(known_ratio).reshape(-1)[0])}")
    ratio = _scalar(ctx, ratio, "ratio", "float32")
    shape = ctx.static_shape(x, "data")
    _, draws = _random.uniform(_random.threefry_key(seed), shape, "float32", 0.0, 1.0)
    keep = _op.greater_equal(draws, ratio)
    scale = _op.cast(_op.divide(const(np.array(1.0, "float32")), _op.subtract(const(np.array(1.0, "float32")), ratio)),
                     dtype)
    dropped = _op.where(keep, _op.multiply(x, scale), const(np.array(0, dtype)))
    if known is None:   # decided when the model runs
        flag = _scalar(ctx, training, "training_mode", "bool")
        dropped = _op.where(flag, dropped, x)
        keep = _op.logical_or(keep, _op.logical_not(flag))
    if len(ctx.node.output) > 1 and ctx.node.output[1]:
        return [dropped, keep]
    return dropped


@converter("BatchNormalization")
def batch_norm(ctx, inputs):
    """BatchNormalization: training_mode=1 here (batch statistics), inference by nn.py's converter."""
    if ctx.since < 14 or not ctx.attrs.get("training_mode", 0):
        return _INFERENCE_BATCH_NORM(ctx, inputs)
    x, scale, bias, mean, var = inputs[:5]
    shape = ctx.shape(x)
    if len(shape) < 2:
        raise ctx.invalid(f"X must have a channel axis (rank >= 2), got shape {shape}")
    eps = float(ctx.attrs.get("epsilon", 1e-5))
    momentum = float(ctx.attrs.get("momentum", 0.9))
    dtype = ctx.dtype(x)
    axes = [0] + list(range(2, len(shape)))
    batch_mean = _op.mean(x, axis=axes)
    centred = _op.subtract(x, _op.expand_dims(batch_mean, 1, len(shape) - 2))
    batch_var = _op.mean(_op.multiply(centred, centred), axis=axes)
    y = _op.nn.batch_norm(x, scale, bias, batch_mean, batch_var, axis=1, epsilon=eps)[0]
    keep, blend = const(np.array(momentum, dtype)), const(np.array(1 - momentum, dtype))
    running_mean = _op.add(_op.multiply(mean, keep), _op.multiply(batch_mean, blend))
    running_var = _op.add(_op.multiply(var, keep), _op.multiply(batch_var, blend))
    return [y, running_mean, running_var][:max(1, len(ctx.node.output))]
