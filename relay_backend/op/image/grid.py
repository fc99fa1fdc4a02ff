"""image.affine_grid and image.grid_sample (TVM v0.18's ops; spatial transformer networks,
PyTorch's F.affine_grid / F.grid_sample, ONNX GridSample). Both INJECTIVE.

affine_grid: a (B, 2, 3) affine matrix -> a (B, 2, H, W) grid of normalized source points
(x first), the target pixels spread over [-1, 1] with TVM's step (2 - 1e-7) / (len - 1).

grid_sample: data NCHW with a (B, 2, OH, OW) grid (or NCDHW with (B, 3, OD, OH, OW)), channel 0
of the grid the x (width) coordinate. A grid value g maps to (g + 1) * (size - 1) / 2 with
align_corners, else (g + 1) * size / 2 - 0.5; padding_mode zeros reads 0 outside the data,
border clamps the coordinate, reflection mirrors it about the edges (PyTorch's rule) then clamps.
Methods nearest (half to even), bilinear and, in 2-D, bicubic (A = -0.75, clamping or mirroring
each tap). The arithmetic is float32 (float64 for float64 grids).
"""
import dataclasses
import itertools

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs, always_printed, check_choice
from ...ir.types import TensorType
from .. import samples as S
from ..nn import _common as C
from ..nn import _te as T
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import interp

BICUBIC_A = -0.75


# --- affine_grid --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class AffineGridAttrs(Attrs):
    target_shape: tuple = always_printed((2, 2))

    def __post_init__(self):
        shape = C.ints(self.target_shape, 2, "target_shape")
        if min(shape) < 2:
            raise AttrsError(f"image.affine_grid: target_shape={shape} must be at least 2 in both dims "
                             "(the grid spans [-1, 1] from the first to the last point)")
        object.__setattr__(self, "target_shape", shape)


def _affine_rel(arg_types, attrs) -> TensorType:
    op = "image.affine_grid"
    data = C.tensor_arg(op, arg_types[0], "data")
    if data.ndim != 3 or not (C.dim_matches(data.shape[1], 2) and C.dim_matches(data.shape[2], 3)):
        raise C.rel_error(op, "data must be a (batch, 2, 3) affine matrix", data=data)
    return TensorType((data.shape[0], 2) + attrs.target_shape, data.dtype)


def _steps(attrs, dtype):
    return [np.dtype(dtype).type((2.0 - 1e-7) / (n - 1)) for n in attrs.target_shape]


def _affine_ref(data, attrs):
    ft = data.dtype.type
    y_step, x_step = _steps(attrs, data.dtype)
    h, w = attrs.target_shape
    y = ft(-1.0) + np.arange(h).astype(data.dtype) * y_step
    x = ft(-1.0) + np.arange(w).astype(data.dtype) * x_step
    m = data[:, :, :, None, None]
    return (m[:, :, 0] * x[None, None, None, :] + m[:, :, 1] * y[None, None, :, None] + m[:, :, 2]).astype(data.dtype)


def _affine_compute(attrs, inputs, out_type):
    data, = inputs
    dtype = data.dtype
    y_step, x_step = (tir.const(float(s), dtype) for s in _steps(attrs, dtype))
    start = tir.const(-1.0, dtype)

    def f(n, d, i, j):
        y = start + i.astype(dtype) * y_step
        x = start + j.astype(dtype) * x_step
        return data[n, d, 0] * x + data[n, d, 1] * y + data[n, d, 2]
    return [te.compute(list(out_type.shape), f, name="affine_grid", tag="injective")]


AFFINE_GRID = defop("image.affine_grid", inputs=("data",), attrs=AffineGridAttrs, rel=_affine_rel,
                    pattern=OpPattern.INJECTIVE, ref=_affine_ref, compute=_affine_compute, level=5,
                    samples=lambda rng: [Sample([S.rand(rng, (2, 2, 3))], AffineGridAttrs((4, 5))),
                                         Sample([S.rand(rng, (1, 2, 3), "float64")], AffineGridAttrs((3, 2)))],
                    doc="the sampling grid of an affine transform, normalized to [-1, 1]")


