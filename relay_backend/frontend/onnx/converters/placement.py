"""ONNX ops that place the input's values at computed positions of a differently shaped output:
Col2Im (sliding blocks summed back into an image) and MaxUnpool (pooled values written back at
MaxPool's flat indices). CenterCropPad, a centred crop and/or zero pad, is crop_pad.py's.

Their output shapes come from inputs (Col2Im's image_shape and block_shape, MaxUnpool's
output_shape), which must be constants, and from the input's static shape.
"""
import numpy as np

from .... import op as _op
from ....op import nn as _nn
from ....runtime.limits import check_tensor_size
from ..common import const
from ._registry import converter


def _ints(ctx, expr, what):
    return [int(v) for v in np.asarray(ctx.value(expr, what)).reshape(-1)]


def _col2im_layout(ctx, image, block, strides, dilations, pads):
    """(blocks per spatial dim, padded image shape, flat padded-image index of each (kernel offset,
    block) pair in the order Col2Im's input lists them)."""
    rank = len(image)
    padded = [image[d] + pads[d] + pads[rank + d] for d in range(rank)]
    counts = [(padded[d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1 for d in range(rank)]
    if any(c < 1 for c in counts):
        raise ctx.invalid(f"image_shape {image} with pads {pads} is smaller than one block {block} "
                          f"(dilations {dilations})")
    offsets = np.stack(np.meshgrid(*[np.arange(b) for b in block], indexing="ij"), -1).reshape(-1, 1, rank)
    starts = np.stack(np.meshgrid(*[np.arange(c) for c in counts], indexing="ij"), -1).reshape(1, -1, rank)
    position = starts * np.array(strides) + offsets * np.array(dilations)        # (K, L, rank), padded coords
    flat = np.ravel_multi_index(tuple(np.moveaxis(position, -1, 0)), padded)
    return counts, padded, flat.reshape(-1)


@converter("Col2Im", min_version=18)
def col2im(ctx, inputs):
    """Input [N, C * prod(block_shape), L]: column k * L + l holds kernel offset k of block l; each
    value is added at its image position block_start * strides + offset * dilations - pads_begin
    (positions in the padding are dropped). Built as a scatter-add into the padded image, then cropped."""
    x, image_shape, block_shape = inputs
    n, channels_k, length = ctx.static_shape(x, "input")
    image, block = _ints(ctx, image_shape, "image_shape"), _ints(ctx, block_shape, "block_shape")
    rank = len(image)
    if len(block) != rank or rank == 0:
        raise ctx.invalid(f"image_shape {image} and block_shape {block} must have the same, non-zero length")
    strides = list(ctx.attrs.ints("strides", (1,) * rank))
    dilations = list(ctx.attrs.ints("dilations", (1,) * rank))
    pads = list(ctx.attrs.ints("pads", (0,) * (2 * rank)))
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
        raise ctx.invalid(f"strides {strides}, dilations {dilations} and pads {pads} must match the {rank} "
                          "spatial dims (pads twice)")
    if min(block + strides + dilations) < 1 or min(pads) < 0 or min(image) < 1:
        raise ctx.invalid("block_shape, strides, dilations and image_shape must be positive, pads >= 0")
    kernel = int(np.prod(block))
    if channels_k % kernel:
        raise ctx.invalid(f"input dim 1 ({channels_k}) is not a multiple of the block size {kernel}")
    counts, padded, flat = _col2im_layout(ctx, image, block, strides, dilations, pads)
    if length != int(np.prod(counts)):
        raise ctx.invalid(f"input dim 2 ({length}) must be the number of blocks {counts} = {int(np.prod(counts))}")
    channels = channels_k // kernel
    dtype = ctx.dtype(x)
    for shape, kind in (((n, channels, *padded), dtype), ((n, channels, flat.size), "int64")):
        check_tensor_size(shape, kind, f"{ctx.where()}: an intermediate")
    index = const(np.ascontiguousarray(np.broadcast_to(flat, (n, channels, flat.size))).astype("int64"))
    updates = _op.reshape(x, (n, channels, kernel * length))
    zeros = const(np.zeros((n, channels, int(np.prod(padded))), dtype))
    summed = _op.scatter_elements(zeros, index, updates, axis=2, reduction="add")
    image_out = _op.reshape(summed, (n, channels, *padded))
    begin = [0, 0] + pads[:rank]
    end = [n, channels] + [pads[d] + image[d] for d in range(rank)]
    return _op.strided_slice(image_out, begin, end)


@converter("MaxUnpool", min_version=9)
def max_unpool(ctx, inputs):
    """Zeros of the unpooled shape ((in - 1) * stride - pads + kernel per spatial dim) with X's values
    written at I's flat indices over that whole tensor (as MaxPool's Indices count them: a scatter
    into the flattened zeros, as TVM's frontend does).

    output_shape, when given, makes the spec "auto generate pads": the unpooled tensor is padded
    with zeros at the end of each spatial dim up to it, and the indices still count positions of
    the unpooled shape (ONNX's reference and node tests). onnxruntime and TVM v0.18 instead index
    into output_shape itself; both agree whenever output_shape equals the unpooled shape."""
    x, indices = inputs[0], inputs[1]
    output_shape = inputs[2] if len(inputs) > 2 else None
    shape = ctx.static_shape(x, "X")
    if ctx.static_shape(indices, "I") != shape:
        raise ctx.invalid(f"I has shape {ctx.shape(indices)}, X {shape}; they must match")
    kernel = list(ctx.attrs.ints("kernel_shape") or ())
    rank = len(shape) - 2
    if len(kernel) != rank:
        raise ctx.invalid(f"kernel_shape {kernel} must have one value per spatial dim ({rank})")
    strides = list(ctx.attrs.ints("strides", (1,) * rank))
    pads = list(ctx.attrs.ints("pads", (0,) * (2 * rank)))
    if len(strides) != rank or len(pads) != 2 * rank or min(strides + [1]) < 1 or min(pads + [0]) < 0:
        raise ctx.invalid(f"strides {strides} need {rank} positive values and pads {pads} {2 * rank} "
                          "non-negative ones")
    unpooled = list(shape[:2]) + [(shape[2 + d] - 1) * strides[d] - pads[d] - pads[rank + d] + kernel[d]
                                  for d in range(rank)]
    out_shape = unpooled if output_shape is None else _ints(ctx, output_shape, "output_shape")
    if len(out_shape) != len(shape) or any(o < u for o, u in zip(out_shape, unpooled)) or out_shape[:2] != unpooled[:2]:
        raise ctx.invalid(f"output_shape {out_shape} must keep N and C and be at least the unpooled shape {unpooled}")
    dtype = ctx.dtype(x)
    check_tensor_size(out_shape, dtype, f"{ctx.where()}: the output")
    zeros = const(np.zeros((int(np.prod(unpooled)),), dtype))
    flat = _op.scatter_elements(zeros, _op.reshape(_op.cast(indices, "int64"), (-1,)), _op.reshape(x, (-1,)), axis=0)
    out = _op.reshape(flat, unpooled)
    if out_shape == unpooled:
        return out
    return _nn.pad(out, [(0, o - u) for o, u in zip(out_shape, unpooled)])
