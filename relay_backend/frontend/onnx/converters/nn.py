"""Convolution, pooling, normalization, softmax and dropout ONNX ops (NCHW).

1-D convolutions and pools run as their 2-D forms over a height of 1. ConvTranspose is a
convolution over the input with (stride - 1) zeros inserted between elements (done with
reshape / pad / slice, all injective) and the kernel flipped and transposed per group; the
kernel work folds away when the weights are constants.
"""
import math as _m

import numpy as np

from .... import op as _op
from ....op import nn as _nn
from .math import scalar
from ._registry import converter


# --- padding ---------------------------------------------------------------------------------------
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


def _to_2d(ctx, x, what):
    """(x as NCHW, was_1d) for a 3-D (N, C, W) or 4-D input; other ranks are unsupported."""
    nd = ctx.ndim(x)
    if nd == 3:
        return _op.expand_dims(x, 2), True
    if nd != 4:
        raise ctx.fail(f"{what} has rank {nd}; only 1-D and 2-D {ctx.op} (rank 3 or 4 inputs) are supported")
    return x, False


def _pad4(pads, was_1d):
    """ONNX (b..., e...) -> relay (top, left, bottom, right)."""
    if was_1d:
        return (0, pads[0], 0, pads[1])
    return (pads[0], pads[1], pads[2], pads[3])


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


def _spatial_attrs(ctx, n):
    """(strides, dilations) of an n-D convolution or pool."""
    return per_dim(ctx, "strides", n, 1), per_dim(ctx, "dilations", n, 1)


def _lift(vals, was_1d, fill=1):
    return (fill,) + tuple(vals) if was_1d else tuple(vals)


# --- convolution -------------------------------------------------------------------------------------
@converter("Conv")
def conv(ctx, inputs):
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    wshape = ctx.static_shape(w, "W")
    x2, was_1d = _to_2d(ctx, x, "X")
    kernel = per_dim(ctx, "kernel_shape", 2 - was_1d) or wshape[2:]
    strides, dilations = _spatial_attrs(ctx, 2 - was_1d)
    pads = conv_pads(ctx, ctx.shape(x)[2:], kernel, strides, dilations)
    if was_1d:
        w = _op.expand_dims(w, 2)
    groups = int(ctx.attrs.get("group", 1))
    out = _nn.conv2d(x2, w, strides=_lift(strides, was_1d), padding=_pad4(pads, was_1d),
                     dilation=_lift(dilations, was_1d), groups=groups, channels=wshape[0],
                     kernel_size=_lift(kernel, was_1d))
    if b is not None:
        out = _nn.bias_add(out, b, axis=1)
    return _op.squeeze(out, axis=[2]) if was_1d else out


