"""MaxPool's second output, Indices: for each window the flat index (over the whole N x C x D1 x
... tensor, padding not counted) of its first maximal element, counted row-major
(storage_order=0) or with the spatial dims column-major (storage_order=1), as ONNX's reference.
A MaxPool without the Indices output goes to the pooling converter registered before this module.

The windows are gathered from the padded input (padding holds -inf) with a constant table of
positions, so the values and indices come from one max/argmax over each window (argmax keeps the
first of equal maxima, scanning the window row-major, as ONNX does). Static shapes and float
inputs only.
"""
import numpy as np

from .... import op as _op
from ....op import nn as _nn
from ....runtime.limits import check_tensor_size
from ..common import const
from ._registry import TABLE, converter
from .nn_ext import _pool_attrs

_WITHOUT_INDICES = TABLE["MaxPool"].fn


def _window_tables(spatial, kernel, strides, dilations, pads, column_major):
    """(flat positions in the padded input, flat unpadded indices), both (outputs * window) long,
    and the output's spatial shape."""
    nd = len(spatial)
    before = np.array(pads[:nd])
    padded = [spatial[d] + pads[d] + pads[nd + d] for d in range(nd)]
    spans = [(kernel[d] - 1) * dilations[d] + 1 for d in range(nd)]
    out = [(padded[d] - spans[d]) // strides[d] + 1 for d in range(nd)]
    starts = np.stack(np.meshgrid(*[np.arange(o) * s for o, s in zip(out, strides)], indexing="ij"), -1).reshape(-1, 1, nd)
    offsets = np.stack(np.meshgrid(*[np.arange(k) * d for k, d in zip(kernel, dilations)], indexing="ij"),
                       -1).reshape(1, -1, nd)
    position = starts + offsets                                   # (outputs, window, nd) in padded coords
    gather = np.ravel_multi_index(tuple(np.moveaxis(position, -1, 0)), padded).reshape(-1)
    unpadded = np.clip(position - before, 0, np.array(spatial) - 1)
    order = "F" if column_major else "C"
    index = np.ravel_multi_index(tuple(np.moveaxis(unpadded, -1, 0)), spatial, order=order).reshape(-1)
    return gather, index, out


@converter("MaxPool")
def max_pool(ctx, inputs):
    """MaxPool: with the Indices output here, without it by the earlier converter."""
    column_major = bool(ctx.attrs.get("storage_order", 0))
    if len(ctx.node.output) < 2 or not ctx.node.output[1]:
        return _WITHOUT_INDICES(ctx, inputs)   # storage_order only shapes the Indices
    x = inputs[0]
    dtype = ctx.dtype(x)
    if not dtype.startswith("float"):
        raise ctx.fail(f"the Indices output of a {dtype} MaxPool is not supported", "pool a float input")
    shape = ctx.static_shape(x, "X")
    _, common = _pool_attrs(ctx, x)
    n, c, spatial = shape[0], shape[1], list(shape[2:])
    nd = len(spatial)
    pads = common["padding"]
    gather, index, out = _window_tables(spatial, common["pool_size"], common["strides"], common["dilation"],
                                        pads, column_major)
    window = int(np.prod(common["pool_size"]))
    outputs = int(np.prod(out))
    check_tensor_size((n, c, outputs * window), dtype, f"{ctx.where()}: the gathered windows")
    padded = _nn.pad(x, ((0, 0), (0, 0)) + tuple(zip(pads[:nd], pads[nd:])), const(np.array(-np.inf, dtype)))
    flat = _op.reshape(padded, (n, c, -1))
    windows = _op.reshape(_op.take(flat, const(gather.astype("int64")), axis=2, mode="fast"), (n, c, outputs, window))
    values = _op.max(windows, axis=-1)
    first = _op.cast(_op.argmax(windows, axis=-1), "int64")
    picked = _op.add(first, const((np.arange(outputs, dtype="int64") * window)))
    spatial_index = _op.take(const(index.astype("int64")), picked, axis=0, mode="fast")
    base = (np.arange(n * c, dtype="int64") * int(np.prod(spatial))).reshape(n, c, 1)
    indices = _op.add(spatial_index, const(base))
    return [_op.reshape(values, (n, c, *out)), _op.reshape(indices, (n, c, *out))]
