"""ONNX converters onto the issue-20 nn operators: 1-D/2-D/3-D Conv, ConvTranspose (pads,
auto_pad, output_shape, output_padding, group, dilations), MaxPool / AveragePool / LpPool,
InstanceNormalization, GroupNormalization, LpNormalization,
MeanVarianceNormalization, DepthToSpace / SpaceToDepth, Upsample, NegativeLogLikelihoodLoss and
SoftmaxCrossEntropyLoss. Each maps onto one Relay op (plus bias or a few elementwise ops).
"""
import numpy as np

from .... import op as _op
from ....ir.expr import const
from ....op import nn as _nn
from ._registry import converter
from .math import scalar
from .nn import conv_pads, explicit_pads, per_dim

CONV = {1: _nn.conv1d, 2: _nn.conv2d, 3: _nn.conv3d}
CONV_TRANSPOSE = {1: _nn.conv1d_transpose, 2: _nn.conv2d_transpose, 3: _nn.conv3d_transpose}
MAX_POOL = {1: _nn.max_pool1d, 2: _nn.max_pool2d, 3: _nn.max_pool3d}
AVG_POOL = {1: _nn.avg_pool1d, 2: _nn.avg_pool2d, 3: _nn.avg_pool3d}


def spatial_rank(ctx, x, what: str = "X") -> int:
    """The number of spatial dims of an (N, C, spatial...) input: 1, 2 or 3."""
    nd = ctx.ndim(x) - 2
    if nd not in (1, 2, 3):
        raise ctx.fail(f"{what} has rank {nd + 2}; only 1-D, 2-D and 3-D {ctx.op} (rank 3 to 5 inputs) are supported")
    return nd


def _with_bias(out, inputs, k):
    b = inputs[k] if len(inputs) > k else None
    return out if b is None else _nn.bias_add(out, b, axis=1)


# --- convolution ---------------------------------------------------------------------------------
@converter("Conv")
def conv(ctx, inputs):
    x, w = inputs[0], inputs[1]
    nd = spatial_rank(ctx, x)
    wshape = ctx.static_shape(w, "W")
    kernel = per_dim(ctx, "kernel_shape", nd) or wshape[2:]
    strides, dilations = per_dim(ctx, "strides", nd, 1), per_dim(ctx, "dilations", nd, 1)
    pads = conv_pads(ctx, ctx.shape(x)[2:], kernel, strides, dilations)
    out = CONV[nd](x, w, strides=strides, padding=pads, dilation=dilations, groups=int(ctx.attrs.get("group", 1)),
                   channels=wshape[0], kernel_size=kernel)
    return _with_bias(out, inputs, 2)


