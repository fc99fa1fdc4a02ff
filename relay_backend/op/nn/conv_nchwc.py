"""Channel-blocked convolutions (Relay's x86 layouts): nn.contrib_conv2d_NCHWc and
nn.contrib_depthwise_conv2d_NCHWc. OUT_ELEMWISE_FUSABLE. AlterOpLayout rewrites nn.conv2d into
these (strategy/x86_alter_layout.py) so that a SIMD register holds one block of channels.

Layouts (ib, ob = the input / output channel blocks):
  data    NCHW{ib}c     (N, C/ib, H, W, ib)
  kernel  OIHW{ib}i{ob}o (O/ob, I/ib, KH, KW, ib, ob), I = C/groups input channels per group
          depthwise: OIHW1i{ob}o (O/ob, 1, KH, KW, 1, ob), groups = C, O = C * multiplier
  out     NCHW{ob}c     (N, O/ob, OH, OW, ob)

    conv:      out[n, oo, y, x, oi] = sum_{icc, p, q, ii} pad(data)[n, g*I/ib + icc, y*sh + p*dh,
                                      x*sw + q*dw, ii] * kernel[oo, icc, p, q, ii, oi]
               with g = (oo*ob) // (O/groups), the group of output block oo (blocks never
               straddle a group: ob divides O/groups and ib divides I);
    depthwise: out[n, oo, y, x, oi] = sum_{p, q} pad(data)[n, c // ib, ..., c % ib]
                                      * kernel[oo, 0, p, q, 0, oi] with c = (oo*ob + oi) // multiplier.

The references unpack to NCHW / OIHW with numpy, run conv2d's reference and pack the result.
"""
import dataclasses
import re

import numpy as np

from ... import te
from ...errors import AttrsError
from ...ir.dims import dim_to_str, is_static
from ...ir.shape_math import dims_differ, mul
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from ..constructor_docs import documented
from .conv import Conv2DAttrs, _conv2d_nchw_ref
from .conv_docs import CONV_PARAMETERS, CONVOLVED
from .layout_view import pack_nchw, unpack_nchw

CONV_OP = "nn.contrib_conv2d_NCHWc"
DEPTHWISE_OP = "nn.contrib_depthwise_conv2d_NCHWc"
_DATA = re.compile(r"^NCHW(\d+)c$")
_KERNEL = re.compile(r"^OIHW(\d+)i(\d+)o$")


def blocks(attrs) -> tuple:
    """(ib, ob): the channel blocks the attrs' layouts name."""
    ib = int(_DATA.match(attrs.data_layout).group(1))
    return ib, int(_DATA.match(attrs.out_layout or attrs.data_layout).group(1))


@dataclasses.dataclass(frozen=True)
class Conv2DNCHWcAttrs(Conv2DAttrs):
    """Conv2DAttrs whose layouts are channel-blocked: data NCHW{ib}c, kernel OIHW{ib}i{ob}o,
    out NCHW{ob}c (default: the data layout)."""

    data_layout: str = "NCHW8c"
    kernel_layout: str = "OIHW8i8o"
    out_layout: str = ""

    def _check_layouts(self):
        for name, pattern, example in (("data_layout", _DATA, "NCHW8c"), ("kernel_layout", _KERNEL, "OIHW8i8o")):
            if not isinstance(getattr(self, name), str) or not pattern.match(getattr(self, name)):
                raise AttrsError(f"{name}={getattr(self, name)!r} is not a channel-blocked layout; use e.g. {example!r}")
        if self.out_layout and not (isinstance(self.out_layout, str) and _DATA.match(self.out_layout)):
            raise AttrsError(f"out_layout={self.out_layout!r} is not a channel-blocked layout; use e.g. 'NCHW8c'")
        ib, ob = blocks(self)
        ki, ko = (int(v) for v in _KERNEL.match(self.kernel_layout).groups())
        if ko != ob:
            raise AttrsError(f"kernel_layout={self.kernel_layout!r} has output block {ko} but out_layout "
                             f"{self.out_layout or self.data_layout!r} has {ob}")
        if ki not in (ib, 1):
            raise AttrsError(f"kernel_layout={self.kernel_layout!r} has input block {ki} but data_layout "
                             f"{self.data_layout!r} has {ib}")


