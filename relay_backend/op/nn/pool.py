"""2-D pooling over NCHW or NHWC data: nn.max_pool2d, nn.avg_pool2d (sliding windows with
padding, dilation and ceil_mode), nn.global_max_pool2d / nn.global_avg_pool2d, and
nn.adaptive_avg_pool2d (PyTorch-style bins). All OUT_ELEMWISE_FUSABLE. The formulas are
written for NCHW; an NHWC op applies them to an NCHW view of its data (relation, reference and
compute alike: layout_view.in_layout) and writes its result back in NHWC; a channel-blocked
NCHW{b}c op (AlterOpLayout keeps pools between blocked convolutions) runs the same computes
with the block as a trailing index.

References: windows come from one strided view of the padded input; the avg divisor is the
same window sum taken over a 0/1 mask of the cells that count (input only, or input + padding
when count_include_pad), so partial ceil_mode windows divide by what they really cover.
The te computes read cells outside the input as the fill value (-inf / 0) and compute the
avg divisor in closed form from the same rule.
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs
from ...ir.types import TensorType
from .. import samples as S
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from .layout_view import check_layouts, in_layout

# a window of LONG_SIDE^2 >= S.FLOAT16_REDUCTION_TERMS values near 100 (their float16 sum overflows):
# the float16 accumulation guard sample
LONG_SIDE = S.LONG_WINDOW_SIDE


@dataclasses.dataclass(frozen=True)
class MaxPool2DAttrs(Attrs):
    pool_size: tuple = (1, 1)
    strides: tuple = (1, 1)
    dilation: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False

    def __post_init__(self):
        C.normalize_pool_window(self, 2, C.padding4)
        check_layouts(self)


@dataclasses.dataclass(frozen=True)
class AvgPool2DAttrs(MaxPool2DAttrs):
    count_include_pad: bool = False


@dataclasses.dataclass(frozen=True)
class GlobalPool2DAttrs(Attrs):
    layout: str = "NCHW"
    out_layout: str = ""

    def __post_init__(self):
        check_layouts(self)


@dataclasses.dataclass(frozen=True)
class AdaptivePool2DAttrs(Attrs):
    output_size: tuple = None
    layout: str = "NCHW"
    out_layout: str = ""

    def __post_init__(self):
        size = self.output_size
        if size is not None:
            size = (size,) if isinstance(size, int) or size is None else tuple(size)
            size = size * 2 if len(size) == 1 else size
            if len(size) != 2 or any(s is not None and (int(s) != s or s < 1) for s in size):
                raise AttrsError(f"attribute output_size={self.output_size!r} must be None, one positive "
                                   "int or two (each may be None to keep that input dim)")
            size = tuple(None if s is None else int(s) for s in size)
        object.__setattr__(self, "output_size", size)
        check_layouts(self)


def _data(op, arg_types) -> TensorType:
    data = C.tensor_arg(op, arg_types[0], "data")
    C.expect_rank(op, data, 4, "data (NCHW)", data=data)
    return data


# --- sliding-window pools ---------------------------------------------------------------------------
def _pool_out_hw(op, data, attrs):
    out = []
    for axis in (0, 1):
        size = data.shape[2 + axis]
        o = C.window_out_dim(size, attrs.pool_size[axis], attrs.strides[axis], attrs.dilation[axis],
                             attrs.padding[axis], attrs.padding[axis + 2], attrs.ceil_mode)
        if o is None:
            raise C.rel_error(op, f"pool_size={attrs.pool_size} (dilation={attrs.dilation}) does not fit the "
                                  f"padded input along {'HW'[axis]}; add padding or use a smaller pool",
                              data=data)
        out.append(o)
    return tuple(out)


def _make_pool_rel(op):
    def rel(arg_types, attrs) -> TensorType:
        """(N, C, H, W) -> (N, C, OH, OW), OH as for conv2d (ceil division when ceil_mode)."""
        data = _data(op, arg_types)
        return TensorType(data.shape[:2] + _pool_out_hw(op, data, attrs), data.dtype)
    return rel


def _padded_windows(x, attrs, fill):
    """(windows view (N, C, OH, OW, KH, KW), out_hw, pads) over x padded with `fill`, including the
    extra bottom/right cells a ceil_mode partial window reaches."""
    h, w = x.shape[2:]
    oh, ow = (C.window_out_dim(s, attrs.pool_size[a], attrs.strides[a], attrs.dilation[a],
                               attrs.padding[a], attrs.padding[a + 2], attrs.ceil_mode)
              for a, s in ((0, h), (1, w)))
    top, left, bottom, right = attrs.padding
    need_h = (oh - 1) * attrs.strides[0] + (attrs.pool_size[0] - 1) * attrs.dilation[0] + 1
    need_w = (ow - 1) * attrs.strides[1] + (attrs.pool_size[1] - 1) * attrs.dilation[1] + 1
    pads = (top, left, max(bottom, need_h - h - top), max(right, need_w - w - left))
    xp = C.pad_hw(x, pads, fill)
    return C.windows(xp, attrs.pool_size, attrs.strides, attrs.dilation, (oh, ow)), (oh, ow), pads


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _max_pool_ref(x, attrs):
    win, _, _ = _padded_windows(x, attrs, _lowest(x.dtype))
    return win.max(axis=(4, 5))


def _avg_pool_ref(x, attrs):
    acc = "float64" if x.dtype.kind == "f" else "int64"
    win, (oh, ow), pads = _padded_windows(x.astype(acc), attrs, 0)
    total = win.sum(axis=(4, 5))
    # Mask of the cells a window may count, in the same padded frame.
    h, w = x.shape[2:]
    mask = np.zeros((1, 1, h + pads[0] + pads[2], w + pads[1] + pads[3]), acc)
    if attrs.count_include_pad:
        mask[..., :h + attrs.padding[0] + attrs.padding[2], :w + attrs.padding[1] + attrs.padding[3]] = 1
    else:
        mask[..., pads[0]:pads[0] + h, pads[1]:pads[1] + w] = 1
    count = C.windows(mask, attrs.pool_size, attrs.strides, attrs.dilation, (oh, ow)).sum(axis=(4, 5))
    count = np.maximum(count, 1)
    out = total / count if x.dtype.kind == "f" else total // count
    return out.astype(x.dtype)


def _pool_samples(attrs_cls):
    def gen(rng):
        A = attrs_cls
        extra = dict(count_include_pad=True) if attrs_cls is AvgPool2DAttrs else {}
        return [
            Sample([S.rand(rng, (1, 2, 6, 6))], A(pool_size=(2, 2), strides=(2, 2))),
            Sample([S.rand(rng, (2, 3, 7, 8))], A(pool_size=3, strides=2, padding=1)),
            Sample([S.rand(rng, (1, 2, 7, 7))], A(pool_size=(3, 2), strides=(2, 2), ceil_mode=True),
                   "ceil_mode partial windows"),
            Sample([S.rand(rng, (1, 1, 6, 7), "float64")], A(pool_size=3, strides=2, padding=(1, 0, 1, 1),
                                                            ceil_mode=True, **extra)),
            Sample([S.rand(rng, (1, 2, 8, 8), "float16")], A(pool_size=2, strides=1, dilation=2, **extra)),
            Sample([S.rand(rng, (1, 2, 5, 5))], A(pool_size=3, strides=1, padding=1, **extra)),
            Sample([S.rand(rng, (1, 2, LONG_SIDE, LONG_SIDE), "float16", 100, 101)], A(pool_size=LONG_SIDE),
                   "float16, one long window"),
            Sample([S.rand(rng, (1, 6, 5, 3))], A(pool_size=(3, 2), strides=2, padding=(1, 0), layout="NHWC",
                                                  **extra), "NHWC"),
            Sample([S.rand(rng, (1, 2, 7, 6, 4))], A(pool_size=3, strides=2, padding=1, ceil_mode=True,
                                                     layout="NCHW4c", **extra), "channel-blocked NCHW4c"),
        ]
    return gen


def _pool_geometry(data, attrs):
    """(n, c, h, w, oh, ow, block) of a sliding-window pool, symbolic dims allowed; block is
    [] for NCHW data and [b] for channel-blocked NCHW{b}c data (a trailing index)."""
    n, c, h, w, *block = T.dims(data)
    oh, ow = (T.window_out(size, attrs.pool_size[a], attrs.strides[a], attrs.dilation[a],
                           attrs.padding[a], attrs.padding[a + 2], attrs.ceil_mode)
              for a, size in ((0, h), (1, w)))
    return n, c, h, w, oh, ow, block


def _window_loads(data, attrs, fill):
    """(reduce axes, f(b, ch, y, x) -> the window element at (ry, rx) or `fill` outside the input).
    Padding and the cells a ceil_mode window reaches past it read as `fill`."""
    _, _, h, w = T.dims(data)[:4]
    (sh, sw), (dh, dw), (top, left) = attrs.strides, attrs.dilation, attrs.padding[:2]
    ry = te.reduce_axis((0, attrs.pool_size[0]), "ry")
    rx = te.reduce_axis((0, attrs.pool_size[1]), "rx")

    def load(b, ch, y, x, *block):
        iy = y * sh + ry.var * dh - top
        ix = x * sw + rx.var * dw - left
        inside = tir.all(T.in_range(iy, 0, h), T.in_range(ix, 0, w))
        return te.if_then_else(inside, data[(b, ch, iy, ix) + block], fill)
    return [ry, rx], load


def _max_pool_compute(attrs, inputs, out_type):
    """out = max over the window; cells outside the input count as the dtype's lowest value."""
    data, = inputs
    n, c, _, _, oh, ow, block = _pool_geometry(data, attrs)
    axes, load = _window_loads(data, attrs, tir.min_value(data.dtype))
    return [te.compute([n, c, oh, ow] + block, lambda *i: te.max(load(*i), axis=axes),
                       name="max_pool2d", tag=MAX_POOL2D.tag)]


