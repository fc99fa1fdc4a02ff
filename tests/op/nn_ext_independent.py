"""Independent references for the nn ops of issue 20 (conv1d/3d, transposed convs, 1-D/3-D and
adaptive pools, space/depth/batch rearrangements, normalizations, losses, ...): plain loops and
formulas in float64 over tiny shapes, written without looking at the ops' numpy `ref`s.
tests/op/test_nn.py merges NN_EXT_INDEPENDENT into its table."""
import itertools
import math

import numpy as np


def _f64(x):
    return np.asarray(x, dtype="float64")


def _channel_first(x, layout, letters):
    return np.transpose(x, [layout.index(c) for c in letters])


def _back(x, letters, layout):
    return np.transpose(x, [letters.index(c) for c in layout])


SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def ind_conv_nd(x, w, a):
    """Direct loops: out[n, o, p] = sum over (c, k) of x[n, g*I + c, p*s + k*d - pad] * w[o, c, k]."""
    nd = len(a.strides)
    dl, kl = "NC" + SPATIAL[nd], "OI" + SPATIAL[nd]
    x = _f64(_channel_first(x, a.data_layout, dl))
    w = _f64(_channel_first(w, a.kernel_layout, kl))
    n, c, *size = x.shape
    o, i, *kernel = w.shape
    pad_b, pad_a = a.padding[:nd], a.padding[nd:]
    out = [(size[k] + pad_b[k] + pad_a[k] - (kernel[k] - 1) * a.dilation[k] - 1) // a.strides[k] + 1
           for k in range(nd)]
    res = np.zeros([n, o] + out)
    per_group = o // a.groups
    for b, oc in itertools.product(range(n), range(o)):
        g = oc // per_group
        for pos in itertools.product(*[range(v) for v in out]):
            acc = 0.0
            for ic in range(i):
                for tap in itertools.product(*[range(v) for v in kernel]):
                    src = [p * s + t * d - pb for p, s, t, d, pb in zip(pos, a.strides, tap, a.dilation, pad_b)]
                    if all(0 <= v < lim for v, lim in zip(src, size)):
                        acc += x[(b, g * i + ic) + tuple(src)] * w[(oc, ic) + tap]
            res[(b, oc) + pos] = acc
    return _back(res, dl, a.out_layout or a.data_layout)


def ind_conv_transpose(x, w, a):
    """Scatter loops: every input cell adds x * w[c, o, k] at output i*s + k*d - pad_before."""
    nd = len(a.strides)
    dl, kl = "NC" + SPATIAL[nd], "IO" + SPATIAL[nd]
    x = _f64(_channel_first(x, a.data_layout, dl))
    w = _f64(_channel_first(w, a.kernel_layout, kl))
    n, c, *size = x.shape
    _, og, *kernel = w.shape
    pad_b, pad_a = a.padding[:nd], a.padding[nd:]
    out = [(size[k] - 1) * a.strides[k] + (kernel[k] - 1) * a.dilation[k] + 1 - pad_b[k] - pad_a[k]
           + a.output_padding[k] for k in range(nd)]
    res = np.zeros([n, og * a.groups] + out)
    per_group = c // a.groups
    for b, ic in itertools.product(range(n), range(c)):
        g = ic // per_group
        for pos in itertools.product(*[range(v) for v in size]):
            for o in range(og):
                for tap in itertools.product(*[range(v) for v in kernel]):
                    dst = [p * s + t * d - pb for p, s, t, d, pb in zip(pos, a.strides, tap, a.dilation, pad_b)]
                    if all(0 <= v < lim for v, lim in zip(dst, out)):
                        res[(b, g * og + o) + tuple(dst)] += x[(b, ic) + pos] * w[(ic, o) + tap]
    return _back(res, dl, a.out_layout or a.data_layout)


def _window_out(size, k, s, d, before, after, ceil_mode):
    span = (k - 1) * d + 1
    out = (math.ceil if ceil_mode else math.floor)((size + before + after - span) / s) + 1
    if ceil_mode and (out - 1) * s >= size + before:    # PyTorch: the last window starts inside
        out -= 1
    return out


def ind_pool_nd(kind):
    def run(x, a):
        nd = len(a.pool_size)
        letters, dtype = "NC" + SPATIAL[nd], x.dtype
        x = _f64(_channel_first(x, a.layout, letters))
        n, c, *size = x.shape
        pad_b, pad_a = a.padding[:nd], a.padding[nd:]
        out = [_window_out(size[k], a.pool_size[k], a.strides[k], a.dilation[k], pad_b[k], pad_a[k], a.ceil_mode)
               for k in range(nd)]
        res = np.zeros([n, c] + out)
        for pos in itertools.product(*[range(v) for v in out]):
            cells, counted = [], 0
            for tap in itertools.product(*[range(v) for v in a.pool_size]):
                src = [p * s + t * d - b for p, s, t, d, b in zip(pos, a.strides, tap, a.dilation, pad_b)]
                if all(0 <= v < lim for v, lim in zip(src, size)):
                    cells.append(x[(slice(None), slice(None)) + tuple(src)])
                if getattr(a, "count_include_pad", False):
                    counted += all(-b <= v < lim + e for v, lim, b, e in zip(src, size, pad_b, pad_a))
            if kind == "max":
                res[(slice(None), slice(None)) + pos] = np.max(cells, axis=0)
            else:
                counted = counted if getattr(a, "count_include_pad", False) else len(cells)
                res[(slice(None), slice(None)) + pos] = np.sum(cells, axis=0) / max(counted, 1)
        if kind == "avg" and np.dtype(dtype).kind in "iu":
            res = np.trunc(res)       # TVM divides integer window sums truncating toward zero
        return _back(res, letters, a.layout)
    return run


def ind_adaptive(kind):
    def run(x, a):
        nd = len(a.layout) - 2
        letters = "NC" + SPATIAL[nd]
        x = _f64(_channel_first(x, a.layout, letters))
        n, c, *size = x.shape
        out = [s if a.output_size is None or a.output_size[k] is None else a.output_size[k]
               for k, s in enumerate(size)]
        res = np.zeros([n, c] + out)
        for pos in itertools.product(*[range(v) for v in out]):
            box = tuple(slice(math.floor(p * s / o), math.ceil((p + 1) * s / o)) for p, s, o in zip(pos, size, out))
            region = x[(slice(None), slice(None)) + box].reshape(n, c, -1)
            res[(slice(None), slice(None)) + pos] = region.max(axis=2) if kind == "max" else region.mean(axis=2)
        return _back(res, letters, a.layout)
    return run


NN_EXT_INDEPENDENT = {
    "nn.conv1d": ind_conv_nd,
    "nn.conv3d": ind_conv_nd,
    "nn.conv1d_transpose": ind_conv_transpose,
    "nn.conv2d_transpose": ind_conv_transpose,
    "nn.conv3d_transpose": ind_conv_transpose,
    "nn.max_pool1d": ind_pool_nd("max"),
    "nn.avg_pool1d": ind_pool_nd("avg"),
    "nn.max_pool3d": ind_pool_nd("max"),
    "nn.avg_pool3d": ind_pool_nd("avg"),
    "nn.adaptive_max_pool1d": ind_adaptive("max"),
    "nn.adaptive_avg_pool1d": ind_adaptive("avg"),
    "nn.adaptive_max_pool2d": ind_adaptive("max"),
    "nn.adaptive_max_pool3d": ind_adaptive("max"),
    "nn.adaptive_avg_pool3d": ind_adaptive("avg"),
}