@converter("ConvTranspose")
def conv_transpose(ctx, inputs):
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    x, was_1d = _to_2d(ctx, x, "X")
    if was_1d:
        w = _op.expand_dims(w, 2)
    xs, ws = ctx.static_shape(x, "X"), ctx.static_shape(w, "W")
    kernel = per_dim(ctx, "kernel_shape", 2 - was_1d)
    kernel = ws[2:] if kernel is None else _lift(kernel, was_1d)
    strides, dil = (_lift(v, was_1d) for v in _spatial_attrs(ctx, 2 - was_1d))
    out_pad = _lift(per_dim(ctx, "output_padding", 2 - was_1d, 0, minimum=0), was_1d, fill=0)
    group = int(ctx.attrs.get("group", 1))
    in_sp = xs[2:]
    full = [(i - 1) * s + (k - 1) * d + 1 + op for i, s, k, d, op in zip(in_sp, strides, kernel, dil, out_pad)]
    output_shape = ctx.attrs.ints("output_shape")
    auto_pad = ctx.attrs.get("auto_pad", "NOTSET")
    ctx.attrs.get("pads")  # output_shape or auto_pad, when given, decide the pads
    if output_shape:
        target = _lift(output_shape[-(2 - was_1d):], was_1d)
        total = [f - t for f, t in zip(full, target)]
        upper = auto_pad == "SAME_UPPER"  # NOTSET / SAME_LOWER put the odd cell first
        pb = [t // 2 if upper else t - t // 2 for t in total]
        pe = [t - p for t, p in zip(total, pb)]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        total = [f - i * s for f, i, s in zip(full, in_sp, strides)]
        pb = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in total]
        pe = [t - p for t, p in zip(total, pb)]
    elif auto_pad in ("NOTSET", "VALID", ""):
        p = explicit_pads(ctx, 2 - was_1d) if auto_pad != "VALID" else (0,) * (2 * (2 - was_1d))
        p = (0, p[0], 0, p[1]) if was_1d else p
        pb, pe = [p[0], p[1]], [p[2], p[3]]
    else:
        raise ctx.fail(f"auto_pad={auto_pad!r} is not supported")
    # zero-insertion: (N, C, H, W) -> (N, C, (H-1)*sh+1, (W-1)*sw+1)
    n, c, h, wd = xs
    sh, sw = strides
    if sh > 1 or sw > 1:
        y = _op.reshape(x, (n, c, h, 1, wd, 1))
        y = _nn.pad(y, ((0, 0), (0, 0), (0, 0), (0, sh - 1), (0, 0), (0, sw - 1)))
        y = _op.reshape(y, (n, c, h * sh, wd * sw))
        y = _op.strided_slice(y, (0, 0), ((h - 1) * sh + 1, (wd - 1) * sw + 1), axes=(2, 3))
    else:
        y = x
    # conv with the flipped kernel: pad (k-1)*d - pad_begin before, (k-1)*d - pad_end + output_padding after
    before = [(k - 1) * d - p for k, d, p in zip(kernel, dil, pb)]
    after = [(k - 1) * d - p + op for k, d, p, op in zip(kernel, dil, pe, out_pad)]
    cin, cout_g = ws[0], ws[1]
    wk = _op.reshape(w, (group, cin // group, cout_g) + tuple(kernel))
    wk = _op.transpose(wk, (0, 2, 1, 3, 4))
    wk = _op.reshape(wk, (group * cout_g, cin // group) + tuple(kernel))
    wk = _op.reverse(_op.reverse(wk, 2), 3)
    neg = [min(v, 0) for v in before + after]
    y = _nn.pad(y, ((0, 0), (0, 0), (max(before[0], 0), max(after[0], 0)), (max(before[1], 0), max(after[1], 0))))
    if any(neg):
        hh, ww = ctx.static_shape(y, "padded input")
        y = _op.strided_slice(y, (-neg[0], -neg[1]), (hh + neg[2], ww + neg[3]), axes=(2, 3))
    out = _nn.conv2d(y, wk, dilation=dil, groups=group, channels=group * cout_g, kernel_size=kernel)
    if b is not None:
        out = _nn.bias_add(out, b, axis=1)
    return _op.squeeze(out, axis=[2]) if was_1d else out


# --- pooling -------------------------------------------------------------------------------------
@converter("MaxPool", "AveragePool")
def pool(ctx, inputs):
    x = inputs[0]
    x2, was_1d = _to_2d(ctx, x, "X")
    kernel = per_dim(ctx, "kernel_shape", 2 - was_1d)
    if kernel is None:
        raise ctx.invalid("kernel_shape is empty")
    strides, dilations = _spatial_attrs(ctx, 2 - was_1d)
    pads = conv_pads(ctx, ctx.shape(x)[2:], kernel, strides, dilations)
    ceil_mode = bool(ctx.attrs.get("ceil_mode", 0))
    common = dict(pool_size=_lift(kernel, was_1d), strides=_lift(strides, was_1d),
                  dilation=_lift(dilations, was_1d), padding=_pad4(pads, was_1d), ceil_mode=ceil_mode)
    if ctx.op == "MaxPool":
        if ctx.attrs.get("storage_order", 0):
            raise ctx.fail("storage_order=1 is not supported")
        if len(ctx.node.output) > 1 and ctx.node.output[1]:
            raise ctx.fail("the Indices output is not supported")
        out = _nn.max_pool2d(x2, **common)
    else:
        out = _nn.avg_pool2d(x2, count_include_pad=bool(ctx.attrs.get("count_include_pad", 0)), **common)
    return _op.squeeze(out, axis=[2]) if was_1d else out


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


@converter("InstanceNormalization")
def instance_norm(ctx, inputs):
    x, scale, bias = inputs
    nd = ctx.ndim(x)
    out = _normalize(ctx, x, list(range(2, nd)), float(ctx.attrs.get("epsilon", 1e-5)))
    shape = (-1,) + (1,) * (nd - 2)
    return _op.add(_op.multiply(out, _op.reshape(scale, shape)), _op.reshape(bias, shape))


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
