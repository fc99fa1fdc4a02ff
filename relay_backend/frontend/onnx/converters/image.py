"""Image and detection ONNX ops: Resize (opsets 10-19: every mode, coordinate transform and
nearest mode, roi, scales or sizes, axes, keep_aspect_ratio_policy, antialias), Upsample (7, 9;
run-time scales of 4-D data as Resize's, of 5-D data dyn.nn.upsampling3d) and GridSample (16,
20, 22) onto relay.image; AffineGrid (20; a size known at import makes the base grid a
constant, then one batch_matmul with theta); NonMaxSuppression (10, 11) onto
vision.all_class_non_max_suppression, its (selected, 3) result cut to the count at run time
(dyn.strided_slice: the VM and the debug interpreter), and RoiAlign (10, 16, 22; average mode)
onto vision.roi_align.

Resize keeps ONNX's arithmetic where it differs from TVM's: with `scales` the output length is
floor(in * scale) and the coordinates use the scale itself and the float width in * scale (the
resize attr `scales`), with `sizes` the ratio out / in. For a 4-D Resize without antialias the
scales or sizes may come at run time (debug and VM; the graph executor refuses the dynamic
output): sizes under the stretch policy build dyn.image.resize2d; scales, and sizes under
not_larger / not_smaller (one scale min / max of sizes / in), build dyn.image.resize2d_scales
with the output lengths computed in Relay arithmetic by ONNX's rule. Otherwise they must be known
at import: a DynamicInputError, on which the ONNX backend binds integer sizes per run. A roi (a
float input the backend does not bind) may come at run time for a 4-D Resize: as
image.crop_and_resize's box (linear), else read by the dyn resize (debug and VM).
AffineGrid's size may come at run time too (dyn.arange positions, dyn.reshape).
"""
import math

import numpy as np

from .... import op as _op
from ....ir.types import is_any
from ....op import image as _image
from ....op import nn as _nn
from ....op.image.resize import RESIZE1D, RESIZE2D, RESIZE3D, Resize1DAttrs, Resize2DAttrs, Resize3DAttrs
from ..common import const
from . import nn_ext
from ._registry import converter

_STATIC = {3: (RESIZE1D, Resize1DAttrs, "NCW"), 4: (RESIZE2D, Resize2DAttrs, "NCHW"),
           5: (RESIZE3D, Resize3DAttrs, "NCDHW")}
_METHODS = {"nearest": "nearest_neighbor", "linear": "linear", "cubic": "cubic", "bilinear": "linear"}


def _present(ctx, expr):
    """An optional input that is given and not an empty tensor."""
    if expr is None:
        return None
    shape = ctx.shape(expr)
    return None if len(shape) == 1 and not is_any(shape[0]) and int(shape[0]) == 0 else expr


class _Plan:
    """What a Resize node asks for, per axis of the full rank."""

    def __init__(self, ctx, x, method):
        self.ctx, self.x, self.method = ctx, x, method
        self.rank = ctx.ndim(x)
        if self.rank not in _STATIC:
            raise ctx.fail(f"Resize of a rank-{self.rank} tensor is not supported", "use 3-D, 4-D or 5-D (N, C, ...)")
        self.axes = list(range(self.rank))

    def set_axes(self, axes):
        if axes is None:
            return
        axes = [a + self.rank if a < 0 else a for a in axes]
        if sorted(set(axes)) != sorted(axes) or not all(0 <= a < self.rank for a in axes):
            raise self.ctx.invalid(f"axes={axes} must be distinct axes of a rank-{self.rank} input")
        self.axes = axes

    def full(self, values, fill):
        """Per-axis values given for `self.axes`, spread to the full rank with `fill` elsewhere."""
        if len(values) != len(self.axes):
            raise self.ctx.invalid(f"{len(values)} values for {len(self.axes)} resized axes")
        out = list(fill)
        for a, v in zip(self.axes, values):
            out[a] = v
        return out


def _check_batch_and_channels(ctx, shape, sizes, factors):
    """Batch and channels must keep their length (a symbolic one is taken to)."""
    for axis in (0, 1):
        kept = is_any(shape[axis]) or not isinstance(shape[axis], int) or sizes[axis] == shape[axis]
        if not kept or factors[axis] != 1:
            raise ctx.fail("Resize of the batch or channel axis is not supported",
                           "resize the spatial axes (2 and up) only")


