"""nn.conv1d and nn.conv3d: 1-D and 3-D convolution with strides, padding (before/after per
axis), dilation and groups (grouped and depthwise), as TVM v0.18. OUT_ELEMWISE_FUSABLE.
Layouts are any order of their letters (NCW / NWC with OIW / WIO; NCDHW / NDHWC with OIDHW /
DHWIO, ...); out_layout "" is the data layout. nn.conv2d keeps its own file (op/nn/conv.py).

One formula serves both ranks: the relation, reference and compute read each dim by its letter
(op/nn/_window.py) and work channel-first. The reference pads once, takes a strided window view
and contracts it with the kernel (tensordot, or einsum per group); the te compute is a padded
input stage (inlinable) and one reduction over (input channel, kernel taps).
"""
import dataclasses
from typing import ClassVar

import numpy as np

from ... import te
from ...ir.attrs import Attrs
from ...ir.dims import dim_to_str, is_static
from ...ir.shape_math import dims_differ, mul
from ...ir.types import TensorType
from .. import samples as S
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from . import _window as Wn
from .conv_docs import CONV_PARAMETERS, CONVOLVED


def data_letters(ndim: int) -> str:
    return "NC" + Wn.spatial(ndim)


def kernel_letters(ndim: int, first: str = "OI") -> str:
    return first + Wn.spatial(ndim)


@dataclasses.dataclass(frozen=True)
class _ConvNDAttrs(Attrs):
    """Fields shared by conv1d and conv3d (NDIM set by each subclass)."""
    NDIM: ClassVar[int] = 0
    OP: ClassVar[str] = ""

    def __post_init__(self):
        normalize_conv_attrs(self, "OI")


def normalize_conv_attrs(attrs, kernel_first: str) -> None:
    """Normalize the fields an ndim-D convolution's attrs share (strides, padding, dilation,
    groups, channels, kernel_size, out_dtype) and check its layouts; the kernel layout orders
    `kernel_first` ("OI", or "IO" for the transposed convolutions) and the spatial letters."""
    nd = attrs.NDIM
    C.normalize_conv_window(attrs, nd, lambda padding: Wn.padding_nd(padding, nd))
    Wn.check_order(attrs.OP, "data_layout", attrs.data_layout, data_letters(nd))
    Wn.check_order(attrs.OP, "kernel_layout", attrs.kernel_layout, kernel_letters(nd, kernel_first))
    if attrs.out_layout:
        Wn.check_order(attrs.OP, "out_layout", attrs.out_layout, data_letters(nd))


@dataclasses.dataclass(frozen=True)
class Conv1DAttrs(_ConvNDAttrs):
    NDIM: ClassVar[int] = 1
    OP: ClassVar[str] = "nn.conv1d"
    strides: tuple = (1,)
    padding: tuple = (0, 0)
    dilation: tuple = (1,)
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    data_layout: str = "NCW"
    kernel_layout: str = "OIW"
    out_layout: str = ""
    out_dtype: str = ""


@dataclasses.dataclass(frozen=True)
class Conv3DAttrs(_ConvNDAttrs):
    NDIM: ClassVar[int] = 3
    OP: ClassVar[str] = "nn.conv3d"
    strides: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    dilation: tuple = (1, 1, 1)
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    data_layout: str = "NCDHW"
    kernel_layout: str = "OIDHW"
    out_layout: str = ""
    out_dtype: str = ""


def out_layout(attrs) -> str:
    return attrs.out_layout or attrs.data_layout


def check_channels(op, c, o, i, groups: int, attrs, kernel, **types) -> None:
    """groups divides C and O, data channels = weight's per-group channels x groups, and the
    channels / kernel_size attrs (if given) agree with the weight."""
    if is_static(c) and c % groups:
        raise C.rel_error(op, f"groups={groups} does not divide the {c} input channels", **types)
    if is_static(o) and o % groups:
        raise C.rel_error(op, f"groups={groups} does not divide the {o} output channels", **types)
    if dims_differ(mul(i, groups), c):
        raise C.rel_error(op, f"data has {dim_to_str(c)} input channels but weight expects "
                              f"{dim_to_str(mul(i, groups))} ({dim_to_str(i)} per group x groups={groups})",
                          **types)
    if attrs.channels is not None and not C.dim_matches(o, attrs.channels):
        raise C.rel_error(op, f"channels={attrs.channels} but the weight gives {o} output channels", **types)
    if attrs.kernel_size is not None and not all(C.dim_matches(k, s) for k, s in zip(kernel, attrs.kernel_size)):
        raise C.rel_error(op, f"kernel_size={attrs.kernel_size} but weight has kernel {tuple(kernel)}", **types)