def affine_grid(data, target_shape=None):
    """relay.image.affine_grid: (B, 2, 3) affine matrices -> (B, 2, H, W) sampling grids.

    Parameters
    ----------
    data : relay.Expr
        The affine transforms, (batch, 2, 3): each maps a target point (x, y, 1) to the source point
        it reads.
    target_shape : tuple of int
        The (height, width) of the grid, each at least 2; the target points spread evenly over
        [-1, 1] along each. It must be given: the default None only keeps TVM's signature.

    Returns
    -------
    result : relay.Expr
        The grid, (batch, 2, height, width): channel 0 the x and channel 1 the y of each source
        point, normalized to [-1, 1], ready for grid_sample.
    """
    if target_shape is None or isinstance(target_shape, (str, bytes)) or not hasattr(target_shape, "__iter__"):
        raise AttrsError(f"image.affine_grid: target_shape must be the grid's (height, width), got "
                         f"{target_shape!r}; pass e.g. target_shape=(16, 16)")
    return AFFINE_GRID(data, attrs=AffineGridAttrs(tuple(target_shape)))


# --- grid_sample -----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class GridSampleAttrs(Attrs):
    method: str = "bilinear"
    layout: str = "NCHW"
    padding_mode: str = "zeros"
    align_corners: bool = True

    def __post_init__(self):
        check_choice("method", self.method, ("nearest", "bilinear", "bicubic"))
        C.check_layout("GridSampleAttrs", "layout", self.layout, ("NCHW", "NCDHW"))
        check_choice("padding_mode", self.padding_mode, ("zeros", "border", "reflection"))
        if self.method == "bicubic" and self.layout == "NCDHW":
            raise AttrsError("image.grid_sample: bicubic is 2-D only (NCHW); use nearest or bilinear for NCDHW")
        object.__setattr__(self, "align_corners", bool(self.align_corners))


def _sample_rel(arg_types, attrs) -> TensorType:
    op = "image.grid_sample"
    data = C.tensor_arg(op, arg_types[0], "data")
    grid = C.tensor_arg(op, arg_types[1], "grid")
    k = len(attrs.layout) - 2
    types = dict(data=data, grid=grid)
    C.expect_rank(op, data, k + 2, f"data ({attrs.layout})", **types)
    C.expect_rank(op, grid, k + 2, "grid", **types)
    if not (C.dim_matches(grid.shape[0], data.shape[0]) and C.dim_matches(grid.shape[1], k)):
        raise C.rel_error(op, f"grid must have shape (batch, {k}, out spatial dims...)", **types)
    if not grid.dtype.startswith("float"):
        raise C.rel_error(op, "grid must be a float tensor", **types)
    return TensorType(tuple(data.shape[:2]) + tuple(grid.shape[2:]), data.dtype)


class _NumpyMath:
    floor, where, abs, fmod = staticmethod(np.floor), staticmethod(np.where), staticmethod(np.abs), staticmethod(np.fmod)

    @staticmethod
    def clip(x, hi):
        return np.minimum(np.maximum(x, x.dtype.type(0)), hi)

    @staticmethod
    def num(value, like):
        return like.dtype.type(value)

    @staticmethod
    def zeros_like(x):
        return np.zeros_like(x)


class _TirMath:
    floor, abs, fmod = staticmethod(te.floor), staticmethod(te.abs), staticmethod(te.fmod)

    @staticmethod
    def where(cond, a, b):
        return te.if_then_else(cond, a, b)

    @staticmethod
    def clip(x, hi):
        return tir.min(tir.max(x, tir.const(0.0, x.dtype)), hi)

    @staticmethod
    def num(value, like):
        return value.astype(like.dtype) if isinstance(value, tir.PrimExpr) else tir.const(float(value), like.dtype)

    @staticmethod
    def zeros_like(x):
        return tir.const(0.0, x.dtype)


def _unnormalize(g, size, align: bool, M):
    one, two = M.num(1.0, g), M.num(2.0, g)
    if align:
        return (g + one) * M.num(size - 1, g) / two
    return (g + one) * M.num(size, g) / two - M.num(0.5, g)