def _static_sizes(ctx, plan, shape, scales, sizes, policy):
    """(output sizes, scale factor per axis), ONNX's rules; the spatial dims of `shape` are ints."""
    if sizes is not None:
        target = plan.full([int(v) for v in sizes], shape)
        factors = [1.0, 1.0] + [target[a] / shape[a] if shape[a] else 0.0 for a in range(2, plan.rank)]
        for a in (0, 1):
            if a in plan.axes and isinstance(shape[a], int) and target[a] != shape[a]:
                factors[a] = None
        if policy != "stretch":
            # one scale over every resized axis, batch and channel included when listed (all
            # axes when `axes` is absent), as ONNX's rule: sizes [1, 1, 3, 4] of a (1, 1, 2, 2)
            # input is scale 1 under not_larger
            pick = min if policy == "not_larger" else max
            scale = pick(target[a] / shape[a] for a in plan.axes if isinstance(shape[a], int) and shape[a])
            target = [int(scale * shape[a] + 0.5) if a in plan.axes and isinstance(shape[a], int) else target[a]
                      for a in range(plan.rank)]
            factors = [1.0 if target[a] == shape[a] else None for a in (0, 1)] + \
                [scale if a in plan.axes else 1.0 for a in range(2, plan.rank)]
        return target, factors
    factors = plan.full([float(v) for v in scales], [1.0] * plan.rank)
    if min(factors) <= 0:
        raise ctx.invalid(f"scales={list(factors)} must be positive")
    return [int(math.floor(s * f)) if f != 1.0 else s for s, f in zip(shape, factors)], factors


def _roi(ctx, plan, roi):
    """(starts..., ends...) of the spatial axes from ONNX's roi (2 values per resized axis)."""
    starts, ends = [0.0] * plan.rank, [1.0] * plan.rank
    if roi is not None:
        n = len(plan.axes)
        if len(roi) != 2 * n:
            raise ctx.invalid(f"roi has {len(roi)} values, expected {2 * n} (start and end of each resized axis)")
        for i, a in enumerate(plan.axes):
            starts[a], ends[a] = float(roi[i]), float(roi[n + i])
    return tuple(starts[2:]) + tuple(ends[2:])


def _resize(ctx, x, plan, scales, sizes, roi, options, policy="stretch", antialias=0):
    """The static image.resize{1,2,3}d: the scales or sizes (and a roi) must be known now, as for
    the shape-like inputs of Reshape or Pad (a DynamicInputError otherwise: the ONNX backend then
    binds them per run)."""
    shape = list(ctx.shape(x))
    if any(is_any(d) or not isinstance(d, int) for d in shape[2:]):
        raise ctx.fail_shape(f"the spatial dims of the input {tuple(shape)} are dynamic; Resize needs them static",
                             "give static input shapes via from_onnx(model, shape={...})")
    if sizes is not None and ctx.maybe_value(sizes) is None:
        if policy != "stretch":
            return _run_time_policy(ctx, x, plan, sizes, roi, options, policy, antialias)
        return _run_time_sizes(ctx, x, plan, sizes, roi, options, antialias)
    if scales is not None and ctx.maybe_value(scales) is None:
        return _run_time_scales(ctx, x, plan, scales, roi, options, antialias)
    size_values = None if sizes is None else np.asarray(ctx.value(sizes, "sizes")).reshape(-1)
    scale_values = None if scales is None else np.asarray(ctx.value(scales, "scales")).reshape(-1)
    roi_values = None if roi is None else ctx.maybe_value(roi)
    target, factors = _static_sizes(ctx, plan, shape, scale_values, size_values, policy)
    _check_batch_and_channels(ctx, shape, target, factors)
    op, attrs_cls, layout = _STATIC[plan.rank]
    spatial = factors[2:]
    explicit = tuple(spatial) if all(f and f > 0 for f in spatial) else ()
    if roi is not None and roi_values is None:
        return _run_time_roi(ctx, x, plan, roi, target, explicit, antialias, options)
    roi_values = None if roi is None else np.asarray(roi_values).reshape(-1)
    attrs = attrs_cls(size=tuple(target[2:]), roi=_roi(ctx, plan, roi_values), layout=layout,
                      scales=explicit, antialias=antialias, **options)
    return op(x, attrs=attrs)