def _conv_nd_rel(arg_types, attrs) -> TensorType:
    """data (N, C, *S), weight (O, C/groups, *K) -> (N, O, *out), out = window count per axis."""
    op, nd = attrs.OP, attrs.NDIM
    types = C.layout_operands(op, arg_types, nd + 2, data=attrs.data_layout, weight=attrs.kernel_layout)
    data, weight = types.values()
    n, c, *size = Wn.pick(data.shape, attrs.data_layout, data_letters(nd))
    o, i, *kernel = Wn.pick(weight.shape, attrs.kernel_layout, kernel_letters(nd))
    check_channels(op, c, o, i, attrs.groups, attrs, kernel, **types)
    out = []
    for a in range(nd):
        length = C.window_out_dim(size[a], kernel[a], attrs.strides[a], attrs.dilation[a],
                                  attrs.padding[a], attrs.padding[a + nd])
        if length is None:
            raise C.rel_error(op, f"the dilated kernel is larger than the padded input along "
                                  f"{Wn.spatial(nd)[a]}; add padding or use a smaller kernel", **types)
        out.append(length)
    return TensorType(Wn.place((n, o, *out), data_letters(nd), out_layout(attrs)),
                      C.result_dtype(attrs.out_dtype, data.dtype))


def unannotated_weight(arg_types, attrs, nd: int, kernel_first: str, channel_dims) -> dict:
    """fill_inputs of an nd-D convolution: the type of an unannotated weight (argument 1) from
    the attrs' channels and kernel_size and the data's channel count C, read by its letter in
    data_layout. `channel_dims(C, attrs)` gives the weight's two channel dims in the order of
    `kernel_first` ("OI" or "IO"), or None where they cannot be known; the result is laid out
    in kernel_layout. {} when the weight is annotated or nothing fixes it, as TVM's ConvRel."""
    data, weight = arg_types
    if weight is not None or not isinstance(data, TensorType) or data.ndim != nd + 2:
        return {}
    if attrs.channels is None or attrs.kernel_size is None:
        return {}
    dims = channel_dims(Wn.pick(data.shape, attrs.data_layout, data_letters(nd))[1], attrs)
    if dims is None:
        return {}
    shape = tuple(dims) + tuple(attrs.kernel_size)
    return {1: TensorType(Wn.place(shape, kernel_letters(nd, kernel_first), attrs.kernel_layout), data.dtype)}


def output_and_input_channels(c, attrs):
    """A convolution's (O, I) weight dims, known from channels only without groups (TVM needs a
    grouped convolution's weight annotated)."""
    return (attrs.channels, c) if attrs.groups == 1 else None


def _conv_nd_fill_inputs(arg_types, attrs) -> dict:
    """An unannotated weight from channels and kernel_size (groups == 1), as TVM's ConvRel."""
    return unannotated_weight(arg_types, attrs, attrs.NDIM, "OI", output_and_input_channels)


