"""nn.upsampling (2-D: nearest_neighbor, bilinear, bicubic) and nn.upsampling3d (nearest_neighbor,
trilinear), as TVM v0.18: the output size is round(input size * scale) per axis, and the values
are TVM's resize of the input to that size (topi.nn.upsampling calls image.resize2d/3d).
INJECTIVE. The dyn.nn.upsampling ops (scales given as Relay scalars) reuse this file's compute.

Per axis, output index x reads the input coordinate
  asymmetric:    x * in / out                 (upsampling's align_corners=False)
  align_corners: x * (in - 1) / (out - 1)
  half_pixel:    (x + 0.5) * in / out - 0.5
computed in float32 (float64 for float64 data), as TVM's resize does. nearest_neighbor rounds it
(round half to even under align_corners, else floor(coordinate + 1e-5)); linear mixes the two
neighbours, cubic four (Keys' spline, alpha = -0.5). Neighbour indices are clamped to the input.
Interpolation is separable, so the reference applies one (out x in) weight matrix per axis.
"""
import dataclasses
import math

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs, check_choice
from ...ir.dims import Any, is_any, is_static
from ...ir.shape_math import mul
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from . import _window as Wn

CUBIC_ALPHA = -0.5
NEAREST_EPSILON = 1e-5


@dataclasses.dataclass(frozen=True)
class UpSamplingAttrs(Attrs):
    scale_h: float = 1.0
    scale_w: float = 1.0
    layout: str = "NCHW"
    method: str = "nearest_neighbor"
    align_corners: bool = False

    def __post_init__(self):
        _scales(self, ("scale_h", "scale_w"))
        C.check_layout("nn.upsampling", "layout", self.layout, ("NCHW", "NHWC"))
        check_choice("method", self.method, ("nearest_neighbor", "bilinear", "bicubic"))
        object.__setattr__(self, "align_corners", bool(self.align_corners))


@dataclasses.dataclass(frozen=True)
class UpSampling3DAttrs(Attrs):
    scale_d: float = 1.0
    scale_h: float = 1.0
    scale_w: float = 1.0
    layout: str = "NCDHW"
    method: str = "nearest_neighbor"
    coordinate_transformation_mode: str = "half_pixel"

    def __post_init__(self):
        _scales(self, ("scale_d", "scale_h", "scale_w"))
        C.check_layout("nn.upsampling3d", "layout", self.layout, ("NCDHW", "NDHWC"))
        check_choice("method", self.method, ("nearest_neighbor", "trilinear"))
        check_choice("coordinate_transformation_mode", self.coordinate_transformation_mode,
                     ("half_pixel", "align_corners", "asymmetric"))


def _scales(attrs, names) -> None:
    for name in names:
        value = float(getattr(attrs, name))
        if not math.isfinite(value) or value <= 0:
            raise AttrsError(f"attribute {name}={value} must be a positive finite number")
        object.__setattr__(attrs, name, value)


def interpolation(attrs):
    """(method: nearest | linear | cubic, coordinate transformation mode) of the 2-D (align_corners)
    or 3-D (coordinate_transformation_mode) attrs, static or dyn."""
    method = {"nearest_neighbor": "nearest", "bilinear": "linear", "trilinear": "linear",
              "bicubic": "cubic"}[attrs.method]
    if hasattr(attrs, "align_corners"):
        return method, "align_corners" if attrs.align_corners else "asymmetric"
    return method, attrs.coordinate_transformation_mode


def _scale_list(attrs):
    return [attrs.scale_h, attrs.scale_w] if isinstance(attrs, UpSamplingAttrs) else \
        [attrs.scale_d, attrs.scale_h, attrs.scale_w]


def scaled_dim(d, scale: float):
    """round(d * scale) (half to even); an integer scale keeps a symbolic d symbolic."""
    if is_any(d):
        return Any()
    if is_static(d):
        return int(np.rint(int(d) * scale))
    if float(scale).is_integer():
        return mul(d, int(scale))
    return Any()


