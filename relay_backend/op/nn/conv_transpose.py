"""nn.conv1d_transpose, nn.conv2d_transpose, nn.conv3d_transpose: transposed ("fractionally
strided") convolution with strides, padding, output_padding, dilation and groups, as TVM v0.18.
OUT_ELEMWISE_FUSABLE. The weight is (C_in, C_out / groups, *kernel) in IOW / IOHW / IODHW (any
order of those letters); the data and output any order of NC + spatial letters.

Each input cell scatters `weight` into the output: along one axis of length S with kernel K,
out_len = stride * (S - 1) + dilation * (K - 1) + 1 - pad_before - pad_after + output_padding,
input position i and tap k land on output position i * stride + k * dilation - pad_before.

The reference adds one strided slab per kernel tap (a grouped contraction over the input
channels, then a strided add into the full-size output, cropped by the padding). The te compute
is the gather form: a zero-dilated, padded input stage (inlinable) convolved with the flipped
kernel.
"""
import dataclasses
import itertools
from typing import ClassVar

import numpy as np

from ... import te, tir
from ...ir.attrs import Attrs
from ...ir.dims import dim_to_str, is_static
from ...ir.shape_math import add, dims_differ, mul, sub
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from . import _window as Wn
from ..constructor_docs import documented
from .conv_docs import CONV_PARAMETERS, CONVOLVED
from .conv_nd import data_letters, kernel_letters, normalize_conv_attrs, out_layout, unannotated_weight


@dataclasses.dataclass(frozen=True)
class _ConvTransposeAttrs(Attrs):
    """Fields shared by the three transposed convolutions (NDIM set by each subclass)."""
    NDIM: ClassVar[int] = 0
    OP: ClassVar[str] = ""

    def __post_init__(self):
        normalize_conv_attrs(self, "IO")
        object.__setattr__(self, "output_padding", C.ints(self.output_padding, self.NDIM, "output_padding"))


@dataclasses.dataclass(frozen=True)
class Conv1DTransposeAttrs(_ConvTransposeAttrs):
    NDIM: ClassVar[int] = 1
    OP: ClassVar[str] = "nn.conv1d_transpose"
    strides: tuple = (1,)
    padding: tuple = (0, 0)
    dilation: tuple = (1,)
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    data_layout: str = "NCW"
    kernel_layout: str = "IOW"
    out_layout: str = ""
    output_padding: tuple = (0,)
    out_dtype: str = ""


@dataclasses.dataclass(frozen=True)
class Conv2DTransposeAttrs(_ConvTransposeAttrs):
    NDIM: ClassVar[int] = 2
    OP: ClassVar[str] = "nn.conv2d_transpose"
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    data_layout: str = "NCHW"
    kernel_layout: str = "IOHW"
    out_layout: str = ""
    output_padding: tuple = (0, 0)
    out_dtype: str = ""


@dataclasses.dataclass(frozen=True)
class Conv3DTransposeAttrs(_ConvTransposeAttrs):
    NDIM: ClassVar[int] = 3
    OP: ClassVar[str] = "nn.conv3d_transpose"
    strides: tuple = (1, 1, 1)
    padding: tuple = (0, 0, 0, 0, 0, 0)
    dilation: tuple = (1, 1, 1)
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    data_layout: str = "NCDHW"
    kernel_layout: str = "IODHW"
    out_layout: str = ""
    output_padding: tuple = (0, 0, 0)
    out_dtype: str = ""


def transposed_length(size, kernel, attrs, axis: int):
    """stride * (size - 1) + dilation * (kernel - 1) + 1 - pads + output_padding (dims or ints)."""
    nd = attrs.NDIM
    extra = attrs.output_padding[axis] - attrs.padding[axis] - attrs.padding[axis + nd] + 1
    if is_static(size) and is_static(kernel):     # plain ints (may be < 1: the relation says so)
        return (int(size) - 1) * attrs.strides[axis] + (int(kernel) - 1) * attrs.dilation[axis] + extra
    return add(add(mul(sub(size, 1), attrs.strides[axis]), mul(sub(kernel, 1), attrs.dilation[axis])), extra)


