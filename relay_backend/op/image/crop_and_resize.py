"""image.crop_and_resize: cut boxes out of a batch of images and resample each to crop_size
(TVM v0.18's op, TensorFlow's CropAndResize). INJECTIVE.

Box b = (y1, x1, y2, x2) in normalized image coordinates reads image box_indices[b]; output row
y maps to y1 * (H - 1) + y * (H - 1) * (y2 - y1) / (crop_h - 1) (and columns alike), read with
bilinear or nearest_neighbor (rounding half to even, as TVM) interpolation; a coordinate outside
the image gives extrapolation_value. Two guards TVM lacks: a crop length of 1 samples the box's
centre (TensorFlow's rule; TVM divides by zero), and a box index outside [0, batch) reads the
nearest image (clamped) instead of memory outside the data.
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...ir.attrs import Attrs, always_printed, check_choice
from ...ir.types import TensorType
from .. import samples as S
from ..nn import _common as C
from ..nn import _te as T
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..tensor import real_attr
from . import interp
from .resize import check_data_layout, check_image_layout, spatial_axes

OP = "image.crop_and_resize"
METHODS = {"bilinear": "linear", "nearest_neighbor": "nearest_neighbor"}


@dataclasses.dataclass(frozen=True)
class CropAndResizeAttrs(Attrs):
    crop_size: tuple = always_printed(())
    layout: str = "NCHW"
    method: str = "bilinear"
    extrapolation_value: float = 0.0
    out_dtype: str = ""

    def __post_init__(self):
        object.__setattr__(self, "crop_size", C.ints(self.crop_size, 2, "crop_size", minimum=1))
        check_image_layout("CropAndResizeAttrs", self.layout, ("NCHW", "NHWC"))
        check_choice("method", self.method, tuple(METHODS))
        object.__setattr__(self, "extrapolation_value", real_attr(OP, "extrapolation_value", self.extrapolation_value))
        object.__setattr__(self, "out_dtype", C.out_dtype(self.out_dtype))


def _rel(arg_types, attrs) -> TensorType:
    """(image, boxes (B, 4) float, box_indices (B,) int) -> B crops of crop_size, channels kept."""
    data = C.tensor_arg(OP, arg_types[0], "data")
    boxes = C.tensor_arg(OP, arg_types[1], "boxes")
    indices = C.tensor_arg(OP, arg_types[2], "box_indices")
    types = dict(data=data, boxes=boxes, box_indices=indices)
    check_data_layout(OP, data, attrs.layout, **types)
    if boxes.ndim != 2 or not C.dim_matches(boxes.shape[1], 4) or not boxes.dtype.startswith("float"):
        raise C.rel_error(OP, "boxes must be a float tensor of shape (num_boxes, 4)", **types)
    if indices.ndim != 1 or not indices.dtype.startswith(("int", "uint")):
        raise C.rel_error(OP, "box_indices must be a 1-D integer tensor", **types)
    if not C.dim_matches(boxes.shape[0], indices.shape[0]):
        raise C.rel_error(OP, "boxes and box_indices must have one row per box", **types)
    shape = list(data.shape)
    shape[0] = boxes.shape[0]
    for axis, length in zip(spatial_axes(attrs.layout), attrs.crop_size):
        shape[axis] = length
    return TensorType(shape, attrs.out_dtype or data.dtype)


def _np_box_coordinate(out_len, in_len, lo, hi, ftype):
    ft = np.dtype(ftype).type
    last = ft(in_len - 1)
    if out_len == 1:
        return np.full(1, ft(0.5) * (lo + hi) * last, ftype)
    scale = last * (hi - lo) / ft(out_len - 1)
    return lo * last + scale * np.arange(out_len).astype(ftype)


def _ref(data, boxes, box_indices, attrs):
    ftype = interp.compute_dtype(str(data.dtype), attrs.out_dtype)
    axes = spatial_axes(attrs.layout)
    method = METHODS[attrs.method]
    out = []
    for b in range(boxes.shape[0]):
        image = int(np.clip(box_indices[b], 0, data.shape[0] - 1)) if data.shape[0] else 0
        box = boxes[b].astype(ftype)
        taps, outside = [], np.zeros((1,) * data.ndim, bool)
        for d, axis in enumerate(axes):
            in_len = data.shape[axis]
            coord = _np_box_coordinate(attrs.crop_size[d], in_len, box[d], box[d + 2], ftype)
            taps.append(interp.np_taps(coord, in_len, method, "round", 0.0, False))
            shape = [1] * data.ndim
            shape[axis] = len(coord)
            outside = outside | ((coord < 0) | (coord > in_len - 1)).reshape(shape)
        value = interp.np_interpolate(data[image:image + 1], axes, taps, ftype)
        out.append(np.where(outside, np.dtype(ftype).type(attrs.extrapolation_value), value))
    shape = list(_rel([TensorType(data.shape, str(data.dtype)), TensorType(boxes.shape, str(boxes.dtype)),
                       TensorType(box_indices.shape, str(box_indices.dtype))], attrs).shape)
    if not out or data.size == 0:
        return np.zeros(shape, attrs.out_dtype or data.dtype)
    return interp.np_to_dtype(np.concatenate(out, axis=0), attrs.out_dtype or data.dtype)


def _te_box_coordinate(x, out_len, in_len, lo, hi, ftype):
    last = tir.const(float(in_len - 1), ftype) if isinstance(in_len, int) else (in_len - 1).astype(ftype)
    if out_len == 1:
        return tir.const(0.5, ftype) * (lo + hi) * last
    scale = last * (hi - lo) / tir.const(float(out_len - 1), ftype)
    return lo * last + scale * x.astype(ftype)


def _compute(attrs, inputs, out_type):
    data, boxes, box_indices = inputs
    ftype = interp.compute_dtype(data.dtype, out_type.dtype)
    axes = spatial_axes(attrs.layout)
    method = METHODS[attrs.method]
    in_shape = T.dims(data)

    def f(*index):
        b = index[0]
        image = tir.max(tir.min(box_indices[b].astype("int32"), in_shape[0] - 1), 0)
        taps, bad = [], []
        for d, axis in enumerate(axes):
            lo, hi = boxes[b, d].astype(ftype), boxes[b, d + 2].astype(ftype)
            coord = _te_box_coordinate(index[axis], attrs.crop_size[d], in_shape[axis], lo, hi, ftype)
            taps.append(interp.te_taps(index[axis], coord, in_shape[axis], method, "round", 0.0, False))
            bad.append(interp.outside(coord, in_shape[axis]))
        start = (image,) + tuple(index[1:])
        value = interp.te_interpolate(lambda i: data[i], start, axes, taps, ftype)
        fill = tir.const(attrs.extrapolation_value, ftype)
        for cond in bad:
            value = te.if_then_else(cond, fill, value)
        return interp.te_to_dtype(value, out_type.dtype)
    return [te.compute(list(out_type.shape), f, name="crop_and_resize", tag="injective")]


def _samples(rng):
    A = CropAndResizeAttrs
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [-0.2, 0.0, 0.5, 1.3], [0.5, 0.5, 0.5, 0.5]], "float32")
    return [Sample([S.rand(rng, (2, 3, 5, 6)), boxes, np.array([1, 0, 1], "int32")], A(crop_size=(4, 3))),
            Sample([S.rand(rng, (2, 4, 4, 2), "float64"), boxes[:2].astype("float64"), np.array([0, 1], "int64")],
                   A(crop_size=(3, 5), layout="NHWC", method="nearest_neighbor", extrapolation_value=-1.0)),
            Sample([S.rand(rng, (2, 1, 3, 4, 2)), boxes[:2], np.array([1, 0], "int32")], A(crop_size=(2, 3),
                                                                                            layout="NCHW2c")),
            Sample([S.rand(rng, (1, 2, 4, 4)), boxes, np.array([0, 5, -1], "int32")],
                   A(crop_size=(1, 2), extrapolation_value=3.0, out_dtype="float64"))]


CROP_AND_RESIZE = defop(OP, inputs=("data", "boxes", "box_indices"), attrs=CropAndResizeAttrs, rel=_rel,
                        pattern=OpPattern.INJECTIVE, ref=_ref, compute=_compute, level=5, samples=_samples,
                        doc="resample boxes of a batch of images to crop_size")


def crop_and_resize(data, boxes, box_indices, crop_size, layout, method="bilinear", extrapolation_value=0,
                    out_dtype=None):
    """relay.image.crop_and_resize: crop boxes (y1, x1, y2, x2 normalized) of images box_indices
    and resize each to crop_size with bilinear or nearest_neighbor sampling.

    Parameters
    ----------
    data : relay.Expr
        The batch of images, in `layout`.
    boxes : relay.Expr
        A float tensor (num_boxes, 4): each row a box (y1, x1, y2, x2) in coordinates normalized to
        the image, 0 the first pixel and 1 the last; a box may reach outside [0, 1] or be flipped.
    box_indices : relay.Expr
        An integer tensor (num_boxes,): the image of `data` each box is cut from.
    crop_size : tuple of int
        The (height, width) every box is resampled to.
    layout : str
        The layout of `data`, "NCHW" or "NHWC" (or NCHW with its channels split into blocks, e.g.
        "NCHW4c"); the result has the same.
    method : str, optional
        "bilinear" weighs the 4 pixels around a sample point, "nearest_neighbor" reads the nearest
        one. Defaults to 'bilinear'.
    extrapolation_value : float, optional
        The value of a sample point that falls outside its image. Defaults to 0.
    out_dtype : None or str, optional
        The dtype of the result; None keeps the dtype of `data`. Defaults to None.

    Returns
    -------
    result : relay.Expr
        The crops, (num_boxes, channels, crop height, crop width) in `layout`'s order.
    """
    return CROP_AND_RESIZE(data, boxes, box_indices,
                           attrs=CropAndResizeAttrs(tuple(crop_size), layout, method, extrapolation_value,
                                                    out_dtype or ""))


__all__ = ["crop_and_resize", "CropAndResizeAttrs"]