def _counted(start, kernel: int, dilation: int, lo, hi):
    """How many of the taps start + p*dilation (p in [0, kernel)) fall in [lo, hi)."""
    first = T.imax(T.ceil_div(lo - start, dilation), 0)
    last = T.imin(T.ceil_div(hi - start, dilation), kernel)
    return T.imax(last - first, 0)


def _avg_pool_compute(attrs, inputs, out_type):
    """A window sum (accumulated in float32 for float16, int64 for ints), then division by the
    number of counted cells: input cells only, or input + padding when count_include_pad (never
    the cells a ceil_mode window reaches past the padding); at least 1."""
    data, = inputs
    dtype = data.dtype
    is_float = tir.is_float_dtype(dtype)
    acc = T.acc_dtype(dtype) if is_float else "int64"
    n, c, h, w, oh, ow, block = _pool_geometry(data, attrs)
    axes, load = _window_loads(data, attrs, T.const(0, dtype))
    total = te.compute([n, c, oh, ow] + block, lambda *i: te.sum(load(*i).astype(acc), axis=axes),
                       name="avg_pool2d_sum", tag=AVG_POOL2D.tag)
    (sh, sw), (dh, dw), (kh, kw) = attrs.strides, attrs.dilation, attrs.pool_size
    top, left, bottom, right = attrs.padding
    if attrs.count_include_pad:
        ybounds, xbounds = (0, h + top + bottom), (0, w + left + right)
    else:
        ybounds, xbounds = (top, top + h), (left, left + w)

    def divide(b, ch, y, x, *blk):
        count = (_counted(y * sh, kh, dh, *ybounds) * _counted(x * sw, kw, dw, *xbounds))
        count = tir.max(count, 1).astype(acc)
        value = total[(b, ch, y, x) + blk]
        mean = value / count if is_float else value // count
        return mean.astype(dtype)
    return [te.compute([n, c, oh, ow] + block, divide, name="avg_pool2d", tag=AVG_POOL2D.tag)]