def _rel(arg_types, attrs) -> TensorType:
    """data (N, C, *S), weight (C, O/groups, *K) -> (N, O, *out)."""
    op, nd = attrs.OP, attrs.NDIM
    types = C.layout_operands(op, arg_types, nd + 2, data=attrs.data_layout, weight=attrs.kernel_layout)
    data, weight = types.values()
    n, c, *size = Wn.pick(data.shape, attrs.data_layout, data_letters(nd))
    i, o_per_group, *kernel = Wn.pick(weight.shape, attrs.kernel_layout, kernel_letters(nd, "IO"))
    g = attrs.groups
    if is_static(c) and c % g:
        raise C.rel_error(op, f"groups={g} does not divide the {c} input channels", **types)
    if dims_differ(i, c):
        raise C.rel_error(op, f"data has {dim_to_str(c)} input channels but the weight's I axis has "
                              f"{dim_to_str(i)}", **types)
    o = mul(o_per_group, g)
    if attrs.channels is not None and not C.dim_matches(o, attrs.channels):
        raise C.rel_error(op, f"channels={attrs.channels} but the weight gives {dim_to_str(o)} output channels "
                              f"({dim_to_str(o_per_group)} per group x groups={g})", **types)
    if attrs.kernel_size is not None and not all(C.dim_matches(k, s) for k, s in zip(kernel, attrs.kernel_size)):
        raise C.rel_error(op, f"kernel_size={attrs.kernel_size} but weight has kernel {tuple(kernel)}", **types)
    for a in range(nd):
        if attrs.output_padding[a] >= max(attrs.strides[a], attrs.dilation[a]):
            raise C.rel_error(op, f"output_padding={attrs.output_padding} must be smaller than the stride or "
                                  f"the dilation on every axis (strides={attrs.strides}, "
                                  f"dilation={attrs.dilation})", **types)
    out = [transposed_length(size[a], kernel[a], attrs, a) for a in range(nd)]
    for a, length in enumerate(out):
        if is_static(length) and int(length) < 1:
            raise C.rel_error(op, f"the padding {attrs.padding} leaves no output along {Wn.spatial(nd)[a]} "
                                  f"(length {int(length)})", **types)
    return TensorType(Wn.place((n, o, *out), data_letters(nd), out_layout(attrs)),
                      C.result_dtype(attrs.out_dtype, data.dtype))


def _fill_inputs(arg_types, attrs) -> dict:
    """An unannotated weight from channels and kernel_size: (C, channels / groups, *kernel)."""
    return unannotated_weight(arg_types, attrs, attrs.NDIM, "IO", _input_and_output_channels)


