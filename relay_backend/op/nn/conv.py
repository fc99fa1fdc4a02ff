"""nn.conv2d: 2-D convolution with strides, 1/2/4-int padding, dilation and groups (grouped and
depthwise). OUT_ELEMWISE_FUSABLE. Data, kernel and output layouts are any order of their
letters (NCHW, NHWC; OIHW, HWIO, HWOI, OHWI; out_layout "" = the data layout): the relation,
reference and compute read each dimension by its letter.

The numpy reference pads once, takes a strided window view (no copy) and contracts it with the
kernel by tensordot (BLAS), so a 1x64x56x56 3x3 convolution runs in milliseconds. The te
compute is a padded-input stage (tag "injective,pad", inlinable) and one reduction.
"""
import dataclasses

import numpy as np

from ... import te
from ...ir.attrs import Attrs
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from . import _window as Wn
from .conv_nd import check_channels, output_and_input_channels, unannotated_weight

OP = "nn.conv2d"


@dataclasses.dataclass(frozen=True)
class Conv2DAttrs(Attrs):
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str = ""
    out_dtype: str = ""

    def __post_init__(self):
        C.normalize_conv_window(self, 2, C.padding4)
        self._check_layouts()

    def _check_layouts(self):
        Wn.check_order(OP, "data_layout", self.data_layout, "NCHW")
        Wn.check_order(OP, "kernel_layout", self.kernel_layout, "OIHW")
        if self.out_layout:
            Wn.check_order(OP, "out_layout", self.out_layout, "NCHW")


def _out_layout(attrs) -> str:
    return attrs.out_layout or attrs.data_layout


def _conv2d_rel(arg_types, attrs) -> TensorType:
    """data (N, C, H, W), weight (O, C/groups, KH, KW) -> (N, O, OH, OW);
    OH = (H + pad_top + pad_bottom - ((KH - 1) * dilation_h + 1)) // stride_h + 1."""
    types = C.layout_operands(OP, arg_types, 4, data=attrs.data_layout, weight=attrs.kernel_layout)
    data, weight = types.values()
    n, c, h, w = Wn.pick(data.shape, attrs.data_layout, "NCHW")
    o, i, kh, kw = Wn.pick(weight.shape, attrs.kernel_layout, "OIHW")
    check_channels(OP, c, o, i, attrs.groups, attrs, (kh, kw), **types)
    out_hw = []
    for axis, (size, k) in enumerate(((h, kh), (w, kw))):
        out = C.window_out_dim(size, k, attrs.strides[axis], attrs.dilation[axis],
                               attrs.padding[axis], attrs.padding[axis + 2])
        if out is None:
            raise C.rel_error(OP, f"the dilated kernel ({(k - 1) * attrs.dilation[axis] + 1}) is larger than "
                                  f"the padded input ({size + attrs.padding[axis] + attrs.padding[axis + 2]}) "
                                  f"along {'HW'[axis]}; add padding or use a smaller kernel", **types)
        out_hw.append(out)
    return TensorType(Wn.place((n, o) + tuple(out_hw), "NCHW", _out_layout(attrs)),
                      C.result_dtype(attrs.out_dtype, data.dtype))


def _conv2d_fill_inputs(arg_types, attrs) -> dict:
    """The weight's type when it is not annotated, from channels and kernel_size (TVM's
    Conv2DRel): OIHW = (channels, C, KH, KW) of the data's dtype, C read from data_layout, laid
    out in kernel_layout. Grouped convolutions need the weight annotated, as in TVM."""
    return unannotated_weight(arg_types, attrs, 2, "OI", output_and_input_channels)


def _conv2d_ref(data, weight, attrs):
    data = np.transpose(data, [attrs.data_layout.index(c) for c in "NCHW"])
    weight = np.transpose(weight, [attrs.kernel_layout.index(c) for c in "OIHW"])
    out = _conv2d_nchw_ref(data, weight, attrs)
    return np.ascontiguousarray(np.transpose(out, ["NCHW".index(c) for c in _out_layout(attrs)]))