def _make_rel(op):
    def rel(arg_types, attrs) -> TensorType:
        """(N, C, *S) -> (N, C, *round(S * scale))."""
        nd = len(attrs.layout) - 2
        data = C.tensor_arg(op, arg_types[0], "data")
        C.expect_rank(op, data, nd + 2, f"data ({attrs.layout})", data=data)
        letters = "NC" + Wn.spatial(nd)
        n, c, *size = Wn.pick(data.shape, attrs.layout, letters)
        out = [scaled_dim(d, s) for d, s in zip(size, _scale_list(attrs))]
        for a, o in enumerate(out):
            if is_static(o) and int(o) < 1:
                raise C.rel_error(op, f"the scales {_scale_list(attrs)} leave an empty axis {Wn.spatial(nd)[a]}",
                                  data=data)
        return TensorType(Wn.place((n, c, *out), letters, attrs.layout), data.dtype)
    return rel


# --- per-axis coordinate and weights (one formula, numpy or tir) -----------------------------------
def _coordinate(x, in_size, out_size, mode, dtype, lib):
    """The input coordinate of output index x (a float of `dtype`)."""
    cast = (lambda v: np.asarray(v, dtype)) if lib is np else (lambda v: v.astype(dtype) if not isinstance(
        v, (int, float)) else T.const(v, dtype))
    xf, inf, outf = cast(x), cast(in_size), cast(out_size)
    if mode == "align_corners":
        if lib is np:
            return (xf * ((inf - cast(1)) / (outf - cast(1)))) if out_size > 1 else xf * cast(0)
        return xf * ((inf - T.const(1, dtype)) / tir.max(outf - T.const(1, dtype), T.const(1, dtype)))
    scale = inf / outf
    if mode == "asymmetric":
        return xf * scale
    half = cast(0.5) if lib is np else T.const(0.5, dtype)
    return (xf + half) * scale - half