def _input_and_output_channels(c, attrs):
    """The transposed weight's (I, O / groups) dims; unknown unless groups divides channels."""
    return None if attrs.channels % attrs.groups else (c, attrs.channels // attrs.groups)


def _ref(data, weight, attrs):
    nd, g = attrs.NDIM, attrs.groups
    dtype = C.result_dtype(attrs.out_dtype, str(data.dtype))
    acc = C.acc_dtype(dtype)
    x = Wn.to_channel_first(data, attrs.data_layout, data_letters(nd)).astype(acc)
    w = Wn.to_channel_first(weight, attrs.kernel_layout, kernel_letters(nd, "IO")).astype(acc)
    n, c, *size = x.shape
    _, og, *kernel = w.shape
    out = [transposed_length(size[a], kernel[a], attrs, a) for a in range(nd)]
    full = [max(s * (l - 1) + d * (k - 1) + 1 + op, p + o) for s, l, d, k, op, p, o in
            zip(attrs.strides, size, attrs.dilation, kernel, attrs.output_padding, attrs.padding, out)]
    buf = np.zeros((n, g * og, *full), acc)
    xg = x.reshape((n, g, c // g, *size))
    sp = "pqr"[:nd]
    for tap in itertools.product(*[range(k) for k in kernel]):
        wk = w[(slice(None), slice(None)) + tap].reshape(g, c // g, og)
        slab = np.einsum(f"ngc{sp},gco->ngo{sp}", xg, wk).reshape((n, g * og, *size))
        where = tuple(slice(k * d, k * d + s * (l - 1) + 1, s)
                      for k, d, s, l in zip(tap, attrs.dilation, attrs.strides, size))
        buf[(slice(None), slice(None)) + where] += slab
    crop = tuple(slice(p, p + o) for p, o in zip(attrs.padding[:nd], out))
    res = buf[(slice(None), slice(None)) + crop]
    return Wn.from_channel_first(res, data_letters(nd), out_layout(attrs)).astype(dtype, copy=False)


def dilated_input_stage(data, layout: str, nd: int, kernel, attrs, out):
    """The channel-first input spread out by the strides (zeros between cells) and padded so a
    plain convolution with the flipped kernel gives the transposed convolution:
    stage[n, c, j] = data[n, c, t // s] when t = j - ((K - 1) * d - pad_before) is a multiple
    of s inside the input, else 0. Length per axis: out + (K - 1) * d."""
    n, c, *size = Wn.pick(T.dims(data), layout, data_letters(nd))
    zero = T.const(0, data.dtype)
    shift = [(k - 1) * d - p for k, d, p in zip(kernel, attrs.dilation, attrs.padding[:nd])]
    shape = [n, c] + [o + (k - 1) * d for o, k, d in zip(out, kernel, attrs.dilation)]

    def f(b, ch, *pos):
        conds, src = [], []
        for j, sh, s, length in zip(pos, shift, attrs.strides, size):
            t = j - sh
            conds += [t >= 0, t < length * s] + ([t % s == 0] if s > 1 else [])
            src.append(t // s if s > 1 else t)
        return te.if_then_else(tir.all(*conds), data[Wn.place((b, ch, *src), data_letters(nd), layout)], zero)
    return te.compute(shape, f, name="dilated_pad", tag=T.PAD_TAG)


def _compute(attrs, inputs, out_type):
    """out[n, g*Og + o, y] = sum_{c in group g, k} dilated[n, c, y + k*d] * weight[c, o, K-1-k]."""
    data, weight = inputs
    nd, tag = attrs.NDIM, _OPS[attrs.NDIM].tag
    kl, ol, dletters = attrs.kernel_layout, out_layout(attrs), data_letters(nd)
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    n, c, *size = Wn.pick(T.dims(data), attrs.data_layout, dletters)
    _, og, *kernel = Wn.pick(T.dims(weight), kl, kernel_letters(nd, "IO"))
    out = [transposed_length(s, k, attrs, a) for a, (s, k) in enumerate(zip(size, kernel))]
    dil = dilated_input_stage(data, attrs.data_layout, nd, kernel, attrs, out)
    per_group = c // attrs.groups
    rc = te.reduce_axis((0, per_group), "rc")
    rk = [te.reduce_axis((0, k), f"rk{a}") for a, k in enumerate(kernel)]

    def body(*index):
        b, oc, *pos = Wn.pick(index, ol, dletters)
        ic = rc.var if attrs.groups == 1 else (oc // og) * per_group + rc.var
        o = oc if attrs.groups == 1 else oc % og
        pixel = dil[(b, ic) + tuple(p + k.var * d for p, k, d in zip(pos, rk, attrs.dilation))].astype(acc)
        flipped = [kk - 1 - k.var for kk, k in zip(kernel, rk)]
        tap = weight[Wn.place((ic, o, *flipped), kernel_letters(nd, "IO"), kl)].astype(acc)
        return te.sum(pixel * tap, axis=[rc] + rk)
    res = te.compute(Wn.place((n, og * attrs.groups, *out), dletters, ol), body,
                     name=attrs.OP.split(".")[1], tag=tag)
    return [T.cast_to(res, dtype, tag, "conv_transpose_cast")]


def _samples1d(rng):
    A = Conv1DTransposeAttrs
    return [Sample([S.rand(rng, (2, 3, 5)), S.rand(rng, (3, 4, 3))], A(strides=2, padding=1, output_padding=1)),
            Sample([S.rand(rng, (1, 4, 6)), S.rand(rng, (4, 3, 2))], A(groups=2, dilation=2, padding=(0, 2)),
                   "grouped, dilated, asymmetric padding"),
            Sample([S.rand(rng, (1, 6, 3), "float64"), S.rand(rng, (3, 3, 2), "float64")],
                   A(strides=3, data_layout="NWC", kernel_layout="WIO"), "NWC / WIO, stride > kernel"),
            Sample([S.rand(rng, (1, S.FLOAT16_REDUCTION_TERMS // 2, 3), "float16", 0, 1),
                    S.rand(rng, (S.FLOAT16_REDUCTION_TERMS // 2, 2, 2), "float16", 0, 1)], A(),
                   "float16, FLOAT16_REDUCTION_TERMS terms per output")]


def _samples2d(rng):
    A = Conv2DTransposeAttrs
    return [Sample([S.rand(rng, (1, 3, 4, 4)), S.rand(rng, (3, 2, 3, 3))], A(strides=2, padding=1, output_padding=1)),
            Sample([S.rand(rng, (2, 2, 3, 5)), S.rand(rng, (2, 3, 2, 3))], A(strides=(1, 2), padding=(0, 1, 1, 0))),
            Sample([S.rand(rng, (1, 4, 3, 3)), S.rand(rng, (4, 1, 3, 3))], A(groups=4, strides=2, dilation=(1, 2)),
                   "depthwise transpose, dilated"),
            Sample([S.rand(rng, (1, 4, 5, 3), "float64"), S.rand(rng, (2, 2, 3, 2), "float64")],
                   A(strides=2, data_layout="NHWC", kernel_layout="HWIO", channels=2, kernel_size=2), "NHWC / HWIO"),
            Sample([S.rand(rng, (1, S.FLOAT16_REDUCTION_TERMS // 4, 3, 3), "float16", 0, 1),
                    S.rand(rng, (S.FLOAT16_REDUCTION_TERMS // 4, 2, 2, 2), "float16", 0, 1)], A(),
                   "float16, FLOAT16_REDUCTION_TERMS terms per output"),
            Sample([S.rand(rng, (1, 2, 3, 3), "int8", -50, 50), S.rand(rng, (2, 2, 2, 2), "int8", -50, 50)],
                   A(strides=2, out_dtype="int32"), "int8 accumulates in int32")]


def _samples3d(rng):
    A = Conv3DTransposeAttrs
    return [Sample([S.rand(rng, (1, 2, 3, 3, 2)), S.rand(rng, (2, 3, 2, 2, 2))],
                   A(strides=2, padding=(0, 1, 0), output_padding=(1, 0, 1))),
            Sample([S.rand(rng, (1, 4, 2, 3, 3), "float64"), S.rand(rng, (4, 1, 3, 2, 2), "float64")],
                   A(groups=2, dilation=(1, 2, 1), padding=(1, 0, 0, 0, 1, 0)), "grouped, dilated"),
            Sample([S.rand(rng, (1, S.FLOAT16_REDUCTION_TERMS // 8, 2, 2, 2), "float16", 0, 1),
                    S.rand(rng, (S.FLOAT16_REDUCTION_TERMS // 8, 2, 2, 2, 2), "float16", 0, 1)], A(),
                   "float16, FLOAT16_REDUCTION_TERMS terms per output")]


def _declare(nd, attrs, samples):
    name = f"nn.conv{nd}d_transpose"
    return defop(name, inputs=("data", "weight"), attrs=attrs, rel=_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                 ref=_ref, samples=samples, level=2, compute=_compute, fill_inputs=_fill_inputs,
                 doc="out[n, g*Og + o, i*s + k*d - pad] += data[n, c, i] * weight[c, o, k] (c in group g)")


# What the transposed convolutions mean by the convolution parameters they share with conv2d
TRANSPOSE_PARAMETERS = {
    **CONV_PARAMETERS,
    "weight": ("relay.Expr", "The kernel, (C_in, C_out / groups, *kernel) in `kernel_layout`. When its type "
                             "is not annotated it is inferred from `channels` and `kernel_size`."),
    "strides": ("int or tuple of int, optional", "The step between the places two neighbouring input cells "
                                                 "write to, along each spatial axis."),
    "padding": ("int or tuple of int, optional",
                "The cells cropped from the full result: one value for every side, one per spatial axis "
                "(both sides), or the crop before each spatial axis followed by the crop after each."),
    "dilation": ("int or tuple of int, optional", "The spacing between the kernel taps' output cells along "
                                                  "each spatial axis."),
    "output_padding": ("int or tuple of int, optional",
                       "Cells added at the end of each spatial axis of the result; picks one of the output "
                       "sizes a strided convolution maps onto the same input size (each smaller than "
                       "the larger of the stride and the dilation)."),
}


CONV1D_TRANSPOSE = _declare(1, Conv1DTransposeAttrs, _samples1d)
CONV2D_TRANSPOSE = _declare(2, Conv2DTransposeAttrs, _samples2d)
CONV3D_TRANSPOSE = _declare(3, Conv3DTransposeAttrs, _samples3d)
_OPS = {1: CONV1D_TRANSPOSE, 2: CONV2D_TRANSPOSE, 3: CONV3D_TRANSPOSE}


@documented(TRANSPOSE_PARAMETERS, CONVOLVED)
def conv1d_transpose(data, weight, strides=(1,), padding=(0,), dilation=(1,), groups=1, channels=None,
                     kernel_size=None, data_layout="NCW", kernel_layout="IOW", out_layout="", output_padding=(0,),
                     out_dtype=""):
    """relay.nn.conv1d_transpose: 1-D transposed convolution (weight IOW)."""
    return CONV1D_TRANSPOSE(data, weight, attrs=Conv1DTransposeAttrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout, out_layout,
        output_padding, out_dtype))


@documented(TRANSPOSE_PARAMETERS, CONVOLVED)
def conv2d_transpose(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
                     kernel_size=None, data_layout="NCHW", kernel_layout="IOHW", out_layout="",
                     output_padding=(0, 0), out_dtype=""):
    """relay.nn.conv2d_transpose: 2-D transposed convolution (weight IOHW)."""
    return CONV2D_TRANSPOSE(data, weight, attrs=Conv2DTransposeAttrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout, out_layout,
        output_padding, out_dtype))


@documented(TRANSPOSE_PARAMETERS, CONVOLVED)
def conv3d_transpose(data, weight, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1,
                     channels=None, kernel_size=None, data_layout="NCDHW", kernel_layout="IODHW", out_layout="",
                     output_padding=(0, 0, 0), out_dtype=""):
    """relay.nn.conv3d_transpose: 3-D transposed convolution (weight IODHW)."""
    return CONV3D_TRANSPOSE(data, weight, attrs=Conv3DTransposeAttrs(
        strides, padding, dilation, groups, channels, kernel_size, data_layout, kernel_layout, out_layout,
        output_padding, out_dtype))


__all__ = ["conv1d_transpose", "conv2d_transpose", "conv3d_transpose", "Conv1DTransposeAttrs",
           "Conv2DTransposeAttrs", "Conv3DTransposeAttrs"]
