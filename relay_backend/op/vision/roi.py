"""vision.roi_align and vision.roi_pool (TVM v0.18's ops): pool each region of interest
(rois (R, 5): batch index, x1, y1, x2, y2 in image coordinates, times spatial_scale for the
feature map) to pooled_size, NCHW or NHWC. te.extern kernels (OPAQUE): the number of samples per
bin depends on each roi's size.

roi_align: a bin of the roi is sampled on a sample_ratio x sample_ratio grid (or
ceil(roi side / pooled side) points per side when sample_ratio <= 0) by bilinear interpolation
(0 for a point more than one pixel outside the map); mode avg averages the samples, max takes the
largest (TVM's). TVM forces a roi of at least 1 x 1; `aligned` (relay_backend's attr, torchvision's
and ONNX's half_pixel) shifts the roi by -0.5 pixel and keeps its true size instead.
roi_pool: the roi's corners rounded to the feature grid, each bin the max over its cells (0 for an
empty bin). A batch index outside the data reads the nearest image (clamped).
"""
import dataclasses
import math

import numpy as np

from ... import te, tir
from ...ir.attrs import Attrs, check_choice
from ...ir.types import TensorType
from ...tir import ir_builder
from .. import samples as S
from ..nn import _common as C
from ..nn import _te as T
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..tensor import real_attr
from . import ir_common as R


def _layout_axes(layout):
    return layout.index("C"), layout.index("H"), layout.index("W")


def _roi_rel(op):
    def rel(arg_types, attrs):
        data = C.tensor_arg(op, arg_types[0], "data")
        rois = C.tensor_arg(op, arg_types[1], "rois")
        C.expect_rank(op, data, 4, f"data ({attrs.layout})", data=data, rois=rois)
        if rois.ndim != 2 or not C.dim_matches(rois.shape[1], 5) or not rois.dtype.startswith("float"):
            raise C.rel_error(op, "rois must be a float tensor (num_rois, 5): batch index, x1, y1, x2, y2",
                              data=data, rois=rois)
        c = data.shape[attrs.layout.index("C")]
        ph, pw = attrs.pooled_size
        shape = (rois.shape[0], c, ph, pw) if attrs.layout == "NCHW" else (rois.shape[0], ph, pw, c)
        return TensorType(shape, data.dtype)
    return rel


def _kernel_dims(attrs, data, rois):
    """((C, H, W axes of the layout), (N, C, H, W), (rois, pooled h, pooled w), float type)."""
    axes = _layout_axes(attrs.layout)
    dims = T.dims(data)
    sizes = (dims[0],) + tuple(dims[a] for a in axes)
    return axes, sizes, (T.dims(rois)[0],) + attrs.pooled_size, R.compute_dtype(data.dtype)


def _pooled(value):
    return C.ints(value, 2, "pooled_size", minimum=1)


@dataclasses.dataclass(frozen=True)
class ROIAlignAttrs(Attrs):
    pooled_size: tuple = (1, 1)
    spatial_scale: float = 1.0
    sample_ratio: int = -1
    layout: str = "NCHW"
    mode: str = "avg"
    aligned: bool = False

    def __post_init__(self):
        object.__setattr__(self, "pooled_size", _pooled(self.pooled_size))
        object.__setattr__(self, "spatial_scale", real_attr("vision.roi_align", "spatial_scale", self.spatial_scale))
        object.__setattr__(self, "sample_ratio", int(self.sample_ratio))
        object.__setattr__(self, "aligned", bool(self.aligned))
        mode = self.mode.decode() if isinstance(self.mode, bytes) else self.mode
        object.__setattr__(self, "mode", mode)
        check_choice("mode", mode, ("avg", "max"))
        C.check_layout("ROIAlignAttrs", "layout", self.layout, ("NCHW", "NHWC"))


def _np_bilinear(img, y, x):
    """img (C, H, W) at (y, x), 0 outside [-1, H] x [-1, W] (TVM's / ONNX's rule)."""
    h, w = img.shape[1:]
    if y < -1.0 or x < -1.0 or y > h or x > w:
        return np.zeros(img.shape[0], img.dtype)
    y, x = min(max(y, 0.0), h - 1.0), min(max(x, 0.0), w - 1.0)
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[:, y0, x0] + (1 - ly) * lx * img[:, y0, x1]
            + ly * (1 - lx) * img[:, y1, x0] + ly * lx * img[:, y1, x1])