def _cubic_weights(t, alpha):
    """Keys' cubic spline weights of the taps at offsets -1, 0, 1, 2 for fraction t."""
    t2, t3 = t * t, t * t * t
    return [alpha * (t3 - 2 * t2 + t),
            (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
            -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t,
            -alpha * t3 + alpha * t2]


def axis_matrix(in_size: int, out_size: int, method: str, mode: str, dtype: str) -> np.ndarray:
    """The (out, in) float64 interpolation weights along one axis (clamped neighbours)."""
    x = np.arange(out_size)
    coord = _coordinate(x, in_size, out_size, mode, dtype, np)
    m = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    if method == "nearest":
        idx = np.rint(coord) if mode == "align_corners" else np.floor(coord + np.asarray(NEAREST_EPSILON, dtype))
        np.add.at(m, (rows, np.clip(idx.astype(np.int64), 0, in_size - 1)), 1.0)
        return m
    base = np.floor(coord)
    t = (coord - base).astype("float64")
    if method == "linear":
        taps = [(0, 1 - t), (1, t)]
    else:
        taps = list(zip((-1, 0, 1, 2), _cubic_weights(t, CUBIC_ALPHA)))
    for offset, weight in taps:
        np.add.at(m, (rows, np.clip(base.astype(np.int64) + offset, 0, in_size - 1)), weight)
    return m


def _axis_taps(x, in_size, out_size, method: str, mode: str, dtype: str):
    """[(clamped input index, weight)] of output index x along one axis, as tir expressions."""
    coord = _coordinate(x, in_size, out_size, mode, dtype, tir)

    def clamp(i):
        return tir.max(tir.min(i, in_size - 1), 0)
    if method == "nearest":
        idx = te.round(coord) if mode == "align_corners" else te.floor(coord + T.const(NEAREST_EPSILON, dtype))
        return [(clamp(idx.astype("int32")), None)]
    base = te.floor(coord)
    t = coord - base
    base = base.astype("int32")
    one = T.const(1, dtype)
    if method == "linear":
        return [(clamp(base), one - t), (clamp(base + 1), t)]
    alpha = T.const(CUBIC_ALPHA, dtype)
    weights = _cubic_weights(t, alpha)
    return [(clamp(base + k), w) for k, w in zip((-1, 0, 1, 2), weights)]


def compute_dtype(dtype: str) -> str:
    return "float64" if dtype == "float64" else "float32"


def upsampling_ref(data, attrs, out_sizes):
    """The input resized to `out_sizes` (spatial, in NC + spatial order)."""
    nd = len(attrs.layout) - 2
    letters = "NC" + Wn.spatial(nd)
    method, mode = interpolation(attrs)
    res = Wn.to_channel_first(data, attrs.layout, letters).astype("float64")
    for a, out in enumerate(out_sizes):
        m = axis_matrix(res.shape[2 + a], out, method, mode, compute_dtype(str(data.dtype)))
        res = np.moveaxis(np.tensordot(m, np.moveaxis(res, 2 + a, 0), axes=1), 0, 2 + a)
    if data.dtype.kind != "f":
        res = np.trunc(res)
    return Wn.from_channel_first(res.astype(data.dtype), letters, attrs.layout)


def _ref(data, attrs):
    nd = len(attrs.layout) - 2
    size = Wn.pick(data.shape, attrs.layout, "NC" + Wn.spatial(nd))[2:]
    return upsampling_ref(data, attrs, [scaled_dim(d, s) for d, s in zip(size, _scale_list(attrs))])


def upsampling_compute(attrs, inputs, out_type, tag: str):
    """Sum over the clamped neighbour taps of weight products x input (float32 math, float64
    for float64 data), cast to the data's dtype. Any output dim is bound from the output."""
    data = inputs[0]
    nd = len(attrs.layout) - 2
    letters = "NC" + Wn.spatial(nd)
    method, mode = interpolation(attrs)
    cdtype = compute_dtype(data.dtype)
    size = Wn.pick(T.dims(data), attrs.layout, letters)[2:]
    oshape = [te.var(f"out_dim{k}") if is_any(d) else T.dim(d) for k, d in enumerate(out_type.shape)]
    out_sizes = Wn.pick(oshape, attrs.layout, letters)[2:]

    def f(*index):
        b, ch, *pos = Wn.pick(index, attrs.layout, letters)
        per_axis = [_axis_taps(p, s, o, method, mode, cdtype) for p, s, o in zip(pos, size, out_sizes)]
        total = None
        for combo in _product(per_axis):
            value = data[Wn.place((b, ch, *[i for i, _ in combo]), letters, attrs.layout)]
            if method == "nearest":
                return value
            term = value.astype(cdtype)
            for _, w in combo:
                term = term * w
            total = term if total is None else total + term
        return total.astype(data.dtype)
    return [te.compute(oshape, f, name="upsampling", tag=tag)]


def _product(lists):
    out = [[]]
    for options in lists:
        out = [prefix + [o] for prefix in out for o in options]
    return out


def _samples2d(rng):
    A = UpSamplingAttrs
    return [Sample([S.rand(rng, (1, 2, 3, 4))], A(2, 2)),
            Sample([S.rand(rng, (1, 2, 3, 4))], A(2, 1.5, method="bilinear"), "bilinear, asymmetric"),
            Sample([S.rand(rng, (1, 3, 4, 2), "float64")], A(1.5, 3, "NHWC", "bilinear", True), "align_corners, NHWC"),
            Sample([S.rand(rng, (1, 1, 4, 5))], A(2, 2, method="bicubic"), "bicubic"),
            Sample([S.rand(rng, (1, 1, 3, 3), "float64")], A(2.5, 2, method="nearest_neighbor", align_corners=True)),
            Sample([S.rand(rng, (1, 2, 2, 3), "int32", -9, 9)], A(3, 2), "nearest on integers")]


def _samples3d(rng):
    A = UpSampling3DAttrs
    return [Sample([S.rand(rng, (1, 2, 2, 3, 2))], A(2, 2, 2)),
            Sample([S.rand(rng, (1, 1, 2, 3, 3))], A(2, 1.5, 2, method="trilinear"), "trilinear, half_pixel"),
            Sample([S.rand(rng, (1, 2, 3, 2, 2), "float64")], A(2, 2, 1, "NDHWC", "trilinear", "align_corners")),
            Sample([S.rand(rng, (1, 1, 2, 2, 3))], A(1, 2, 2, coordinate_transformation_mode="asymmetric"))]


UPSAMPLING = defop("nn.upsampling", inputs=("data",), attrs=UpSamplingAttrs, rel=_make_rel("nn.upsampling"),
                   pattern=OpPattern.INJECTIVE, ref=_ref, samples=_samples2d, level=2,
                   compute=lambda attrs, inputs, out_type: upsampling_compute(attrs, inputs, out_type, UPSAMPLING.tag),
                   doc="data resized to round(H * scale_h) x round(W * scale_w) (nearest, bilinear or bicubic)")
UPSAMPLING3D = defop("nn.upsampling3d", inputs=("data",), attrs=UpSampling3DAttrs, rel=_make_rel("nn.upsampling3d"),
                     pattern=OpPattern.INJECTIVE, ref=_ref, samples=_samples3d, level=2,
                     compute=lambda attrs, inputs, out_type: upsampling_compute(attrs, inputs, out_type,
                                                                                UPSAMPLING3D.tag),
                     doc="data resized to round(D * scale_d) x round(H * scale_h) x round(W * scale_w)")


def upsampling(data, scale_h=1, scale_w=1, layout="NCHW", method="nearest_neighbor", align_corners=False):
    """relay.nn.upsampling: resize H and W by scale_h and scale_w. A scale given as a
    non-constant Relay expression builds dyn.nn.upsampling, as TVM does.

    Parameters
    ----------
    data : relay.Expr
        The input tensor, in `layout`.
    scale_h : float or relay.Expr, optional
        The factor of the height: the result is round(H * scale_h) high. Defaults to 1.
    scale_w : float or relay.Expr, optional
        The factor of the width. Defaults to 1.
    layout : str, optional
        The layout of `data`, "NCHW" or "NHWC". Defaults to "NCHW".
    method : str, optional
        The interpolation: "nearest_neighbor", "bilinear" or "bicubic". Defaults to
        "nearest_neighbor".
    align_corners : bool, optional
        If True, the corner cells of input and output line up; if False, output cell x reads
        input coordinate x * in / out. Defaults to False.

    Returns
    -------
    result : relay.Expr
        The resized tensor.
    """
    from ...ir.expr import Constant, Expr, const
    scale_h, scale_w = (s.data.numpy().item() if isinstance(s, Constant) else s for s in (scale_h, scale_w))
    if isinstance(scale_h, Expr) or isinstance(scale_w, Expr):
        from ..dyn import nn_upsampling     # the dyn ops build on this module's ops
        scale_h, scale_w = (s if isinstance(s, Expr) else const(float(s), "float64") for s in (scale_h, scale_w))
        return nn_upsampling.upsampling(data, scale_h, scale_w, layout, method, align_corners)
    return UPSAMPLING(data, attrs=UpSamplingAttrs(scale_h, scale_w, layout, method, align_corners))


def upsampling3d(data, scale_d=1, scale_h=1, scale_w=1, layout="NCDHW", method="nearest_neighbor",
                 coordinate_transformation_mode="half_pixel"):
    """relay.nn.upsampling3d: resize D, H and W by their scales. A scale given as a non-constant
    Relay expression builds dyn.nn.upsampling3d, as TVM does.

    Parameters
    ----------
    data : relay.Expr
        The input tensor, in `layout`.
    scale_d, scale_h, scale_w : float or relay.Expr, optional
        The factors of the depth, height and width: an axis of length L becomes round(L *
        scale). Each defaults to 1.
    layout : str, optional
        The layout of `data`, "NCDHW" or "NDHWC". Defaults to "NCDHW".
    method : str, optional
        The interpolation: "nearest_neighbor" or "trilinear". Defaults to "nearest_neighbor".
    coordinate_transformation_mode : str, optional
        How an output index maps to an input coordinate: "half_pixel", "align_corners" or
        "asymmetric". Defaults to "half_pixel".

    Returns
    -------
    result : relay.Expr
        The resized tensor.
    """
    from ...ir.expr import Constant, Expr, const
    scales = [s.data.numpy().item() if isinstance(s, Constant) else s for s in (scale_d, scale_h, scale_w)]
    if any(isinstance(s, Expr) for s in scales):
        from ..dyn import nn_upsampling     # the dyn ops build on this module's ops
        scales = [s if isinstance(s, Expr) else const(float(s), "float64") for s in scales]
        return nn_upsampling.upsampling3d(data, *scales, layout, method, coordinate_transformation_mode)
    return UPSAMPLING3D(data, attrs=UpSampling3DAttrs(*scales, layout, method, coordinate_transformation_mode))


__all__ = ["upsampling", "upsampling3d", "UpSamplingAttrs", "UpSampling3DAttrs"]
