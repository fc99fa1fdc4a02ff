"""image.resize1d / resize2d / resize3d: resample the spatial axes of an image to `size`
(TVM v0.18's ops and attrs). Every coordinate_transformation_mode, method (nearest_neighbor,
linear, cubic with cubic_alpha / cubic_exclude) and rounding_method of TVM; layouts NCW/NWC,
NCHW/NHWC, NCDHW/NDHWC and the packed NCWxc / NCHWxc / NCDHWxc (TVM's); `roi` ([start per axis..., end per axis...]) and extrapolation_value
serve tf_crop_and_resize. The arithmetic lives in interp.py, shared by the three ranks; all
three are INJECTIVE.

Two attrs beyond TVM's, for ONNX's Resize (their defaults keep TVM's meaning): `scales`, one
factor per spatial axis that the coordinate transforms divide by instead of the in/out length
ratio (ONNX's output length is floor(in * scale), so the two differ), with ONNX 19's
half_pixel_symmetric mode; and `antialias` (ONNX 18), which widens the linear / cubic kernel
when an axis shrinks (antialias.py).

resize2d with `size` or `roi` given as a non-constant Relay expression builds
dyn.image.resize2d (op/dyn/image.py), as TVM's constructor does.
"""
import dataclasses
import re

import numpy as np

from ... import te
from ...errors import AttrsError, OpNotImplemented
from ...ir.expr import Constant, Expr
from ...ir.attrs import Attrs, always_printed, check_choice
from ...ir.types import TensorType
from .. import samples as S
from ..nn import _common as C
from ..nn import _te as T
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..tensor import real_attr
from . import antialias, interp

LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def spatial_axes(layout: str) -> list:
    """Positions of the D/H/W axes of a layout, in that order ("NCHW16c" too: the packed inner
    channel block comes last)."""
    letters = layout_axes(layout)
    return [letters.index(c) for c in "DHW" if c in letters]


def layout_axes(layout: str) -> list:
    """The axis names of a layout: "NCHW16c" -> ["N", "C", "H", "W", "16c"]."""
    return re.findall(r"\d*[A-Za-z]", layout)


def check_image_layout(what: str, layout: str, plain) -> None:
    """One of the `plain` layouts, or the first of them with a packed channel block (NCHW16c, as
    TVM's NCHWxc resize layouts)."""
    packed = re.fullmatch(re.escape(plain[0]) + r"([1-9]\d*)c", layout)
    if layout not in plain and not packed:
        C.check_layout(what, "layout", layout, tuple(plain) + (plain[0] + "<block>c",))


def inner_block(layout: str):
    """The packed channel block size of a layout like NCHW16c, else None."""
    last = layout_axes(layout)[-1]
    return int(last[:-1]) if last[:-1] else None


@dataclasses.dataclass(frozen=True)
class Resize2DAttrs(Attrs):
    size: tuple = always_printed(())
    roi: tuple = (0.0, 0.0, 0.0, 0.0)
    layout: str = "NCHW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = "round"
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: str = ""
    scales: tuple = ()
    antialias: int = 0

    SPATIAL = 2

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        k = self.SPATIAL
        what = type(self).__name__
        empty = self.size is None or (isinstance(self.size, (tuple, list)) and not self.size)
        set_("size", () if empty else C.ints(self.size, k, "size"))
        roi = tuple(real_attr(what, "roi", v) for v in (self.roi or (0.0,) * 2 * k))
        if len(roi) != 2 * k:
            raise AttrsError(f"{what}: roi must have {2 * k} values (start then end per spatial axis), "
                             f"got {roi}")
        set_("roi", roi)
        check_image_layout(what, self.layout, LAYOUTS[k])
        check_choice("method", self.method, interp.METHODS)
        check_choice("coordinate_transformation_mode", self.coordinate_transformation_mode,
                     interp.COORDINATE_MODES)
        check_choice("rounding_method", self.rounding_method, interp.ROUNDING_METHODS)
        set_("cubic_alpha", real_attr(what, "cubic_alpha", self.cubic_alpha))
        set_("cubic_exclude", int(self.cubic_exclude))
        set_("extrapolation_value", real_attr(what, "extrapolation_value", self.extrapolation_value))
        set_("out_dtype", C.out_dtype(self.out_dtype))
        scales = tuple(real_attr(what, "scales", v) for v in (self.scales or ()))
        if scales and (len(scales) != k or min(scales) <= 0):
            raise AttrsError(f"{what}: scales must be empty or {k} positive factors, got {scales}")
        set_("scales", scales)
        set_("antialias", int(self.antialias))
        if self.antialias and self.method == "nearest_neighbor":
            raise AttrsError(f"{what}: antialias applies to the linear and cubic methods, not nearest_neighbor")


