"""Independent references for the nn ops of issue 20 (conv1d/3d, transposed convs, 1-D/3-D and
adaptive pools, space/depth/batch rearrangements, normalizations, losses, ...): plain loops and
formulas in float64 over tiny shapes, written without looking at the ops' numpy `ref`s.
tests/op/test_nn.py merges NN_EXT_INDEPENDENT into its table."""
import dataclasses
import itertools
import math

import numpy as np
import scipy.sparse


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


def ind_depth_to_space(x, a):
    x = _channel_first(x, a.layout, "NCHW")
    n, c, h, w = x.shape
    b = a.block_size
    out = np.zeros((n, c // (b * b), h * b, w * b), x.dtype)
    for ch, y, z in itertools.product(range(c // (b * b)), range(h * b), range(w * b)):
        i, j = y % b, z % b
        src = (i * b + j) * (c // (b * b)) + ch if a.mode == "DCR" else ch * b * b + i * b + j
        out[:, ch, y, z] = x[:, src, y // b, z // b]
    return _back(out, "NCHW", a.layout)


def ind_space_to_depth(x, a):
    x = _channel_first(x, a.layout, "NCHW")
    n, c, h, w = x.shape
    b = a.block_size
    out = np.zeros((n, c * b * b, h // b, w // b), x.dtype)
    for i, j, ch in itertools.product(range(b), range(b), range(c)):
        out[:, (i * b + j) * c + ch] = x[:, ch, i:(h // b) * b:b, j:(w // b) * b:b]
    return _back(out, "NCHW", a.layout)


def ind_space_to_batch(x, a):
    m = len(a.block_shape)
    padded = np.pad(x, [(0, 0)] + list(a.paddings) + [(0, 0)] * (x.ndim - 1 - m), constant_values=a.pad_value)
    n = x.shape[0]
    offsets = list(itertools.product(*[range(b) for b in a.block_shape]))
    parts = []
    for off in offsets:          # TensorFlow: output batch = block offset (row-major) * N + n
        index = (slice(None),) + tuple(slice(o, None, b) for o, b in zip(off, a.block_shape))
        parts.append(padded[index])
    return np.concatenate(parts, axis=0).reshape((n * len(offsets),) + parts[0].shape[1:])


def ind_batch_to_space(x, a):
    m = len(a.block_shape)
    offsets = list(itertools.product(*[range(b) for b in a.block_shape]))
    n = x.shape[0] // len(offsets)
    full = np.zeros((n,) + tuple(s * b for s, b in zip(x.shape[1:1 + m], a.block_shape)) + x.shape[1 + m:], x.dtype)
    for k, off in enumerate(offsets):
        index = (slice(None),) + tuple(slice(o, None, b) for o, b in zip(off, a.block_shape))
        full[index] = x[k * n:(k + 1) * n]
    return full[(slice(None),) + tuple(slice(c0, full.shape[1 + i] - c1) for i, (c0, c1) in enumerate(a.crops))]


def ind_mirror_pad(x, a):
    edge = 1 if a.mode == "REFLECT" else 0
    index = []
    for d, (before, after) in zip(x.shape, a.pad_width):
        left = [-p - 1 + edge for p in range(-before, 0)]       # position p < 0 mirrors to -p - 1 (+ 1)
        right = [2 * d - 1 - p - edge for p in range(d, d + after)]
        index.append(np.array(left + list(range(d)) + right, dtype=int))
    return x[np.ix_(*index)]


def ind_dilate(x, a):
    out = np.full([(d - 1) * s + 1 if d else 0 for d, s in zip(x.shape, a.strides)], a.dilation_value)
    for i in itertools.product(*[range(d) for d in x.shape]):
        out[tuple(k * s for k, s in zip(i, a.strides))] = x[i]
    return out


def _cubic(t, alpha=-0.5):
    """Keys' kernel at distance t."""
    t = abs(t)
    if t <= 1:
        return (alpha + 2) * t ** 3 - (alpha + 3) * t ** 2 + 1
    if t < 2:
        return alpha * t ** 3 - 5 * alpha * t ** 2 + 8 * alpha * t - 4 * alpha
    return 0.0


def _source(o, size, out, mode):
    if mode == "align_corners":
        return o * (size - 1) / (out - 1) if out > 1 else 0.0
    if mode == "half_pixel":
        return (o + 0.5) * size / out - 0.5
    return o * size / out


def _taps(o, size, out, method, mode):
    """[(input index, weight)] along one axis for output index o."""
    x = _source(o, size, out, mode)
    clamp = lambda i: min(max(i, 0), size - 1)  # noqa: E731
    if method == "nearest":
        return [(clamp(int(np.rint(x)) if mode == "align_corners" else math.floor(x + 1e-5)), 1.0)]
    base = math.floor(x)
    if method == "linear":
        return [(clamp(base), 1 - (x - base)), (clamp(base + 1), x - base)]
    return [(clamp(base + k), _cubic(x - base - k)) for k in (-1, 0, 1, 2)]


def ind_upsampling(x, a):
    nd = len(a.layout) - 2
    letters = "NC" + SPATIAL[nd]
    method = {"nearest_neighbor": "nearest", "bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}[a.method]
    mode = ("align_corners" if a.align_corners else "asymmetric") if nd == 2 else a.coordinate_transformation_mode
    scales = [a.scale_h, a.scale_w] if nd == 2 else [a.scale_d, a.scale_h, a.scale_w]
    data = _channel_first(x, a.layout, letters)
    size = data.shape[2:]
    out = [int(round(s * k)) for s, k in zip(size, scales)]
    res = np.zeros(data.shape[:2] + tuple(out))
    for pos in itertools.product(*[range(o) for o in out]):
        per_axis = [_taps(p, s, o, method, mode) for p, s, o in zip(pos, size, out)]
        for combo in itertools.product(*per_axis):
            weight = np.prod([w for _, w in combo])
            res[(slice(None), slice(None)) + pos] += weight * _f64(data[(slice(None), slice(None)) +
                                                                          tuple(i for i, _ in combo)])
    if np.dtype(x.dtype).kind in "iu":
        res = np.trunc(res)
    return _back(res, letters, a.layout)


def ind_group_norm(x, g, b, a):
    """Loops over (batch, group): mean and variance of every cell of the group's channels."""
    ax = a.axis % x.ndim
    data = np.moveaxis(_f64(x), ax, 1)
    n, c = data.shape[:2]
    groups = getattr(a, "num_groups", c)
    out = np.empty_like(data)
    size = c // groups
    for i in range(n):
        for k in range(groups):
            cells = data[i, k * size:(k + 1) * size]
            out[i, k * size:(k + 1) * size] = (cells - cells.mean()) / math.sqrt(cells.var() + a.epsilon)
    for ch in range(c):
        if a.scale:
            out[:, ch] *= float(g[ch])
        if a.center:
            out[:, ch] += float(b[ch])
    return np.moveaxis(out, 1, ax)


def ind_l2_normalize(x, a):
    axes = tuple(range(x.ndim)) if a.axis is None else tuple(k % x.ndim for k in a.axis)
    norm = np.sqrt(np.maximum(np.sum(_f64(x) ** 2, axis=axes, keepdims=True), a.eps))
    return _f64(x) / norm


def ind_nll_loss(p, t, w, a):
    p, w = _f64(p), _f64(w)
    if p.ndim == 1:
        p, t = p[None], np.asarray(t)[None]
    losses, weights = np.zeros(t.shape), np.zeros(t.shape)
    for i in itertools.product(*[range(d) for d in t.shape]):
        c = int(t[i])
        if c != a.ignore_index:
            losses[i] = -p[(i[0], c) + i[1:]] * w[c]
            weights[i] = w[c]
    if a.reduction == "none":
        return losses.reshape(np.shape(t)) if np.ndim(t) else losses[0]
    if a.reduction == "sum":
        return losses.sum()
    return losses.sum() / weights.sum()


def ind_pool2d_grad(kind):
    """Loops over the forward windows: max sends the gradient to the window's first maximum
    (row-major), avg divides it by the counted cells and adds it to each input cell."""
    def run(g, x, a):
        g = _f64(_channel_first(g, a.layout, "NCHW"))
        x = _f64(_channel_first(x, a.layout, "NCHW"))
        n, c, h, w = x.shape
        top, left, bottom, right = a.padding
        dx = np.zeros_like(x)
        for b, ch, oy, ox in itertools.product(range(n), range(c), range(g.shape[2]), range(g.shape[3])):
            cells, counted = [], 0
            for p, q in itertools.product(range(a.pool_size[0]), range(a.pool_size[1])):
                y, z = oy * a.strides[0] + p * a.dilation[0] - top, ox * a.strides[1] + q * a.dilation[1] - left
                if 0 <= y < h and 0 <= z < w:
                    cells.append((y, z))
                if -top <= y < h + bottom and -left <= z < w + right:
                    counted += 1
            if kind == "max":
                values = [x[b, ch, y, z] for y, z in cells]
                y, z = cells[values.index(max(values))]
                dx[b, ch, y, z] += g[b, ch, oy, ox]
            else:
                count = counted if a.count_include_pad else len(cells)
                for y, z in cells:
                    dx[b, ch, y, z] += g[b, ch, oy, ox] / max(count, 1)
        return _back(dx, "NCHW", a.layout)
    return run


def ind_conv2d_backward_weight(g, x, a):
    g = _f64(_channel_first(g, a.grad_layout, "NCHW"))
    x = _f64(_channel_first(x, a.data_layout, "NCHW"))
    n, c, h, w = x.shape
    o = g.shape[1]
    kh, kw = a.kernel_size
    per_in, per_out = c // a.groups, o // a.groups
    dw = np.zeros((o, per_in, kh, kw))
    for oc, ic, p, q in itertools.product(range(o), range(per_in), range(kh), range(kw)):
        channel = (oc // per_out) * per_in + ic
        for b, y, z in itertools.product(range(n), range(g.shape[2]), range(g.shape[3])):
            row = y * a.strides[0] + p * a.dilation[0] - a.padding[0]
            col = z * a.strides[1] + q * a.dilation[1] - a.padding[1]
            if 0 <= row < h and 0 <= col < w:
                dw[oc, ic, p, q] += g[b, oc, y, z] * x[b, channel, row, col]
    return _back(dw, "OIHW", a.kernel_layout)


def _scipy_matrix(data, indices, indptr, cols):
    if data.ndim == 3:
        rows = (len(indptr) - 1) * data.shape[1]
        return scipy.sparse.bsr_matrix((_f64(data), indices, indptr), shape=(rows, cols))
    return scipy.sparse.csr_matrix((_f64(data), indices, indptr), shape=(len(indptr) - 1, cols))


def ind_sparse_dense(d, data, indices, indptr, a):
    s = _scipy_matrix(data, indices, indptr, d.shape[1])
    return (s @ _f64(d).T) if a.sparse_lhs else (s @ _f64(d).T).T


def ind_sparse_transpose(data, indices, indptr, a=None):
    n = len(indptr) - 1
    t = _scipy_matrix(data, indices, indptr, n).T.tocsr()
    return t.data, t.indices, t.indptr


def ind_fifo_buffer(data, buffer, a):
    ax = a.axis % buffer.ndim
    kept = np.moveaxis(buffer, ax, 0)[data.shape[ax]:]       # the oldest entries fall out
    return np.moveaxis(np.concatenate([kept, np.moveaxis(data, ax, 0)], axis=0), 0, ax)


def ind_correlation(x1, x2, a):
    top, left, bottom, right = a.padding
    p1 = np.pad(_f64(x1), ((0, 0), (0, 0), (top, bottom), (left, right)))
    p2 = np.pad(_f64(x2), ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, c, hp, wp = p1.shape
    k, md = a.kernel_size, a.max_displacement
    radius = md // a.stride2
    border = md + (k - 1) // 2
    oh, ow = math.ceil((hp - 2 * border) / a.stride1), math.ceil((wp - 2 * border) / a.stride1)
    size = 2 * radius + 1
    out = np.zeros((n, size * size, oh, ow))
    for q, i, j in itertools.product(range(size * size), range(oh), range(ow)):
        y1, x1_ = i * a.stride1 + md, j * a.stride1 + md
        y2, x2_ = y1 + (q // size - radius) * a.stride2, x1_ + (q % size - radius) * a.stride2
        u, v = p1[:, :, y1:y1 + k, x1_:x1_ + k], p2[:, :, y2:y2 + k, x2_:x2_ + k]
        out[:, q, i, j] = (u * v if a.is_multiply else np.abs(u - v)).sum(axis=(1, 2, 3)) / (k * k * c)
    return out


def _bilinear_at(img, h, w):
    """img (H, W) at (h, w): zero outside, neighbours outside the image count as zero."""
    height, width = img.shape
    if h < 0 or w < 0 or h >= height or w >= width:
        return 0.0
    y0, x0 = math.floor(h), math.floor(w)
    total = 0.0
    for yy, wy in ((y0, 1 - (h - y0)), (y0 + 1, h - y0)):
        for xx, wx in ((x0, 1 - (w - x0)), (x0 + 1, w - x0)):
            if 0 <= yy < height and 0 <= xx < width:
                total += wy * wx * img[yy, xx]
    return total


def ind_deformable_conv2d(x, off, wt, a):
    x = _f64(_channel_first(x, a.data_layout, "NCHW"))
    off = _f64(_channel_first(off, a.data_layout, "NCHW"))
    wt = _f64(_channel_first(wt, a.kernel_layout, "OIHW"))
    n, c = x.shape[:2]
    o, i, kh, kw = wt.shape
    oh, ow = off.shape[2:]
    out = np.zeros((n, o, oh, ow))
    per_dgroup, per_group = c // a.deformable_groups, o // a.groups
    for b, oc, y, z in itertools.product(range(n), range(o), range(oh), range(ow)):
        for ic, p, q in itertools.product(range(i), range(kh), range(kw)):
            ch = (oc // per_group) * i + ic
            base = (ch // per_dgroup) * kh * kw * 2 + (p * kw + q) * 2
            h = y * a.strides[0] - a.padding[0] + p * a.dilation[0] + off[b, base, y, z]
            w = z * a.strides[1] - a.padding[1] + q * a.dilation[1] + off[b, base + 1, y, z]
            out[b, oc, y, z] += _bilinear_at(x[b, ch], h, w) * wt[oc, ic, p, q]
    return _back(out, "NCHW", a.out_layout or a.data_layout)


def ind_winograd_weight_transform(w, a):
    """U[p, q, o, i] = sum over taps (k, l) of G[p, k] * w[o, i, k, l] * G[q, l], a loop over (p, q)."""
    from relay_backend.op.nn.winograd_matrices import winograd_matrices
    g = winograd_matrices(a.tile_size, w.shape[2])[2]
    w = _f64(w)
    out = np.zeros((g.shape[0], g.shape[0]) + w.shape[:2])
    for p, q in itertools.product(range(g.shape[0]), repeat=2):
        out[p, q] = np.sum(w * g[p][None, None, :, None] * g[q][None, None, None, :], axis=(2, 3))
    return out


def _winograd_blocked(x, u, a):
    """NCHW{bi}c data and a transform packed along O, (alpha, alpha, O/bo, I, bo), as NCHW data
    and an (alpha, alpha, O, I) transform, by index arithmetic on copies (channel c is block
    c // b, lane c % b); the NCHW result is packed back the same way."""
    n, cb, h, w, bi = x.shape
    alpha, _, ob, i, bo = u.shape
    flat_x = np.zeros((n, cb * bi, h, w), x.dtype)
    for c in range(cb * bi):
        flat_x[:, c] = x[:, c // bi, :, :, c % bi]
    flat_u = np.zeros((alpha, alpha, ob * bo, i), u.dtype)
    for o in range(ob * bo):
        flat_u[:, :, o] = u[:, :, o // bo, :, o % bo]
    out = ind_winograd_conv(flat_x, flat_u, dataclasses.replace(a, data_layout="NCHW", out_layout=""))
    packed = np.zeros((n, ob, out.shape[2], out.shape[3], bo))
    for o in range(ob * bo):
        packed[:, o // bo, :, :, o % bo] = out[:, o]
    return packed


def ind_winograd_conv(x, u, a):
    """The kernel recovered from its transform (G has full column rank: pinv(G) U pinv(G)^T is
    w), then a stride-1 convolution as a sum over the taps of shifted inputs."""
    from relay_backend.op.nn.winograd_matrices import winograd_matrices
    if x.ndim == 5:
        return _winograd_blocked(x, u, a)
    g_inv = np.linalg.pinv(winograd_matrices(a.tile_size, u.shape[0] - a.tile_size + 1)[2])
    kernel = np.einsum("kp,pqoi,lq->oikl", g_inv, _f64(u), g_inv)
    top, left, bottom, right = a.padding
    x = np.pad(_f64(x), ((0, 0), (0, 0), (top, bottom), (left, right)))
    r, (h, w) = kernel.shape[2], x.shape[2:]
    out = 0.0
    for k, l in itertools.product(range(r), repeat=2):
        out = out + np.einsum("nchw,oc->nohw", x[:, :, k:k + h - r + 1, l:l + w - r + 1], kernel[:, :, k, l])
    return out


NN_EXT_INDEPENDENT = {
    "nn.contrib_conv2d_winograd_weight_transform": ind_winograd_weight_transform,
    "nn.contrib_conv2d_winograd_without_weight_transform": ind_winograd_conv,
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
    "nn.depth_to_space": ind_depth_to_space,
    "nn.space_to_depth": ind_space_to_depth,
    "nn.space_to_batch_nd": ind_space_to_batch,
    "nn.batch_to_space_nd": ind_batch_to_space,
    "nn.mirror_pad": ind_mirror_pad,
    "nn.dilate": ind_dilate,
    "nn.upsampling": ind_upsampling,
    "nn.upsampling3d": ind_upsampling,
    "nn.instance_norm": ind_group_norm,
    "nn.group_norm": ind_group_norm,
    "nn.l2_normalize": ind_l2_normalize,
    "nn.cross_entropy": lambda p, t, a: -np.sum(np.log(_f64(p)) * _f64(t)) / p.shape[0],
    "nn.cross_entropy_with_logits": lambda p, t, a: -np.sum(_f64(p) * _f64(t)) / p.shape[0],
    "nn.nll_loss": ind_nll_loss,
    "nn.max_pool2d_grad": ind_pool2d_grad("max"),
    "nn.avg_pool2d_grad": ind_pool2d_grad("avg"),
    "nn.conv2d_backward_weight": ind_conv2d_backward_weight,
    "nn.fifo_buffer": ind_fifo_buffer,
    "nn.correlation": ind_correlation,
    "nn.deformable_conv2d": ind_deformable_conv2d,
    "nn.sparse_dense": ind_sparse_dense,
    "nn.sparse_transpose": ind_sparse_transpose,
    "nn.sparse_add": lambda d, data, indices, indptr, a: _f64(d) + _scipy_matrix(data, indices, indptr,
                                                                                  d.shape[1]).toarray(),
}
