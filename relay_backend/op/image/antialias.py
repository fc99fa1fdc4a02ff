"""Antialiased linear and cubic taps for downscaling resizes (ONNX 18's Resize antialias=1;
TVM has no such mode, relay_backend adds it as the resize attr `antialias`).

When an axis shrinks by a factor s < 1, the interpolation kernel is stretched by 1/s so that
every source pixel contributes: linear becomes a triangle of half-width 1/s, cubic the Keys
kernel over 2/s, each normalized to sum 1. Taps sit at base + i for i in [start, start + n),
where base = ceil(x) - 1 (the source pixel at or just left of the coordinate, so the fraction
lies in (0, 1], as ONNX's reference picks its neighbours), and indices are clamped to the image
(edge padding). For s >= 1 the ordinary taps apply. Written for numpy and for tir.
"""
import math

import numpy as np

from ... import te, tir


def window(method: str, scale: float):
    """(first tap offset, number of taps) of the stretched kernel."""
    reach = 1.0 if method == "linear" else 2.0
    start = int(math.floor(-reach / scale) + 1)
    return start, 2 - 2 * start


def _np_keys(a, alpha):
    a = np.abs(a)
    near = (alpha + 2) * a ** 3 - (alpha + 3) * a ** 2 + 1
    far = alpha * a ** 3 - 5 * alpha * a ** 2 + 8 * alpha * a - 4 * alpha
    return np.where(a <= 1, near, np.where(a < 2, far, np.zeros_like(a)))


def np_taps(coord: np.ndarray, in_len: int, method: str, alpha: float, exclude: bool, scale: float):
    """[(clamped source index, normalized weight)] per output position along one axis."""
    ft = coord.dtype.type
    base = np.ceil(coord) - 1
    ratio = coord - base
    base = base.astype("int64")
    start, count = window(method, scale)
    raw = []
    for i in range(start, start + count):
        arg = (ft(i) - ratio) * ft(scale)
        weight = np.clip(ft(1) - np.abs(arg), ft(0), ft(1)) if method == "linear" else _np_keys(arg, ft(alpha))
        if exclude:
            weight = np.where((base + i < 0) | (base + i >= in_len), ft(0), weight)
        raw.append(weight.astype(coord.dtype))
    total = sum(raw[1:], raw[0])
    return [(np.clip(base + i, 0, in_len - 1), w / total) for i, w in zip(range(start, start + count), raw)]


def _te_keys(a, alpha):
    a = te.abs(a)
    ft = a.dtype
    al = tir.const(float(alpha), ft)
    near = (al + 2.0) * a * a * a - (al + 3.0) * a * a + 1.0
    far = al * a * a * a - 5.0 * al * a * a + 8.0 * al * a - 4.0 * al
    zero = tir.const(0.0, ft)
    return te.if_then_else(a <= 1.0, near, te.if_then_else(a < 2.0, far, zero))


def te_taps(coord, in_len, method: str, alpha: float, exclude: bool, scale: float):
    """np_taps for one output position (tir expressions); in_len an int or expression."""
    ft = coord.dtype
    base_f = te.ceil(coord) - tir.const(1.0, ft)
    ratio = coord - base_f
    base = base_f.astype("int32")
    start, count = window(method, scale)
    zero, one = tir.const(0.0, ft), tir.const(1.0, ft)
    raw = []
    for i in range(start, start + count):
        arg = (tir.const(float(i), ft) - ratio) * tir.const(float(scale), ft)
        weight = tir.min(tir.max(one - te.abs(arg), zero), one) if method == "linear" else _te_keys(arg, alpha)
        if exclude:
            weight = te.if_then_else(tir.Or(base + i < 0, base + i >= in_len), zero, weight)
        raw.append(weight)
    total = raw[0]
    for w in raw[1:]:
        total = total + w
    return [(tir.max(tir.min(base + i, in_len - 1), 0), w / total)
            for i, w in zip(range(start, start + count), raw)]


__all__ = ["window", "np_taps", "te_taps"]