def _windows_out(op, h, w, kh, kw, attrs, types) -> list:
    out_hw = []
    for axis, (size, k) in enumerate(((h, kh), (w, kw))):
        out = C.window_out_dim(size, k, attrs.strides[axis], attrs.dilation[axis], attrs.padding[axis],
                               attrs.padding[axis + 2])
        if out is None:
            raise C.rel_error(op, f"the dilated kernel ({(k - 1) * attrs.dilation[axis] + 1}) is larger than "
                                  f"the padded input along {'HW'[axis]}", **types)
        out_hw.append(out)
    return out_hw


def _blocked_args(op, arg_types, attrs):
    """(data, kernel, types, ib, ob) after the checks both blocked convolutions share. Dims may
    be symbolic: what is not provably wrong now is checked on the concrete shapes at run time."""
    data = C.tensor_arg(op, arg_types[0], "data")
    kernel = C.tensor_arg(op, arg_types[1], "kernel")
    types = dict(data=data, kernel=kernel)
    C.same_dtype(op, **types)
    C.expect_rank(op, data, 5, f"data ({attrs.data_layout})", **types)
    C.expect_rank(op, kernel, 6, f"kernel ({attrs.kernel_layout})", **types)
    ib, ob = blocks(attrs)
    ki, ko = (int(v) for v in _KERNEL.match(attrs.kernel_layout).groups())
    if dims_differ(data.shape[4], ib):
        raise C.rel_error(op, f"data's channel block is {dim_to_str(data.shape[4])}, data_layout says {ib}",
                          **types)
    if dims_differ(kernel.shape[4], ki) or dims_differ(kernel.shape[5], ko):
        raise C.rel_error(op, f"kernel's blocks are ({dim_to_str(kernel.shape[4])}, {dim_to_str(kernel.shape[5])}), "
                              f"kernel_layout {attrs.kernel_layout!r} says ({ki}, {ko})", **types)
    return data, kernel, types, ib, ob


def _conv_rel(arg_types, attrs) -> TensorType:
    data, kernel, types, ib, ob = _blocked_args(CONV_OP, arg_types, attrs)
    n, cc, h, w, _ = data.shape
    oc, icc, kh, kw = kernel.shape[:4]
    c, o, i, g = mul(cc, ib), mul(oc, ob), mul(icc, ib), attrs.groups
    if dims_differ(kernel.shape[4], ib):
        raise C.rel_error(CONV_OP, f"kernel's input block {dim_to_str(kernel.shape[4])} differs from data's {ib}",
                          **types)
    if dims_differ(mul(i, g), c):
        raise C.rel_error(CONV_OP, f"data has {dim_to_str(c)} input channels but kernel expects "
                                   f"{dim_to_str(mul(i, g))} ({dim_to_str(i)} per group x groups={g})", **types)
    if is_static(oc) and int(oc) % g:     # output blocks never straddle a group
        raise C.rel_error(CONV_OP, f"groups={g}: the output channel block {ob} must divide the "
                                   f"{int(o) / g:g} output channels per group", **types)
    if attrs.channels is not None and not C.dim_matches(o, attrs.channels):
        raise C.rel_error(CONV_OP, f"channels={attrs.channels} but kernel has {dim_to_str(o)} output channels",
                          **types)
    oh, ow = _windows_out(CONV_OP, h, w, kh, kw, attrs, types)
    return TensorType((n, oc, oh, ow, ob), C.result_dtype(attrs.out_dtype, data.dtype))


def _depthwise_rel(arg_types, attrs) -> TensorType:
    data, kernel, types, ib, ob = _blocked_args(DEPTHWISE_OP, arg_types, attrs)
    n, cc, h, w, _ = data.shape
    oc, icc, kh, kw, ki, _ = kernel.shape
    c, o = mul(cc, ib), mul(oc, ob)
    if dims_differ(c, attrs.groups) or dims_differ(icc, 1) or dims_differ(ki, 1):
        raise C.rel_error(DEPTHWISE_OP, f"a depthwise kernel is (O/ob, 1, KH, KW, 1, ob) with groups = the "
                                        f"{dim_to_str(c)} input channels (groups={attrs.groups})", **types)
    if is_static(o) and is_static(c) and int(o) % int(c):
        raise C.rel_error(DEPTHWISE_OP, f"{o} output channels are not a multiple of the {c} input channels",
                          **types)
    oh, ow = _windows_out(DEPTHWISE_OP, h, w, kh, kw, attrs, types)
    return TensorType((n, oc, oh, ow, ob), C.result_dtype(attrs.out_dtype, data.dtype))


