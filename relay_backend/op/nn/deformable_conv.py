"""nn.deformable_conv2d (TVM v0.18): a 2-D convolution whose kernel taps are displaced by learned
offsets. OUT_ELEMWISE_FUSABLE. Data and offset NCHW or NHWC; kernel any order of OIHW.

For output (n, o, y, x), input channel c and tap (p, q), with deformable group
g = c // (C / deformable_groups), the offset tensor (N, deformable_groups * KH * KW * 2, OH, OW)
gives (dy, dx) at channels g * KH * KW * 2 + (p * KW + q) * 2 + (0, 1), and the tap samples the
input bilinearly at
  h = y * sh - pad_top + p * dh + dy,   w = x * sw - pad_left + q * dw + dx,
reading 0 when (h, w) lies outside [0, H) x [0, W) and for neighbours outside the input. The
output is the convolution of these samples with the weight (groups as conv2d).
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...ir.attrs import Attrs
from ...ir.dims import is_static
from ...ir.shape_math import dims_differ, mul
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from . import _window as Wn
from ..constructor_docs import documented
from .conv_docs import CONV_PARAMETERS, CONVOLVED
from .conv_nd import check_channels, grouped_contract


@dataclasses.dataclass(frozen=True)
class DeformableConv2DAttrs(Attrs):
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    deformable_groups: int = 1
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str = ""
    out_dtype: str = ""

    def __post_init__(self):
        C.normalize_conv_window(self, 2, C.padding4)
        object.__setattr__(self, "deformable_groups",
                           C.ints(self.deformable_groups, 1, "deformable_groups", minimum=1)[0])
        C.check_layout("nn.deformable_conv2d", "data_layout", self.data_layout, ("NCHW", "NHWC"))
        Wn.check_order("nn.deformable_conv2d", "kernel_layout", self.kernel_layout, "OIHW")
        C.check_layout("nn.deformable_conv2d", "out_layout", self.out_layout, ("", self.data_layout))


def _rel(arg_types, attrs) -> TensorType:
    """data (N, C, H, W), offset (N, dg * KH * KW * 2, OH, OW), weight (O, C / groups, KH, KW)
    -> (N, O, OH, OW), OH as conv2d's."""
    op = "nn.deformable_conv2d"
    data, offset, weight = (C.tensor_arg(op, t, n) for t, n in zip(arg_types, ("data", "offset", "weight")))
    types = dict(data=data, offset=offset, weight=weight)
    C.same_dtype(op, **types)
    for name, t in types.items():
        C.expect_rank(op, t, 4, name, **types)
    if np.dtype(data.dtype).kind != "f":
        raise C.rel_error(op, "bilinear sampling needs floating-point data", **types)
    layout = attrs.data_layout
    n, c, h, w = Wn.pick(data.shape, layout, "NCHW")
    o, i, kh, kw = Wn.pick(weight.shape, attrs.kernel_layout, "OIHW")
    check_channels(op, c, o, i, attrs.groups, attrs, (kh, kw), **types)
    if is_static(c) and int(c) % attrs.deformable_groups:
        raise C.rel_error(op, f"deformable_groups={attrs.deformable_groups} does not divide the {c} channels", **types)
    out = []
    for axis, (size, k) in enumerate(((h, kh), (w, kw))):
        length = C.window_out_dim(size, k, attrs.strides[axis], attrs.dilation[axis], attrs.padding[axis],
                                  attrs.padding[axis + 2])
        if length is None:
            raise C.rel_error(op, f"the dilated kernel is larger than the padded input along {'HW'[axis]}", **types)
        out.append(length)
    want = (n, mul(mul(kh, kw), 2 * attrs.deformable_groups), out[0], out[1])
    if any(dims_differ(a, b) for a, b in zip(Wn.pick(offset.shape, layout, "NCHW"), want)):
        raise C.rel_error(op, f"offset must have shape {Wn.place(want, 'NCHW', layout)} "
                              "(batch, deformable_groups * KH * KW * 2, OH, OW)", **types)
    return TensorType(Wn.place((n, o, out[0], out[1]), "NCHW", layout), C.result_dtype(attrs.out_dtype, data.dtype))