def _transpose_pads(ctx, in_spatial, kernel, strides, dilations, out_pad):
    """ONNX ConvTranspose's (begin, end) pads per axis, which may be negative when output_shape
    asks for more than the full transposed extent."""
    nd = len(kernel)
    output_shape = ctx.attrs.ints("output_shape")
    auto_pad = ctx.attrs.get("auto_pad", "NOTSET")
    ctx.attrs.get("pads")                    # output_shape or auto_pad, when given, decide the pads
    if auto_pad not in ("NOTSET", "", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise ctx.fail(f"auto_pad={auto_pad!r} is not supported", "use NOTSET, VALID, SAME_UPPER or SAME_LOWER")
    if not output_shape and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = tuple(i * s for i, s in zip(in_spatial, strides))
    if output_shape:
        target = output_shape[-nd:]
        total = [s * (i - 1) + op + (k - 1) * d + 1 - t
                 for s, i, op, k, d, t in zip(strides, in_spatial, out_pad, kernel, dilations, target)]
        if auto_pad == "SAME_UPPER":
            return [t // 2 for t in total], [t - t // 2 for t in total]
        return [t - t // 2 for t in total], [t // 2 for t in total]
    pads = explicit_pads(ctx, nd) if auto_pad != "VALID" else (0,) * (2 * nd)
    return list(pads[:nd]), list(pads[nd:])


@converter("ConvTranspose")
def conv_transpose(ctx, inputs):
    """The transposed convolution with the non-negative part of the pads; a negative pad (an
    output_shape past the full extent) adds zero cells, which no input cell reaches."""
    x, w = inputs[0], inputs[1]
    nd = spatial_rank(ctx, x)
    wshape = ctx.static_shape(w, "W")
    in_spatial = ctx.static_shape(x, "X")[2:]
    kernel = per_dim(ctx, "kernel_shape", nd) or wshape[2:]
    strides, dilations = per_dim(ctx, "strides", nd, 1), per_dim(ctx, "dilations", nd, 1)
    out_pad = per_dim(ctx, "output_padding", nd, 0, minimum=0)
    group = int(ctx.attrs.get("group", 1))
    begin, end = _transpose_pads(ctx, in_spatial, kernel, strides, dilations, out_pad)
    # the output spans [begin, full + output_padding - end) of the full extent [0, full)
    crop_begin = [max(b, 0) for b in begin]
    crop_end = [max(e - op, 0) for op, e in zip(out_pad, end)]
    out = CONV_TRANSPOSE[nd](x, w, strides=strides, padding=tuple(crop_begin) + tuple(crop_end),
                             dilation=dilations, groups=group, channels=wshape[1] * group, kernel_size=kernel)
    grow_begin = [max(-b, 0) for b in begin]
    grow_end = [max(op - e, 0) for op, e in zip(out_pad, end)]
    if any(grow_begin) or any(grow_end):
        out = _nn.pad(out, ((0, 0), (0, 0)) + tuple(zip(grow_begin, grow_end)))
    return _with_bias(out, inputs, 2)


# --- pooling ---------------------------------------------------------------------------------------
def _ceil_pads(in_spatial, kernel, strides, dilations, pads):
    """ONNX's ceil_mode as explicit padding: ceil((padded - window) / stride) + 1 windows, the
    cells they need past the pads added half before, half after (onnx.reference's pooling, which
    counts them as padding for count_include_pad); a last window starting past the input and its
    leading pad is dropped (PyTorch's rule, which ONNX's node tests follow)."""
    nd = len(kernel)
    before, after = list(pads[:nd]), list(pads[nd:])
    for a in range(nd):
        span = (kernel[a] - 1) * dilations[a] + 1
        out = -(-(in_spatial[a] + before[a] + after[a] - span) // strides[a]) + 1
        if (out - 1) * strides[a] >= in_spatial[a] + before[a]:
            out -= 1
        extra = (out - 1) * strides[a] + span - in_spatial[a] - before[a] - after[a]
        if extra > 0:
            before[a] += extra // 2
            after[a] += extra - extra // 2
    return tuple(before + after)


def _pool_attrs(ctx, x):
    nd = spatial_rank(ctx, x)
    kernel = per_dim(ctx, "kernel_shape", nd)
    if kernel is None:
        raise ctx.invalid("kernel_shape is empty")
    strides, dilations = per_dim(ctx, "strides", nd, 1), per_dim(ctx, "dilations", nd, 1)
    pads = conv_pads(ctx, ctx.shape(x)[2:], kernel, strides, dilations)
    if ctx.attrs.get("ceil_mode", 0):
        pads = _ceil_pads(ctx.static_shape(x, "X")[2:], kernel, strides, dilations, pads)
    return nd, dict(pool_size=kernel, strides=strides, dilation=dilations, padding=pads)


@converter("MaxPool", "AveragePool")
def pool(ctx, inputs):
    x = inputs[0]
    nd, common = _pool_attrs(ctx, x)
    if ctx.op == "MaxPool":
        if ctx.attrs.get("storage_order", 0):
            raise ctx.fail("storage_order=1 is not supported")
        if len(ctx.node.output) > 1 and ctx.node.output[1]:
            raise ctx.fail("the Indices output is not supported")
        return MAX_POOL[nd](x, **common)
    return AVG_POOL[nd](x, count_include_pad=bool(ctx.attrs.get("count_include_pad", 0)), **common)


@converter("LpPool")
def lp_pool(ctx, inputs):
    """(sum over the window of |x|^p)^(1/p): an average pool of |x|^p that counts the padding
    (zeros, so every window divides by its full size), times the window size."""
    x = inputs[0]
    nd, common = _pool_attrs(ctx, x)
    p = float(ctx.attrs.get("p", 2))
    if not p > 0:
        raise ctx.invalid(f"p must be positive, got {p}")
    powered = _op.power(_op.abs(x), scalar(ctx, p, x))
    window = AVG_POOL[nd](powered, count_include_pad=True, **common)
    total = _op.multiply(window, scalar(ctx, float(np.prod(common["pool_size"])), x))
    return _op.power(total, scalar(ctx, 1.0 / p, x))


# --- normalization ---------------------------------------------------------------------------------
@converter("InstanceNormalization")
def instance_norm(ctx, inputs):
    x, scale, bias = inputs
    return _nn.instance_norm(x, scale, bias, axis=1, epsilon=float(ctx.attrs.get("epsilon", 1e-5)))


@converter("GroupNormalization")
def group_norm(ctx, inputs):
    """Opset 18 scales and shifts per group, opset 21 per channel (the per-group form is
    repeated over each group's channels)."""
    x, scale, bias = inputs
    groups = int(ctx.attrs.get("num_groups"))
    ctx.attrs.get("stash_type")
    if ctx.since < 21:
        channels = ctx.static_shape(x, "X")[1]
        scale, bias = (_op.repeat(t, channels // groups, 0) for t in (scale, bias))
    return _nn.group_norm(x, scale, bias, num_groups=groups, axis=1, epsilon=float(ctx.attrs.get("epsilon", 1e-5)))


@converter("LpNormalization")
def lp_normalization(ctx, inputs):
    x = inputs[0]
    axis = int(ctx.attrs.get("axis", -1))
    p = int(ctx.attrs.get("p", 2))
    if p == 2:
        return _nn.l2_normalize(x, 0.0, axis=[axis])
    if p == 1:
        return _op.divide(x, _op.sum(_op.abs(x), axis=[axis], keepdims=True))
    raise ctx.invalid(f"p={p} must be 1 or 2")


MVN_EPSILON = 1e-9     # ONNX's MeanVarianceNormalization function body adds it to the deviation


@converter("MeanVarianceNormalization")
def mean_variance_normalization(ctx, inputs):
    x = inputs[0]
    axes = list(ctx.attrs.ints("axes", (0, 2, 3)))
    mean = _op.mean(x, axis=axes, keepdims=True)
    centered = _op.subtract(x, mean)
    std = _op.sqrt(_op.mean(_op.multiply(centered, centered), axis=axes, keepdims=True))
    return _op.divide(centered, _op.add(std, scalar(ctx, MVN_EPSILON, x)))


# --- rearrangements and resampling ----------------------------------------------------------------------
@converter("DepthToSpace")
def depth_to_space(ctx, inputs):
    return _nn.depth_to_space(inputs[0], int(ctx.attrs.get("blocksize")), mode=ctx.attrs.get("mode", "DCR"))


@converter("SpaceToDepth")
def space_to_depth(ctx, inputs):
    return _nn.space_to_depth(inputs[0], int(ctx.attrs.get("blocksize")))


@converter("Upsample", max_version=9)
def upsample(ctx, inputs):
    """Opset 7 scales attribute or opset 9 scales input; nearest or (bi/tri)linear, asymmetric
    coordinates, batch and channel scales 1. Scales known only at run time give
    dyn.nn.upsampling(3d) (image.upsample sends 4-D data to Resize's run-time path instead),
    checked at run time to give whole lengths."""
    x = inputs[0]
    mode = ctx.attrs.get("mode", "nearest")
    if mode not in ("nearest", "linear", "bilinear"):
        raise ctx.fail(f"mode={mode!r} is not supported", "use nearest or linear")
    nd = spatial_rank(ctx, x)
    if nd == 1:
        raise ctx.fail("1-D Upsample is not supported")
    method = "nearest_neighbor" if mode == "nearest" else ("bilinear" if nd == 2 else "trilinear")
    scales = ctx.attrs.get("scales")
    if scales is None:
        scales = ctx.maybe_value(inputs[1])
    if scales is None:                                  # a run-time scales tensor
        spatial = [_op.take(inputs[1], const(np.array(2 + a, "int64"))) for a in range(nd)]
        return _whole_lengths_only(x, inputs[1], _upsampling(x, spatial, nd, method))
    scales = [float(s) for s in np.asarray(scales).reshape(-1)]
    if len(scales) != nd + 2 or scales[:2] != [1.0, 1.0]:
        raise ctx.fail(f"scales={scales} are not supported: one per axis, the batch and channel scales 1")
    in_spatial = ctx.static_shape(x, "X")[2:]
    if any(int(np.rint(d * s)) != int(np.floor(d * s)) for d, s in zip(in_spatial, scales[2:])):
        raise ctx.fail(f"scales={scales} give a fractional output size, which ONNX rounds down but "
                       "nn.upsampling rounds to nearest")
    return _upsampling(x, scales[2:], nd, method)


def _whole_lengths_only(x, scales, out):
    """`out`, or a reshape error at run time unless the batch and channel scales are 1 and every
    spatial in * scale is a whole number: dyn.nn.upsampling(3d) sizes by round(in * scale) and
    maps coordinates by out / in, which agree with ONNX's floor(in * scale) and scale only then."""
    from .runtime_shapes import checked_reshape
    factors = _op.cast(scales, "float64")
    lengths = _op.multiply(_op.cast(_op.shape_of(x, "int64"), "float64"), factors)
    whole = _op.all(_op.equal(_op.floor(lengths), lengths))
    batch_and_channel = _op.strided_slice(factors, [0], [2])
    kept = _op.all(_op.equal(batch_and_channel, _op.ones_like(batch_and_channel)))
    return checked_reshape(out, _op.shape_of(out, "int64"), _op.logical_and(whole, kept))


def _upsampling(x, scales, nd, method):
    if nd == 2:
        return _nn.upsampling(x, scales[0], scales[1], method=method)
    return _nn.upsampling3d(x, *scales, method=method, coordinate_transformation_mode="asymmetric")


# --- losses ------------------------------------------------------------------------------------------
def _nll(ctx, log_prob, target, weight):
    """nn.nll_loss with ONNX's reduction / ignore_index (a missing weight is all ones)."""
    if weight is None:
        classes = ctx.static_shape(log_prob, "input")[1]
        weight = const(np.ones(classes, dtype=ctx.dtype(log_prob)))
    reduction = ctx.attrs.get("reduction", "mean")
    if reduction not in ("mean", "sum", "none"):
        raise ctx.invalid(f"reduction={reduction!r} must be mean, sum or none")
    ignore = ctx.attrs.get("ignore_index")
    return _nn.nll_loss(log_prob, target, weight, reduction=reduction,
                        ignore_index=-100 if ignore is None else int(ignore))


@converter("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(ctx, inputs):
    return _nll(ctx, inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None)


@converter("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(ctx, inputs):
    """nll_loss of log_softmax over the class axis; the optional second output is log_softmax."""
    log_prob = _nn.log_softmax(inputs[0], axis=1)
    loss = _nll(ctx, log_prob, inputs[1], inputs[2] if len(inputs) > 2 else None)
    if len(ctx.node.output) > 1 and ctx.node.output[1]:
        return [loss, log_prob]
    return loss