@dataclasses.dataclass(frozen=True)
class Resize1DAttrs(Resize2DAttrs):
    roi: tuple = (0.0, 0.0)
    layout: str = "NCW"

    SPATIAL = 1


@dataclasses.dataclass(frozen=True)
class Resize3DAttrs(Resize2DAttrs):
    roi: tuple = (0.0,) * 6
    layout: str = "NCDHW"

    SPATIAL = 3


def check_data_layout(op_name: str, tensor, layout: str, **types) -> None:
    """The data's rank is the layout's; a packed channel block has the layout's size."""
    C.expect_rank(op_name, tensor, len(layout_axes(layout)), f"data ({layout})", **types)
    block = inner_block(layout)
    if block is not None and not C.dim_matches(tensor.shape[-1], block):
        raise C.rel_error(op_name, f"the last axis of {layout} data must have {block} channels", **types)


def _make_rel(op_name: str):
    def rel(arg_types, attrs) -> TensorType:
        """data with its spatial axes replaced by `size`; dtype out_dtype or the data's."""
        data = C.tensor_arg(op_name, arg_types[0], "data")
        k = attrs.SPATIAL
        check_data_layout(op_name, data, attrs.layout, data=data)
        if len(attrs.size) != k:
            raise C.rel_error(op_name, f"size must give {k} output length(s), got {attrs.size}", data=data)
        shape = list(data.shape)
        for axis, length in zip(spatial_axes(attrs.layout), attrs.size):
            shape[axis] = length
        return TensorType(shape, attrs.out_dtype or data.dtype)
    return rel


def _antialias_scale(attrs, factor, in_len, out_len):
    """The shrink factor (< 1) whose antialiased kernel an axis uses, else None."""
    if not attrs.antialias or attrs.method == "nearest_neighbor":
        return None
    if factor is None:
        if not (isinstance(in_len, int) and isinstance(out_len, int)) or in_len == 0:
            raise OpNotImplemented("resize: antialias needs static lengths or explicit scales")
        factor = out_len / in_len
    return factor if factor < 1 else None


def resize_ref(data: np.ndarray, attrs, size=None, roi=None) -> np.ndarray:
    """The numpy meaning (see interp.py); `size`/`roi` default to the attrs'."""
    size = attrs.size if size is None else size
    roi = attrs.roi if roi is None else roi
    k = attrs.SPATIAL
    axes = spatial_axes(attrs.layout)
    ftype = interp.compute_dtype(str(data.dtype), attrs.out_dtype)
    mode, method = attrs.coordinate_transformation_mode, attrs.method
    rounding = interp.default_rounding(attrs.rounding_method, mode)
    taps, outside = [], None
    for d, (axis, out_len) in enumerate(zip(axes, size)):
        in_len = data.shape[axis]
        factor = attrs.scales[d] if attrs.scales else None
        coord = interp.np_coordinate(out_len, in_len, mode, roi[d], roi[d + k], ftype, factor)
        shrink = _antialias_scale(attrs, factor, in_len, out_len)
        if shrink is not None:
            taps.append(antialias.np_taps(coord, in_len, method, attrs.cubic_alpha, attrs.cubic_exclude, shrink))
        else:
            div = interp.int_div_factor(mode, method, rounding, in_len, out_len, factor)
            taps.append(interp.np_taps(coord, in_len, method, rounding, attrs.cubic_alpha, attrs.cubic_exclude,
                                       div))
        if mode == "tf_crop_and_resize":
            shape = [1] * data.ndim
            shape[axis] = out_len
            bad = ((coord < 0) | (coord > in_len - 1)).reshape(shape)
            outside = bad if outside is None else outside | bad
    if data.size == 0 or 0 in size:
        out_shape = list(data.shape)
        for axis, out_len in zip(axes, size):
            out_shape[axis] = out_len
        return np.zeros(out_shape, attrs.out_dtype or data.dtype)
    value = interp.np_interpolate(data, axes, taps, ftype)
    if outside is not None:
        value = np.where(outside, np.dtype(ftype).type(attrs.extrapolation_value), value)
    return interp.np_to_dtype(value, attrs.out_dtype or data.dtype)