def _run_time_roi(ctx, x, plan, roi, target, explicit, antialias, options):
    """A 4-D tf_crop_and_resize whose roi is a run-time input: image.crop_and_resize with the roi
    as every image's box when the method is linear (a static result), else dyn.image.resize2d
    with the constant output size and the roi read at run time (debug interpreter and VM)."""
    from ....op.dyn.image import RESIZE2D_DYN
    if plan.rank != 4 or not {2, 3} <= set(plan.axes):
        raise ctx.fail("a run-time roi is supported for 4-D Resize over both spatial axes",
                       "give the roi as a constant")
    n = len(plan.axes)
    order = [plan.axes.index(2), plan.axes.index(3), n + plan.axes.index(2), n + plan.axes.index(3)]
    roi_hw = _op.take(_op.cast(roi, "float32"), const(np.array(order, "int64")))
    batch = ctx.shape(x)[0]
    spans_are_sizes = not explicit or all(ctx.shape(x)[2 + d] * f == target[2 + d] for d, f in enumerate(explicit))
    if options["method"] == "linear" and not antialias and spans_are_sizes and isinstance(batch, int):
        # the same crop for every image: image.crop_and_resize keeps the output shape static
        boxes = _op.broadcast_to(_op.reshape(roi_hw, (1, 4)), (batch, 4))
        return _image.crop_and_resize(x, boxes, const(np.arange(batch, dtype="int32")), tuple(target[2:]), "NCHW",
                                      "bilinear", options["extrapolation_value"])
    attrs = Resize2DAttrs(layout="NCHW", scales=explicit, antialias=antialias, **options)
    return RESIZE2D_DYN(x, const(np.array(target[2:], "int64")), roi_hw, attrs=attrs)


def _run_time_sizes(ctx, x, plan, sizes, roi, options, antialias):
    """A 4-D Resize whose output `sizes` are known only at run time (stretch policy):
    dyn.image.resize2d with the spatial sizes picked from them (the coordinates use the ratio
    out / in, which is ONNX's rule for sizes)."""
    from ....op.dyn.image import RESIZE2D_DYN
    _check_run_time_form(ctx, plan, "sizes", sizes, antialias)
    target = _op.scatter_elements(_op.shape_of(x, "int64"), _axes_const(plan), _op.cast(sizes, "int64"), axis=0)
    out = RESIZE2D_DYN(x, _op.strided_slice(target, [2], [4]), _run_time_roi_hw(ctx, plan, roi),
                       attrs=Resize2DAttrs(layout="NCHW", **options))
    return _keeping_batch_and_channels(x, out, target)


def _run_time_scales(ctx, x, plan, scales, roi, options, antialias):
    """A 4-D Resize whose `scales` are known only at run time: the output length floor(in * scale)
    computed in Relay arithmetic (float64, as the static path), and dyn.image.resize2d_scales,
    whose coordinates divide by the scales (ONNX's rule). A batch or channel scale other than 1
    stops the run with a reshape error."""
    _check_run_time_form(ctx, plan, "scales", scales, antialias)
    full = _op.scatter_elements(const(np.ones(4, "float32")), _axes_const(plan), _op.cast(scales, "float32"), axis=0)
    dims = _op.shape_of(x, "int64")
    target = _op.cast(_op.floor(_op.multiply(_op.cast(dims, "float64"), _op.cast(full, "float64"))), "int64")
    unit = _op.all(_op.equal(_op.strided_slice(full, [0], [2]), const(np.ones(2, "float32"))))
    return _scaled(ctx, x, plan, target, _op.strided_slice(full, [2], [4]), roi, options, unit)