# The parameters the pooling constructors share (constructor_docs completes their docstrings)
POOL_PARAMETERS = {
    "data": ("relay.Expr", "The input tensor, in `layout`."),
    "pool_size": ("int or tuple of int, optional", "The (height, width) of the window."),
    "strides": ("int or tuple of int, optional", "The step of the window over (height, width)."),
    "dilation": ("int or tuple of int, optional", "The spacing between window taps over (height, width)."),
    "padding": ("int or tuple of int, optional",
                "Padding around the input: one value for every side, two for (height, width), or four "
                "for (top, left, bottom, right)."),
    "layout": ("str, optional", 'The layout of `data`, "NCHW" or "NHWC".'),
    "out_layout": ("str, optional", 'The layout of the result; "" means `layout`.'),
    "ceil_mode": ("bool, optional", "If True, the output size rounds up, so a last partial window is kept."),
}
POOLED = ("result", "relay.Expr", "The pooled tensor.")
GLOBALLY_POOLED = ("result", "relay.Expr", "The pooled tensor, with height and width 1.")


MAX_POOL2D = defop("nn.max_pool2d", inputs=("data",), attrs=MaxPool2DAttrs,
                   rel=in_layout(rel=_make_pool_rel("nn.max_pool2d")),
                   pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=in_layout(ref=_max_pool_ref),
                   compute=in_layout(compute=_max_pool_compute),
                   samples=_pool_samples(MaxPool2DAttrs), level=2,
                   doc="out[n, c, y, x] = max_{p, q} pad(data, -inf)[n, c, y*sh + p*dh, x*sw + q*dw]")