def resize_stage(attrs, data, out_shape, roi, out_dtype: str, name: str = "resize", scales=None):
    """The te stage of a resize; out_shape and roi entries may be tir expressions (dyn), and
    `scales` (one tir expression per spatial axis, read at run time) replaces attrs.scales."""
    k = attrs.SPATIAL
    axes = spatial_axes(attrs.layout)
    in_shape = T.dims(data)
    ftype = interp.compute_dtype(data.dtype, out_dtype)
    mode, method = attrs.coordinate_transformation_mode, attrs.method
    rounding = interp.default_rounding(attrs.rounding_method, mode)
    out_static = [T.dim(d) if not isinstance(d, int) else d for d in out_shape]

    def f(*index):
        taps, bad = [], []
        for d, axis in enumerate(axes):
            in_len, out_len = in_shape[axis], out_static[axis]
            x = index[axis]
            factor = scales[d] if scales is not None else attrs.scales[d] if attrs.scales else None
            coord = interp.te_coordinate(x, out_len, in_len, mode, roi[d], roi[d + k], ftype, factor)
            shrink = _antialias_scale(attrs, factor, in_len, out_len)
            if shrink is not None:
                taps.append(antialias.te_taps(coord, in_len, method, attrs.cubic_alpha, attrs.cubic_exclude, shrink))
            else:
                div = interp.int_div_factor(mode, method, rounding, in_len, out_len, factor)
                taps.append(interp.te_taps(x, coord, in_len, method, rounding, attrs.cubic_alpha,
                                           attrs.cubic_exclude, div))
            if mode == "tf_crop_and_resize":
                bad.append(interp.outside(coord, in_len))
        value = interp.te_interpolate(lambda i: data[i], index, axes, taps, ftype)
        for cond in bad:
            value = te.if_then_else(cond, te.const(attrs.extrapolation_value, ftype), value)
        return interp.te_to_dtype(value, out_dtype)
    return te.compute(out_shape, f, name=name, tag="injective")


def _compute(attrs, inputs, out_type):
    data, = inputs
    return [resize_stage(attrs, data, list(out_type.shape), attrs.roi, out_type.dtype)]


def _samples_1d(rng):
    A = Resize1DAttrs
    return [Sample([S.rand(rng, (1, 2, 5))], A(size=(9,))),
            Sample([S.rand(rng, (2, 7, 3), "float64")], A(size=(4,), layout="NWC", method="cubic",
                                                         coordinate_transformation_mode="align_corners")),
            Sample([S.rand(rng, (1, 3, 4))], A(size=(8,), method="nearest_neighbor",
                                               coordinate_transformation_mode="asymmetric", rounding_method="")),
            Sample([S.rand(rng, (1, 1, 6), "float16")], A(size=(5,), coordinate_transformation_mode="tf_crop_and_resize",
                                                          roi=(0.2, 1.3), extrapolation_value=-1.0))]


def _samples_2d(rng):
    A = Resize2DAttrs
    return [Sample([S.rand(rng, (1, 2, 3, 4))], A(size=(5, 7))),
            Sample([S.rand(rng, (2, 4, 5, 3))], A(size=(3, 8), layout="NHWC", method="nearest_neighbor",
                                                  coordinate_transformation_mode="tf_half_pixel_for_nn",
                                                  rounding_method="round_prefer_ceil")),
            Sample([S.rand(rng, (1, 1, 4, 4), "float64")], A(size=(7, 3), method="cubic", cubic_alpha=-0.75,
                                                             cubic_exclude=1,
                                                             coordinate_transformation_mode="pytorch_half_pixel")),
            Sample([S.rand(rng, (1, 2, 3, 3), "float16")], A(size=(6, 6), method="nearest_neighbor",
                                                             coordinate_transformation_mode="asymmetric",
                                                             rounding_method="")),
            Sample([S.rand(rng, (1, 1, 5, 4))], A(size=(3, 4), coordinate_transformation_mode="tf_crop_and_resize",
                                                  roi=(0.1, -0.2, 0.9, 1.1), extrapolation_value=7.0)),
            Sample([S.rand(rng, (1, 3, 2, 2), "int32", 0, 100)], A(size=(1, 3), method="nearest_neighbor",
                                                                   coordinate_transformation_mode="align_corners")),
            Sample([np.array([[[[0, 255, 0, 255], [255, 0, 255, 0], [0, 0, 255, 255]]]], "uint8")],
                   A(size=(5, 7), method="cubic", cubic_alpha=-0.75)),
            Sample([S.rand(rng, (1, 2, 4, 4))], A(size=(2, 3), out_dtype="float64")),
            Sample([S.rand(rng, (1, 2, 3, 4, 4))], A(size=(5, 2), layout="NCHW4c", method="cubic")),
            Sample([S.rand(rng, (1, 1, 5, 6))], A(size=(3, 2), scales=(0.6, 0.4), antialias=1)),
            Sample([S.rand(rng, (1, 1, 4, 5), "float64")], A(size=(3, 2), method="cubic", scales=(0.8, 0.5),
                                                             antialias=1, cubic_alpha=-0.75, cubic_exclude=1)),
            Sample([S.rand(rng, (1, 2, 3, 4))], A(size=(8, 5), scales=(2.94, 1.3),
                                                  coordinate_transformation_mode="half_pixel_symmetric"))]