def _roi_geometry(roi, attrs, ft):
    """(start_h, start_w, bin_h, bin_w, grid_h, grid_w) of one roi (numpy, dtype ft)."""
    scale, shift = ft(attrs.spatial_scale), ft(0.5 if attrs.aligned else 0.0)
    x1, y1, x2, y2 = (ft(v) * scale - shift for v in roi[1:5])
    roi_h, roi_w = y2 - y1, x2 - x1
    if not attrs.aligned:
        roi_h, roi_w = max(roi_h, ft(1)), max(roi_w, ft(1))
    ph, pw = attrs.pooled_size
    bin_h, bin_w = roi_h / ft(ph), roi_w / ft(pw)
    if attrs.sample_ratio > 0:
        grid_h = grid_w = attrs.sample_ratio
    else:
        grid_h, grid_w = int(math.ceil(roi_h / ft(ph))), int(math.ceil(roi_w / ft(pw)))
    return y1, x1, bin_h, bin_w, grid_h, grid_w


def _roi_align_ref(data, rois, attrs):
    ft = np.dtype(R.compute_dtype(str(data.dtype))).type
    ci, hi, wi = _layout_axes(attrs.layout)
    x = np.transpose(data, (0, ci, hi, wi)).astype(ft)
    ph, pw = attrs.pooled_size
    out = np.zeros((rois.shape[0], x.shape[1], ph, pw), ft)
    for r, roi in enumerate(rois):
        img = x[int(np.clip(int(roi[0]), 0, max(x.shape[0] - 1, 0)))]
        y1, x1, bin_h, bin_w, gh, gw = _roi_geometry(roi, attrs, ft)
        for p, q in np.ndindex(ph, pw):
            vals = [_np_bilinear(img, y1 + ft(p) * bin_h + (ft(a) + ft(0.5)) * bin_h / ft(gh),
                                 x1 + ft(q) * bin_w + (ft(b) + ft(0.5)) * bin_w / ft(gw))
                    for a in range(gh) for b in range(gw)]
            if not vals:
                continue
            out[r, :, p, q] = np.max(vals, axis=0) if attrs.mode == "max" else np.sum(vals, axis=0) / ft(gh * gw)
    order = [attrs.layout.index(c) for c in "NCHW"]
    return np.transpose(out, np.argsort(order)).astype(data.dtype)


def _te_bilinear(load, y, x, h, w, ft):
    """load(yi, xi) interpolated at (y, x), 0 outside [-1, h] x [-1, w] (tir)."""
    zero = tir.const(0.0, ft)
    outside = tir.Or(tir.Or(y < -1.0, x < -1.0), tir.Or(y > tir.const(float(h), ft) if isinstance(h, int)
                                                        else y > h.astype(ft),
                                                        x > tir.const(float(w), ft) if isinstance(w, int)
                                                        else x > w.astype(ft)))
    hf = tir.const(float(h - 1), ft) if isinstance(h, int) else (h - 1).astype(ft)
    wf = tir.const(float(w - 1), ft) if isinstance(w, int) else (w - 1).astype(ft)
    yc, xc = tir.min(tir.max(y, zero), hf), tir.min(tir.max(x, zero), wf)
    y0, x0 = te.floor(yc).astype("int32"), te.floor(xc).astype("int32")
    y1, x1 = tir.min(y0 + 1, h - 1), tir.min(x0 + 1, w - 1)
    ly, lx = yc - y0.astype(ft), xc - x0.astype(ft)
    one = tir.const(1.0, ft)
    value = ((one - ly) * (one - lx) * load(y0, x0) + (one - ly) * lx * load(y0, x1)
             + ly * (one - lx) * load(y1, x0) + ly * lx * load(y1, x1))
    return te.if_then_else(outside, zero, value)