AVG_POOL2D = defop("nn.avg_pool2d", inputs=("data",), attrs=AvgPool2DAttrs,
                   rel=in_layout(rel=_make_pool_rel("nn.avg_pool2d")),
                   pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=in_layout(ref=_avg_pool_ref),
                   compute=in_layout(compute=_avg_pool_compute),
                   samples=_pool_samples(AvgPool2DAttrs), level=2,
                   doc="out = window sum / number of counted cells (input only unless count_include_pad)")


@documented(POOL_PARAMETERS, POOLED)
def max_pool2d(data, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0), layout="NCHW",
               out_layout="", ceil_mode=False):
    """2-D max pooling: the largest element of each window (padding counts as -inf)."""
    return MAX_POOL2D(data, attrs=MaxPool2DAttrs(pool_size, strides, dilation, padding, layout, out_layout,
                                                 ceil_mode))


@documented(POOL_PARAMETERS, POOLED)
def avg_pool2d(data, pool_size=(1, 1), strides=(1, 1), dilation=(1, 1), padding=(0, 0), layout="NCHW",
               out_layout="", ceil_mode=False, count_include_pad=False):
    """2-D average pooling: the mean of each window.

    Parameters
    ----------
    count_include_pad : bool, optional
        If True, padded cells count in the divisor; if False (the default), only cells of the
        input do.
    """
    return AVG_POOL2D(data, attrs=AvgPool2DAttrs(pool_size, strides, dilation, padding, layout, out_layout,
                                                 ceil_mode, count_include_pad))


# --- global pools ----------------------------------------------------------------------------------
def _make_global_rel(op):
    def rel(arg_types, attrs) -> TensorType:
        """(N, C, H, W) -> (N, C, 1, 1)."""
        data = _data(op, arg_types)
        return TensorType(data.shape[:2] + (1, 1), data.dtype)
    return rel


def _global_avg_ref(x, attrs):
    return x.mean(axis=(2, 3), keepdims=True, dtype=C.acc_dtype(str(x.dtype))).astype(x.dtype)


def _global_samples(rng):
    return [Sample([S.rand(rng, (1, 3, 4, 5))], GlobalPool2DAttrs()),
            Sample([S.rand(rng, (2, 2, 7, 7), "float64")], GlobalPool2DAttrs()),
            Sample([S.rand(rng, (1, 4, 3, 3), "float16")], GlobalPool2DAttrs()),
            Sample([S.rand(rng, (1, 2, LONG_SIDE, LONG_SIDE), "float16", 100, 101)], GlobalPool2DAttrs(),
                   "float16, long window"),
            Sample([S.rand(rng, (2, 3, 4, 5))], GlobalPool2DAttrs(layout="NHWC"), "NHWC"),
            Sample([S.rand(rng, (1, 2, 3, 4, 3))], GlobalPool2DAttrs(layout="NCHW3c"), "channel-blocked NCHW3c")]