def _reflect(x, size, align: bool, M):
    """Mirror x into [0, size - 1] (align_corners) or [-0.5, size - 0.5], as PyTorch."""
    if align and isinstance(size, int) and size <= 1:
        return M.zeros_like(x)
    low = M.num(0.0 if align else -0.5, x)
    span = M.num(size - 1 if align else size, x)
    dist = M.abs(x - low)
    flips = M.floor(dist / span)
    extra = M.fmod(dist, span)
    even = M.fmod(flips, M.num(2.0, x)) == M.num(0.0, x)
    return M.where(even, extra + low, span - extra + low)


def _fix(x, size, attrs, M):
    """The padding_mode applied to a (float) coordinate along an axis of `size`."""
    if attrs.padding_mode == "border":
        return M.clip(x, M.num(size - 1, x))
    if attrs.padding_mode == "reflection":
        return M.clip(_reflect(x, size, attrs.align_corners, M), M.num(size - 1, x))
    return x


def _cubic_weights(t, M):
    a = M.num(BICUBIC_A, t)
    one, two = M.num(1.0, t), M.num(2.0, t)

    def near(s):
        return ((a + two) * s - (a + M.num(3.0, t))) * s * s + one

    def far(s):
        return ((a * s - M.num(5.0, t) * a) * s + M.num(8.0, t) * a) * s - M.num(4.0, t) * a
    return [far(t + one), near(t), near(one - t), far(two - t)]


def _axis_taps(g, size, attrs, M):
    """[(float source index, weight or None)] along one axis for grid values g."""
    coord = _unnormalize(g, size, attrs.align_corners, M)
    if attrs.method == "bicubic":
        base = M.floor(coord)
        weights = _cubic_weights(coord - base, M)
        return [(_fix(base + M.num(k - 1, g), size, attrs, M), w) for k, w in enumerate(weights)]
    coord = _fix(coord, size, attrs, M)
    if attrs.method == "nearest":
        return [(coord, None)]
    base = M.floor(coord)
    t = coord - base
    return [(base, M.num(1.0, g) - t), (base + M.num(1.0, g), t)]


def _grid_sample_ref(data, grid, attrs):
    k = len(attrs.layout) - 2
    ftype = interp.compute_dtype(str(grid.dtype))
    g = grid.astype(ftype)
    sizes = data.shape[2:]
    taps = [_axis_taps(g[:, k - 1 - d], sizes[d], attrs, _NumpyMath) for d in range(k)]
    out = np.zeros(data.shape[:2] + grid.shape[2:], ftype)
    for combo in itertools.product(*taps):
        weight, valid, index = None, True, []
        for d, (pos, w) in enumerate(combo):
            pos = np.floor(np.round(pos) if attrs.method == "nearest" else pos).astype("int64")
            valid = valid & (pos >= 0) & (pos < sizes[d])
            index.append(np.clip(pos, 0, max(sizes[d] - 1, 0)))
            weight = w if weight is None else weight * w
        if data.size == 0:
            continue
        values = np.stack([data[b][(slice(None),) + tuple(i[b] for i in index)] for b in range(data.shape[0])])
        values = np.where(np.expand_dims(valid, 1), values.astype(ftype), np.dtype(ftype).type(0))
        out = out + (values if weight is None else values * np.expand_dims(weight, 1))
    return interp.np_to_dtype(out, data.dtype)


