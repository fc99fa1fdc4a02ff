"""Operators that move elements between the batch, channel and spatial axes without arithmetic
(all INJECTIVE), as TVM v0.18: nn.depth_to_space (DCR or CRD order) and nn.space_to_depth
(NCHW or NHWC), nn.space_to_batch_nd (pad, then fold spatial blocks into the batch) and
nn.batch_to_space_nd (its inverse, then crop), with TensorFlow's element order.

Index formulas (channel-first, block b, C' = C / b^2 for depth_to_space):
  depth_to_space DCR: out[n, c, y, x] = in[n, (b * (y % b) + x % b) * C' + c, y // b, x // b]
                 CRD: out[n, c, y, x] = in[n, c * b^2 + b * (y % b) + x % b, y // b, x // b]
  space_to_depth:     out[n, (b * i + j) * C + c, y, x] = in[n, c, y * b + i, x * b + j]
  space_to_batch_nd:  out[o * N + n, s..., rest] = pad(in)[n, s * B + o..., rest]
  batch_to_space_nd:  out[n, s * B + o..., rest] = in[o * N' + n, s..., rest], then cropped
(o is the flattened block offset, row-major over the block axes.)
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs, always_printed, check_choice
from ...ir.dims import dim_to_str, is_static
from ...ir.shape_math import add, floordiv, mul, sub
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from . import _window as Wn
from ..constructor_docs import documented


# --- depth_to_space / space_to_depth -------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SubPixelAttrs(Attrs):
    block_size: int = always_printed(1)
    layout: str = "NCHW"
    mode: str = "DCR"

    def __post_init__(self):
        object.__setattr__(self, "block_size", C.ints(self.block_size, 1, "block_size", minimum=1)[0])
        C.check_layout("nn.depth_to_space", "layout", self.layout, ("NCHW", "NHWC"))
        check_choice("mode", self.mode, ("DCR", "CRD"))


def _d2s_rel(arg_types, attrs) -> TensorType:
    """(N, C, H, W) -> (N, C / b^2, H * b, W * b); C must be a multiple of b^2."""
    op, b = "nn.depth_to_space", attrs.block_size
    data = C.tensor_arg(op, arg_types[0], "data")
    C.expect_rank(op, data, 4, f"data ({attrs.layout})", data=data)
    n, c, h, w = Wn.pick(data.shape, attrs.layout, "NCHW")
    if is_static(c) and int(c) % (b * b):
        raise C.rel_error(op, f"the {c} channels are not a multiple of block_size^2 = {b * b}", data=data)
    return TensorType(Wn.place((n, floordiv(c, b * b), mul(h, b), mul(w, b)), "NCHW", attrs.layout), data.dtype)


def _s2d_rel(arg_types, attrs) -> TensorType:
    """(N, C, H, W) -> (N, C * b^2, H // b, W // b)."""
    op, b = "nn.space_to_depth", attrs.block_size
    data = C.tensor_arg(op, arg_types[0], "data")
    C.expect_rank(op, data, 4, f"data ({attrs.layout})", data=data)
    n, c, h, w = Wn.pick(data.shape, attrs.layout, "NCHW")
    return TensorType(Wn.place((n, mul(c, b * b), floordiv(h, b), floordiv(w, b)), "NCHW", attrs.layout),
                      data.dtype)


def _d2s_ref(x, attrs):
    b = attrs.block_size
    x = Wn.to_channel_first(x, attrs.layout, "NCHW")
    n, c, h, w = x.shape
    if attrs.mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return Wn.from_channel_first(t.reshape(n, c // (b * b), h * b, w * b), "NCHW", attrs.layout)


def _s2d_ref(x, attrs):
    b = attrs.block_size
    x = Wn.to_channel_first(x, attrs.layout, "NCHW")
    n, c, h, w = x.shape
    oh, ow = h // b, w // b
    t = x[:, :, :oh * b, :ow * b].reshape(n, c, oh, b, ow, b).transpose(0, 3, 5, 1, 2, 4)
    return Wn.from_channel_first(t.reshape(n, c * b * b, oh, ow), "NCHW", attrs.layout)


def _d2s_compute(attrs, inputs, out_type):
    x, = inputs
    b, layout = attrs.block_size, attrs.layout
    cp = Wn.pick(T.dims(x), layout, "NCHW")[1] // (b * b)

    def f(*index):
        n, c, y, xx = Wn.pick(index, layout, "NCHW")
        offset = b * (y % b) + xx % b
        ch = offset * cp + c if attrs.mode == "DCR" else c * (b * b) + offset
        return x[Wn.place((n, ch, y // b, xx // b), "NCHW", layout)]
    return [te.compute([T.dim(d) for d in out_type.shape], f, name="depth_to_space", tag=DEPTH_TO_SPACE.tag)]


def _s2d_compute(attrs, inputs, out_type):
    x, = inputs
    b, layout = attrs.block_size, attrs.layout
    c_in = Wn.pick(T.dims(x), layout, "NCHW")[1]

    def f(*index):
        n, ch, y, xx = Wn.pick(index, layout, "NCHW")
        offset, c = ch // c_in, ch % c_in
        return x[Wn.place((n, c, y * b + offset // b, xx * b + offset % b), "NCHW", layout)]
    return [te.compute([T.dim(d) for d in out_type.shape], f, name="space_to_depth", tag=SPACE_TO_DEPTH.tag)]


DEPTH_TO_SPACE = defop(
    "nn.depth_to_space", inputs=("data",), attrs=SubPixelAttrs, rel=_d2s_rel, pattern=OpPattern.INJECTIVE,
    ref=_d2s_ref, compute=_d2s_compute, level=5,
    samples=lambda rng: [Sample([S.rand(rng, (1, 8, 2, 3))], SubPixelAttrs(2)),
                         Sample([S.rand(rng, (2, 18, 2, 2), "float64")], SubPixelAttrs(3, mode="CRD")),
                         Sample([S.rand(rng, (1, 2, 3, 12), "int32", -9, 9)], SubPixelAttrs(2, "NHWC", "CRD"))],
    doc="channels into b x b spatial blocks (DCR: depth-column-row; CRD: column-row-depth)")
SPACE_TO_DEPTH = defop(
    "nn.space_to_depth", inputs=("data",), attrs=SubPixelAttrs, rel=_s2d_rel, pattern=OpPattern.INJECTIVE,
    ref=_s2d_ref, compute=_s2d_compute, level=5,
    samples=lambda rng: [Sample([S.rand(rng, (1, 2, 4, 6))], SubPixelAttrs(2)),
                         Sample([S.rand(rng, (2, 7, 6, 3), "float64")], SubPixelAttrs(3, "NHWC"),
                                "NHWC, H not a multiple of the block")],
    doc="b x b spatial blocks into channels (block offset major, then channel)")


# The parameters the sub-pixel and batch/space rearrangements share (constructor_docs completes their docstrings)
REARRANGE_PARAMETERS = {
    "data": ("relay.Expr", "The input tensor."),
    "block_size": ("int", "The side b of the square spatial blocks; the channels change by the factor b * b."),
    "layout": ("str, optional", 'The layout of `data`, "NCHW" or "NHWC".'),
    "block_shape": ("tuple of int", "The block length along each of the axes 1..M after the batch axis "
                                    "(the block axes); the batch changes by their product."),
}


@documented(REARRANGE_PARAMETERS)
def depth_to_space(data, block_size, layout="NCHW", mode="DCR"):
    """relay.nn.depth_to_space: rearrange channels into block_size x block_size spatial blocks.

    Parameters
    ----------
    mode : str, optional
        Which channel fills which block cell: "DCR" (the block offset varies slowest, then the
        channel) or "CRD" (the channel varies slowest). Defaults to "DCR".
    """
    return DEPTH_TO_SPACE(data, attrs=SubPixelAttrs(block_size, layout, mode))


@documented(REARRANGE_PARAMETERS)
def space_to_depth(data, block_size, layout="NCHW"):
    """relay.nn.space_to_depth: rearrange block_size x block_size spatial blocks into channels."""
    return SPACE_TO_DEPTH(data, attrs=SubPixelAttrs(block_size, layout))


# --- space_to_batch_nd / batch_to_space_nd ---------------------------------------------------------
def _pairs(value, name: str) -> tuple:
    try:
        out = tuple((int(a), int(b)) for a, b in value)
    except (TypeError, ValueError) as err:
        raise AttrsError(f"attribute {name}={value!r} must be a sequence of (before, after) int pairs, one per "
                         "block axis") from err
    if any(a < 0 or b < 0 for a, b in out):
        raise AttrsError(f"attribute {name}={out} must be non-negative")
    return out


@dataclasses.dataclass(frozen=True)
class SpaceToBatchNDAttrs(Attrs):
    block_shape: tuple = always_printed(())
    paddings: tuple = always_printed(())
    pad_value: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "block_shape", C.ints(tuple(self.block_shape), len(self.block_shape), "block_shape",
                                                        minimum=1) if len(self.block_shape) else ())
        object.__setattr__(self, "paddings", _pairs(self.paddings, "paddings"))
        object.__setattr__(self, "pad_value", float(self.pad_value))
        if len(self.paddings) != len(self.block_shape):
            raise AttrsError(f"paddings={self.paddings} needs one (before, after) pair per block axis "
                             f"(block_shape={self.block_shape})")


@dataclasses.dataclass(frozen=True)
class BatchToSpaceNDAttrs(Attrs):
    block_shape: tuple = always_printed(())
    crops: tuple = always_printed(())

    def __post_init__(self):
        object.__setattr__(self, "block_shape", C.ints(tuple(self.block_shape), len(self.block_shape), "block_shape",
                                                        minimum=1) if len(self.block_shape) else ())
        object.__setattr__(self, "crops", _pairs(self.crops, "crops"))
        if len(self.crops) != len(self.block_shape):
            raise AttrsError(f"crops={self.crops} needs one (begin, end) pair per block axis "
                             f"(block_shape={self.block_shape})")


def _block_data(op, arg_types, attrs):
    data = C.tensor_arg(op, arg_types[0], "data")
    m = len(attrs.block_shape)
    if m < 1 or data.ndim < m + 1:
        raise C.rel_error(op, f"block_shape={attrs.block_shape} needs 1 to rank - 1 = {data.ndim - 1} block axes",
                          data=data)
    return data, m


def _s2b_rel(arg_types, attrs) -> TensorType:
    """(N, S..., rest) -> (N * prod(B), (S + pads) / B ..., rest); padded sizes divisible by B."""
    op = "nn.space_to_batch_nd"
    data, m = _block_data(op, arg_types, attrs)
    out = [mul(data.shape[0], int(np.prod(attrs.block_shape)))]
    for a, (block, (before, after)) in enumerate(zip(attrs.block_shape, attrs.paddings)):
        size = data.shape[1 + a]
        if is_static(size) and (int(size) + before + after) % block:
            raise C.rel_error(op, f"axis {1 + a} padded to {int(size) + before + after} is not a multiple of its "
                                  f"block size {block}", data=data)
        out.append(floordiv(add(size, before + after), block))
    return TensorType(tuple(out) + tuple(data.shape[1 + m:]), data.dtype)


def _b2s_rel(arg_types, attrs) -> TensorType:
    """(N * prod(B), S..., rest) -> (N, S * B - crops ..., rest)."""
    op = "nn.batch_to_space_nd"
    data, m = _block_data(op, arg_types, attrs)
    blocks = int(np.prod(attrs.block_shape))
    batch = data.shape[0]
    if is_static(batch) and int(batch) % blocks:
        raise C.rel_error(op, f"the batch {batch} is not a multiple of prod(block_shape) = {blocks}", data=data)
    out = [floordiv(batch, blocks)]
    for a, (block, (begin, end)) in enumerate(zip(attrs.block_shape, attrs.crops)):
        full = mul(data.shape[1 + a], block)
        if is_static(full) and int(full) <= begin + end:
            raise C.rel_error(op, f"crops ({begin}, {end}) leave nothing of axis {1 + a} "
                                  f"({dim_to_str(full)} long)", data=data)
        out.append(sub(full, begin + end))
    return TensorType(tuple(out) + tuple(data.shape[1 + m:]), data.dtype)


def _s2b_ref(x, attrs):
    m, blocks = len(attrs.block_shape), attrs.block_shape
    xp = np.pad(x, [(0, 0)] + list(attrs.paddings) + [(0, 0)] * (x.ndim - 1 - m),
                constant_values=np.asarray(attrs.pad_value).astype(x.dtype))
    n, rest = x.shape[0], x.shape[1 + m:]
    split = [n]
    for size, b in zip(xp.shape[1:1 + m], blocks):
        split += [size // b, b]
    t = xp.reshape(split + list(rest))
    order = [2 + 2 * a for a in range(m)] + [0] + [1 + 2 * a for a in range(m)] + list(range(1 + 2 * m, t.ndim))
    return np.ascontiguousarray(t.transpose(order)).reshape(
        [n * int(np.prod(blocks))] + [s // b for s, b in zip(xp.shape[1:1 + m], blocks)] + list(rest))


def _b2s_ref(x, attrs):
    m, blocks = len(attrs.block_shape), list(attrs.block_shape)
    n = x.shape[0] // int(np.prod(blocks))
    spatial, rest = list(x.shape[1:1 + m]), list(x.shape[1 + m:])
    t = x.reshape(blocks + [n] + spatial + rest)
    order = [m] + [i for a in range(m) for i in (m + 1 + a, a)] + list(range(2 * m + 1, t.ndim))
    full = np.ascontiguousarray(t.transpose(order)).reshape([n] + [s * b for s, b in zip(spatial, blocks)] + rest)
    crop = tuple(slice(begin, s * b - end) for (begin, end), s, b in zip(attrs.crops, spatial, blocks))
    return np.ascontiguousarray(full[(slice(None),) + crop])


def _unflatten(offset, blocks):
    """The per-axis block offsets of a flattened (row-major) block offset."""
    out = []
    for b in reversed(blocks):
        out.append(offset % b)
        offset = offset // b
    return list(reversed(out))


def _s2b_compute(attrs, inputs, out_type):
    x, = inputs
    m, blocks = len(attrs.block_shape), attrs.block_shape
    dims = T.dims(x)
    n = dims[0]
    fill = T.const(attrs.pad_value, x.dtype)

    def f(*index):
        offset, batch = index[0] // n, index[0] % n
        src = [s * b + o - before for s, b, o, (before, _) in
               zip(index[1:1 + m], blocks, _unflatten(offset, blocks), attrs.paddings)]
        inside = tir.all(*[T.in_range(v, 0, d) for v, d in zip(src, dims[1:1 + m])])
        return te.if_then_else(inside, x[(batch, *src, *index[1 + m:])], fill)
    return [te.compute([T.dim(d) for d in out_type.shape], f, name="space_to_batch_nd", tag=SPACE_TO_BATCH_ND.tag)]


def _b2s_compute(attrs, inputs, out_type):
    x, = inputs
    m, blocks = len(attrs.block_shape), attrs.block_shape
    n_out = T.dims(x)[0] // int(np.prod(blocks))

    def f(*index):
        pos = [p + begin for p, (begin, _) in zip(index[1:1 + m], attrs.crops)]
        offset = 0
        for p, b in zip(pos, blocks):
            offset = offset * b + p % b
        return x[(offset * n_out + index[0], *[p // b for p, b in zip(pos, blocks)], *index[1 + m:])]
    return [te.compute([T.dim(d) for d in out_type.shape], f, name="batch_to_space_nd", tag=BATCH_TO_SPACE_ND.tag)]


SPACE_TO_BATCH_ND = defop(
    "nn.space_to_batch_nd", inputs=("data",), attrs=SpaceToBatchNDAttrs, rel=_s2b_rel, pattern=OpPattern.INJECTIVE,
    ref=_s2b_ref, compute=_s2b_compute, level=5,
    samples=lambda rng: [Sample([S.rand(rng, (2, 4, 4, 3))], SpaceToBatchNDAttrs((2, 2), ((0, 0), (0, 0)))),
                         Sample([S.rand(rng, (1, 3, 5, 2), "float64")],
                                SpaceToBatchNDAttrs((2, 3), ((1, 0), (0, 1)), 1.5), "padded"),
                         Sample([S.rand(rng, (2, 6), "int32", -9, 9)], SpaceToBatchNDAttrs((3,), ((1, 2),)))],
    doc="out[o*N + n, s..., rest] = pad(data)[n, s*B + o..., rest] (TensorFlow order)")
BATCH_TO_SPACE_ND = defop(
    "nn.batch_to_space_nd", inputs=("data",), attrs=BatchToSpaceNDAttrs, rel=_b2s_rel, pattern=OpPattern.INJECTIVE,
    ref=_b2s_ref, compute=_b2s_compute, level=5,
    samples=lambda rng: [Sample([S.rand(rng, (8, 2, 2, 3))], BatchToSpaceNDAttrs((2, 2), ((0, 0), (0, 0)))),
                         Sample([S.rand(rng, (6, 2, 2, 2), "float64")], BatchToSpaceNDAttrs((2, 3), ((1, 0), (0, 2))),
                                "cropped"),
                         Sample([S.rand(rng, (3, 4), "int32", -9, 9)], BatchToSpaceNDAttrs((3,), ((1, 2),)))],
    doc="out[n, s*B + o..., rest] = data[o*N' + n, s..., rest], cropped (TensorFlow order)")


@documented(REARRANGE_PARAMETERS)
def space_to_batch_nd(data, block_shape, paddings, pad_value=0):
    """relay.nn.space_to_batch_nd: pad the block axes, then move their blocks into the batch.

    Parameters
    ----------
    paddings : sequence of (int, int)
        The (before, after) padding of each block axis; each padded length must divide by its
        block length.
    pad_value : float, optional
        The value of the padded cells. Defaults to 0.
    """
    return SPACE_TO_BATCH_ND(data, attrs=SpaceToBatchNDAttrs(tuple(block_shape), paddings, pad_value))


@documented(REARRANGE_PARAMETERS)
def batch_to_space_nd(data, block_shape, crops):
    """relay.nn.batch_to_space_nd: move batch blocks back into the block axes, then crop.

    Parameters
    ----------
    crops : sequence of (int, int)
        The (before, after) cells cropped from each block axis after the blocks are moved back.
    """
    return BATCH_TO_SPACE_ND(data, attrs=BatchToSpaceNDAttrs(tuple(block_shape), crops))


__all__ = ["depth_to_space", "space_to_depth", "space_to_batch_nd", "batch_to_space_nd", "SubPixelAttrs",
           "SpaceToBatchNDAttrs", "BatchToSpaceNDAttrs"]
