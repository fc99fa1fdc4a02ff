"""The interpolation arithmetic the image ops share (resize1d/2d/3d, crop_and_resize), written
twice on purpose: over numpy arrays for the references and over tir expressions for the te
computes, in the same order of float operations so both round alike.

Per spatial axis an output index x maps to a source coordinate (TVM's get_inx: half_pixel,
align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn, tf_crop_and_resize; and
ONNX 19's half_pixel_symmetric), and a method turns that coordinate into taps, (source index,
weight) pairs: one for nearest_neighbor (TVM's rounding methods), two for linear (lerp weights
1-t, t), four for cubic (Keys spline with `alpha`; `exclude` zeroes the taps outside the image
and renormalizes). A source index is clamped to the image. An N-D result is the taps' weighted
sum per axis, the last axis innermost, as TVM nests its lerps.

The scale-based modes divide by the scale, out / in by default. TVM multiplies by in / out, the
same ratio, but a product followed by an add may fuse into one FMA in compiled code, which moves
a coordinate that should land exactly on a rounding boundary (2 -> 7 half_pixel: 0.5). An
explicit per-axis factor (ONNX's `scales`, whose output length is floor(in * scale)) replaces
the ratio, and align_corners / tf_crop_and_resize then use ONNX's float width in * scale; in
the te computes that factor may be a tir expression, a scale read at run time (dyn resize).

Arithmetic is in float32 (TVM's "float"), float64 when the data or the result is float64. Two
guards TVM lacks: an output length of 1 under align_corners maps to source 0 (TVM divides by
zero there), and nearest_neighbor with asymmetric coordinates and floor rounding uses exact
integer division whenever the static output length is a multiple of the input length (TVM does
this for 2-D only; the float formula could round a whole coordinate down).
"""
import numpy as np

from ... import te, tir