def _bilinear_np(x, h, w):
    """x (N, C, H, W) sampled at per-(n, c) positions h, w of shape (N, C, ...): zero outside."""
    n, c, height, width = x.shape
    outside = (h < 0) | (w < 0) | (h >= height) | (w >= width)
    y0, x0 = np.floor(h).astype(np.int64), np.floor(w).astype(np.int64)
    out = np.zeros(h.shape)
    bi = np.arange(n).reshape((n,) + (1,) * (h.ndim - 1))
    ci = np.arange(c).reshape((1, c) + (1,) * (h.ndim - 2))
    for yy, wy in ((y0, 1 - (h - y0)), (y0 + 1, h - y0)):
        for xx, wx in ((x0, 1 - (w - x0)), (x0 + 1, w - x0)):
            ok = (yy >= 0) & (yy < height) & (xx >= 0) & (xx < width)
            out += np.where(ok, wy * wx * x[bi, ci, np.clip(yy, 0, height - 1), np.clip(xx, 0, width - 1)], 0.0)
    return np.where(outside, 0.0, out)


def _ref(data, offset, weight, attrs):
    dtype = C.result_dtype(attrs.out_dtype, str(data.dtype))
    x = Wn.to_channel_first(data, attrs.data_layout, "NCHW").astype("float64")
    off = Wn.to_channel_first(offset, attrs.data_layout, "NCHW").astype("float64")
    wt = Wn.to_channel_first(weight, attrs.kernel_layout, "OIHW").astype("float64")
    n, c = x.shape[:2]
    _, _, kh, kw = wt.shape
    oh, ow = off.shape[2:]
    per_dgroup = c // attrs.deformable_groups
    group_of = np.arange(c) // per_dgroup
    ys = (np.arange(oh) * attrs.strides[0] - attrs.padding[0])[:, None]
    xs = (np.arange(ow) * attrs.strides[1] - attrs.padding[1])[None, :]
    samples = np.zeros((n, c, oh, ow, kh, kw))
    for p in range(kh):
        for q in range(kw):
            base = group_of * (kh * kw * 2) + (p * kw + q) * 2
            h = ys + p * attrs.dilation[0] + off[:, base]          # N, C, OH, OW
            w = xs + q * attrs.dilation[1] + off[:, base + 1]
            samples[..., p, q] = _bilinear_np(x, h, w)
    res = grouped_contract(samples, wt, attrs.groups)
    out_layout = attrs.out_layout or attrs.data_layout
    return Wn.from_channel_first(res, "NCHW", out_layout).astype(dtype, copy=False)


