"""Independent numpy (float64) implementations of the layers the built-in workloads use.

Written directly with numpy (shifted-slice convolutions, explicit window loops), *not* through
the op registry's references, so a test comparing the interpreter with these checks the
references too. Every function takes and returns float64 arrays in NCHW / OIHW layout.
"""
import numpy as np


def conv2d(x, w, stride=1, pad=0):
    """A 2-D convolution (NCHW data, OIHW kernel) in float64, one einsum per kernel tap over the
    zero-padded input.

    Parameters
    ----------
    x : numpy.ndarray
        The input, (N, C, H, W).
    w : numpy.ndarray
        The kernel, (O, C, KH, KW).
    stride : int, optional
        The step in both directions. Defaults to 1.
    pad : int, optional
        The zero padding on every side. Defaults to 0.

    Returns
    -------
    out : numpy.ndarray
        (N, O, OH, OW) in float64.
    """
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
    """Inference batch normalization over axis 1: (x - mean) / sqrt(var + epsilon) * gamma +
    beta.

    Parameters
    ----------
    x : numpy.ndarray
        The input, channels on axis 1.
    gamma : numpy.ndarray
        The per-channel scale.
    beta : numpy.ndarray
        The per-channel offset.
    mean : numpy.ndarray
        The per-channel mean.
    var : numpy.ndarray
        The per-channel variance.
    epsilon : float, optional
        Added to the variance. Defaults to 1e-5.
    scale : bool, optional
        If False, gamma is not applied. Defaults to True.

    Returns
    -------
    out : numpy.ndarray
        The normalized array.
    """
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - np.reshape(mean, shape)) / np.sqrt(np.reshape(var, shape).astype("float64") + epsilon)
    if scale:
        y = y * np.reshape(gamma, shape)
    return y + np.reshape(beta, shape)


def max_pool2d(x, size=3, stride=2, pad=1):
    """2-D max pooling of an NCHW array; padded cells are -inf so they never win.

    Parameters
    ----------
    x : numpy.ndarray
        The input, (N, C, H, W).
    size : int, optional
        The window's height and width. Defaults to 3.
    stride : int, optional
        The step in both directions. Defaults to 2.
    pad : int, optional
        The padding on every side. Defaults to 1.

    Returns
    -------
    out : numpy.ndarray
        The pooled array.
    """
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
    """max(x, 0) elementwise.

    Parameters
    ----------
    x : numpy.ndarray
        The input.

    Returns
    -------
    out : numpy.ndarray
        The rectified array.
    """
    return np.maximum(x, 0.0)


def dense(x, w, b=None):
    """x @ w.T (+ b) in float64: relay's dense keeps the weight as (units, features).

    Parameters
    ----------
    x : numpy.ndarray
        The input, (batch, features).
    w : numpy.ndarray
        The weight, (units, features).
    b : numpy.ndarray, optional
        The bias, (units,); None (the default) adds none.

    Returns
    -------
    out : numpy.ndarray
        (batch, units).
    """
    y = np.asarray(x, dtype="float64") @ np.asarray(w, dtype="float64").T
    return y if b is None else y + b


def softmax(x, axis=-1):
    """Softmax along an axis, computed stably (the maximum subtracted first).

    Parameters
    ----------
    x : numpy.ndarray
        The input.
    axis : int, optional
        The axis to normalize over. Defaults to -1.

    Returns
    -------
    out : numpy.ndarray
        The probabilities, summing to 1 along `axis`.
    """
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