def _roi_align_compute(attrs, inputs, out_type):
    data, rois = inputs
    (ci, hi, wi), (n, c, h, w), (num, ph, pw), ft = _kernel_dims(attrs, data, rois)

    def body(ins, outs):
        ib = ir_builder.create()
        x, roi, out = ib.buffer_ptr(ins[0]), ib.buffer_ptr(ins[1]), ib.buffer_ptr(outs[0])
        geo = ib.allocate(ft, (4,), name="geometry")     # y1, x1, bin_h, bin_w
        grid = ib.allocate("int32", (2,), name="grid")
        acc = ib.allocate(ft, (1,), name="acc")
        scale, shift = tir.const(attrs.spatial_scale, ft), tir.const(0.5 if attrs.aligned else 0.0, ft)
        with ib.for_range(0, num, name="r") as r:
            img = R.clamp(roi[r, 0].astype("int32"), 0, n - 1)
            x1, y1, x2, y2 = (roi[r, k].astype(ft) * scale - shift for k in range(1, 5))
            roi_h, roi_w = y2 - y1, x2 - x1
            if not attrs.aligned:
                roi_h, roi_w = tir.max(roi_h, tir.const(1.0, ft)), tir.max(roi_w, tir.const(1.0, ft))
            geo[0], geo[1] = y1, x1
            geo[2], geo[3] = roi_h / tir.const(float(ph), ft), roi_w / tir.const(float(pw), ft)
            if attrs.sample_ratio > 0:
                grid[0], grid[1] = attrs.sample_ratio, attrs.sample_ratio
            else:
                grid[0] = te.ceil(roi_h / tir.const(float(ph), ft)).astype("int32")
                grid[1] = te.ceil(roi_w / tir.const(float(pw), ft)).astype("int32")
            with ib.for_range(0, c, name="ch") as ch:
                def load(yi, xi, ch=ch):
                    index = [img, None, None, None]
                    index[ci], index[hi], index[wi] = ch, yi, xi
                    return x[tuple(index)].astype(ft)
                with ib.for_range(0, ph, name="p") as p:
                    with ib.for_range(0, pw, name="q") as q:
                        acc[0] = tir.const(0.0, ft)
                        with ib.for_range(0, grid[0], name="a") as a:
                            with ib.for_range(0, grid[1], name="b") as b:
                                yy = geo[0] + p.astype(ft) * geo[2] + \
                                    (a.astype(ft) + 0.5) * geo[2] / grid[0].astype(ft)
                                xx = geo[1] + q.astype(ft) * geo[3] + \
                                    (b.astype(ft) + 0.5) * geo[3] / grid[1].astype(ft)
                                v = _te_bilinear(load, yy, xx, h, w, ft)
                                if attrs.mode == "max":
                                    acc[0] = te.if_then_else(tir.And(a == 0, b == 0), v, tir.max(acc[0], v))
                                else:
                                    acc[0] = acc[0] + v
                        index = [r, None, None, None]
                        index[ci], index[hi], index[wi] = ch, p, q
                        total = (grid[0] * grid[1]).astype(ft)
                        value = acc[0] if attrs.mode == "max" else \
                            te.if_then_else(total > 0.0, acc[0] / tir.max(total, tir.const(1.0, ft)), acc[0])
                        out[tuple(index)] = value.astype(data.dtype)
        return ib.get()
    return [te.extern(list(out_type.shape), [data, rois], body, name="roi_align", dtype=data.dtype)]


def _rois(rng, n, batch, h, w, dtype="float32"):
    corner = rng.uniform(-2, [w - 1, h - 1], (n, 2))
    size = rng.uniform(0.3, [w, h], (n, 2))
    return np.concatenate([rng.integers(0, batch, (n, 1)), corner, corner + size], axis=1).astype(dtype)


def _roi_align_samples(rng):
    A = ROIAlignAttrs
    return [Sample([S.rand(rng, (2, 3, 6, 7)), _rois(rng, 4, 2, 6, 7)], A((2, 3), 1.0, 2)),
            Sample([S.rand(rng, (1, 5, 6, 2)), _rois(rng, 3, 1, 10, 12) * np.array([1, 2, 2, 2, 2], "float32")],
                   A((3, 2), 0.5, -1, "NHWC", "max")),
            Sample([S.rand(rng, (2, 2, 5, 5), "float64"), _rois(rng, 3, 3, 5, 5, "float64")],
                   A((2, 2), 1.0, 0, "NCHW", "avg", aligned=True)),
            Sample([S.rand(rng, (1, 1, 4, 4)), np.zeros((0, 5), "float32")], A((2, 2), 1.0))]


ROI_ALIGN = defop("vision.roi_align", inputs=("data", "rois"), attrs=ROIAlignAttrs, rel=_roi_rel("vision.roi_align"),
                  pattern=OpPattern.OPAQUE, ref=_roi_align_ref, compute=_roi_align_compute, level=5,
                  samples=_roi_align_samples, doc="bilinear pooling of regions of interest to a fixed size")


