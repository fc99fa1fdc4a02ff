"""N-dimensional sliding-window helpers for the 1-D/2-D/3-D conv, conv_transpose and pool ops:
layout letters (pick a tensor's dims by letter, place them back), padding attrs of any rank,
the padded, strided window view the numpy references contract, and the te padded-input stage.

A layout is an order of letters: "N" batch, "C" channels (data), "O"/"I" output/input channels
(kernels), and one letter per spatial axis ("W"; "HW"; "DHW"). Formulas are written
channel-first (NC + spatial) and every other layout is read and written through `pick`/`place`.
"""
import numpy as np

from ... import te, tir
from ...errors import AttrsError, OpNotImplemented
from ...ir.attrs import as_int_tuple
from . import _te as T

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def spatial(ndim: int) -> str:
    """The spatial letters of an ndim-D op ("W", "HW", "DHW")."""
    return SPATIAL[ndim]


def pick(shape, layout: str, letters: str) -> tuple:
    """shape's dims in the order of `letters` (e.g. the NCW dims of an NWC shape)."""
    return tuple(shape[layout.index(c)] for c in letters)


def place(values, letters: str, layout: str) -> tuple:
    """values given in the order of `letters`, arranged in `layout`'s order."""
    return tuple(values[letters.index(c)] for c in layout)


def check_order(op_name: str, name: str, value: str, letters: str) -> None:
    """`value` must order exactly the letters of `letters` (blocked layouts are not supported)."""
    if not isinstance(value, str) or sorted(value) != sorted(letters):
        raise OpNotImplemented(f"{op_name}: {name}={value!r} is not supported: use an order of the letters "
                               f"{letters} (e.g. {letters}); insert a layout_transform first")


def padding_nd(value, ndim: int, name: str = "padding") -> tuple:
    """Padding of an ndim-D op as (before..., after...): one int for every side, ndim ints
    (symmetric per axis), or 2*ndim ints (TVM's get_pad_tuple1d/2d/3d)."""
    vals = (int(value),) if isinstance(value, int) else as_int_tuple(value, None, name)
    if len(vals) == 1:
        vals = vals * (2 * ndim)
    elif len(vals) == ndim:
        vals = vals + vals
    elif len(vals) != 2 * ndim:
        raise AttrsError(f"attribute {name}={tuple(vals)} must have 1, {ndim} or {2 * ndim} values "
                         f"(all sides; one per axis; or every axis' before then every axis' after)")
    if any(v < 0 for v in vals):
        raise AttrsError(f"attribute {name}={tuple(vals)} must be non-negative")
    return tuple(vals)


# --- numpy (references) --------------------------------------------------------------------------
def to_channel_first(x: np.ndarray, layout: str, letters: str) -> np.ndarray:
    """x (in `layout`) transposed to the order of `letters` (e.g. NCDHW)."""
    return np.transpose(x, [layout.index(c) for c in letters])


def from_channel_first(x: np.ndarray, letters: str, layout: str) -> np.ndarray:
    """x (in the order of `letters`) transposed to `layout`, contiguous."""
    return np.ascontiguousarray(np.transpose(x, [letters.index(c) for c in layout]))


def pad_spatial(x: np.ndarray, before, after, value=0) -> np.ndarray:
    """Pad the trailing len(before) axes of a channel-first array with `value`."""
    if not any(before) and not any(after):
        return x
    widths = [(0, 0)] * (x.ndim - len(before)) + list(zip(before, after))
    return np.pad(x, widths, mode="constant", constant_values=value)


def windows(x: np.ndarray, kernel, strides, dilation, out) -> np.ndarray:
    """A read-only strided view (N, C, *out, *kernel) of the windows of an already padded
    channel-first array: view[n, c, o..., k...] = x[n, c, o*stride + k*dilation ...]. No copy."""
    lead = x.ndim - len(kernel)
    steps = x.strides[lead:]
    shape = x.shape[:lead] + tuple(out) + tuple(kernel)
    strides = (x.strides[:lead] + tuple(s * st for s, st in zip(steps, strides))
               + tuple(s * d for s, d in zip(steps, dilation)))
    return np.lib.stride_tricks.as_strided(x, shape=shape, strides=strides, writeable=False)


# --- te (computes) -------------------------------------------------------------------------------
def pad_stage(data, axes, before, after, value=0.0, name: str = "pad"):
    """`data` padded on its spatial `axes` by `before`/`after` with `value`, as an injective
    stage a schedule can inline (tag "injective,pad"); `data` itself when there is no padding."""
    if not any(before) and not any(after):
        return data
    shape = T.dims(data)
    out = list(shape)
    for a, b, e in zip(axes, before, after):
        out[a] = shape[a] + b + e
    fill = T.const(value, data.dtype)

    def f(*i):
        inside = tir.all(*[T.in_range(i[a], b, b + shape[a]) for a, b in zip(axes, before)])
        src = list(i)
        for a, b in zip(axes, before):
            src[a] = i[a] - b
        return te.if_then_else(inside, data[tuple(src)], fill)
    return te.compute(tuple(out), f, name=name, tag=T.PAD_TAG)


__all__ = ["spatial", "pick", "place", "check_order", "padding_nd", "to_channel_first",
           "from_channel_first", "pad_spatial", "windows", "pad_stage"]
