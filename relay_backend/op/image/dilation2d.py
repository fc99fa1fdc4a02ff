"""image.dilation2d: grey-scale morphological dilation (TVM v0.18's op): per channel,
out[n, c, y, x] = max over the kernel window of data[n, c, y*sh + ry*dh, x*sw + rx*dw] + weight[c, ry, rx],
with the data zero-padded as TVM's topi pads it. Layouts NCHW with an IHW weight or NHWC with an
HWI weight. OUT_ELEMWISE_FUSABLE (a max reduction per output element).
"""
import dataclasses

import numpy as np

from ... import te
from ...ir.attrs import Attrs
from ...ir.types import TensorType
from .. import samples as S
from ..nn import _common as C
from ..nn import _te as T
from ..pattern import OpPattern
from ..registry import Sample, defop

OP = "image.dilation2d"
KERNEL_LAYOUT = {"NCHW": "IHW", "NHWC": "HWI"}


@dataclasses.dataclass(frozen=True)
class Dilation2DAttrs(Attrs):
    strides: tuple = (1, 1)
    padding: tuple = (0, 0)
    dilations: tuple = (1, 1)
    data_layout: str = "NCHW"
    kernel_layout: str = "IHW"
    out_dtype: str = ""

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        set_("strides", C.ints(self.strides, 2, "strides", minimum=1))
        set_("padding", C.padding4(self.padding))
        set_("dilations", C.ints(self.dilations, 2, "dilations", minimum=1))
        C.check_layout("Dilation2DAttrs", "data_layout", self.data_layout, tuple(KERNEL_LAYOUT))
        C.check_layout("Dilation2DAttrs", "kernel_layout", self.kernel_layout, (KERNEL_LAYOUT[self.data_layout],))
        set_("out_dtype", C.out_dtype(self.out_dtype))


def _hw_axes(layout: str):
    return layout.index("H"), layout.index("W")


def _rel(arg_types, attrs) -> TensorType:
    """(data, weight (C, KH, KW) in the kernel layout) -> (N, C, OH, OW) in the data layout."""
    data = C.tensor_arg(OP, arg_types[0], "data")
    weight = C.tensor_arg(OP, arg_types[1], "weight")
    types = dict(data=data, weight=weight)
    C.expect_rank(OP, data, 4, f"data ({attrs.data_layout})", **types)
    C.expect_rank(OP, weight, 3, f"weight ({attrs.kernel_layout})", **types)
    channels = data.shape[attrs.data_layout.index("C")]
    if not C.dim_matches(weight.shape[attrs.kernel_layout.index("I")], channels):
        raise C.rel_error(OP, "weight must have one kernel per data channel", **types)
    shape = list(data.shape)
    for k, axis in enumerate(_hw_axes(attrs.data_layout)):
        kernel = weight.shape[attrs.kernel_layout.index("HW"[k])]
        out = C.window_out_dim(data.shape[axis], kernel, attrs.strides[k], attrs.dilations[k],
                               attrs.padding[k], attrs.padding[k + 2])
        if out is None:
            raise C.rel_error(OP, f"the dilated kernel does not fit the padded input along {'HW'[k]}", **types)
        shape[axis] = out
    return TensorType(shape, attrs.out_dtype or data.dtype)


def _ref(data, weight, attrs):
    dtype = attrs.out_dtype or str(data.dtype)
    x = np.transpose(data, [attrs.data_layout.index(c) for c in "NCHW"]).astype(dtype)
    w = np.transpose(weight, [attrs.kernel_layout.index(c) for c in "IHW"]).astype(dtype)
    xp = C.pad_hw(x, attrs.padding, 0)
    kh, kw = w.shape[1:]
    oh = (xp.shape[2] - (kh - 1) * attrs.dilations[0] - 1) // attrs.strides[0] + 1
    ow = (xp.shape[3] - (kw - 1) * attrs.dilations[1] - 1) // attrs.strides[1] + 1
    win = C.windows(np.ascontiguousarray(xp), (kh, kw), attrs.strides, attrs.dilations, (oh, ow))
    out = (win + w[None, :, None, None]).max(axis=(4, 5)) if win.size else np.zeros(win.shape[:4], dtype)
    return np.ascontiguousarray(np.transpose(out, ["NCHW".index(c) for c in attrs.data_layout])).astype(dtype)