def _global_compute(reduce_max: bool):
    def compute(attrs, inputs, out_type):
        """max, or sum (float16 in float32) / (H * W), over H and W, keeping them as size 1."""
        data, = inputs
        n, c, h, w, *block = T.dims(data)
        ry, rx = te.reduce_axis((0, h), "ry"), te.reduce_axis((0, w), "rx")
        tag = GLOBAL_MAX_POOL2D.tag if reduce_max else GLOBAL_AVG_POOL2D.tag
        shape = [n, c, 1, 1] + block
        if reduce_max:
            return [te.compute(shape, lambda b, ch, y, x, *blk: te.max(data[(b, ch, ry, rx) + blk], axis=[ry, rx]),
                               name="global_max_pool2d", tag=tag)]
        acc = T.acc_dtype(data.dtype)
        total = te.compute(shape, lambda b, ch, y, x, *blk: te.sum(data[(b, ch, ry, rx) + blk].astype(acc),
                                                                   axis=[ry, rx]),
                           name="global_avg_pool2d_sum", tag=tag)
        area = T.const(1, acc) * (h * w)
        return [te.compute(shape, lambda *i: (total[i] / area).astype(data.dtype),
                           name="global_avg_pool2d", tag=tag)]
    return compute


GLOBAL_MAX_POOL2D = defop("nn.global_max_pool2d", inputs=("data",), attrs=GlobalPool2DAttrs,
                          rel=in_layout(rel=_make_global_rel("nn.global_max_pool2d")),
                          pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                          ref=in_layout(ref=lambda x, a: x.max(axis=(2, 3), keepdims=True)),
                          samples=_global_samples, level=2, compute=in_layout(compute=_global_compute(True)))
GLOBAL_AVG_POOL2D = defop("nn.global_avg_pool2d", inputs=("data",), attrs=GlobalPool2DAttrs,
                          rel=in_layout(rel=_make_global_rel("nn.global_avg_pool2d")),
                          pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=in_layout(ref=_global_avg_ref),
                          samples=_global_samples, level=2, compute=in_layout(compute=_global_compute(False)))


@documented(POOL_PARAMETERS, GLOBALLY_POOLED)
def global_max_pool2d(data, layout="NCHW", out_layout=""):
    """The largest element over the whole height and width of each channel."""
    return GLOBAL_MAX_POOL2D(data, attrs=GlobalPool2DAttrs(layout, out_layout))


@documented(POOL_PARAMETERS, GLOBALLY_POOLED)
def global_avg_pool2d(data, layout="NCHW", out_layout=""):
    """The mean over the whole height and width of each channel."""
    return GLOBAL_AVG_POOL2D(data, attrs=GlobalPool2DAttrs(layout, out_layout))


# --- adaptive average pool ----------------------------------------------------------------------------
def _adaptive_out_hw(data_hw, output_size):
    if output_size is None:
        return tuple(data_hw)
    return tuple(d if s is None else s for d, s in zip(data_hw, output_size))


def _adaptive_rel(arg_types, attrs) -> TensorType:
    """(N, C, H, W) -> (N, C, OH, OW); output_size None keeps H, W."""
    data = _data("nn.adaptive_avg_pool2d", arg_types)
    return TensorType(data.shape[:2] + _adaptive_out_hw(data.shape[2:], attrs.output_size), data.dtype)