def _compute(attrs, inputs, out_type):
    """A sampled-input stage (N, C, KH, KW, OH, OW) of bilinear reads (in float32 for float16),
    then the convolution reduction over (c, p, q) within the output channel's group."""
    data, offset, weight = inputs
    layout, kl = attrs.data_layout, attrs.kernel_layout
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    n, c, h, w = Wn.pick(T.dims(data), layout, "NCHW")
    o, i, kh, kw = Wn.pick(T.dims(weight), kl, "OIHW")
    oh, ow = Wn.pick(T.dims(offset), layout, "NCHW")[2:]
    per_dgroup = c // attrs.deformable_groups
    zero = T.const(0, acc)

    def pixel(b, ch, yy, xx):
        ok = tir.all(T.in_range(yy, 0, h), T.in_range(xx, 0, w))
        clamp_y, clamp_x = tir.max(tir.min(yy, h - 1), 0), tir.max(tir.min(xx, w - 1), 0)
        return te.if_then_else(ok, data[Wn.place((b, ch, clamp_y, clamp_x), "NCHW", layout)].astype(acc), zero)

    def sample(b, ch, p, q, y, x):
        base = (ch // per_dgroup) * (kh * kw * 2) + (p * kw + q) * 2
        dy = offset[Wn.place((b, base, y, x), "NCHW", layout)].astype(acc)
        dx = offset[Wn.place((b, base + 1, y, x), "NCHW", layout)].astype(acc)
        hh = (y * attrs.strides[0] - attrs.padding[0] + p * attrs.dilation[0]).astype(acc) + dy
        ww = (x * attrs.strides[1] - attrs.padding[1] + q * attrs.dilation[1]).astype(acc) + dx
        y0, x0 = te.floor(hh), te.floor(ww)
        fy, fx = hh - y0, ww - x0
        y0, x0 = y0.astype("int32"), x0.astype("int32")
        one = T.const(1, acc)
        value = ((one - fy) * ((one - fx) * pixel(b, ch, y0, x0) + fx * pixel(b, ch, y0, x0 + 1))
                 + fy * ((one - fx) * pixel(b, ch, y0 + 1, x0) + fx * pixel(b, ch, y0 + 1, x0 + 1)))
        inside = tir.all(hh >= zero, ww >= zero, hh < T.const(1, acc) * h, ww < T.const(1, acc) * w)
        return te.if_then_else(inside, value, zero)
    tag = DEFORMABLE_CONV2D.tag
    sampled = te.compute((n, c, kh, kw, oh, ow), sample, name="data_deform", tag=tag)
    rc, ry, rx = te.reduce_axis((0, i), "rc"), te.reduce_axis((0, kh), "ry"), te.reduce_axis((0, kw), "rx")
    per_group = o // attrs.groups
    out_layout = attrs.out_layout or layout

    def body(*index):
        b, oc, y, x = Wn.pick(index, out_layout, "NCHW")
        ic = rc.var if attrs.groups == 1 else (oc // per_group) * i + rc.var
        tap = weight[Wn.place((oc, rc.var, ry.var, rx.var), "OIHW", kl)].astype(acc)
        return te.sum(sampled[b, ic, ry.var, rx.var, y, x] * tap, axis=[rc, ry, rx])
    res = te.compute(Wn.place((n, o, oh, ow), "NCHW", out_layout), body, name="deformable_conv2d", tag=tag)
    return [T.cast_to(res, dtype, tag, "deformable_conv2d_cast")]


def _samples(rng):
    A = DeformableConv2DAttrs
    n16 = S.FLOAT16_REDUCTION_TERMS
    return [Sample([S.rand(rng, (1, 2, 5, 5)), S.rand(rng, (1, 18, 5, 5), low=-1.5, high=1.5),
                    S.rand(rng, (3, 2, 3, 3))], A(padding=1)),
            Sample([S.rand(rng, (1, 4, 6, 5), "float64"), S.rand(rng, (1, 16, 3, 2), "float64", -2, 2),
                    S.rand(rng, (2, 2, 2, 2), "float64")],
                   A(strides=2, padding=(0, 0, 1, 0), deformable_groups=2, groups=2), "strided, grouped"),
            Sample([S.rand(rng, (1, 4, 4, 2)), S.rand(rng, (1, 4, 4, 8), low=-1, high=1),
                    S.rand(rng, (2, 2, 2, 2))], A(padding=(1, 1, 0, 0), data_layout="NHWC", kernel_layout="HWIO"),
                   "NHWC / HWIO"),
            Sample([S.rand(rng, (1, n16 // 4, 3, 3), "float16", 0, 1), S.rand(rng, (1, 8, 2, 2), "float16", -0.5, 0.5),
                    S.rand(rng, (1, n16 // 4, 2, 2), "float16", 0, 1)], A(), "float16, a long reduction")]


DEFORMABLE_CONV2D = defop("nn.deformable_conv2d", inputs=("data", "offset", "weight"), attrs=DeformableConv2DAttrs,
                          rel=_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_ref, compute=_compute,
                          samples=_samples, level=5,
                          doc="conv2d whose taps read the input bilinearly at positions moved by `offset`")


@documented(CONV_PARAMETERS, CONVOLVED)
def deformable_conv2d(data, offset, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), deformable_groups=1,
                      groups=1, channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="OIHW",
                      out_layout="", out_dtype=""):
    """relay.nn.deformable_conv2d: 2-D convolution with learned per-tap offsets.

    Each kernel tap reads the input bilinearly at its usual position moved by a (dy, dx) pair from
    `offset` (0 outside the input); the samples are then convolved with `weight` as in conv2d.

    Parameters
    ----------
    data : relay.Expr
        The input tensor, in `data_layout` ("NCHW" or "NHWC").
    offset : relay.Expr
        The tap displacements, (N, deformable_groups * KH * KW * 2, OH, OW) in `data_layout`:
        channel (g * KH * KW + p * KW + q) * 2 holds dy and the next one dx for tap (p, q) of
        deformable group g.
    weight : relay.Expr
        The kernel, in `kernel_layout`.
    deformable_groups : int, optional
        The number of groups the input channels are split into, each with its own offsets.
        Defaults to 1.
    """
    return DEFORMABLE_CONV2D(data, offset, weight, attrs=DeformableConv2DAttrs(
        strides, padding, dilation, deformable_groups, groups, channels, kernel_size, data_layout, kernel_layout,
        out_layout, out_dtype))


__all__ = ["deformable_conv2d", "DeformableConv2DAttrs"]
