"""dyn.image.resize2d: image.resize2d with the output size (and the roi) given as Relay tensors,
read at run time (TVM v0.18's dyn.image.resize2d, built by relay.image.resize2d when size or roi
is not a constant). The height and width of the output are Any; the VM's shape function and
DynamicToStatic go through image.resize2d with the values put back into its attrs.

dyn.image.resize2d_scales (beyond TVM, for ONNX's Resize with scales fed at run time) also reads
the per-axis scale factors, the resize attr `scales` that the coordinate transforms divide by
(ONNX's output length floor(in * scale) differs from in * scale, so the factor cannot be recovered
from the sizes). The caller computes the output size from them (the ONNX converter does, in
Relay arithmetic). Antialias is refused: its kernel's number of taps depends on the scale.
"""
import numpy as np

from ...errors import InputError, TypeInferenceError
from ...ir.expr import Expr, const
from ...ir.shape_math import dims_differ
from ...ir.types import Any, TensorType, type_to_str
from .. import samples as S
from ..image.resize import RESIZE2D, Resize2DAttrs, check_data_layout, resize_stage, spatial_axes
from ..registry import Sample
from ..relations import expect_tensor
from .common import defdyn, read_ints, shape_arg, te_out_shape

OP = "dyn.image.resize2d"


def _rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], f"{OP} data")
    size = shape_arg(arg_types[1], OP, "size")
    roi = expect_tensor(arg_types[2], f"{OP} roi")
    check_data_layout(OP, data, attrs.layout, data=data)
    if int(size.shape[0]) != 2:
        raise TypeInferenceError(f"{OP}: size must hold 2 values (height, width), got {type_to_str(size)}")
    if roi.ndim != 1 or dims_differ(roi.shape[0], 4) or not roi.dtype.startswith("float"):
        raise TypeInferenceError(f"{OP}: roi must be a float tensor of 4 values, got {type_to_str(roi)}")
    shape = list(data.shape)
    for axis in spatial_axes(attrs.layout):
        shape[axis] = Any()
    return TensorType(shape, attrs.out_dtype or data.dtype)


def _static(attrs, values):
    size = read_ints(values[1], OP, "size")
    roi = tuple(float(v) for v in np.asarray(values[2]).reshape(-1))
    return RESIZE2D, attrs.with_(size=size, roi=roi)


def _compute(attrs, inputs, out_type):
    data, _, roi = inputs[:3]
    roi_values = [roi[k] for k in range(4)]
    scales = [inputs[3][k] for k in range(2)] if len(inputs) > 3 else None
    return [resize_stage(attrs, data, te_out_shape(out_type, "resize"), roi_values, out_type.dtype, scales=scales)]


SCALES_OP = "dyn.image.resize2d_scales"


def _rel_scales(arg_types, attrs):
    out = _rel(arg_types[:3], attrs)
    scales = expect_tensor(arg_types[3], f"{SCALES_OP} scales")
    if scales.ndim != 1 or dims_differ(scales.shape[0], 2) or not scales.dtype.startswith("float"):
        raise TypeInferenceError(f"{SCALES_OP}: scales must be a float tensor of 2 values (height, width), "
                                 f"got {type_to_str(scales)}")
    if attrs.scales:
        raise TypeInferenceError(f"{SCALES_OP}: the scales come from the scales argument; leave the attr empty")
    if attrs.antialias:
        raise TypeInferenceError(f"{SCALES_OP}: antialias needs its scales at compile time (the kernel's number "
                                 "of taps depends on them); give them as constants")
    return out


def _static_scales(attrs, values):
    scales = tuple(float(v) for v in np.asarray(values[3]).reshape(-1))
    if not all(np.isfinite(v) and v > 0 for v in scales):
        raise InputError(f"{SCALES_OP}: the scales {list(scales)} must be positive finite numbers")
    op, static_attrs = _static(attrs, values)
    return op, static_attrs.with_(scales=scales)