def _grid_sample_compute(attrs, inputs, out_type):
    data, grid = inputs
    k = len(attrs.layout) - 2
    ftype = interp.compute_dtype(grid.dtype)
    sizes = T.dims(data)[2:]

    def f(n, c, *pos):
        taps = [_axis_taps(grid[(n, k - 1 - d) + pos].astype(ftype), sizes[d], attrs, _TirMath) for d in range(k)]
        acc = None
        for combo in itertools.product(*taps):
            weight, inside, index = None, [], []
            for d, (p, w) in enumerate(combo):
                p = te.round(p) if attrs.method == "nearest" else p
                p = te.floor(p).astype("int32")
                inside += [p >= 0, p < sizes[d]]
                index.append(tir.max(tir.min(p, sizes[d] - 1), 0))
                weight = w if weight is None else weight * w
            value = te.if_then_else(tir.all(*inside), data[(n, c) + tuple(index)].astype(ftype), tir.const(0.0, ftype))
            part = value if weight is None else value * weight
            acc = part if acc is None else acc + part
        return interp.te_to_dtype(acc, out_type.dtype)
    return [te.compute(list(out_type.shape), f, name="grid_sample", tag="injective")]


def _sample_samples(rng):
    A = GridSampleAttrs
    return [Sample([S.rand(rng, (1, 2, 4, 5)), S.rand(rng, (1, 2, 3, 3), low=-1.3, high=1.3)], A()),
            Sample([S.rand(rng, (2, 1, 3, 4)), S.rand(rng, (2, 2, 2, 5), low=-1.5, high=1.5)],
                   A("nearest", padding_mode="border", align_corners=False)),
            Sample([S.rand(rng, (1, 2, 4, 4), "float64"), S.rand(rng, (1, 2, 3, 2), "float64", -2.5, 2.5)],
                   A("bicubic", padding_mode="reflection")),
            Sample([S.rand(rng, (1, 1, 3, 5)), S.rand(rng, (1, 2, 4, 3), low=-2.2, high=2.2)],
                   A("bilinear", padding_mode="reflection", align_corners=False)),
            Sample([S.rand(rng, (1, 2, 2, 3, 3)), S.rand(rng, (1, 3, 2, 2, 3), low=-1.2, high=1.2)],
                   A("bilinear", layout="NCDHW", padding_mode="zeros", align_corners=False)),
            Sample([S.rand(rng, (1, 1, 3, 2, 3)), S.rand(rng, (1, 3, 1, 2, 2), low=-1.4, high=1.4)],
                   A("nearest", layout="NCDHW", padding_mode="border"))]


GRID_SAMPLE = defop("image.grid_sample", inputs=("data", "grid"), attrs=GridSampleAttrs, rel=_sample_rel,
                    pattern=OpPattern.INJECTIVE, ref=_grid_sample_ref, compute=_grid_sample_compute, level=5,
                    samples=_sample_samples, doc="sample data at the normalized points of a grid")


def grid_sample(data, grid, method="bilinear", layout="NCHW", padding_mode="zeros", align_corners=True):
    """relay.image.grid_sample: read data at the [-1, 1]-normalized points of grid (x first).

    Parameters
    ----------
    data : relay.Expr
        The images, (batch, channels, height, width), or (batch, channels, depth, height, width)
        with the NCDHW layout.
    grid : relay.Expr
        A float tensor of the points to read, (batch, 2, out height, out width), or (batch, 3, out
        depth, out height, out width) for NCDHW: channel 0 the x (width) coordinate, then y, then
        z, each normalized so that -1 and 1 are the edges of `data`.
    method : str, optional
        "nearest" reads the nearest pixel, "bilinear" weighs the 2 nearest along each axis,
        "bicubic" (NCHW only) the 4 nearest with a cubic spline. Defaults to 'bilinear'.
    layout : str, optional
        The layout of `data`, "NCHW" or "NCDHW". Defaults to 'NCHW'.
    padding_mode : str, optional
        What a point outside `data` reads: "zeros" gives 0, "border" the nearest edge pixel,
        "reflection" the pixel mirrored back inside about the edges. Defaults to 'zeros'.
    align_corners : bool, optional
        If True, -1 and 1 are the centres of the corner pixels; if False, their outer edges.
        Defaults to True.

    Returns
    -------
    result : relay.Expr
        The samples, (batch, channels) followed by the grid's spatial shape, in the dtype of
        `data`.
    """
    return GRID_SAMPLE(data, grid, attrs=GridSampleAttrs(method, layout, padding_mode, align_corners))


__all__ = ["affine_grid", "grid_sample", "AffineGridAttrs", "GridSampleAttrs"]