def _samples_3d(rng):
    A = Resize3DAttrs
    return [Sample([S.rand(rng, (1, 2, 2, 3, 4))], A(size=(3, 5, 2))),
            Sample([S.rand(rng, (1, 3, 2, 2, 2), "float64")], A(size=(4, 3, 3), layout="NDHWC", method="cubic",
                                                                coordinate_transformation_mode="asymmetric")),
            Sample([S.rand(rng, (1, 1, 2, 3, 3))], A(size=(4, 5, 2), method="nearest_neighbor",
                                                     coordinate_transformation_mode="half_pixel",
                                                     rounding_method="round_prefer_floor")),
            Sample([S.rand(rng, (1, 1, 3, 3, 3))], A(size=(2, 2, 2), coordinate_transformation_mode="tf_crop_and_resize",
                                                     roi=(0.0, 0.1, 0.2, 1.2, 0.9, 0.8), extrapolation_value=2.5))]


def _defresize(k: int, attrs_cls, samples):
    name = f"image.resize{k}d"
    return defop(name, inputs=("data",), attrs=attrs_cls, rel=_make_rel(name), pattern=OpPattern.INJECTIVE,
                 ref=lambda data, attrs: resize_ref(data, attrs), compute=_compute, level=5, samples=samples,
                 doc=f"resample the {k} spatial axis(es) of data to size (TVM's {name})")


RESIZE1D = _defresize(1, Resize1DAttrs, _samples_1d)
RESIZE2D = _defresize(2, Resize2DAttrs, _samples_2d)
RESIZE3D = _defresize(3, Resize3DAttrs, _samples_3d)


# The parameters resize1d / resize2d / resize3d share (constructor_docs completes their docstrings);
# a per-axis argument has one entry per spatial axis of `layout`, in the order D, H, W.
RESIZE_PARAMETERS = {
    "data": ("relay.Expr", "The images, in `layout`."),
    "size": ("tuple of int or relay.Expr",
             "The length of each spatial axis of the result. resize2d also takes an expression known "
             "only at run time (it then builds dyn.image.resize2d); resize1d and resize3d take only a "
             "constant one."),
    "roi": ("None or tuple of float or relay.Expr",
            "The region of the input the result covers, as fractions of each spatial axis: every axis's "
            "start, then every axis's end. Only the tf_crop_and_resize mode reads it; None is the whole "
            "image."),
    "layout": ("str", 'The layout of `data`: N, C and the spatial letters ("NCW" or "NWC"; "NCHW" or '
                      '"NHWC"; "NCDHW" or "NDHWC"), or the channels-first one with its channels split '
                      'into blocks, e.g. "NCHW16c".'),
    "method": ("str", 'How a result value is computed from its source coordinate: "nearest_neighbor" reads '
                      'one pixel, "linear" weighs the 2 nearest along each axis, "cubic" the 4 nearest with '
                      "a cubic spline."),
    "coordinate_transformation_mode": (
        "str", 'How a result index maps to a coordinate in the input: "half_pixel" '
               '(pixel centres line up), "half_pixel_symmetric", "pytorch_half_pixel" (as half_pixel, but a length-1 result reads '
               'index 0), "align_corners" (the first and last pixels of both line up), "asymmetric" '
               '(index times the length ratio), "tf_half_pixel_for_nn" or "tf_crop_and_resize" (the '
               "coordinates span `roi`)."),
    "rounding_method": ("str", 'How nearest_neighbor rounds a coordinate to a pixel: "round", '
                               '"round_prefer_floor", "round_prefer_ceil", "floor" or "ceil"; "" rounds '
                               "under align_corners and floors under the other modes."),
    "cubic_alpha": ("float", "The spline coefficient of the cubic method (-0.5 and -0.75 are common)."),
    "cubic_exclude": ("int", "If 1, the cubic taps that fall outside the input get weight 0 and the "
                             "others are rescaled to sum to 1."),
    "extrapolation_value": ("float", "The value of a result pixel whose coordinate falls outside the input "
                                     "under tf_crop_and_resize."),
    "out_dtype": ("None or str", "The dtype of the result; None (or \"\") keeps the dtype of `data`."),
}
RESIZED = ("result", "relay.Expr", "The resized images: `data` with its spatial axes of the lengths in `size`.")