# --- roi_pool ------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ROIPoolAttrs(Attrs):
    pooled_size: tuple = (1, 1)
    spatial_scale: float = 1.0
    layout: str = "NCHW"

    def __post_init__(self):
        object.__setattr__(self, "pooled_size", _pooled(self.pooled_size))
        object.__setattr__(self, "spatial_scale", real_attr("vision.roi_pool", "spatial_scale", self.spatial_scale))
        C.check_layout("ROIPoolAttrs", "layout", self.layout, ("NCHW", "NHWC"))


def _np_pool_bins(roi, attrs, h, w, ft):
    """[(h0, h1, w0, w1)] per bin (p, q) of one roi, as TVM's roi_pool computes them."""
    scale = ft(attrs.spatial_scale)
    x1, y1, x2, y2 = (int(np.round(ft(v) * scale)) for v in roi[1:5])
    roi_h, roi_w = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
    ph, pw = attrs.pooled_size
    bin_h, bin_w = ft(roi_h) / ft(ph), ft(roi_w) / ft(pw)
    bins = {}
    for p, q in np.ndindex(ph, pw):
        h0 = min(max(int(np.floor(ft(p) * bin_h)) + y1, 0), h)
        h1 = min(max(int(np.ceil(ft(p + 1) * bin_h)) + y1, 0), h)
        w0 = min(max(int(np.floor(ft(q) * bin_w)) + x1, 0), w)
        w1 = min(max(int(np.ceil(ft(q + 1) * bin_w)) + x1, 0), w)
        bins[p, q] = (h0, h1, w0, w1)
    return bins


def _roi_pool_ref(data, rois, attrs):
    ft = np.dtype(R.compute_dtype(str(data.dtype))).type
    ci, hi, wi = _layout_axes(attrs.layout)
    x = np.transpose(data, (0, ci, hi, wi))
    h, w = x.shape[2:]
    ph, pw = attrs.pooled_size
    out = np.zeros((rois.shape[0], x.shape[1], ph, pw), data.dtype)
    for r, roi in enumerate(rois):
        img = x[int(np.clip(int(roi[0]), 0, max(x.shape[0] - 1, 0)))]
        for (p, q), (h0, h1, w0, w1) in _np_pool_bins(roi, attrs, h, w, ft).items():
            if h0 < h1 and w0 < w1:
                out[r, :, p, q] = img[:, h0:h1, w0:w1].max(axis=(1, 2))
    order = [attrs.layout.index(c) for c in "NCHW"]
    return np.transpose(out, np.argsort(order))


def _roi_pool_compute(attrs, inputs, out_type):
    data, rois = inputs
    (ci, hi, wi), (n, c, h, w), (num, ph, pw), ft = _kernel_dims(attrs, data, rois)

    def body(ins, outs):
        ib = ir_builder.create()
        x, roi, out = ib.buffer_ptr(ins[0]), ib.buffer_ptr(ins[1]), ib.buffer_ptr(outs[0])
        corner = ib.allocate("int32", (2,), name="corner")   # y1, x1
        size = ib.allocate(ft, (2,), name="bin")             # bin_h, bin_w
        span = ib.allocate("int32", (4,), name="span")
        acc = ib.allocate(data.dtype, (1,), name="acc")
        scale = tir.const(attrs.spatial_scale, ft)
        with ib.for_range(0, num, name="r") as r:
            img = R.clamp(roi[r, 0].astype("int32"), 0, n - 1)
            x1, y1, x2, y2 = (te.round(roi[r, k].astype(ft) * scale).astype("int32") for k in range(1, 5))
            corner[0], corner[1] = y1, x1
            size[0] = tir.max(y2 - y1 + 1, 1).astype(ft) / tir.const(float(ph), ft)
            size[1] = tir.max(x2 - x1 + 1, 1).astype(ft) / tir.const(float(pw), ft)
            with ib.for_range(0, ph, name="p") as p:
                with ib.for_range(0, pw, name="q") as q:
                    span[0] = R.clamp(te.floor(p.astype(ft) * size[0]).astype("int32") + corner[0], 0, h)
                    span[1] = R.clamp(te.ceil((p + 1).astype(ft) * size[0]).astype("int32") + corner[0], 0, h)
                    span[2] = R.clamp(te.floor(q.astype(ft) * size[1]).astype("int32") + corner[1], 0, w)
                    span[3] = R.clamp(te.ceil((q + 1).astype(ft) * size[1]).astype("int32") + corner[1], 0, w)
                    with ib.for_range(0, c, name="ch") as ch:
                        acc[0] = tir.const(0, data.dtype) if not data.dtype.startswith("float") else \
                            tir.const(0.0, data.dtype)
                        with ib.for_range(0, span[1] - span[0], name="a") as a:
                            with ib.for_range(0, span[3] - span[2], name="b") as b:
                                index = [img, None, None, None]
                                index[ci], index[hi], index[wi] = ch, span[0] + a, span[2] + b
                                v = x[tuple(index)]
                                acc[0] = te.if_then_else(tir.And(a == 0, b == 0), v, tir.max(acc[0], v))
                        index = [r, None, None, None]
                        index[ci], index[hi], index[wi] = ch, p, q
                        out[tuple(index)] = acc[0]
        return ib.get()
    return [te.extern(list(out_type.shape), [data, rois], body, name="roi_pool", dtype=data.dtype)]