def _run_time_policy(ctx, x, plan, sizes, roi, options, policy, antialias):
    """A 4-D Resize with run-time `sizes` under keep_aspect_ratio_policy not_larger / not_smaller:
    one scale, the smallest (largest) of sizes / in over the resized axes, gives every resized
    axis the length floor(scale * in + 0.5) and enters the coordinates (ONNX's rule)."""
    _check_run_time_form(ctx, plan, "sizes", sizes, antialias)
    axes = _axes_const(plan)
    dims = _op.shape_of(x, "int64")
    lengths = _op.cast(_op.take(dims, axes), "float64")
    ratios = _op.divide(_op.cast(sizes, "float64"), lengths)
    scale = _op.min(ratios) if policy == "not_larger" else _op.max(ratios)
    scaled = _op.cast(_op.floor(_op.add(_op.multiply(scale, lengths), const(np.float64(0.5)))), "int64")
    target = _op.scatter_elements(dims, axes, scaled, axis=0)
    spatial = _op.cast(_op.broadcast_to(scale, (2,)), "float32")
    return _scaled(ctx, x, plan, target, spatial, roi, options, const(np.bool_(True)))


def _scaled(ctx, x, plan, target, spatial_scales, roi, options, valid):
    """dyn.image.resize2d_scales to the spatial lengths of the run-time `target` with the spatial
    scales given; the run stops (reshape error) unless `valid` and batch and channels are kept."""
    from ....op.dyn.image import RESIZE2D_SCALES_DYN
    out = RESIZE2D_SCALES_DYN(x, _op.strided_slice(target, [2], [4]), _run_time_roi_hw(ctx, plan, roi),
                              spatial_scales, attrs=Resize2DAttrs(layout="NCHW", **options))
    return _keeping_batch_and_channels(x, out, target, valid)


def _check_run_time_form(ctx, plan, what, values, antialias):
    """The run-time forms cover 4-D data without antialias; `values` (the sizes or scales input)
    must hold one value per resized axis (a static length)."""
    from .runtime_shapes import needs_value, static_length
    if plan.rank != 4:
        raise needs_value(ctx, f"run-time {what} are supported for 4-D Resize, not rank {plan.rank}",
                          f"give the {what} as a constant")
    if antialias:
        raise needs_value(ctx, f"run-time {what} with antialias are not supported (the antialiased kernel's "
                               "number of taps depends on the scale)", f"give the {what} as a constant")
    count = static_length(ctx, values, what)
    if count != len(plan.axes):
        raise ctx.invalid(f"{what} has {count} values for {len(plan.axes)} resized axes")


def _axes_const(plan):
    return const(np.array(plan.axes, "int64"))


def _run_time_roi_hw(ctx, plan, roi):
    """The (start h, start w, end h, end w) float32 roi of the spatial axes, from ONNX's roi (2
    values per resized axis, a constant or a run-time input); the whole image without one."""
    if roi is None:
        return const(np.array([0.0, 0.0, 1.0, 1.0], "float32"))
    n = len(plan.axes)
    roi_values = ctx.maybe_value(roi)
    full_roi = _op.cast(roi, "float32") if roi_values is None else const(np.asarray(roi_values, "float32"))
    starts = _op.scatter_elements(const(np.zeros(4, "float32")), _axes_const(plan),
                                  _op.strided_slice(full_roi, [0], [n]), axis=0)
    ends = _op.scatter_elements(const(np.ones(4, "float32")), _axes_const(plan),
                                _op.strided_slice(full_roi, [n], [2 * n]), axis=0)
    return _op.concatenate([_op.strided_slice(starts, [2], [4]), _op.strided_slice(ends, [2], [4])], 0)


def _keeping_batch_and_channels(x, out, target, valid=None):
    """`out`, or a reshape error at run time when the `target` sizes change the batch or channel
    length of `x` (or `valid`, a bool scalar, is false)."""
    from .runtime_shapes import checked_reshape
    dims = _op.shape_of(x, "int64")
    keeps = _op.all(_op.equal(_op.strided_slice(target, [0], [2]), _op.strided_slice(dims, [0], [2])))
    if valid is not None:
        keeps = _op.logical_and(keeps, valid)
    return checked_reshape(out, _op.shape_of(out, "int64"), keeps)


