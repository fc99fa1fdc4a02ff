"""Pad's mode="wrap" (opset 19): each padded axis continues periodically, output position i
(counted from -pads_begin) reading input position i mod n. Built as a take of constant indices
per padded axis; the pads must be constants. Every other mode goes to the Pad converter
registered before this module (tensor.py's).
"""
import numpy as np

from .... import op as _op
from ..common import const
from ._registry import TABLE, converter

_OTHER_MODES = TABLE["Pad"].fn


def _ints(ctx, expr, what):
    return [int(v) for v in np.asarray(ctx.value(expr, what)).reshape(-1)]


@converter("Pad")
def pad(ctx, inputs):
    """Pad: mode="wrap" here, the other modes by the earlier converter."""
    if ctx.attrs.get("mode", "constant") != "wrap":
        return _OTHER_MODES(ctx, inputs)
    x = inputs[0]
    shape = ctx.static_shape(x, "data")
    nd = len(shape)
    pads = _ints(ctx, inputs[1], "pads")
    axes = _ints(ctx, inputs[3], "axes") if len(inputs) > 3 and inputs[3] is not None else list(range(nd))
    if len(pads) != 2 * len(axes):
        raise ctx.invalid(f"pads {pads} has {len(pads)} values, but {len(axes)} padded axes need {2 * len(axes)}")
    if any(not -nd <= a < nd for a in axes):
        raise ctx.invalid(f"axes {axes} are out of range for an input of rank {nd}")
    out = x
    for i, axis in enumerate(axes):
        axis %= nd
        before, after = pads[i], pads[i + len(axes)]
        if before == after == 0:
            continue
        if shape[axis] == 0:
            raise ctx.invalid(f"axis {axis} has length 0, which cannot be wrap-padded")
        if before + shape[axis] + after < 0:
            raise ctx.invalid(f"pads {pads} remove more than axis {axis}'s {shape[axis]} elements")
        index = np.arange(-before, shape[axis] + after) % shape[axis]
        out = _op.take(out, const(index.astype("int64")), axis=axis, mode="fast")
    return out