RESIZE2D_SCALES_DYN = defdyn(
    SCALES_OP, inputs=("data", "size", "roi", "scales"), static_inputs=(0,), attrs=Resize2DAttrs,
    to_static=_static_scales, rel=_rel_scales, compute=_compute, level=5,
    samples=lambda rng: [
        Sample([S.rand(rng, (1, 2, 5, 7)), np.array([3, 5], "int64"), np.zeros(4, "float32"),
                np.array([0.6, 0.8], "float32")], Resize2DAttrs()),
        Sample([S.rand(rng, (1, 1, 4, 5), "float64"), np.array([6, 4], "int64"), np.zeros(4, "float32"),
                np.array([1.7, 0.8], "float32")],
               Resize2DAttrs(method="cubic", cubic_alpha=-0.75, coordinate_transformation_mode="align_corners")),
        Sample([S.rand(rng, (1, 1, 4, 5)), np.array([2, 11], "int64"), np.zeros(4, "float32"),
                np.array([0.6, 2.3], "float32")], Resize2DAttrs(coordinate_transformation_mode="half_pixel_symmetric")),
        Sample([S.rand(rng, (1, 4, 4, 1)), np.array([3, 5], "int64"), np.array([0.2, 0.1, 0.9, 1.2], "float32"),
                np.array([0.8, 1.4], "float64")],
               Resize2DAttrs(layout="NHWC", coordinate_transformation_mode="tf_crop_and_resize",
                             extrapolation_value=-2.0)),
        Sample([S.rand(rng, (1, 2, 3, 4)), np.array([6, 6], "int64"), np.zeros(4, "float32"),
                np.array([2.0, 1.5], "float32")],
               Resize2DAttrs(method="nearest_neighbor", coordinate_transformation_mode="asymmetric",
                             rounding_method="floor"))],
    doc="image.resize2d with size, roi and the coordinate scales read at run time")


RESIZE2D_DYN = defdyn(
    OP, inputs=("data", "size", "roi"), static_inputs=(0,), attrs=Resize2DAttrs, to_static=_static, rel=_rel,
    compute=_compute, level=5,
    samples=lambda rng: [
        Sample([S.rand(rng, (1, 2, 3, 4)), np.array([5, 2], "int64"), np.zeros(4, "float32")], Resize2DAttrs()),
        Sample([S.rand(rng, (1, 4, 4, 2)), np.array([3, 6], "int32"), np.array([0.1, 0.2, 0.8, 1.1], "float32")],
               Resize2DAttrs(layout="NHWC", coordinate_transformation_mode="tf_crop_and_resize",
                             extrapolation_value=-2.0)),
        Sample([S.rand(rng, (1, 1, 3, 3)), np.array([6, 1], "int64"), np.zeros(4, "float32")],
               Resize2DAttrs(method="nearest_neighbor", coordinate_transformation_mode="asymmetric",
                             rounding_method="floor"))],
    doc="image.resize2d with size (and roi) read at run time")


def resize2d(data, size, roi=None, layout="NCHW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """dyn.image.resize2d: `size` a (2,) integer tensor expression, `roi` a (4,) float one (or values)."""
    if not isinstance(size, Expr):
        size = const(np.asarray(size, "int64"))
    if not isinstance(roi, Expr):
        roi = const(np.asarray(roi if roi is not None else [0.0] * 4, "float32"))
    attrs = Resize2DAttrs(layout=layout, method=method, coordinate_transformation_mode=coordinate_transformation_mode,
                          rounding_method=rounding_method, cubic_alpha=cubic_alpha, cubic_exclude=cubic_exclude,
                          extrapolation_value=extrapolation_value, out_dtype=out_dtype or "")
    return RESIZE2D_DYN(data, size, roi, attrs=attrs)


def resize2d_scales(data, size, roi, scales, layout="NCHW", method="linear",
                    coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
                    cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """dyn.image.resize2d_scales: `size` a (2,) integer tensor expression (the output's height and
    width), `roi` a (4,) float one, `scales` a (2,) float one whose factors the coordinate
    transforms divide by instead of the out / in ratio (ONNX's Resize with scales)."""
    size, roi, scales = (value if isinstance(value, Expr) else const(np.asarray(value, dtype))
                         for value, dtype in ((size, "int64"), (roi, "float32"), (scales, "float32")))
    attrs = Resize2DAttrs(layout=layout, method=method, coordinate_transformation_mode=coordinate_transformation_mode,
                          rounding_method=rounding_method, cubic_alpha=cubic_alpha, cubic_exclude=cubic_exclude,
                          extrapolation_value=extrapolation_value, out_dtype=out_dtype or "")
    return RESIZE2D_SCALES_DYN(data, size, roi, scales, attrs=attrs)


__all__ = ["resize2d", "resize2d_scales"]