def _compute(attrs, inputs, out_type):
    data, weight = inputs
    dtype = out_type.dtype
    ah, aw = _hw_axes(attrs.data_layout)
    ch = attrs.data_layout.index("C")
    padded = T.pad_axes_stage(data, (ah, aw), attrs.padding, 0, name="dilation2d_pad")
    wdims = T.dims(weight)
    kl = attrs.kernel_layout
    ry = te.reduce_axis((0, wdims[kl.index("H")]), "ry")
    rx = te.reduce_axis((0, wdims[kl.index("W")]), "rx")

    def f(*i):
        src = list(i)
        src[ah] = i[ah] * attrs.strides[0] + ry.var * attrs.dilations[0]
        src[aw] = i[aw] * attrs.strides[1] + rx.var * attrs.dilations[1]
        widx = [None] * 3
        widx[kl.index("I")], widx[kl.index("H")], widx[kl.index("W")] = i[ch], ry.var, rx.var
        return te.max(padded[tuple(src)].astype(dtype) + weight[tuple(widx)].astype(dtype), axis=[ry, rx])
    return [te.compute(list(out_type.shape), f, name="dilation2d", tag=DILATION2D.tag)]


def _samples(rng):
    A = Dilation2DAttrs
    side = int(np.ceil(np.sqrt(S.FLOAT16_REDUCTION_TERMS)))
    return [Sample([S.rand(rng, (1, 2, 5, 6)), S.rand(rng, (2, 2, 3))], A()),
            Sample([S.rand(rng, (2, 7, 6, 3), "float64"), S.rand(rng, (3, 2, 3), "float64")],
                   A(strides=(2, 1), padding=(1, 0, 2, 1), dilations=(1, 2), data_layout="NHWC", kernel_layout="HWI")),
            Sample([S.rand(rng, (1, 1, side, side), "float16"), S.rand(rng, (1, side, side), "float16")], A()),
            Sample([S.rand(rng, (1, 3, 4, 4), "int32", -5, 5), S.rand(rng, (3, 2, 2), "int32", -3, 3)],
                   A(padding=1, strides=2))]


DILATION2D = defop(OP, inputs=("data", "weight"), attrs=Dilation2DAttrs, rel=_rel,
                   pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_ref, compute=_compute, level=2, samples=_samples,
                   doc="morphological dilation: windowed max of data + weight per channel")


def dilation2d(data, weight, strides=(1, 1), padding=(0, 0, 0, 0), dilations=(1, 1), data_layout="NCHW",
               kernel_layout="IHW", out_dtype=""):
    """relay.image.dilation2d: grey-scale dilation of data by a per-channel structuring element.

    Parameters
    ----------
    data : relay.Expr
        The images, 4-D in `data_layout`.
    weight : relay.Expr
        The structuring element, one 2-D window per channel of `data`, 3-D in `kernel_layout`; it is
        added to the data under the window before the maximum is taken.
    strides : int or tuple of int, optional
        The step of the window along (height, width). Defaults to (1, 1).
    padding : int or tuple of int, optional
        Zero padding around the images: one value for every side, (height, width) for both sides of
        each, or (top, left, bottom, right). Defaults to (0, 0, 0, 0).
    dilations : int or tuple of int, optional
        The spacing between window taps along (height, width). Defaults to (1, 1).
    data_layout : str, optional
        The layout of `data`, "NCHW" or "NHWC". Defaults to 'NCHW'.
    kernel_layout : str, optional
        The layout of `weight`: "IHW" with NCHW data, "HWI" with NHWC data. Defaults to 'IHW'.
    out_dtype : str, optional
        The dtype of the result and of the sums; "" keeps the dtype of `data`. Defaults to ''.

    Returns
    -------
    result : relay.Expr
        The dilated images, in `data_layout`.
    """
    return DILATION2D(data, weight, attrs=Dilation2DAttrs(strides, padding, dilations, data_layout, kernel_layout,
                                                          out_dtype or ""))


__all__ = ["dilation2d", "Dilation2DAttrs"]
