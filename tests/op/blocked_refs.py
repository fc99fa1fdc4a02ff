"""Independent references for the channel-blocked ops, written on the blocked arrays: one
output channel and window tap at a time, float64, no unpacking through the ops' helpers."""
import numpy as np


def _out_hw(h, w, kh, kw, strides, pads, dilation):
    top, left, bottom, right = pads
    return ((h + top + bottom - (kh - 1) * dilation[0] - 1) // strides[0] + 1,
            (w + left + right - (kw - 1) * dilation[1] - 1) // strides[1] + 1)


def _padded(x, pads):
    top, left, bottom, right = pads
    return np.pad(np.asarray(x, "float64"), ((0, 0), (0, 0), (top, bottom), (left, right), (0, 0)))


def _patch(xp, chunks, p, q, oh, ow, strides, dilation):
    (sh, sw), (dh, dw) = strides, dilation
    return xp[:, chunks, p * dh:p * dh + sh * (oh - 1) + 1:sh, q * dw:q * dw + sw * (ow - 1) + 1:sw]


def direct_conv_nchwc(x, k, strides, pads, dilation, groups):
    """out[n, oo, y, x, oi] = sum over the group's input chunks and taps of the blocked formula."""
    n, cc, h, w, ib = x.shape
    oc, icc, kh, kw, _, ob = k.shape
    oh, ow = _out_hw(h, w, kh, kw, strides, pads, dilation)
    xp = _padded(x, pads)
    out = np.zeros((n, oc, oh, ow, ob))
    per_group = oc * ob // groups
    for o in range(oc * ob):
        oo, oi = divmod(o, ob)
        g = o // per_group
        for p in range(kh):
            for q in range(kw):
                patch = _patch(xp, slice(g * icc, (g + 1) * icc), p, q, oh, ow, strides, dilation)
                out[:, oo, :, :, oi] += np.einsum("nchwi,ci->nhw", patch, k[oo, :, p, q, :, oi])
    return out


def direct_depthwise_nchwc(x, k, strides, pads, dilation):
    """Output channel o reads input channel o // multiplier."""
    n, cc, h, w, ib = x.shape
    oc, _, kh, kw, _, ob = k.shape
    multiplier = oc * ob // (cc * ib)
    oh, ow = _out_hw(h, w, kh, kw, strides, pads, dilation)
    xp = _padded(x, pads)
    out = np.zeros((n, oc, oh, ow, ob))
    for o in range(oc * ob):
        c = o // multiplier
        for p in range(kh):
            for q in range(kw):
                patch = _patch(xp, c // ib, p, q, oh, ow, strides, dilation)[..., c % ib]
                out[:, o // ob, :, :, o % ob] += patch * k[o // ob, 0, p, q, 0, o % ob]
    return out


def direct_dense_pack(x, packed):
    """out[..., j] = sum_k x[..., k] * packed[j // bn, k, j % bn]."""
    no, kdim, bn = packed.shape
    out = np.zeros(x.shape[:-1] + (no * bn,))
    for j in range(no * bn):
        out[..., j] = np.asarray(x, "float64") @ np.asarray(packed[j // bn, :, j % bn], "float64")
    return out


def blocked_to_nchw(x):
    """(N, C/b, H, W, b) -> (N, C, H, W), channel by channel."""
    n, cc, h, w, b = x.shape
    out = np.empty((n, cc * b, h, w), x.dtype)
    for c in range(cc * b):
        out[:, c] = x[:, c // b, :, :, c % b]
    return out


def nchw_to_blocked(x, b):
    n, c, h, w = x.shape
    out = np.empty((n, c // b, h, w, b), x.dtype)
    for ch in range(c):
        out[:, ch // b, :, :, ch % b] = x[:, ch]
    return out