def _roi_pool_samples(rng):
    A = ROIPoolAttrs
    return [Sample([S.rand(rng, (2, 3, 6, 7)), _rois(rng, 4, 2, 6, 7)], A((2, 3), 1.0)),
            Sample([S.rand(rng, (1, 5, 6, 2), "float64"), _rois(rng, 3, 1, 12, 10, "float64")],
                   A((3, 2), 0.5, "NHWC")),
            Sample([S.rand(rng, (1, 2, 4, 4)), np.array([[0, -9, -9, -5, -5], [0, 1, 1, 1, 1]], "float32")],
                   A((2, 2), 1.0))]


ROI_POOL = defop("vision.roi_pool", inputs=("data", "rois"), attrs=ROIPoolAttrs, rel=_roi_rel("vision.roi_pool"),
                 pattern=OpPattern.OPAQUE, ref=_roi_pool_ref, compute=_roi_pool_compute, level=5,
                 samples=_roi_pool_samples, doc="max pooling of regions of interest to a fixed size")


# The parameters roi_align and roi_pool share (constructor_docs completes their docstrings).
ROI_PARAMETERS = {
    "data": ("relay.Expr", "The feature map, 4-D in `layout`."),
    "rois": ("relay.Expr", "The regions of interest, a float tensor (num_rois, 5): each row the index of "
                           "its image in `data`, then its corners (x1, y1, x2, y2) in image coordinates."),
    "pooled_size": ("int or tuple of int", "The (height, width) every region is pooled to."),
    "spatial_scale": ("float", "The factor that maps image coordinates to feature map coordinates (1 / the "
                               "feature stride)."),
    "layout": ("str", 'The layout of `data` and of the result, "NCHW" or "NHWC".'),
}
POOLED_REGIONS = ("result", "relay.Expr", "The pooled regions, (num_rois, channels, pooled height, pooled "
                                          "width) in `layout`'s order.")


@documented(ROI_PARAMETERS, POOLED_REGIONS)
def roi_align(data, rois, pooled_size, spatial_scale, sample_ratio=-1, layout="NCHW", mode="avg", aligned=False):
    """relay.vision.roi_align (see the module doc).

    Parameters
    ----------
    sample_ratio : int, optional
        The number of sample points per bin along each axis; a value <= 0 takes
        ceil(region side / pooled side) for each region. Defaults to -1.
    mode : str, optional
        How the samples of a bin combine: "avg" averages them, "max" takes the largest. Defaults
        to 'avg'.
    aligned : bool, optional
        If True, the region is shifted by half a pixel so its corners fall between pixels
        (torchvision's and ONNX's half_pixel), and keeps its true size; if False, a region is at
        least 1 x 1. Defaults to False.
    """
    return ROI_ALIGN(data, rois, attrs=ROIAlignAttrs(pooled_size, spatial_scale, sample_ratio, layout, mode, aligned))


@documented(ROI_PARAMETERS, POOLED_REGIONS)
def roi_pool(data, rois, pooled_size, spatial_scale, layout="NCHW"):
    """relay.vision.roi_pool (see the module doc): each bin the maximum over the feature cells it
    covers once the region's corners are rounded to the cells."""
    return ROI_POOL(data, rois, attrs=ROIPoolAttrs(pooled_size, spatial_scale, layout))


__all__ = ["roi_align", "roi_pool", "ROIAlignAttrs", "ROIPoolAttrs"]
