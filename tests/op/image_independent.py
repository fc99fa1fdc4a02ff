"""Independent references for the image ops: one output element at a time, straight from the
formulas (TVM's topi docs / PyTorch / TensorFlow), with the taps' weights multiplied out instead
of nested per axis. Coordinates are computed in the ops' float type (float32, float64 for
float64 data or results) so that nearest-neighbour rounding sees the same value; sums are float64.
"""
import itertools

import numpy as np


def _ftype(*dtypes):
    return np.float64 if "float64" in [str(d) for d in dtypes] else np.float32


def _source(x, out_len, in_len, mode, lo, hi, ft, factor=None):
    x = ft(x)
    if factor:   # an explicit scale (ONNX): divide by it
        if mode == "asymmetric":
            return x / ft(factor)
        if mode == "tf_half_pixel_for_nn":
            return (x + ft(0.5)) / ft(factor)
        if mode == "half_pixel_symmetric":
            return ft(in_len / 2 * (1 - out_len / (factor * in_len))) + ((x + ft(0.5)) / ft(factor) - ft(0.5))
        if mode == "half_pixel" or (mode == "pytorch_half_pixel" and out_len > 1):
            return (x + ft(0.5)) / ft(factor) - ft(0.5)
    ratio = ft(out_len) / ft(in_len)    # x_resized / scale, as ONNX writes the transforms
    if mode in ("half_pixel", "half_pixel_symmetric"):
        return (x + ft(0.5)) / ratio - ft(0.5)
    span = in_len * factor if factor else out_len      # ONNX: the float output width
    if mode == "align_corners":
        return ft(in_len - 1) / ft(span - 1) * x if out_len > 1 and span != 1 else ft(0)
    if mode == "asymmetric":
        return x / ratio
    if mode == "pytorch_half_pixel":
        return (x + ft(0.5)) / ratio - ft(0.5) if out_len > 1 else ft(0)
    if mode == "tf_half_pixel_for_nn":
        return (x + ft(0.5)) / ratio
    lo, hi = ft(lo), ft(hi)
    if out_len > 1 and span != 1:
        return lo * ft(in_len - 1) + x * (hi - lo) * ft(in_len - 1) / ft(span - 1)
    return ft(0.5) * (lo + hi) * ft(in_len - 1)


def _nearest(c, rounding, ft):
    return int({"round": lambda: np.round(c), "round_prefer_floor": lambda: np.ceil(c - ft(0.5)),
                "round_prefer_ceil": lambda: np.floor(c + ft(0.5)), "floor": lambda: np.floor(c + ft(1e-5)),
                "ceil": lambda: np.ceil(c - ft(1e-5))}[rounding]())


def _kernel(s, a):
    """The Keys cubic kernel with coefficient a at distance s."""
    s = abs(s)
    if s <= 1:
        return (a + 2) * s ** 3 - (a + 3) * s ** 2 + 1
    if s < 2:
        return a * s ** 3 - 5 * a * s ** 2 + 8 * a * s - 4 * a
    return 0.0


def _keys(t, a):
    """Keys cubic weights for taps at -1, 0, 1, 2 around fraction t."""
    return [_kernel(t + 1, a), _kernel(t, a), _kernel(1 - t, a), _kernel(2 - t, a)]


def _stretched(c, in_len, a, shrink):
    """ONNX's antialiased taps: the kernel widened by 1/shrink around the coordinate."""
    reach = 1.0 if a.method == "linear" else 2.0
    first = int(np.floor(-reach / shrink) + 1)
    base = int(np.ceil(c)) - 1
    ratio = float(c) - base
    taps = []
    for i in range(first, 2 - first):
        arg = abs((i - ratio) * shrink)
        w = max(0.0, 1 - arg) if a.method == "linear" else _kernel(arg, a.cubic_alpha)
        if a.cubic_exclude and not 0 <= base + i < in_len:
            w = 0.0
        taps.append((min(max(base + i, 0), in_len - 1), w))
    total = sum(w for _, w in taps)
    return [(i, w / total) for i, w in taps]


