"""1-D and 3-D pooling and the adaptive pools TVM v0.18 has besides adaptive_avg_pool2d:
nn.max_pool1d / nn.avg_pool1d / nn.max_pool3d / nn.avg_pool3d (sliding windows with padding,
dilation, ceil_mode and count_include_pad, as the 2-D pools in op/nn/pool.py), and
nn.adaptive_max_pool1d/2d/3d, nn.adaptive_avg_pool1d/3d (PyTorch-style bins). The global 1-D
and 3-D pools are adaptive pools to size 1, as in TVM. All OUT_ELEMWISE_FUSABLE.

Layouts are NC + spatial letters in any order (NCW, NWC; NCDHW, NDHWC; NCHW, NHWC for the 2-D
adaptive max pool); formulas are written channel-first and read every dim by its letter.
"""
import dataclasses
from typing import ClassVar

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
from . import _window as Wn
from .pool import LONG_SIDE, POOL_PARAMETERS, POOLED, AdaptivePool2DAttrs
from .pool import _counted as counted_taps   # taps of a window inside [lo, hi), shared with the 2-D pools

LONG_3D = round(S.FLOAT16_REDUCTION_TERMS ** (1 / 3)) + 1     # LONG_3D ** 3 >= FLOAT16_REDUCTION_TERMS


def _letters(nd: int) -> str:
    return "NC" + Wn.spatial(nd)


def _check_layouts(attrs, nd: int) -> None:
    what = type(attrs).__name__
    Wn.check_order(what, "layout", attrs.layout, _letters(nd))
    if attrs.out_layout not in ("", attrs.layout):
        C.check_layout(what, "out_layout", attrs.out_layout, ("", attrs.layout))


# --- sliding-window pools ------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _PoolNDAttrs(Attrs):
    NDIM: ClassVar[int] = 0

    def __post_init__(self):
        nd = self.NDIM
        C.normalize_pool_window(self, nd, lambda padding: Wn.padding_nd(padding, nd))
        _check_layouts(self, nd)


@dataclasses.dataclass(frozen=True)
class MaxPool1DAttrs(_PoolNDAttrs):
    NDIM: ClassVar[int] = 1
    pool_size: tuple = (1,)
    strides: tuple = (1,)
    dilation: tuple = (1,)
    padding: tuple = (0, 0)
    layout: str = "NCW"
    out_layout: str = ""
    ceil_mode: bool = False


@dataclasses.dataclass(frozen=True)
class AvgPool1DAttrs(MaxPool1DAttrs):
    count_include_pad: bool = False


@dataclasses.dataclass(frozen=True)
class MaxPool3DAttrs(_PoolNDAttrs):
    NDIM: ClassVar[int] = 3
    pool_size: tuple = (1, 1, 1)
    strides: tuple = (1, 1, 1)
    dilation: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    layout: str = "NCDHW"
    out_layout: str = ""
    ceil_mode: bool = False


@dataclasses.dataclass(frozen=True)
class AvgPool3DAttrs(MaxPool3DAttrs):
    count_include_pad: bool = False


def _make_pool_rel(op):
    def rel(arg_types, attrs) -> TensorType:
        """(N, C, *S) -> (N, C, *out), out as for a convolution (ceil division when ceil_mode)."""
        nd = attrs.NDIM
        data = C.tensor_arg(op, arg_types[0], "data")
        C.expect_rank(op, data, nd + 2, f"data ({attrs.layout})", data=data)
        n, c, *size = Wn.pick(data.shape, attrs.layout, _letters(nd))
        out = []
        for a in range(nd):
            o = C.window_out_dim(size[a], attrs.pool_size[a], attrs.strides[a], attrs.dilation[a],
                                 attrs.padding[a], attrs.padding[a + nd], attrs.ceil_mode)
            if o is None:
                raise C.rel_error(op, f"pool_size={attrs.pool_size} (dilation={attrs.dilation}) does not fit "
                                      f"the padded input along {Wn.spatial(nd)[a]}; add padding or use a smaller "
                                      "pool", data=data)
            out.append(o)
        return TensorType(Wn.place((n, c, *out), _letters(nd), attrs.layout), data.dtype)
    return rel