@converter("Resize", min_version=10)
def resize(ctx, inputs):
    x = inputs[0]
    mode = ctx.attrs.get("mode", "nearest")
    if mode not in ("nearest", "linear", "cubic"):
        raise ctx.invalid(f"mode={mode!r} must be nearest, linear or cubic")
    plan = _Plan(ctx, x, _METHODS[mode])
    if ctx.since < 11:
        scales = inputs[1]
        factors = np.asarray(ctx.value(scales, "scales")).reshape(-1)
        shrinking = factors.size > 0 and min(factors) < 1
        options = dict(method=plan.method, coordinate_transformation_mode="asymmetric",
                       rounding_method="ceil" if shrinking else "floor")
        return _resize(ctx, x, plan, scales, None, None, options)
    roi = _present(ctx, inputs[1] if len(inputs) > 1 else None)
    scales = _present(ctx, inputs[2] if len(inputs) > 2 else None)
    sizes = _present(ctx, inputs[3] if len(inputs) > 3 else None)
    if (scales is None) == (sizes is None):
        raise ctx.invalid("give exactly one of scales and sizes")
    coord = ctx.attrs.get("coordinate_transformation_mode", "half_pixel")
    if coord != "tf_crop_and_resize":
        roi = None
    antialias = int(ctx.attrs.get("antialias", 0))
    if antialias and mode == "nearest":
        antialias = 0      # ONNX: antialias only changes the linear and cubic modes
    plan.set_axes(ctx.attrs.ints("axes"))
    policy = ctx.attrs.get("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise ctx.invalid(f"keep_aspect_ratio_policy={policy!r} must be stretch, not_larger or not_smaller")
    options = dict(method=plan.method, coordinate_transformation_mode=coord,
                   rounding_method=ctx.attrs.get("nearest_mode", "round_prefer_floor") if mode == "nearest" else "",
                   cubic_alpha=float(ctx.attrs.get("cubic_coeff_a", -0.75)),
                   cubic_exclude=int(ctx.attrs.get("exclude_outside", 0)),
                   extrapolation_value=float(ctx.attrs.get("extrapolation_value", 0.0)))
    return _resize(ctx, x, plan, scales, sizes, roi, options, policy if sizes is not None else "stretch", antialias)


@converter("Upsample", min_version=7, max_version=9)
def upsample(ctx, inputs):
    x = inputs[0]
    mode = ctx.attrs.get("mode", "nearest")
    if mode not in _METHODS:
        raise ctx.invalid(f"mode={mode!r} must be nearest or linear")
    if ctx.since >= 9 and ctx.maybe_value(inputs[1]) is None and ctx.ndim(x) != 4:
        return nn_ext.upsample(ctx, inputs)       # scales known at run time, 5-D: dyn.nn.upsampling3d
    # 4-D scales known at run time: dyn.image.resize2d_scales (_resize), with ONNX's floor(in * scale)
    scales = const(np.asarray(ctx.attrs.get("scales"), "float32")) if ctx.since < 9 else inputs[1]
    plan = _Plan(ctx, x, _METHODS[mode])
    options = dict(method=plan.method, coordinate_transformation_mode="asymmetric", rounding_method="floor")
    return _resize(ctx, x, plan, scales, None, None, options)


@converter("GridSample", min_version=16)
def grid_sample(ctx, inputs):
    x, grid = inputs
    rank = ctx.ndim(x)
    if rank not in (4, 5):
        raise ctx.fail(f"GridSample of a rank-{rank} input is not supported", "use 4-D (N, C, H, W) or 5-D data")
    mode = ctx.attrs.get("mode", "bilinear" if ctx.since < 20 else "linear")
    method = {"bilinear": "bilinear", "linear": "bilinear", "nearest": "nearest", "bicubic": "bicubic",
              "cubic": "bicubic"}.get(mode)
    if method is None:
        raise ctx.invalid(f"mode={mode!r} is not a GridSample mode")
    if method == "bicubic" and rank == 5:
        raise ctx.fail("cubic GridSample of 5-D data is not supported", "use linear or nearest")
    padding = ctx.attrs.get("padding_mode", "zeros")
    if padding not in ("zeros", "border", "reflection"):
        raise ctx.invalid(f"padding_mode={padding!r} must be zeros, border or reflection")
    align = bool(ctx.attrs.get("align_corners", 0))
    # ONNX's grid is (N, *out, k) with x first; relay.image.grid_sample takes (N, k, *out)
    grid = _op.transpose(grid, [0, rank - 1] + list(range(1, rank - 1)))
    return _image.grid_sample(x, grid, method, "NCHW" if rank == 4 else "NCDHW", padding, align)


def _normalized_positions(n: int, align: bool) -> np.ndarray:
    """The n sampling positions of one axis on [-1, 1]: the pixel centres, or the corners with
    align_corners (ONNX AffineGrid)."""
    if align:
        return np.linspace(-1.0, 1.0, n)
    return (2.0 * np.arange(n) + 1.0) / n - 1.0


@converter("AffineGrid", min_version=20)
def affine_grid(ctx, inputs):
    theta, size = inputs
    if ctx.maybe_value(size) is None:
        return _run_time_affine_grid(ctx, theta, size, bool(ctx.attrs.get("align_corners", 0)))
    sizes = [int(v) for v in np.asarray(ctx.value(size, "size")).reshape(-1)]
    if len(sizes) not in (4, 5) or min(sizes) < 0:
        raise ctx.invalid(f"size={sizes} must be (N, C, H, W) or (N, C, D, H, W) with non-negative values")
    spatial = sizes[2:]
    align = bool(ctx.attrs.get("align_corners", 0))
    k = len(spatial)
    if tuple(ctx.shape(theta)[1:]) != (k, k + 1):
        raise ctx.invalid(f"theta of shape {ctx.shape(theta)} does not fit a {k}-D size (expects (N, {k}, {k + 1}))")
    axes = [_normalized_positions(n, align) for n in spatial]          # D, H, W order
    mesh = np.meshgrid(*axes, indexing="ij")
    coords = [m.reshape(-1) for m in reversed(mesh)]                   # x first
    dtype = ctx.dtype(theta)
    base = np.stack(coords + [np.ones_like(coords[0])], axis=1).astype(dtype)     # (points, k + 1)
    points = base.shape[0]
    base = _op.broadcast_to(const(base[None]), (sizes[0], points, k + 1))
    grid = _nn.batch_matmul(base, theta)                                # (N, points, k)
    return _op.reshape(grid, [sizes[0]] + spatial + [k])


def _run_time_positions(n, dtype, align: bool):
    """_normalized_positions for a run-time length `n` (an int64 scalar): dyn.arange, then the
    same arithmetic in `dtype`."""
    count = _op.cast(n, dtype)
    one, two = const(np.array(1.0, dtype)), const(np.array(2.0, dtype))
    steps = _op.arange(const(np.array(0.0, dtype)), count, one, dtype=dtype)
    if align:   # -1 + i * 2 / (n - 1); a single position sits at -1
        gap = _op.where(_op.greater(count, one), _op.divide(two, _op.subtract(count, one)), const(np.array(0.0, dtype)))
        return _op.subtract(_op.multiply(steps, gap), one)
    return _op.subtract(_op.divide(_op.add(_op.multiply(steps, two), one), count), one)


def _run_time_affine_grid(ctx, theta, size, align):
    """AffineGrid whose size is known only at run time: the base grid from dyn.arange positions
    broadcast over the spatial axes (dyn.broadcast_to), one batch_matmul with theta, reshaped to
    (N, *spatial, k) (dyn.reshape). Debug interpreter and VM."""
    from .runtime_shapes import static_length
    count = static_length(ctx, size, "size")
    if count not in (4, 5):
        raise ctx.invalid(f"size has {count} values; it must be (N, C, H, W) or (N, C, D, H, W)")
    k = count - 2
    if tuple(ctx.shape(theta)[1:]) != (k, k + 1):
        raise ctx.invalid(f"theta of shape {ctx.shape(theta)} does not fit a {k}-D size (expects (N, {k}, {k + 1}))")
    dtype = ctx.dtype(theta)
    size = _op.cast(size, "int64")
    lengths = [_op.take(size, const(np.int64(2 + d))) for d in range(k)]               # D, H, W order
    spatial = _op.strided_slice(size, [2], [count])
    coords = []
    for d in range(k):   # the position along axis d, broadcast over every spatial axis
        shape = [1] * k
        shape[d] = -1
        axis = _op.reshape(_run_time_positions(lengths[d], dtype, align), shape)
        coords.append(_op.reshape(_op.broadcast_to(axis, spatial), (-1,)))
    coords = coords[::-1] + [_op.ones_like(coords[0])]                                  # x first, then 1
    base = _op.expand_dims(_op.stack(coords, axis=1), 0)                                 # (1, points, k + 1)
    batch = _op.strided_slice(size, [0], [1])
    points = _op.shape_of(base, "int64")
    base = _op.broadcast_to(base, _op.concatenate([batch, _op.strided_slice(points, [1], [3])], 0))
    grid = _nn.batch_matmul(base, theta)                                                  # (N, points, k)
    return _op.reshape(grid, _op.concatenate([batch, spatial, const(np.array([k], "int64"))], 0))


# ONNX suppresses a box whose IoU is *greater* than the threshold, relay's op at >=: a threshold
# one float32 step up (and above 0 by the smallest normal) turns one rule into the other
_NEXT_UP, _SMALLEST_NORMAL = 1.0 + 2.0 ** -23, 1.2e-38


def _scalar_input(ctx, expr, dtype, default):
    """An optional scalar input as a rank-0 tensor of `dtype` (the default when omitted)."""
    if expr is None:
        return const(np.array(default, dtype))
    return _op.reshape(_op.cast(expr, dtype), ())


def _corner_boxes(boxes):
    """ONNX's center_point_box=1 boxes (x_center, y_center, width, height) as two corners."""
    centre = _op.strided_slice(boxes, [0], [2], axes=[2])
    half = _op.divide(_op.strided_slice(boxes, [2], [4], axes=[2]), const(np.array(2.0, "float32")))
    return _op.concatenate([_op.subtract(centre, half), _op.add(centre, half)], 2)


@converter("NonMaxSuppression", min_version=10)
def non_max_suppression(ctx, inputs):
    from ....op import vision as _vision
    boxes, scores = inputs[0], inputs[1]
    rest = list(inputs[2:]) + [None] * (5 - len(inputs))
    if ctx.dtype(boxes) != "float32":
        boxes = _op.cast(boxes, "float32")
    if ctx.attrs.get("center_point_box", 0):
        boxes = _corner_boxes(boxes)
    limit = _scalar_input(ctx, rest[0], "int64", 0)
    iou = _scalar_input(ctx, rest[1], "float32", 0.0)
    iou = _op.add(_op.multiply(iou, const(np.array(_NEXT_UP, "float32"))), const(np.array(_SMALLEST_NORMAL, "float32")))
    score = _scalar_input(ctx, rest[2], "float32", -np.inf)
    selected, total = _vision.all_class_non_max_suppression(boxes, _op.cast(scores, "float32"), limit, iou, score,
                                                            "onnx")
    # ONNX selects no box when max_output_boxes_per_class is 0 (relay's op: no limit)
    total = _op.multiply(total, _op.cast(_op.greater(limit, const(np.array(0, "int64"))), "int64"))
    end = _op.concatenate([total, const(np.array([3], "int64"))], 0)
    return _op.strided_slice(selected, const(np.array([0, 0], "int64")), end, const(np.array([1, 1], "int64")))


@converter("RoiAlign", min_version=10)
def roi_align(ctx, inputs):
    from ....op import vision as _vision
    x, rois, batch = inputs
    mode = ctx.attrs.get("mode", "avg")
    if mode not in ("avg", "max"):
        raise ctx.invalid(f"mode={mode!r} must be avg or max")
    if mode == "max":
        raise ctx.fail("mode='max' is not supported: ONNX takes the largest weighted corner of each sample, "
                       "relay's roi_align the largest interpolated sample", "use mode='avg'")
    coord = ctx.attrs.get("coordinate_transformation_mode", "half_pixel" if ctx.since >= 16 else "output_half_pixel")
    if coord not in ("half_pixel", "output_half_pixel"):
        raise ctx.invalid(f"coordinate_transformation_mode={coord!r} must be half_pixel or output_half_pixel")
    dtype = ctx.dtype(x)
    rois5 = _op.concatenate([_op.expand_dims(_op.cast(batch, dtype), 1), _op.cast(rois, dtype)], 1)
    size = (int(ctx.attrs.get("output_height", 1)), int(ctx.attrs.get("output_width", 1)))
    return _vision.roi_align(x, rois5, size, float(ctx.attrs.get("spatial_scale", 1.0)),
                             int(ctx.attrs.get("sampling_ratio", 0)), "NCHW", mode, coord == "half_pixel")


__all__ = ["resize", "upsample", "grid_sample", "affine_grid", "non_max_suppression", "roi_align"]
