"""Global pooling, batch / layer normalization, LRN, softmax and dropout ONNX ops (NCHW), and
the padding helpers the convolution and pooling converters share (Conv, ConvTranspose, the
windowed pools and InstanceNormalization map onto their Relay ops in nn_ext.py).
"""

import numpy as np

from .... import op as _op
from ....op import nn as _nn
from .math import scalar
from ._registry import converter


# --- padding (shared with nn_ext.py) ---------------------------------------------------------
def conv_pads(ctx, in_spatial, kernel, strides, dilations):
    """(begin..., end...) pads from `pads` or `auto_pad` (SAME_UPPER puts the odd cell at the end)."""
    auto_pad = ctx.attrs.get("auto_pad", "NOTSET")
    ctx.attrs.get("pads")  # ignored when auto_pad decides the pads
    n = len(kernel)
    if auto_pad in ("NOTSET", ""):
        return explicit_pads(ctx, n)
    if auto_pad == "VALID":
        return (0,) * (2 * n)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.fail(f"auto_pad={auto_pad!r} is not supported", "use NOTSET, VALID, SAME_UPPER or SAME_LOWER")
    from ....ir.types import is_static
    if not all(is_static(d) for d in in_spatial):
        raise ctx.fail_shape(f"auto_pad={auto_pad} needs static spatial dims to compute its pads, but the input's "
                       f"spatial shape is {tuple(in_spatial)}",
                       "give static input shapes via from_onnx(model, shape={...}), or use explicit pads")
    begin, end = [], []
    for size, k, s, d in zip(in_spatial, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, big = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else big)
        end.append(big if auto_pad == "SAME_UPPER" else small)
    return tuple(begin + end)


def explicit_pads(ctx, n):
    """The `pads` attribute: 2 * n non-negative values (all begins, then all ends); zeros if absent."""
    pads = ctx.attrs.ints("pads")
    if not pads:
        return (0,) * (2 * n)
    if len(pads) != 2 * n or min(pads) < 0:
        raise ctx.invalid(f"pads={list(pads)} must hold {2 * n} non-negative values (the begin and end of each "
                          "spatial dimension)")
    return tuple(pads)


def per_dim(ctx, name, n, default=None, minimum=1):
    """Attribute `name`, one int >= `minimum` per spatial dimension (`n`), or `default` repeated when
    it is absent or empty (None when there is no default)."""
    vals = ctx.attrs.ints(name)
    if not vals:
        return None if default is None else (default,) * n
    if len(vals) != n or min(vals) < minimum:
        raise ctx.invalid(f"{name}={list(vals)} must hold {n} value(s) >= {minimum}, one per spatial dimension "
                          "of the input")
    return vals


@converter("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx, inputs):
    x = inputs[0]
    if ctx.ndim(x) == 4:
        return (_nn.global_avg_pool2d if ctx.op == "GlobalAveragePool" else _nn.global_max_pool2d)(x)
    axes = list(range(2, ctx.ndim(x)))
    return (_op.mean if ctx.op == "GlobalAveragePool" else _op.max)(x, axis=axes, keepdims=True)


# --- normalization -------------------------------------------------------------------------------
@converter("BatchNormalization")
def batch_norm(ctx, inputs):
    x, gamma, beta, mean, var = inputs[:5]
    ctx.attrs.get("momentum")
    if ctx.attrs.get("training_mode", 0) or any(o for o in ctx.node.output[1:]):
        raise ctx.fail("training mode (and its running-statistics outputs) is not supported",
                       "export the model for inference")
    if not ctx.attrs.get("spatial", 1):
        raise ctx.fail("spatial=0 is not supported")
    ctx.attrs.get("is_test")
    return _nn.batch_norm(x, gamma, beta, mean, var, axis=1, epsilon=float(ctx.attrs.get("epsilon", 1e-5)))[0]


def _normalize(ctx, x, axes, eps):
    mean = _op.mean(x, axis=axes, keepdims=True)
    var = _variance(x, mean, axes)
    return _op.divide(_op.subtract(x, mean), _op.sqrt(_op.add(var, scalar(ctx, eps, x))))


def _variance(x, mean, axes):
    d = _op.subtract(x, mean)
    return _op.mean(_op.multiply(d, d), axis=axes, keepdims=True)


@converter("LayerNormalization")
def layer_norm(ctx, inputs):
    x, scale = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    nd = ctx.ndim(x)
    axis = int(ctx.attrs.get("axis", -1)) % nd
    eps = float(ctx.attrs.get("epsilon", 1e-5))
    ctx.attrs.get("stash_type")
    if any(o for o in ctx.node.output[1:]):  # Mean and InvStdDev requested too
        axes = list(range(axis, nd))
        mean = _op.mean(x, axis=axes, keepdims=True)
        inv_std = _op.rsqrt(_op.add(_variance(x, mean, axes), scalar(ctx, eps, x)))
        out = _op.multiply(_op.multiply(_op.subtract(x, mean), inv_std), scale)
        return [out if bias is None else _op.add(out, bias), mean, inv_std]
    if axis == nd - 1 and ctx.ndim(scale) == 1 and (bias is None or ctx.ndim(bias) == 1):
        beta = bias if bias is not None else _op.zeros_like(scale)
        return _nn.layer_norm(x, scale, beta, axis=-1, epsilon=eps)
    out = _op.multiply(_normalize(ctx, x, list(range(axis, nd)), eps), scale)
    return out if bias is None else _op.add(out, bias)


@converter("LRN")
def lrn(ctx, inputs):
    size = int(ctx.attrs.get("size"))
    if size % 2 == 0:
        raise ctx.fail(f"an even window size={size} is not supported (its window is asymmetric)")
    return _nn.lrn(inputs[0], size=size, axis=1, bias=float(ctx.attrs.get("bias", 1.0)),
                   alpha=float(ctx.attrs.get("alpha", 1e-4)), beta=float(ctx.attrs.get("beta", 0.75)))


# --- softmax, dropout ----------------------------------------------------------------------------
@converter("Softmax", "LogSoftmax")
def softmax(ctx, inputs):
    x = inputs[0]
    fn = _nn.softmax if ctx.op == "Softmax" else _nn.log_softmax
    nd = ctx.ndim(x)
    if ctx.since >= 13:
        return fn(x, axis=int(ctx.attrs.get("axis", -1)))
    axis = int(ctx.attrs.get("axis", 1)) % max(nd, 1)
    if axis == nd - 1:
        return fn(x, axis=-1)
    shape = ctx.static_shape(x, "input")  # older opsets: softmax over the 2-D coercion at `axis`
    flat = _op.reshape(x, (int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))))
    return _op.reshape(fn(flat, axis=-1), shape)


@converter("Dropout")
def dropout(ctx, inputs):
    x = inputs[0]
    ctx.attrs.get("ratio")
    ctx.attrs.get("seed")
    ctx.attrs.get("is_test")
    if len(inputs) > 2 and inputs[2] is not None:
        training = ctx.value(inputs[2], "training_mode")
        if bool(np.asarray(training)):
            raise ctx.fail("training_mode=True is not supported", "export the model for inference")
    if len(ctx.node.output) > 1 and ctx.node.output[1]:
        mask = _op.cast(_op.ones_like(_op.cast(x, "float32")), "bool")
        return [x, mask]
    return x