def _geometry(size, attrs):
    """(out lengths, pads before, pads after incl. the cells a ceil_mode window reaches)."""
    nd = attrs.NDIM
    out = [C.window_out_dim(size[a], attrs.pool_size[a], attrs.strides[a], attrs.dilation[a],
                            attrs.padding[a], attrs.padding[a + nd], attrs.ceil_mode) for a in range(nd)]
    before = attrs.padding[:nd]
    after = [max(attrs.padding[a + nd], (out[a] - 1) * attrs.strides[a] + (attrs.pool_size[a] - 1)
                 * attrs.dilation[a] + 1 - size[a] - before[a]) for a in range(nd)]
    return out, before, after


def _lowest(dtype):
    dtype = np.dtype(dtype)
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _pool_ref(kind):
    def ref(data, attrs):
        nd = attrs.NDIM
        x = Wn.to_channel_first(data, attrs.layout, _letters(nd))
        out, before, after = _geometry(x.shape[2:], attrs)
        axes = tuple(range(2 + nd, 2 + 2 * nd))
        if kind == "max":
            xp = Wn.pad_spatial(x, before, after, _lowest(x.dtype))
            res = Wn.windows(xp, attrs.pool_size, attrs.strides, attrs.dilation, out).max(axis=axes)
        else:
            acc = "float64" if x.dtype.kind == "f" else "int64"
            xp = Wn.pad_spatial(x.astype(acc), before, after, 0)
            total = Wn.windows(xp, attrs.pool_size, attrs.strides, attrs.dilation, out).sum(axis=axes)
            mask = np.zeros((1, 1) + xp.shape[2:], acc)
            if attrs.count_include_pad:
                mask[(0, 0) + tuple(slice(0, s + b + attrs.padding[a + nd])
                                    for a, (s, b) in enumerate(zip(x.shape[2:], before)))] = 1
            else:
                mask[(0, 0) + tuple(slice(b, b + s) for s, b in zip(x.shape[2:], before))] = 1
            count = np.maximum(Wn.windows(mask, attrs.pool_size, attrs.strides, attrs.dilation, out).sum(axis=axes), 1)
            # integers divide truncating toward zero (TVM's div), not flooring
            res = (total / count if x.dtype.kind == "f" else np.sign(total) * (np.abs(total) // count))
            res = res.astype(x.dtype)
        return Wn.from_channel_first(res, _letters(nd), attrs.layout)
    return ref


def _pool_compute(kind, tag_of):
    def compute(attrs, inputs, out_type):
        """max (cells outside the input count as the lowest value), or the window sum (float16
        in float32, ints in int64) divided by the counted cells (input only, or input + padding
        with count_include_pad; never the ceil_mode extension), at least 1; integer sums divide
        truncating toward zero, as TVM's topi."""
        data, = inputs
        nd, layout, letters, tag = attrs.NDIM, attrs.layout, _letters(attrs.NDIM), tag_of().tag
        n, c, *size = Wn.pick(T.dims(data), layout, letters)
        out = [T.window_out(size[a], attrs.pool_size[a], attrs.strides[a], attrs.dilation[a], attrs.padding[a],
                            attrs.padding[a + nd], attrs.ceil_mode) for a in range(nd)]
        rk = [te.reduce_axis((0, k), f"rk{a}") for a, k in enumerate(attrs.pool_size)]
        dtype = data.dtype
        is_float = tir.is_float_dtype(dtype)
        fill = tir.min_value(dtype) if kind == "max" else T.const(0, dtype)

        def load(b, ch, pos):
            src = [p * s + k.var * d - pb for p, s, k, d, pb in
                   zip(pos, attrs.strides, rk, attrs.dilation, attrs.padding)]
            inside = tir.all(*[T.in_range(v, 0, lim) for v, lim in zip(src, size)])
            return te.if_then_else(inside, data[Wn.place((b, ch, *src), letters, layout)], fill)
        oshape = Wn.place((n, c, *out), letters, layout)
        if kind == "max":
            def body(*index):
                b, ch, *pos = Wn.pick(index, layout, letters)
                return te.max(load(b, ch, pos), axis=rk)
            return [te.compute(oshape, body, name=f"max_pool{nd}d", tag=tag)]
        acc = T.acc_dtype(dtype) if is_float else "int64"

        def window_sum(*index):
            b, ch, *pos = Wn.pick(index, layout, letters)
            return te.sum(load(b, ch, pos).astype(acc), axis=rk)
        total = te.compute(oshape, window_sum, name=f"avg_pool{nd}d_sum", tag=tag)

        def divide(*index):
            _, _, *pos = Wn.pick(index, layout, letters)
            count = 1
            for a, p in enumerate(pos):
                before, after = attrs.padding[a], attrs.padding[a + nd]
                lo, hi = (-before, size[a] + after) if attrs.count_include_pad else (0, size[a])
                count = count * counted_taps(p * attrs.strides[a] - before, attrs.pool_size[a], attrs.dilation[a],
                                             lo, hi)
            count = tir.max(count, 1).astype(acc)
            mean = total[index] / count if is_float else tir.truncdiv(total[index], count)
            return mean.astype(dtype)
        return [te.compute(oshape, divide, name=f"avg_pool{nd}d", tag=tag)]
    return compute


def _pool_samples(attrs_cls):
    def gen(rng):
        A, nd = attrs_cls, attrs_cls.NDIM
        extra = dict(count_include_pad=True) if hasattr(attrs_cls(), "count_include_pad") else {}
        if nd == 1:
            return [Sample([S.rand(rng, (2, 3, 8))], A(pool_size=2, strides=2)),
                    Sample([S.rand(rng, (1, 2, 7))], A(pool_size=3, strides=2, padding=1, ceil_mode=True, **extra),
                           "padding, ceil_mode"),
                    Sample([S.rand(rng, (1, 9, 2), "float64")], A(pool_size=2, dilation=2, padding=(1, 0),
                                                                  layout="NWC"), "NWC, dilated"),
                    Sample([S.rand(rng, (1, 2, 6), "int32", -50, 50)], A(pool_size=3, strides=1, padding=1, **extra)),
                    Sample([S.rand(rng, (1, 2, S.FLOAT16_REDUCTION_TERMS), "float16", 100, 101)],
                           A(pool_size=S.FLOAT16_REDUCTION_TERMS), "float16, one long window")]
        return [Sample([S.rand(rng, (1, 2, 4, 4, 4))], A(pool_size=2, strides=2)),
                Sample([S.rand(rng, (1, 2, 5, 4, 5))], A(pool_size=(3, 2, 3), strides=2, padding=(1, 0, 1),
                                                         ceil_mode=True, **extra), "padding, ceil_mode"),
                Sample([S.rand(rng, (1, 4, 5, 3, 2), "float64")], A(pool_size=2, dilation=(1, 2, 1), padding=(0, 1, 0),
                                                                     layout="NDHWC", **extra), "NDHWC, dilated"),
                Sample([S.rand(rng, (1, 1, LONG_3D, LONG_3D, LONG_3D), "float16", 100, 101)],
                       A(pool_size=LONG_3D), "float16, one long window")]
    return gen


def _declare_pool(kind, nd, attrs_cls):
    name = f"nn.{kind}_pool{nd}d"
    holder = []
    op = defop(name, inputs=("data",), attrs=attrs_cls, rel=_make_pool_rel(name),
               pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_pool_ref(kind),
               compute=_pool_compute(kind, lambda: holder[0]), samples=_pool_samples(attrs_cls), level=2,
               doc=("out = max over the window (padding counts as -inf)" if kind == "max" else
                    "out = window sum / number of counted cells (input only unless count_include_pad)"))
    holder.append(op)
    return op


# The parameters the 1-D / 3-D / adaptive pools share (constructor_docs completes their docstrings):
# each window argument has one value per spatial axis of `layout`, in the order W or D, H, W.
POOL_ND_PARAMETERS = {
    **POOL_PARAMETERS,
    "pool_size": ("int or tuple of int, optional", "The window's extent along each spatial axis."),
    "strides": ("int or tuple of int, optional", "The step of the window along each spatial axis."),
    "dilation": ("int or tuple of int, optional", "The spacing between window taps along each spatial axis."),
    "padding": ("int or tuple of int, optional",
                "Padding around the input: one value for every side, one per spatial axis (both sides), "
                "or the padding before each spatial axis followed by the padding after each."),
    "layout": ("str, optional", 'The layout of `data`: "N", "C" and the spatial letters ("W"; "D", "H", '
                                '"W"; "H", "W" for the 2-D pool) in any order, e.g. "NCW" or "NDHWC".'),
    "count_include_pad": ("bool, optional", "If True, padded cells count in the divisor of the mean; if "
                                            "False, only cells of the input do."),
    "output_size": ("None or int or tuple of int, optional",
                    "The result's length along each spatial axis; one int for every axis. None, or None "
                    "for an axis, keeps the input's length there."),
}


MAX_POOL1D = _declare_pool("max", 1, MaxPool1DAttrs)
AVG_POOL1D = _declare_pool("avg", 1, AvgPool1DAttrs)
MAX_POOL3D = _declare_pool("max", 3, MaxPool3DAttrs)
AVG_POOL3D = _declare_pool("avg", 3, AvgPool3DAttrs)


@documented(POOL_ND_PARAMETERS, POOLED)
def max_pool1d(data, pool_size=(1,), strides=(1,), dilation=(1,), padding=(0,), layout="NCW", out_layout="",
               ceil_mode=False):
    """relay.nn.max_pool1d: windowed maximum along W."""
    return MAX_POOL1D(data, attrs=MaxPool1DAttrs(pool_size, strides, dilation, padding, layout, out_layout, ceil_mode))


@documented(POOL_ND_PARAMETERS, POOLED)
def avg_pool1d(data, pool_size=(1,), strides=(1,), dilation=(1,), padding=(0,), layout="NCW", out_layout="",
               ceil_mode=False, count_include_pad=False):
    """relay.nn.avg_pool1d: windowed mean along W."""
    return AVG_POOL1D(data, attrs=AvgPool1DAttrs(pool_size, strides, dilation, padding, layout, out_layout,
                                                 ceil_mode, count_include_pad))


@documented(POOL_ND_PARAMETERS, POOLED)
def max_pool3d(data, pool_size=(1, 1, 1), strides=(1, 1, 1), dilation=(1, 1, 1), padding=(0, 0, 0),
               layout="NCDHW", out_layout="", ceil_mode=False):
    """relay.nn.max_pool3d: windowed maximum over D, H, W."""
    return MAX_POOL3D(data, attrs=MaxPool3DAttrs(pool_size, strides, dilation, padding, layout, out_layout, ceil_mode))


@documented(POOL_ND_PARAMETERS, POOLED)
def avg_pool3d(data, pool_size=(1, 1, 1), strides=(1, 1, 1), dilation=(1, 1, 1), padding=(0, 0, 0),
               layout="NCDHW", out_layout="", ceil_mode=False, count_include_pad=False):
    """relay.nn.avg_pool3d: windowed mean over D, H, W."""
    return AVG_POOL3D(data, attrs=AvgPool3DAttrs(pool_size, strides, dilation, padding, layout, out_layout,
                                                 ceil_mode, count_include_pad))


# --- adaptive pools ------------------------------------------------------------------------------
def _output_size(value, nd: int):
    """None, one positive int (every axis) or nd entries (an entry None keeps that input dim)."""
    if value is None:
        return None
    size = (value,) if isinstance(value, int) else tuple(value)
    if len(size) == 0:
        return None
    size = size * nd if len(size) == 1 else size
    if len(size) != nd or any(s is not None and (int(s) != s or s < 1) for s in size):
        raise AttrsError(f"attribute output_size={value!r} must be None, one positive int or {nd} "
                         "(each may be None to keep that input dim)")
    return tuple(None if s is None else int(s) for s in size)


@dataclasses.dataclass(frozen=True)
class _AdaptivePoolNDAttrs(Attrs):
    NDIM: ClassVar[int] = 0

    def __post_init__(self):
        object.__setattr__(self, "output_size", _output_size(self.output_size, self.NDIM))
        _check_layouts(self, self.NDIM)


@dataclasses.dataclass(frozen=True)
class AdaptivePool1DAttrs(_AdaptivePoolNDAttrs):
    NDIM: ClassVar[int] = 1
    output_size: tuple = None
    layout: str = "NCW"
    out_layout: str = ""


@dataclasses.dataclass(frozen=True)
class AdaptivePool3DAttrs(_AdaptivePoolNDAttrs):
    NDIM: ClassVar[int] = 3
    output_size: tuple = None
    layout: str = "NCDHW"
    out_layout: str = ""


def _nd(attrs) -> int:
    return len(attrs.layout) - 2


def _adaptive_out(size, output_size):
    if output_size is None:
        return list(size)
    return [d if s is None else s for d, s in zip(size, output_size)]


def _make_adaptive_rel(op):
    def rel(arg_types, attrs) -> TensorType:
        """(N, C, *S) -> (N, C, *output_size); None keeps an input dim."""
        nd = _nd(attrs)
        data = C.tensor_arg(op, arg_types[0], "data")
        C.expect_rank(op, data, nd + 2, f"data ({attrs.layout})", data=data)
        n, c, *size = Wn.pick(data.shape, attrs.layout, _letters(nd))
        return TensorType(Wn.place((n, c, *_adaptive_out(size, attrs.output_size)), _letters(nd), attrs.layout),
                          data.dtype)
    return rel


def bins(size: int, out: int):
    """PyTorch's adaptive bins: bin i covers [floor(i*size/out), ceil((i+1)*size/out))."""
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_ref(kind):
    def ref(data, attrs):
        """Bins are boxes, so the box max / mean is taken one axis at a time."""
        nd = _nd(attrs)
        x = Wn.to_channel_first(data, attrs.layout, _letters(nd))
        res = x if kind == "max" else x.astype("float64")
        for a, out in enumerate(_adaptive_out(x.shape[2:], attrs.output_size)):
            axis = 2 + a
            starts, ends = bins(x.shape[axis], out)
            reduce = np.max if kind == "max" else np.mean
            res = np.stack([reduce(np.take(res, range(s, e), axis=axis), axis=axis) for s, e in zip(starts, ends)],
                           axis=axis)
        return Wn.from_channel_first(res.astype(x.dtype), _letters(nd), attrs.layout)
    return ref


def _max_bin(size, out):
    """The largest bin of bins(size, out): exact when static, an upper bound when symbolic."""
    if T.is_static(size, out):
        start, end = bins(size, out)
        return int((end - start).max())
    return T.ceil_div(size, out) + 1


def _adaptive_compute(kind, tag_of):
    def compute(attrs, inputs, out_type):
        """max, or sum / bin volume (float16 in float32), over a variable-extent bin: a
        reduction over the largest bin with a where= mask."""
        data, = inputs
        nd, layout = _nd(attrs), attrs.layout
        letters, tag = _letters(nd), tag_of().tag
        n, c, *size = Wn.pick(T.dims(data), layout, letters)
        out = _adaptive_out(size, attrs.output_size)
        rk = [te.reduce_axis((0, _max_bin(s, o)), f"rk{a}") for a, (s, o) in enumerate(zip(size, out))]
        acc = T.acc_dtype(data.dtype)

        def bounds(pos):
            return [((p * s) // o, T.ceil_div((p + 1) * s, o)) for p, s, o in zip(pos, size, out)]

        def reduce_bin(*index):
            b, ch, *pos = Wn.pick(index, layout, letters)
            box = bounds(pos)
            inside = tir.all(*[k.var < e - s for k, (s, e) in zip(rk, box)])
            value = data[Wn.place((b, ch, *[s + k.var for k, (s, _) in zip(rk, box)]), letters, layout)]
            if kind == "max":
                return te.max(value, axis=rk, where=inside)
            return te.sum(value.astype(acc), axis=rk, where=inside)
        oshape = Wn.place((n, c, *out), letters, layout)
        name = f"adaptive_{kind}_pool{nd}d"
        if kind == "max":
            return [te.compute(oshape, reduce_bin, name=name, tag=tag)]
        total = te.compute(oshape, reduce_bin, name=name + "_sum", tag=tag)

        def mean(*index):
            _, _, *pos = Wn.pick(index, layout, letters)
            volume = 1
            for s, e in bounds(pos):
                volume = volume * (e - s)
            return (total[index] / volume.astype(acc)).astype(data.dtype)
        return [te.compute(oshape, mean, name=name, tag=tag)]
    return compute


def _adaptive_samples(attrs_cls, nd):
    def gen(rng):
        A = attrs_cls
        if nd == 1:
            return [Sample([S.rand(rng, (2, 3, 7))], A(output_size=3), "uneven, overlapping bins"),
                    Sample([S.rand(rng, (1, 5, 2), "float64")], A(output_size=4, layout="NWC"), "NWC, upsampling"),
                    Sample([S.rand(rng, (1, 2, 6))], A()),
                    Sample([S.rand(rng, (1, 2, 2 * S.FLOAT16_REDUCTION_TERMS), "float16", 100, 101)], A(output_size=2),
                           "float16, long bins")]
        if nd == 2:
            return [Sample([S.rand(rng, (1, 2, 7, 7))], A(output_size=(3, 3)), "uneven, overlapping bins"),
                    Sample([S.rand(rng, (1, 5, 7, 2), "float64")], A(output_size=(2, 3), layout="NHWC"), "NHWC"),
                    Sample([S.rand(rng, (1, 1, 3, 4))], A(output_size=(6, None)), "upsampling bins; None keeps W"),
                    Sample([S.rand(rng, (1, 1, 2 * LONG_SIDE, 2 * LONG_SIDE), "float16", 100, 101)],
                           A(output_size=(2, 2)), "float16, long bins")]
        return [Sample([S.rand(rng, (1, 2, 5, 4, 7))], A(output_size=(2, 3, 3)), "uneven, overlapping bins"),
                Sample([S.rand(rng, (1, 3, 4, 5, 2), "float64")], A(output_size=(1, 2, 3), layout="NDHWC"), "NDHWC"),
                Sample([S.rand(rng, (1, 2, 3, 3, 3))], A(output_size=1), "global"),
                Sample([S.rand(rng, (1, 1, 2 * LONG_3D, LONG_3D, LONG_3D), "float16", 100, 101)],
                       A(output_size=(2, 1, 1)), "float16, long bins")]
    return gen


def _declare_adaptive(kind, nd, attrs_cls):
    name = f"nn.adaptive_{kind}_pool{nd}d"
    holder = []
    op = defop(name, inputs=("data",), attrs=attrs_cls, rel=_make_adaptive_rel(name),
               pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_adaptive_ref(kind), level=10,
               compute=_adaptive_compute(kind, lambda: holder[0]), samples=_adaptive_samples(attrs_cls, nd),
               doc=f"out[.., i] = {kind}(data[.., floor(i*S/O):ceil((i+1)*S/O)]) per spatial axis")
    holder.append(op)
    return op


ADAPTIVE_MAX_POOL1D = _declare_adaptive("max", 1, AdaptivePool1DAttrs)
ADAPTIVE_AVG_POOL1D = _declare_adaptive("avg", 1, AdaptivePool1DAttrs)
ADAPTIVE_MAX_POOL2D = _declare_adaptive("max", 2, AdaptivePool2DAttrs)
ADAPTIVE_MAX_POOL3D = _declare_adaptive("max", 3, AdaptivePool3DAttrs)
ADAPTIVE_AVG_POOL3D = _declare_adaptive("avg", 3, AdaptivePool3DAttrs)


@documented(POOL_ND_PARAMETERS, POOLED)
def adaptive_max_pool1d(data, output_size=None, layout="NCW", out_layout=""):
    """relay.nn.adaptive_max_pool1d: maximum over output_size (possibly overlapping) bins along W."""
    return ADAPTIVE_MAX_POOL1D(data, attrs=AdaptivePool1DAttrs(output_size, layout, out_layout))


@documented(POOL_ND_PARAMETERS, POOLED)
def adaptive_avg_pool1d(data, output_size=None, layout="NCW", out_layout=""):
    """relay.nn.adaptive_avg_pool1d: mean over output_size (possibly overlapping) bins along W."""
    return ADAPTIVE_AVG_POOL1D(data, attrs=AdaptivePool1DAttrs(output_size, layout, out_layout))


@documented(POOL_ND_PARAMETERS, POOLED)
def adaptive_max_pool2d(data, output_size=None, layout="NCHW", out_layout=""):
    """relay.nn.adaptive_max_pool2d: maximum over an output_size grid of bins."""
    return ADAPTIVE_MAX_POOL2D(data, attrs=AdaptivePool2DAttrs(output_size, layout, out_layout))


@documented(POOL_ND_PARAMETERS, POOLED)
def adaptive_max_pool3d(data, output_size=None, layout="NCDHW", out_layout=""):
    """relay.nn.adaptive_max_pool3d: maximum over an output_size grid of 3-D bins."""
    return ADAPTIVE_MAX_POOL3D(data, attrs=AdaptivePool3DAttrs(output_size, layout, out_layout))


@documented(POOL_ND_PARAMETERS, POOLED)
def adaptive_avg_pool3d(data, output_size=None, layout="NCDHW", out_layout=""):
    """relay.nn.adaptive_avg_pool3d: mean over an output_size grid of 3-D bins."""
    return ADAPTIVE_AVG_POOL3D(data, attrs=AdaptivePool3DAttrs(output_size, layout, out_layout))


@documented(POOL_ND_PARAMETERS, POOLED)
def global_max_pool1d(data, layout="NCW", out_layout=""):
    """relay.nn.global_max_pool1d: adaptive_max_pool1d to one output (as TVM)."""
    return adaptive_max_pool1d(data, 1, layout, out_layout)


@documented(POOL_ND_PARAMETERS, POOLED)
def global_avg_pool1d(data, layout="NCW", out_layout=""):
    """relay.nn.global_avg_pool1d: adaptive_avg_pool1d to one output (as TVM)."""
    return adaptive_avg_pool1d(data, 1, layout, out_layout)


@documented(POOL_ND_PARAMETERS, POOLED)
def global_max_pool3d(data, layout="NCDHW", out_layout=""):
    """relay.nn.global_max_pool3d: adaptive_max_pool3d to one output (as TVM)."""
    return adaptive_max_pool3d(data, 1, layout, out_layout)


@documented(POOL_ND_PARAMETERS, POOLED)
def global_avg_pool3d(data, layout="NCDHW", out_layout=""):
    """relay.nn.global_avg_pool3d: adaptive_avg_pool3d to one output (as TVM)."""
    return adaptive_avg_pool3d(data, 1, layout, out_layout)


POOL_ND_NAMES = ["max_pool1d", "avg_pool1d", "max_pool3d", "avg_pool3d", "adaptive_max_pool1d",
                 "adaptive_avg_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "adaptive_avg_pool3d",
                 "global_max_pool1d", "global_avg_pool1d", "global_max_pool3d", "global_avg_pool3d"]
__all__ = POOL_ND_NAMES + ["MaxPool1DAttrs", "AvgPool1DAttrs", "MaxPool3DAttrs", "AvgPool3DAttrs",
                           "AdaptivePool1DAttrs", "AdaptivePool3DAttrs"]