def _axis(x, out_len, in_len, a, lo, hi, ft, factor=None):
    """[(index, weight)] of one output index along one axis, and whether it extrapolates."""
    mode, method = a.coordinate_transformation_mode, a.method
    c = _source(x, out_len, in_len, mode, lo, hi, ft, factor)
    clamp = lambda i: min(max(i, 0), in_len - 1)  # noqa: E731
    shrink = (factor or out_len / in_len) if getattr(a, "antialias", 0) else 1.0
    if method != "nearest_neighbor" and shrink < 1:
        return _stretched(c, in_len, a, shrink), False
    if method == "nearest_neighbor":
        rounding = a.rounding_method or ("round" if mode == "align_corners" else "floor")
        if mode == "asymmetric" and rounding == "floor" and out_len % in_len == 0 and \
                factor in (None, out_len // in_len):
            return [(x // (out_len // in_len), 1.0)], False
        taps = [(clamp(_nearest(c, rounding, ft)), 1.0)]
    elif method == "linear":
        f = int(np.floor(c))
        t = float(c) - f
        taps = [(clamp(f), 1 - t), (clamp(f + 1), t)]
    else:
        f = int(np.floor(c))
        w = _keys(float(c) - f, a.cubic_alpha)
        if a.cubic_exclude:
            w = [0.0 if not 0 <= f - 1 + k < in_len else w[k] for k in range(4)]
            w = [v / sum(w) for v in w]
        taps = [(clamp(f - 1 + k), w[k]) for k in range(4)]
    return taps, (mode == "tf_crop_and_resize" and (c < 0 or c > in_len - 1))


def resize(x, a):
    """image.resize1d/2d/3d, any layout."""
    axes = [a.layout.index(c) for c in "DHW" if c in a.layout]
    k = len(axes)
    ft = _ftype(x.dtype, a.out_dtype)
    shape = list(x.shape)
    for axis, n in zip(axes, a.size):
        shape[axis] = n
    out = np.zeros(shape)
    for idx in itertools.product(*map(range, shape)):
        per_axis, extrapolate = [], False
        for d, axis in enumerate(axes):
            taps, out_of_range = _axis(idx[axis], a.size[d], x.shape[axis], a, a.roi[d], a.roi[d + k], ft,
                                       a.scales[d] if a.scales else None)
            per_axis.append(taps)
            extrapolate |= out_of_range
        if extrapolate:
            out[idx] = a.extrapolation_value
            continue
        total = 0.0
        for combo in itertools.product(*per_axis):
            src = list(idx)
            weight = 1.0
            for axis, (i, w) in zip(axes, combo):
                src[axis] = i
                weight *= w
            total += weight * float(ft(x[tuple(src)]))
        out[idx] = total
    return out


def crop_and_resize(x, boxes, box_indices, a):
    """TensorFlow's CropAndResize (centre sample for a crop length of 1), clamped image index,
    one output element at a time in any layout (the packed NCHWxc one too)."""
    hy, wx = a.layout.index("H"), a.layout.index("W")
    hw = (x.shape[hy], x.shape[wx])
    ft = _ftype(x.dtype, a.out_dtype)
    shape = list(x.shape)
    shape[0], shape[hy], shape[wx] = boxes.shape[0], a.crop_size[0], a.crop_size[1]
    out = np.zeros(shape)
    for idx in itertools.product(*map(range, shape)):
        b = idx[0]
        img = x[min(max(int(box_indices[b]), 0), x.shape[0] - 1)]
        coords = []
        for d, v in enumerate((idx[hy], idx[wx])):
            lo, hi, n, size = ft(boxes[b, d]), ft(boxes[b, d + 2]), a.crop_size[d], hw[d]
            last = ft(size - 1)
            coords.append(lo * last + (last * (hi - lo) / ft(n - 1)) * ft(v) if n > 1 else ft(0.5) * (lo + hi) * last)
        if any(c < 0 or c > s - 1 for c, s in zip(coords, hw)):
            out[idx] = a.extrapolation_value
            continue

        def at(r, s, idx=idx, img=img):
            src = list(idx[1:])
            src[hy - 1], src[wx - 1] = min(max(r, 0), hw[0] - 1), min(max(s, 0), hw[1] - 1)
            return float(img[tuple(src)])
        if a.method == "nearest_neighbor":
            out[idx] = at(int(np.round(coords[0])), int(np.round(coords[1])))
        else:
            (r0, s0), (ty, tx) = [int(np.floor(c)) for c in coords], [float(c) - np.floor(c) for c in coords]
            out[idx] = ((1 - ty) * ((1 - tx) * at(r0, s0) + tx * at(r0, s0 + 1))
                        + ty * ((1 - tx) * at(r0 + 1, s0) + tx * at(r0 + 1, s0 + 1)))
    return out


def dilation2d(x, w, a):
    """Windowed max of zero-padded data + kernel, loops over NCHW / IHW."""
    if a.data_layout == "NHWC":
        x, w = np.transpose(x, (0, 3, 1, 2)), np.transpose(w, (2, 0, 1))
    top, left, bottom, right = a.padding
    n, c, h, wd = x.shape
    kh, kw = w.shape[1:]
    (sh, sw), (dh, dw) = a.strides, a.dilations
    oh = (h + top + bottom - (kh - 1) * dh - 1) // sh + 1
    ow = (wd + left + right - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, c, oh, ow))
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        best = -np.inf
        for p, q in itertools.product(range(kh), range(kw)):
            r, s = i * sh + p * dh - top, j * sw + q * dw - left
            v = float(x[b, ch, r, s]) if 0 <= r < h and 0 <= s < wd else 0.0
            best = max(best, v + float(w[ch, p, q]))
        out[b, ch, i, j] = best
    return out if a.data_layout == "NCHW" else np.transpose(out, (0, 2, 3, 1))


def affine_grid(theta, a):
    h, w = a.target_shape
    ys = -1 + np.arange(h) * (2.0 - 1e-7) / (h - 1)
    xs = -1 + np.arange(w) * (2.0 - 1e-7) / (w - 1)
    out = np.zeros((theta.shape[0], 2, h, w))
    for b, d, i, j in itertools.product(range(theta.shape[0]), range(2), range(h), range(w)):
        out[b, d, i, j] = theta[b, d, 0] * xs[j] + theta[b, d, 1] * ys[i] + theta[b, d, 2]
    return out


def _reflect(c, size, align):
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    if hi <= lo:
        return 0.0
    while c < lo or c > hi:      # mirror until inside
        c = 2 * lo - c if c < lo else 2 * hi - c
    return c


def grid_sample(x, grid, a):
    """PyTorch's grid_sample, one output point at a time (loops of mirror steps for reflection)."""
    k = x.ndim - 2
    sizes = x.shape[2:]
    align = a.align_corners
    out = np.zeros(x.shape[:2] + grid.shape[2:])

    def coord(g, size):
        return (g + 1) * (size - 1) / 2 if align else ((g + 1) * size - 1) / 2

    def pad(c, size):
        if a.padding_mode == "border":
            return min(max(c, 0.0), size - 1.0)
        if a.padding_mode == "reflection":
            return min(max(_reflect(c, size, align), 0.0), size - 1.0)
        return c

    def read(b, idx):
        if all(0 <= i < s for i, s in zip(idx, sizes)):
            return x[(b, slice(None)) + tuple(idx)].astype("float64")
        return np.zeros(x.shape[1])

    for b in range(x.shape[0]):
        for pos in itertools.product(*map(range, grid.shape[2:])):
            g = [float(grid[(b, k - 1 - d) + pos]) for d in range(k)]
            raw = [coord(v, s) for v, s in zip(g, sizes)]
            if a.method == "bicubic":
                total = 0.0
                base = [int(np.floor(c)) for c in raw]
                wts = [_keys(c - f, -0.75) for c, f in zip(raw, base)]
                for taps in itertools.product(range(4), repeat=k):
                    idx = [int(np.floor(pad(f - 1 + t, s))) for f, t, s in zip(base, taps, sizes)]
                    total = total + np.prod([wts[d][t] for d, t in enumerate(taps)]) * read(b, idx)
            else:
                cs = [pad(c, s) for c, s in zip(raw, sizes)]
                if a.method == "nearest":
                    total = read(b, [int(np.round(c)) for c in cs])
                else:
                    total = 0.0
                    for corner in itertools.product((0, 1), repeat=k):
                        idx = [int(np.floor(c)) + e for c, e in zip(cs, corner)]
                        wt = np.prod([(c - np.floor(c)) if e else 1 - (c - np.floor(c)) for c, e in zip(cs, corner)])
                        total = total + wt * read(b, idx)
            out[(b, slice(None)) + pos] = total
    return out