def _conv2d_nchw_ref(data, weight, attrs):
    dtype = C.result_dtype(attrs.out_dtype, str(data.dtype))
    acc = C.acc_dtype(dtype)
    x = C.pad_hw(data.astype(acc, copy=False), attrs.padding)
    w = weight.astype(acc, copy=False)
    n, c = data.shape[:2]
    o, i, kh, kw = w.shape
    oh = C.window_out_dim(data.shape[2], kh, attrs.strides[0], attrs.dilation[0],
                          attrs.padding[0], attrs.padding[2])
    ow = C.window_out_dim(data.shape[3], kw, attrs.strides[1], attrs.dilation[1],
                          attrs.padding[1], attrs.padding[3])
    win = C.windows(x, (kh, kw), attrs.strides, attrs.dilation, (oh, ow))  # N, C, OH, OW, KH, KW
    g = attrs.groups
    if g == 1:
        out = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)
    else:
        win = win.reshape(n, g, c // g, oh, ow, kh, kw)
        wg = w.reshape(g, o // g, i, kh, kw)
        out = np.einsum("ngchwpq,gocpq->ngohw", win, wg, optimize=True).reshape(n, o, oh, ow)
    return np.ascontiguousarray(out).astype(dtype, copy=False)


def _conv2d_samples(rng):
    A = Conv2DAttrs
    return [
        Sample([S.rand(rng, (1, 3, 6, 6)), S.rand(rng, (4, 3, 3, 3))], A(padding=(1, 1))),
        Sample([S.rand(rng, (2, 2, 7, 8)), S.rand(rng, (3, 2, 3, 2))],
               A(strides=(2, 1), padding=(1, 0, 2, 1)), "strided, asymmetric 4-int padding"),
        Sample([S.rand(rng, (1, 2, 9, 9)), S.rand(rng, (2, 2, 3, 3))], A(dilation=(2, 2), padding=2),
               "dilated"),
        Sample([S.rand(rng, (1, 4, 5, 5)), S.rand(rng, (6, 2, 3, 3))], A(groups=2, channels=6,
                                                                        kernel_size=(3, 3))),
        Sample([S.rand(rng, (1, 3, 6, 5)), S.rand(rng, (6, 1, 3, 3))], A(groups=3, padding=1),
               "depthwise, channel multiplier 2"),
        Sample([S.rand(rng, (1, 3, 4, 4), "float64"), S.rand(rng, (2, 3, 1, 1), "float64")], A()),
        Sample([S.rand(rng, (1, 2, 5, 5), "float16"), S.rand(rng, (2, 2, 3, 3), "float16")], A(padding=1)),
        Sample([S.rand(rng, (1, S.FLOAT16_REDUCTION_TERMS // 8, 4, 4), "float16", 0, 1),
                S.rand(rng, (2, S.FLOAT16_REDUCTION_TERMS // 8, 3, 3), "float16", 0, 1)], A(),
               "float16, 9/8 x FLOAT16_REDUCTION_TERMS terms per output"),
        Sample([S.rand(rng, (1, 3, 5, 5), "int8", -100, 100), S.rand(rng, (4, 3, 3, 3), "int8", -100, 100)],
               A(out_dtype="int32"), "int8 inputs accumulate in int32"),
        Sample([S.rand(rng, (1, 6, 5, 3)), S.rand(rng, (3, 3, 3, 4))],
               A(padding=1, strides=(2, 1), data_layout="NHWC", kernel_layout="HWIO"), "NHWC / HWIO"),
        Sample([S.rand(rng, (1, 5, 4, 4)), S.rand(rng, (3, 3, 4, 1))],
               A(padding=1, groups=4, data_layout="NHWC", kernel_layout="HWOI"), "depthwise NHWC / HWOI"),
        Sample([S.rand(rng, (1, 5, 4, 2)), S.rand(rng, (3, 2, 2, 2))],
               A(kernel_layout="OHWI", data_layout="NHWC", out_layout="NCHW"), "OHWI kernel, NCHW output"),
    ]


def _conv2d_compute(attrs, inputs, out_type):
    """A padded-input stage (inlinable, tag "injective,pad"), then the reduction over
    (rc, ry, rx); output channel o reads input channels of its group g = o // (O / groups).
    Every index is built from its NCHW / OIHW coordinates in the tensor's own layout."""
    data, weight = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    dl, kl, ol = attrs.data_layout, attrs.kernel_layout, _out_layout(attrs)
    n, c, h, w = Wn.pick(T.dims(data), dl, "NCHW")
    o, i, kh, kw = Wn.pick(T.dims(weight), kl, "OIHW")
    (sh, sw), (dh, dw), pads = attrs.strides, attrs.dilation, attrs.padding
    oh = T.window_out(h, kh, sh, dh, pads[0], pads[2])
    ow = T.window_out(w, kw, sw, dw, pads[1], pads[3])
    padded = T.pad_hw_stage(data, pads, 0, name="pad_data") if dl == "NCHW" else \
        T.pad_axes_stage(data, (dl.index("H"), dl.index("W")), pads, 0, name="pad_data")
    rc = te.reduce_axis((0, i), "rc")
    ry = te.reduce_axis((0, kh), "ry")
    rx = te.reduce_axis((0, kw), "rx")
    per_group = o // attrs.groups

    def body(*index):
        b, oc, y, x = Wn.pick(index, ol, "NCHW")
        c_, y_, x_ = rc.var, ry.var, rx.var
        ic = c_ if attrs.groups == 1 else (oc // per_group) * i + c_
        pixel = padded[Wn.place((b, ic, y * sh + y_ * dh, x * sw + x_ * dw), "NCHW", dl)].astype(acc)
        tap = weight[Wn.place((oc, rc, ry, rx), "OIHW", kl)].astype(acc)
        return te.sum(pixel * tap, axis=[rc, ry, rx])
    out = te.compute(Wn.place((n, o, oh, ow), "NCHW", ol), body, name="conv2d", tag=CONV2D.tag)
    return [T.cast_to(out, dtype, CONV2D.tag, "conv2d_cast")]


CONV2D = defop(OP, inputs=("data", "weight"), attrs=Conv2DAttrs, rel=_conv2d_rel,
               pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_conv2d_ref, samples=_conv2d_samples, level=2,
               compute=_conv2d_compute, fill_inputs=_conv2d_fill_inputs,
               doc="out[n, o, y, x] = sum_{c, p, q} pad(data)[n, g(o)*C/G + c, y*sh + p*dh, x*sw + q*dw]"
                   " * weight[o, c, p, q]")


def conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
           kernel_size=None, data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype=""):
    """2-D convolution (cross-correlation, as in every deep-learning framework).

    With the default layouts, data is (N, C, H, W), weight is (O, C / groups, KH, KW) and the
    result is (N, O, OH, OW), where OH = (H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1)
    // stride_h + 1 and OW likewise.

    Parameters
    ----------
    data : relay.Expr
        The input tensor, in `data_layout`.
    weight : relay.Expr
        The kernel, in `kernel_layout`. When its type is not annotated it is inferred from
        `channels` and `kernel_size`.
    strides : int or tuple of int, optional
        The step of the window over (height, width). Defaults to (1, 1).
    padding : int or tuple of int, optional
        Zero padding around the input: one value for every side, two for (height, width) on
        both sides, or four for (top, left, bottom, right). Defaults to (0, 0).
    dilation : int or tuple of int, optional
        The spacing between kernel taps over (height, width). Defaults to (1, 1).
    groups : int, optional
        The number of groups the channels are split into; groups = C = O is a depthwise
        convolution. Defaults to 1.
    channels : None or int, optional
        The number of output channels O, when known; None (the default) reads it from `weight`.
    kernel_size : None or tuple of int, optional
        The (KH, KW) of the kernel, when known; None (the default) reads it from `weight`.
    data_layout : str, optional
        The order of the letters N, C, H, W in `data` (e.g. "NHWC"). Defaults to "NCHW".
    kernel_layout : str, optional
        The order of the letters O, I, H, W in `weight` (e.g. "HWIO"). Defaults to "OIHW".
    out_layout : str, optional
        The layout of the result; "" (the default) means `data_layout`.
    out_dtype : str, optional
        The dtype of the result and of the accumulation; "" (the default) means data's dtype.

    Returns
    -------
    result : relay.Expr
        The convolved tensor.
    """
    return CONV2D(data, weight, attrs=Conv2DAttrs(strides, padding, dilation, groups, channels, kernel_size,
                                                  data_layout, kernel_layout, out_layout, out_dtype))


__all__ = ["conv2d", "Conv2DAttrs"]