# --- references: unpack, conv2d's reference, pack ----------------------------------------------------
def unpack_oihw(k: np.ndarray) -> np.ndarray:
    """(O/ob, I/ib, KH, KW, ib, ob) -> (O, I, KH, KW)."""
    oc, icc, kh, kw, ib, ob = k.shape
    return k.transpose(0, 5, 1, 4, 2, 3).reshape(oc * ob, icc * ib, kh, kw)


def pack_oihw(k: np.ndarray, ib: int, ob: int) -> np.ndarray:
    """(O, I, KH, KW) -> (O/ob, I/ib, KH, KW, ib, ob)."""
    o, i, kh, kw = k.shape
    return np.ascontiguousarray(k.reshape(o // ob, ob, i // ib, ib, kh, kw).transpose(0, 2, 4, 5, 3, 1))


def _plain_attrs(attrs):
    return Conv2DAttrs(attrs.strides, attrs.padding, attrs.dilation, attrs.groups, out_dtype=attrs.out_dtype)


def _conv_ref(data, kernel, attrs):
    _, ob = blocks(attrs)
    return pack_nchw(_conv2d_nchw_ref(unpack_nchw(data), unpack_oihw(kernel), _plain_attrs(attrs)), ob)


def _depthwise_ref(data, kernel, attrs):
    _, ob = blocks(attrs)
    return pack_nchw(_conv2d_nchw_ref(unpack_nchw(data), unpack_oihw(kernel), _plain_attrs(attrs)), ob)


# --- te computes -------------------------------------------------------------------------------------
def _blocked_reduction(attrs, inputs, out_type, op, name, extra_axes, body_of):
    """The padded-input stage (tag "injective,pad"), then out = sum over the window taps (ry, rx)
    and `extra_axes` of body_of(padded, kernel, index, y_in, x_in, reduce vars, acc dtype),
    where y_in / x_in are the input row and column a tap reads; cast to the result dtype."""
    data, kernel = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    n, _, h, w, _ = T.dims(data)
    oc, _, kh, kw, _, ob = T.dims(kernel)
    (sh, sw), (dh, dw), pads = attrs.strides, attrs.dilation, attrs.padding
    oh, ow = T.window_out(h, kh, sh, dh, pads[0], pads[2]), T.window_out(w, kw, sw, dw, pads[1], pads[3])
    padded = T.pad_axes_stage(data, (2, 3), attrs.padding, 0, name="pad_data")
    extra = [te.reduce_axis((0, ext), axis_name) for axis_name, ext in extra_axes]
    ry, rx = te.reduce_axis((0, kh), "ry"), te.reduce_axis((0, kw), "rx")
    axes = extra[:1] + [ry, rx] + extra[1:]

    def body(*index):
        _, _, y, x, _ = index
        value = body_of(padded, kernel, index, y * sh + ry.var * dh, x * sw + rx.var * dw, ry, rx, extra, acc)
        return te.sum(value, axis=axes)
    out = te.compute((n, oc, oh, ow, ob), body, name=name, tag=op.tag)
    return [T.cast_to(out, dtype, op.tag + ",cast", name + "_cast")]


def _conv_compute(attrs, inputs, out_type):
    """One reduction over (icc, p, q, ii): input chunk icc of the output block's group."""
    oc, icc_ext, _, _, ib, _ = T.dims(inputs[1])
    blocks_per_group = oc // attrs.groups

    def tap(padded, kernel, index, y_in, x_in, ry, rx, extra, acc):
        b, oo, _, _, oi = index
        icc, ii = extra
        chunk = icc.var if attrs.groups == 1 else (oo // blocks_per_group) * icc_ext + icc.var
        return padded[b, chunk, y_in, x_in, ii.var].astype(acc) * kernel[oo, icc, ry, rx, ii, oi].astype(acc)
    return _blocked_reduction(attrs, inputs, out_type, CONV_NCHWC, "conv2d_NCHWc", [("icc", icc_ext), ("ii", ib)],
                              tap)


def _depthwise_compute(attrs, inputs, out_type):
    """One reduction over the window (p, q): output channel c reads input channel c // multiplier."""
    _, cc, _, _, ib = T.dims(inputs[0])
    oc, _, _, _, _, ob = T.dims(inputs[1])
    multiplier = oc * ob // (cc * ib)

    def tap(padded, kernel, index, y_in, x_in, ry, rx, extra, acc):
        b, oo, _, _, oi = index
        c = (oo * ob + oi) // multiplier
        return padded[b, c // ib, y_in, x_in, c % ib].astype(acc) * kernel[oo, 0, ry, rx, 0, oi].astype(acc)
    return _blocked_reduction(attrs, inputs, out_type, DEPTHWISE_NCHWC, "depthwise_conv2d_NCHWc", [], tap)


# --- samples: odd channel counts (blocks that are not the SIMD width), 1x1, strided, dilated, grouped
def _conv_samples(rng):
    def case(n, c, h, w, o, k, ib, ob, note, groups=1, dtype="float32", low=-2.0, **kw):
        x = pack_nchw(S.rand(rng, (n, c, h, w), dtype, low), ib)
        kern = pack_oihw(S.rand(rng, (o, c // groups, k[0], k[1]), dtype, low), ib, ob)
        attrs = Conv2DNCHWcAttrs(data_layout=f"NCHW{ib}c", kernel_layout=f"OIHW{ib}i{ob}o",
                                 out_layout=f"NCHW{ob}c", groups=groups, **kw)
        return Sample([x, kern], attrs, note)
    return [
        case(1, 6, 7, 9, 10, (3, 3), 3, 5, "3x3, odd blocks (3 in, 5 out)", padding=(1, 1)),
        case(2, 8, 6, 6, 16, (1, 1), 8, 8, "1x1, batch 2"),
        case(1, 4, 9, 8, 6, (3, 3), 2, 3, "strided, asymmetric padding", strides=(2, 2), padding=(1, 0, 2, 1)),
        case(1, 4, 9, 9, 4, (3, 3), 4, 4, "dilated", dilation=(2, 2), padding=2),
        case(1, 8, 5, 5, 12, (3, 3), 2, 3, "grouped (4 groups, blocks inside groups)", groups=4, padding=1),
        case(1, 3, 5, 5, 7, (2, 3), 1, 7, "3 input channels, prime output block", padding=(0, 1)),
        case(1, 4, 4, 4, 4, (3, 3), 4, 2, "float64", dtype="float64", padding=1),
        case(1, S.FLOAT16_REDUCTION_TERMS // 8, 4, 4, 2, (3, 3), 8, 2, "float16, 9/8 x FLOAT16_REDUCTION_TERMS "
             "terms per output", dtype="float16", low=0.0),
    ]


def _depthwise_samples(rng):
    def case(c, h, w, multiplier, k, ib, ob, note, dtype="float32", low=-2.0, **kw):
        x = pack_nchw(S.rand(rng, (1, c, h, w), dtype, low), ib)
        kern = pack_oihw(S.rand(rng, (c * multiplier, 1, k, k), dtype, low), 1, ob)
        attrs = Conv2DNCHWcAttrs(data_layout=f"NCHW{ib}c", kernel_layout=f"OIHW1i{ob}o",
                                 out_layout=f"NCHW{ob}c", groups=c, **kw)
        return Sample([x, kern], attrs, note)
    return [
        case(8, 6, 7, 1, 3, 8, 8, "3x3, padded", padding=1),
        case(6, 7, 7, 1, 3, 3, 2, "odd blocks (in 3, out 2), strided", strides=(2, 2), padding=1),
        case(3, 6, 6, 2, 3, 3, 3, "channel multiplier 2", padding=1),
        case(4, 9, 9, 1, 3, 4, 4, "dilated, float64", dtype="float64", dilation=(2, 2), padding=2),
        case(2, S.LONG_WINDOW_SIDE, S.LONG_WINDOW_SIDE, 1, S.LONG_WINDOW_SIDE, 2, 2,
             "float16, one window of >= FLOAT16_REDUCTION_TERMS taps", dtype="float16", low=0.0),
    ]


CONV_NCHWC = defop(CONV_OP, inputs=("data", "kernel"), attrs=Conv2DNCHWcAttrs, rel=_conv_rel,
                   pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_conv_ref, samples=_conv_samples, level=10,
                   compute=_conv_compute, tag="conv2d_NCHWc",
                   doc="out[n, oo, y, x, oi] = sum_{icc, p, q, ii} pad(data)[n, g*I/ib + icc, y*sh + p*dh, "
                       "x*sw + q*dw, ii] * kernel[oo, icc, p, q, ii, oi]")
DEPTHWISE_NCHWC = defop(DEPTHWISE_OP, inputs=("data", "kernel"), attrs=Conv2DNCHWcAttrs, rel=_depthwise_rel,
                        pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_depthwise_ref, samples=_depthwise_samples,
                        level=10, compute=_depthwise_compute, tag="depthwise_conv2d_NCHWc",
                        doc="out[n, oo, y, x, oi] = sum_{p, q} pad(data)[n, c // ib, y*sh + p*dh, x*sw + q*dw, "
                            "c % ib] * kernel[oo, 0, p, q, 0, oi], c = (oo*ob + oi) // multiplier")


# What the channel-blocked convolutions mean by the parameters they share with conv2d
NCHWC_PARAMETERS = {
    **CONV_PARAMETERS,
    "kernel": ("relay.Expr", "The packed kernel, in `kernel_layout`."),
    "data_layout": ("str, optional", 'The blocked data layout "NCHW{ib}c": (N, C / ib, H, W, ib) for an '
                                     "input-channel block ib."),
    "out_layout": ("str, optional", 'The blocked result layout "NCHW{ob}c" for the output-channel block ob; '
                                    '"" means `data_layout`.'),
    "groups": ("int, optional", "The number of groups the channels are split into; an output block never "
                                "straddles two groups."),
}


@documented(NCHWC_PARAMETERS, CONVOLVED)
def contrib_conv2d_nchwc(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                         channels=None, kernel_size=None, data_layout="NCHW8c", kernel_layout="OIHW8i8o",
                         out_layout="", out_dtype=""):
    """relay.nn.contrib_conv2d_nchwc: conv2d on channel-blocked data and kernel.

    Parameters
    ----------
    kernel_layout : str, optional
        The blocked kernel layout "OIHW{ib}i{ob}o": (O / ob, I / ib, KH, KW, ib, ob), with I the
        input channels of one group. Defaults to "OIHW8i8o".
    """
    return CONV_NCHWC(data, kernel, attrs=Conv2DNCHWcAttrs(strides, padding, dilation, groups, channels,
                                                           kernel_size, data_layout, kernel_layout,
                                                           out_layout, out_dtype))


@documented(NCHWC_PARAMETERS, CONVOLVED)
def contrib_depthwise_conv2d_nchwc(data, kernel, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                                   channels=None, kernel_size=None, data_layout="NCHW8c",
                                   kernel_layout="OIHW1i8o", out_layout="", out_dtype=""):
    """relay.nn.contrib_depthwise_conv2d_nchwc: depthwise conv2d on channel-blocked data.

    Parameters
    ----------
    kernel_layout : str, optional
        The blocked depthwise kernel layout "OIHW1i{ob}o": (O / ob, 1, KH, KW, 1, ob), where O is
        the input channels times the channel multiplier and `groups` equals the input channels.
        Defaults to "OIHW1i8o".
    """
    return DEPTHWISE_NCHWC(data, kernel, attrs=Conv2DNCHWcAttrs(strides, padding, dilation, groups, channels,
                                                                kernel_size, data_layout, kernel_layout,
                                                                out_layout, out_dtype))


__all__ = ["contrib_conv2d_nchwc", "contrib_depthwise_conv2d_nchwc", "Conv2DNCHWcAttrs"]
