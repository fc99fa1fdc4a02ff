"""Independent numpy (float64) implementations of the layers the built-in workloads use.

Written directly with numpy (shifted-slice convolutions, explicit window loops), *not* through
the op registry's references, so a test comparing the interpreter with these checks the
references too. Every function takes and returns float64 arrays in NCHW / OIHW layout.
"""
import numpy as np


def conv2d(x, w, stride=1, pad=0):
    """Convolution by summing one einsum per kernel tap over a zero-padded input."""
    x = np.asarray(x, dtype="float64")
    w = np.asarray(w, dtype="float64")
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out_h = (h + 2 * pad - kh) // stride + 1
    out_w = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, out_h, out_w))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * (out_h - 1) + 1:stride, j:j + stride * (out_w - 1) + 1:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def batch_norm(x, gamma, beta, mean, var, epsilon=1e-5, scale=True):
    """Inference batch norm over axis 1: (x - mean) / sqrt(var + eps) * gamma + beta."""
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - np.reshape(mean, shape)) / np.sqrt(np.reshape(var, shape).astype("float64") + epsilon)
    if scale:
        y = y * np.reshape(gamma, shape)
    return y + np.reshape(beta, shape)


def max_pool2d(x, size=3, stride=2, pad=1):
    """Max pooling; padded cells are -inf so they never win."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    out_h = (h + 2 * pad - size) // stride + 1
    out_w = (w + 2 * pad - size) // stride + 1
    out = np.full((n, c, out_h, out_w), -np.inf)
    for i in range(size):
        for j in range(size):
            out = np.maximum(out, xp[:, :, i:i + stride * (out_h - 1) + 1:stride,
                                     j:j + stride * (out_w - 1) + 1:stride])
    return out


def relu(x):
    return np.maximum(x, 0.0)


def dense(x, w, b=None):
    """x @ w.T (+ b): relay's dense keeps the weight as (units, features)."""
    y = np.asarray(x, dtype="float64") @ np.asarray(w, dtype="float64").T
    return y if b is None else y + b


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