COORDINATE_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                    "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric")
METHODS = ("nearest_neighbor", "linear", "cubic")
ROUNDING_METHODS = ("", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil")
EPSILON = 1e-5     # TVM's nudge before floor / ceil rounding


def compute_dtype(data_dtype: str, out_dtype: str = "") -> str:
    """The float type the interpolation runs in: float64 when data or result is, else float32."""
    return "float64" if "float64" in (data_dtype, out_dtype) else "float32"


def default_rounding(rounding: str, mode: str) -> str:
    """TVM's default for nearest_neighbor: round under align_corners, floor otherwise."""
    if rounding:
        return rounding
    return "round" if mode == "align_corners" else "floor"


def int_div_factor(mode: str, method: str, rounding: str, in_len, out_len, factor=None):
    """k when nearest_neighbor + asymmetric + floor can use x // k exactly, else None."""
    if method != "nearest_neighbor" or mode != "asymmetric" or rounding != "floor":
        return None
    if not (isinstance(in_len, int) and isinstance(out_len, int)) or in_len <= 0:
        return None
    if out_len % in_len or (factor and factor != out_len // in_len):
        return None
    return out_len // in_len


def cubic_weights(t, alpha):
    """The four Keys-spline weights of fraction t (works on arrays and tir expressions)."""
    t2 = t * t
    t3 = t2 * t
    return [alpha * (t3 - 2 * t2 + t),
            (alpha + 2) * t3 - (3 + alpha) * t2 + 1,
            -(alpha + 2) * t3 + (3 + 2 * alpha) * t2 - alpha * t,
            -alpha * t3 + alpha * t2]


# --- numpy --------------------------------------------------------------------------------------
def symmetric_offset(in_len: int, out_len: int, factor) -> float:
    """half_pixel_symmetric's shift: the centre of the implicit roi maps to the output's centre
    (ONNX 19); zero when the output length is exactly in_len * factor."""
    if not factor or not in_len:
        return 0.0
    return in_len / 2 * (1 - out_len / (factor * in_len))


def np_coordinate(out_len: int, in_len: int, mode: str, start: float, end: float, ftype,
                  factor=None) -> np.ndarray:
    """Source coordinate of every output index along one axis; `factor` is an explicit scale
    (ONNX's scales: the coordinate divides by it) instead of TVM's in/out length ratio."""
    ft = np.dtype(ftype).type
    x = np.arange(out_len).astype(ftype)
    half = ft(0.5)
    divisor = ft(factor) if factor else ft(out_len) / ft(in_len) if in_len else ft(1)
    step = lambda v: v / divisor  # noqa: E731
    if mode in ("half_pixel", "half_pixel_symmetric"):
        shift = ft(symmetric_offset(in_len, out_len, factor)) if mode == "half_pixel_symmetric" else None
        coord = step(x + half) - half
        return coord if shift is None else shift + coord
    span = in_len * factor if factor else out_len      # ONNX's output width: in * scale, a float
    if mode == "align_corners":
        return ft(in_len - 1) / ft(span - 1) * x if span != 1 and out_len > 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return step(x)
    if mode == "pytorch_half_pixel":
        return step(x + half) - half if out_len > 1 else np.zeros_like(x)
    if mode == "tf_half_pixel_for_nn":
        return step(x + half)
    start, end = ft(start), ft(end)
    if out_len > 1 and span != 1:
        return start * ft(in_len - 1) + x * (end - start) * ft(in_len - 1) / ft(span - 1)
    return np.full_like(x, half * (start + end) * ft(in_len - 1))


def np_nearest(coord: np.ndarray, rounding: str) -> np.ndarray:
    """The nearest source index under a rounding method (unclamped, int64)."""
    ft = coord.dtype.type
    if rounding == "round":
        out = np.round(coord)
    elif rounding == "round_prefer_floor":
        out = np.ceil(coord - ft(0.5))
    elif rounding == "round_prefer_ceil":
        out = np.floor(coord + ft(0.5))
    elif rounding == "floor":
        out = np.floor(coord + ft(EPSILON))
    else:
        out = np.ceil(coord - ft(EPSILON))
    return out.astype("int64")


def np_taps(coord: np.ndarray, in_len: int, method: str, rounding: str, alpha: float, exclude: bool,
            int_div=None):
    """[(clamped source index per output, weight per output or None)] for one axis."""
    clamp = lambda i: np.clip(i, 0, max(in_len - 1, 0))  # noqa: E731
    if method == "nearest_neighbor":
        index = np.arange(len(coord)) // int_div if int_div else np_nearest(coord, rounding)
        return [(clamp(index), None)]
    ft = coord.dtype.type
    base = np.floor(coord)
    t = coord - base
    base = base.astype("int64")
    if method == "linear":
        return [(clamp(base), ft(1) - t), (clamp(base + 1), t)]
    weights = cubic_weights(t, ft(alpha))
    if exclude:
        weights = [np.where((base - 1 + k < 0) | (base + k > in_len), ft(0), w) for k, w in enumerate(weights)]
        total = weights[0] + weights[1] + weights[2] + weights[3]
        weights = [w / total for w in weights]
    return [(clamp(base - 1 + k), w) for k, w in enumerate(weights)]


def np_interpolate(data: np.ndarray, axes, taps_per_axis, ftype) -> np.ndarray:
    """Σ over each axis's taps of weight * data[index], the last axis first (innermost)."""
    out = data.astype(ftype)
    for axis, taps in reversed(list(zip(axes, taps_per_axis))):
        acc = None
        for index, weight in taps:
            part = np.take(out, index, axis=axis)
            if weight is not None:
                shape = [1] * out.ndim
                shape[axis] = len(weight)
                part = part * weight.reshape(shape)
            acc = part if acc is None else acc + part
        out = acc
    return out


# --- tir ------------------------------------------------------------------------------------------
def _as_float(value, ftype):
    if isinstance(value, (int, float, np.integer, np.floating)):
        return tir.const(float(np.dtype(ftype).type(value)), ftype)
    return value.astype(ftype)


def _static(d):
    return d.value if isinstance(d, tir.IntImm) else d


def _is_run_time(factor) -> bool:
    """A scale factor given as a tir expression (read at run time) rather than a number."""
    return factor is not None and not isinstance(factor, (int, float, np.integer, np.floating))


def _te_symmetric_offset(in_len, out_len, factor, ftype):
    """symmetric_offset for a run-time factor, in float64 as the numpy one, then in `ftype`."""
    if isinstance(in_len, int) and not in_len:
        return tir.const(0.0, ftype)
    wide = "float64"
    in_f, out_f, scale = _as_float(in_len, wide), _as_float(out_len, wide), factor.astype(wide)
    shift = in_f / tir.const(2.0, wide) * (tir.const(1.0, wide) - out_f / (scale * in_f))
    return shift.astype(ftype)


def te_coordinate(x, out_len, in_len, mode: str, start, end, ftype, factor=None):
    """Source coordinate (a tir expression) of output index var x along one axis; the lengths
    are ints or tir expressions, start/end floats or tir expressions (a roi read at run time);
    `factor` as np_coordinate's, or a tir expression (a scale read at run time)."""
    out_len, in_len = _static(out_len), _static(in_len)
    xf = x.astype(ftype)
    half = tir.const(0.5, ftype)
    both_static = isinstance(out_len, int) and isinstance(in_len, int)
    run_time = _is_run_time(factor)
    if run_time:
        divisor = factor.astype(ftype)
    elif factor:
        divisor = tir.const(float(np.dtype(ftype).type(factor)), ftype)
    elif both_static:
        ft = np.dtype(ftype).type
        divisor = tir.const(float(ft(out_len) / ft(in_len) if in_len else ft(1)), ftype)
    else:
        divisor = _as_float(out_len, ftype) / _as_float(in_len, ftype)
    in_last = _as_float(in_len - 1, ftype)
    step = lambda v: v / divisor  # noqa: E731

    if run_time:   # ONNX's output width in * scale, in float64 as the numpy one
        span = _as_float(in_len, "float64") * factor.astype("float64")
        long_enough = tir.And(out_len > 1, span != tir.const(1.0, "float64"))
    else:
        span = in_len * factor if factor else out_len
        long_enough = None

    def when_long(long, short):
        """`long` for an output length > 1 (and a width in * scale other than 1 where that
        enters), else `short` (decided now when both are static)."""
        if long_enough is not None:
            return te.if_then_else(long_enough, long, short)
        if isinstance(out_len, int):
            return long if out_len > 1 else short
        return te.if_then_else(out_len > 1, long, short)

    zero = tir.const(0.0, ftype)
    if mode in ("half_pixel", "half_pixel_symmetric"):
        coord = step(xf + half) - half
        if mode == "half_pixel_symmetric" and run_time:
            coord = _te_symmetric_offset(in_len, out_len, factor, ftype) + coord
        elif mode == "half_pixel_symmetric" and factor:
            shift = np.dtype(ftype).type(symmetric_offset(in_len, out_len, factor))
            coord = tir.const(float(shift), ftype) + coord
        return coord
    if mode == "align_corners":
        if not run_time and isinstance(out_len, int) and (out_len <= 1 or span == 1):
            return zero
        if both_static and not run_time:
            ratio = np.dtype(ftype).type(in_len - 1) / np.dtype(ftype).type(span - 1)
            return tir.const(float(ratio), ftype) * xf
        width = _as_float(span - 1, ftype) if not run_time else (span - tir.const(1.0, "float64")).astype(ftype)
        return when_long(in_last / width * xf, zero)
    if mode == "asymmetric":
        return step(xf)
    if mode == "pytorch_half_pixel":
        return when_long(step(xf + half) - half, zero)
    if mode == "tf_half_pixel_for_nn":
        return step(xf + half)
    start, end = _as_float(start, ftype), _as_float(end, ftype)
    short = half * (start + end) * in_last
    if not run_time and isinstance(out_len, int) and (out_len <= 1 or span == 1):
        return short
    width = _as_float(span - 1, ftype) if not run_time else (span - tir.const(1.0, "float64")).astype(ftype)
    return when_long(start * in_last + xf * (end - start) * in_last / width, short)


def te_nearest(coord, rounding: str):
    """The nearest source index (int32, unclamped) of a tir coordinate."""
    ftype = coord.dtype
    if rounding == "round":
        out = te.round(coord)
    elif rounding == "round_prefer_floor":
        out = te.ceil(coord - tir.const(0.5, ftype))
    elif rounding == "round_prefer_ceil":
        out = te.floor(coord + tir.const(0.5, ftype))
    elif rounding == "floor":
        out = te.floor(coord + tir.const(EPSILON, ftype))
    else:
        out = te.ceil(coord - tir.const(EPSILON, ftype))
    return out.astype("int32")


def te_clamp(index, in_len):
    """index clamped to [0, in_len - 1]."""
    return tir.max(tir.min(index, _static(in_len) - 1), 0)


def te_taps(x, coord, in_len, method: str, rounding: str, alpha: float, exclude: bool, int_div=None):
    """[(clamped source index, weight or None)] of output index x (tir expressions)."""
    if method == "nearest_neighbor":
        index = x // int_div if int_div else te_nearest(coord, rounding)
        return [(te_clamp(index, in_len), None)]
    ftype = coord.dtype
    floored = te.floor(coord)
    t = coord - floored
    base = floored.astype("int32")
    one = tir.const(1.0, ftype)
    if method == "linear":
        return [(te_clamp(base, in_len), one - t), (te_clamp(base + 1, in_len), t)]
    weights = cubic_weights(t, tir.const(float(alpha), ftype))
    if exclude:
        zero = tir.const(0.0, ftype)
        last = _static(in_len)
        weights = [te.if_then_else(tir.Or(base - 1 + k < 0, base + k > last), zero, w)
                   for k, w in enumerate(weights)]
        total = weights[0] + weights[1] + weights[2] + weights[3]
        weights = [w / total for w in weights]
    return [(te_clamp(base - 1 + k, in_len), w) for k, w in enumerate(weights)]


def te_interpolate(load, index, axes, taps_per_axis, ftype):
    """Σ over each axis's taps of weight * load(index with that axis replaced), nested with the
    last axis innermost; `load(full_index)` reads one source value."""
    def combine(k, current):
        if k == len(axes):
            return load(tuple(current)).astype(ftype)
        acc = None
        for src, weight in taps_per_axis[k]:
            current[axes[k]] = src
            part = combine(k + 1, list(current))
            part = part if weight is None else part * weight
            acc = part if acc is None else acc + part
        return acc
    return combine(0, list(index))


def outside(coord, in_len):
    """coord < 0 or coord > in_len - 1 (tf_crop_and_resize's extrapolation test), tir."""
    return tir.Or(coord < tir.const(0.0, coord.dtype), coord > _as_float(_static(in_len) - 1, coord.dtype))


def _int_bounds(dtype, ftype):
    """The range of integer `dtype` as values of float type `ftype` that lie inside it."""
    info, ft = np.iinfo(dtype), np.dtype(ftype).type
    lo, hi = ft(info.min), ft(info.max)
    if int(hi) > info.max:
        hi = np.nextafter(hi, ft(0))
    return lo, hi


def np_to_dtype(value: np.ndarray, dtype) -> np.ndarray:
    """The float result in `dtype`; an integer dtype saturates at its range first (a cubic
    overshoot below 0 stays 0 in uint8 instead of a platform-dependent wrap), then truncates."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        lo, hi = _int_bounds(dtype, value.dtype)
        value = np.clip(value, lo, hi)
    return value.astype(dtype)


def te_to_dtype(value, dtype: str):
    """np_to_dtype for a tir expression."""
    if np.dtype(dtype).kind in "iu":
        lo, hi = _int_bounds(dtype, value.dtype)
        value = tir.min(tir.max(value, tir.const(float(lo), value.dtype)), tir.const(float(hi), value.dtype))
    return value.astype(dtype)


__all__ = ["np_to_dtype", "te_to_dtype", "COORDINATE_MODES", "METHODS", "ROUNDING_METHODS", "compute_dtype",
           "default_rounding", "int_div_factor", "np_coordinate", "np_taps", "np_interpolate", "te_coordinate", "te_taps",
           "te_interpolate", "outside"]