def _attrs(cls, size, roi, layout, method, coordinate_transformation_mode, rounding_method, cubic_alpha,
           cubic_exclude, extrapolation_value, out_dtype):
    return cls(size=tuple(size) if size is not None else (), roi=roi or (0.0,) * 2 * cls.SPATIAL,
               layout=layout, method=method, coordinate_transformation_mode=coordinate_transformation_mode,
               rounding_method=rounding_method, cubic_alpha=cubic_alpha, cubic_exclude=cubic_exclude,
               extrapolation_value=extrapolation_value, out_dtype=out_dtype or "")


def _static_values(value, dtype):
    """A python sequence, or the values of a relay Constant; None for another expression."""
    if isinstance(value, Constant):
        return tuple(np.asarray(value.data.numpy(), dtype).reshape(-1).tolist())
    if isinstance(value, Expr):
        return None
    return value


@documented(RESIZE_PARAMETERS, RESIZED)
def resize1d(data, size, roi=None, layout="NCW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """relay.image.resize1d: resample the width of NCW / NWC data to size[0]."""
    return RESIZE1D(data, attrs=_attrs(Resize1DAttrs, _checked_static(size, roi, "resize1d"), roi, layout, method,
                                       coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude,
                                       extrapolation_value, out_dtype))


@documented(RESIZE_PARAMETERS, RESIZED)
def resize3d(data, size, roi=None, layout="NCDHW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """relay.image.resize3d: resample depth, height and width of NCDHW / NDHWC data to size."""
    return RESIZE3D(data, attrs=_attrs(Resize3DAttrs, _checked_static(size, roi, "resize3d"), roi, layout, method,
                                       coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude,
                                       extrapolation_value, out_dtype))


def _checked_static(size, roi, name):
    size_values = _static_values(size, "int64")
    roi_values = _static_values(roi, "float64") if roi is not None else ()
    if size_values is None or roi_values is None:
        raise OpNotImplemented(f"image.{name}: size and roi must be constants (TVM has no dyn.image.{name}); "
                               "use image.resize2d for a size known only at run time")
    return size_values


@documented(RESIZE_PARAMETERS, RESIZED)
def resize2d(data, size, roi=None, layout="NCHW", method="linear", coordinate_transformation_mode="half_pixel",
             rounding_method="", cubic_alpha=-0.5, cubic_exclude=0, extrapolation_value=0.0, out_dtype=None):
    """relay.image.resize2d: resample height and width of NCHW / NHWC data to size; a size or roi
    that is a non-constant Relay expression builds dyn.image.resize2d."""
    size_values = _static_values(size, "int64")
    roi_values = _static_values(roi, "float64") if roi is not None else None
    if size_values is None or (roi is not None and roi_values is None):
        from ..dyn.image import resize2d as dyn_resize2d
        return dyn_resize2d(data, size, roi, layout, method, coordinate_transformation_mode, rounding_method,
                            cubic_alpha, cubic_exclude, extrapolation_value, out_dtype)
    return RESIZE2D(data, attrs=_attrs(Resize2DAttrs, size_values, roi_values, layout, method,
                                       coordinate_transformation_mode, rounding_method, cubic_alpha, cubic_exclude,
                                       extrapolation_value, out_dtype))


__all__ = ["resize1d", "resize2d", "resize3d", "Resize1DAttrs", "Resize2DAttrs", "Resize3DAttrs"]