def grouped_contract(win: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    """win (N, C, *out, *K) contracted with w (O, C/groups, *K) per group -> (N, O, *out)."""
    nd = w.ndim - 2
    n, c = win.shape[:2]
    out = win.shape[2:2 + nd]
    o = w.shape[0]
    if groups == 1:
        res = np.tensordot(win, w, axes=([1] + list(range(2 + nd, 2 + 2 * nd)), list(range(1, 2 + nd))))
        return np.moveaxis(res, -1, 1)
    sp, ks = "pqr"[:nd], "xyz"[:nd]
    wing = win.reshape((n, groups, c // groups) + win.shape[2:])
    wg = w.reshape((groups, o // groups) + w.shape[1:])
    res = np.einsum(f"ngc{sp}{ks},goc{ks}->ngo{sp}", wing, wg, optimize=True)
    return res.reshape((n, o) + tuple(out))


def _conv_nd_ref(data, weight, attrs):
    nd = attrs.NDIM
    dtype = C.result_dtype(attrs.out_dtype, str(data.dtype))
    acc = C.acc_dtype(dtype)
    x = Wn.to_channel_first(data, attrs.data_layout, data_letters(nd)).astype(acc)
    w = Wn.to_channel_first(weight, attrs.kernel_layout, kernel_letters(nd)).astype(acc)
    kernel = w.shape[2:]
    out = [C.window_out_dim(x.shape[2 + a], kernel[a], attrs.strides[a], attrs.dilation[a],
                            attrs.padding[a], attrs.padding[a + nd]) for a in range(nd)]
    xp = Wn.pad_spatial(x, attrs.padding[:nd], attrs.padding[nd:])
    res = grouped_contract(Wn.windows(xp, kernel, attrs.strides, attrs.dilation, out), w, attrs.groups)
    return Wn.from_channel_first(res, data_letters(nd), out_layout(attrs)).astype(dtype, copy=False)


def _conv_nd_compute(attrs, inputs, out_type):
    """A padded-input stage (inlinable), then the reduction over (input channel, kernel taps);
    output channel o reads the input channels of its group o // (O / groups)."""
    data, weight = inputs
    nd, tag = attrs.NDIM, get_op(attrs).tag
    dl, kl, ol = attrs.data_layout, attrs.kernel_layout, out_layout(attrs)
    dletters, kletters = data_letters(nd), kernel_letters(nd)
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    n, c, *size = Wn.pick(T.dims(data), dl, dletters)
    o, i, *kernel = Wn.pick(T.dims(weight), kl, kletters)
    out = [T.window_out(size[a], kernel[a], attrs.strides[a], attrs.dilation[a], attrs.padding[a],
                        attrs.padding[a + nd]) for a in range(nd)]
    padded = Wn.pad_stage(data, [dl.index(ch) for ch in Wn.spatial(nd)], attrs.padding[:nd],
                          attrs.padding[nd:], 0, name="pad_data")
    rc = te.reduce_axis((0, i), "rc")
    rk = [te.reduce_axis((0, k), f"rk{a}") for a, k in enumerate(kernel)]
    per_group = o // attrs.groups

    def body(*index):
        b, oc, *pos = Wn.pick(index, ol, dletters)
        ic = rc.var if attrs.groups == 1 else (oc // per_group) * i + rc.var
        src = [p * s + k.var * d for p, s, k, d in zip(pos, attrs.strides, rk, attrs.dilation)]
        pixel = padded[Wn.place((b, ic, *src), dletters, dl)].astype(acc)
        tap = weight[Wn.place((oc, rc.var, *[k.var for k in rk]), kletters, kl)].astype(acc)
        return te.sum(pixel * tap, axis=[rc] + rk)
    res = te.compute(Wn.place((n, o, *out), dletters, ol), body, name=attrs.OP.split(".")[1], tag=tag)
    return [T.cast_to(res, dtype, tag, "conv_cast")]


def get_op(attrs):
    return {1: CONV1D, 3: CONV3D}[attrs.NDIM]


def _conv1d_samples(rng):
    A = Conv1DAttrs
    return [
        Sample([S.rand(rng, (2, 3, 9)), S.rand(rng, (4, 3, 3))], A(padding=1)),
        Sample([S.rand(rng, (1, 4, 11)), S.rand(rng, (6, 2, 3))], A(strides=2, padding=(2, 1), dilation=2, groups=2),
               "strided, asymmetric padding, dilated, grouped"),
        Sample([S.rand(rng, (1, 3, 8)), S.rand(rng, (3, 1, 5))], A(groups=3, padding=2), "depthwise"),
        Sample([S.rand(rng, (1, 7, 3), "float64"), S.rand(rng, (3, 3, 2), "float64")],
               A(data_layout="NWC", kernel_layout="WIO", padding=1), "NWC / WIO"),
        Sample([S.rand(rng, (1, S.FLOAT16_REDUCTION_TERMS // 4, 6), "float16", 0, 1),
                S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS // 4, 4), "float16", 0, 1)], A(),
               "float16, FLOAT16_REDUCTION_TERMS terms per output"),
        Sample([S.rand(rng, (1, 3, 6), "int8", -100, 100), S.rand(rng, (2, 3, 3), "int8", -100, 100)],
               A(out_dtype="int32"), "int8 inputs accumulate in int32"),
    ]


def _conv3d_samples(rng):
    A = Conv3DAttrs
    return [
        Sample([S.rand(rng, (1, 2, 4, 5, 5)), S.rand(rng, (3, 2, 3, 3, 3))], A(padding=1)),
        Sample([S.rand(rng, (1, 4, 5, 6, 4)), S.rand(rng, (4, 2, 2, 3, 2))],
               A(strides=(1, 2, 1), padding=(1, 0, 1, 0, 1, 0), dilation=(2, 1, 1), groups=2),
               "strided, asymmetric padding, dilated, grouped"),
        Sample([S.rand(rng, (1, 4, 4, 5, 3), "float64"), S.rand(rng, (3, 2, 2, 3, 2), "float64")],
               A(data_layout="NDHWC", kernel_layout="DHWIO", padding=(0, 1, 1)), "NDHWC / DHWIO"),
        Sample([S.rand(rng, (1, S.FLOAT16_REDUCTION_TERMS // 8, 2, 3, 3), "float16", 0, 1),
                S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS // 8, 2, 2, 2), "float16", 0, 1)], A(),
               "float16, FLOAT16_REDUCTION_TERMS terms per output"),
    ]


CONV1D = defop("nn.conv1d", inputs=("data", "weight"), attrs=Conv1DAttrs, rel=_conv_nd_rel,
               pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_conv_nd_ref, samples=_conv1d_samples, level=2,
               compute=_conv_nd_compute, fill_inputs=_conv_nd_fill_inputs,
               doc="out[n, o, x] = sum_{c, q} pad(data)[n, g(o)*C/G + c, x*s + q*d] * weight[o, c, q]")
CONV3D = defop("nn.conv3d", inputs=("data", "weight"), attrs=Conv3DAttrs, rel=_conv_nd_rel,
               pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_conv_nd_ref, samples=_conv3d_samples, level=2,
               compute=_conv_nd_compute, fill_inputs=_conv_nd_fill_inputs,
               doc="out[n, o, z, y, x] = sum_{c, taps} pad(data)[n, g(o)*C/G + c, z*sd + r*dd, ...]"
                   " * weight[o, c, taps]")


@documented(CONV_PARAMETERS, CONVOLVED)
def conv1d(data, weight, strides=1, padding=0, dilation=1, groups=1, channels=None, kernel_size=None,
           data_layout="NCW", kernel_layout="OIW", out_layout="", out_dtype=""):
    """relay.nn.conv1d: 1-D convolution (layouts: any order of NCW / OIW).

    With the default layouts, data is (N, C, W), weight is (O, C / groups, KW) and the result is
    (N, O, OW) with OW = (W + pad_before + pad_after - dilation * (KW - 1) - 1) // stride + 1.
    """
    return CONV1D(data, weight, attrs=Conv1DAttrs(strides, padding, dilation, groups, channels, kernel_size,
                                                  data_layout, kernel_layout, out_layout, out_dtype))


@documented(CONV_PARAMETERS, CONVOLVED)
def conv3d(data, weight, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, channels=None,
           kernel_size=None, data_layout="NCDHW", kernel_layout="OIDHW", out_layout="", out_dtype=""):
    """relay.nn.conv3d: 3-D convolution (layouts: any order of NCDHW / OIDHW).

    With the default layouts, data is (N, C, D, H, W), weight is (O, C / groups, KD, KH, KW) and
    each output extent is conv1d's formula applied along D, H and W.
    """
    return CONV3D(data, weight, attrs=Conv3DAttrs(strides, padding, dilation, groups, channels, kernel_size,
                                                  data_layout, kernel_layout, out_layout, out_dtype))


__all__ = ["conv1d", "conv3d", "Conv1DAttrs", "Conv3DAttrs"]