def _bins(size: int, out: int):
    """PyTorch's adaptive bins: bin i covers [floor(i*size/out), ceil((i+1)*size/out))."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_avg_ref(x, attrs):
    h, w = x.shape[2:]
    oh, ow = _adaptive_out_hw((h, w), attrs.output_size)
    # Summed-area table with a zero first row/column: any box sum is four lookups.
    sat = np.zeros(x.shape[:2] + (h + 1, w + 1), "float64")
    sat[:, :, 1:, 1:] = x.astype("float64").cumsum(2).cumsum(3)
    hs, he = _bins(h, oh)
    ws, we = _bins(w, ow)
    box = (sat[:, :, he][:, :, :, we] - sat[:, :, hs][:, :, :, we]
           - sat[:, :, he][:, :, :, ws] + sat[:, :, hs][:, :, :, ws])
    area = (he - hs)[:, None] * (we - ws)[None, :]
    return (box / area).astype(x.dtype)


def _adaptive_samples(rng):
    A = AdaptivePool2DAttrs
    return [Sample([S.rand(rng, (1, 2, 7, 7))], A(output_size=(3, 3)), "uneven, overlapping bins"),
            Sample([S.rand(rng, (2, 3, 8, 6))], A(output_size=(4, 6))),
            Sample([S.rand(rng, (1, 2, 5, 9), "float64")], A(output_size=1)),
            Sample([S.rand(rng, (1, 1, 3, 4))], A(output_size=(6, None)), "upsampling bins; None keeps W"),
            Sample([S.rand(rng, (1, 2, 4, 4), "float16")], A()),
            Sample([S.rand(rng, (1, 1, 2 * LONG_SIDE, 2 * LONG_SIDE), "float16", 100, 101)], A(output_size=(2, 2)),
                   "float16, long bins"),
            Sample([S.rand(rng, (1, 5, 7, 2))], A(output_size=(2, 3), layout="NHWC"), "NHWC"),
            Sample([S.rand(rng, (1, 2, 5, 5, 8))], A(output_size=(2, 3), layout="NCHW8c"), "channel-blocked NCHW8c")]


def _max_bin(size, out):
    """The largest bin of _bins(size, out): exact when static, an upper bound when symbolic."""
    if T.is_static(size, out):
        start, end = _bins(size, out)
        return int((end - start).max())
    return T.ceil_div(size, out) + 1


def _adaptive_avg_compute(attrs, inputs, out_type):
    """Sum over a variable-extent bin (a reduction over the largest bin with a where= mask),
    then division by the bin's area; float16 accumulates in float32."""
    data, = inputs
    n, c, h, w, *block = T.dims(data)
    oh, ow = _adaptive_out_hw((h, w), attrs.output_size)
    acc = T.acc_dtype(data.dtype)
    ry = te.reduce_axis((0, _max_bin(h, oh)), "ry")
    rx = te.reduce_axis((0, _max_bin(w, ow)), "rx")

    def bounds(i, size, out):
        return (i * size) // out, T.ceil_div((i + 1) * size, out)

    def window_sum(b, ch, y, x, *blk):
        (y0, y1), (x0, x1) = bounds(y, h, oh), bounds(x, w, ow)
        inside = tir.all(ry.var < y1 - y0, rx.var < x1 - x0)
        return te.sum(data[(b, ch, y0 + ry.var, x0 + rx.var) + blk].astype(acc), axis=[ry, rx], where=inside)
    tag = ADAPTIVE_AVG_POOL2D.tag
    total = te.compute([n, c, oh, ow] + block, window_sum, name="adaptive_pool_sum", tag=tag)

    def mean(b, ch, y, x, *blk):
        (y0, y1), (x0, x1) = bounds(y, h, oh), bounds(x, w, ow)
        area = ((y1 - y0) * (x1 - x0)).astype(acc)
        return (total[(b, ch, y, x) + blk] / area).astype(data.dtype)
    return [te.compute([n, c, oh, ow] + block, mean, name="adaptive_avg_pool2d", tag=tag)]


ADAPTIVE_AVG_POOL2D = defop("nn.adaptive_avg_pool2d", inputs=("data",), attrs=AdaptivePool2DAttrs,
                            rel=in_layout(rel=_adaptive_rel), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                            ref=in_layout(ref=_adaptive_avg_ref), samples=_adaptive_samples, level=10,
                            compute=in_layout(compute=_adaptive_avg_compute),
                            doc="out[.., i, j] = mean(data[.., floor(i*H/OH):ceil((i+1)*H/OH), same for W])")


@documented(POOL_PARAMETERS, POOLED)
def adaptive_avg_pool2d(data, output_size=None, layout="NCHW", out_layout=""):
    """Average pooling into a fixed output grid, the windows sized to fit the input.

    Output cell i along an axis of input length L and output length S averages the input
    from floor(i * L / S) up to ceil((i + 1) * L / S), so neighbouring windows may overlap.

    Parameters
    ----------
    output_size : None or int or tuple of int, optional
        The (height, width) of the result; one int for both; None (the default), or None for
        one of the two, keeps the input's size there.
    """
    return ADAPTIVE_AVG_POOL2D(data, attrs=AdaptivePool2DAttrs(output_size, layout, out_layout))


__all__ = ["max_pool2d", "avg_pool2d", "global_max_pool2d", "global_avg_pool2d", "adaptive_avg_pool2d",
           "MaxPool2DAttrs", "AvgPool2DAttrs", "GlobalPool2DAttrs", "AdaptivePool2DAttrs"]
