"""dft and stft (TVM's relay.dft / relay.stft), direct sums as TVM's kernels compute them.

dft(re_data, im_data, inverse) transforms along the last axis: out[n] = sum_k x[k] *
exp(-+2 pi i n k / N), divided by N when inverse (numpy's fft / ifft); it returns the tuple
(re, im). stft(data, n_fft, hop_length, win_length, window, normalized, onesided) takes frames
of win_length samples every hop_length of a 1-D signal or a batch of them and returns
(batch?, n_fft // 2 + 1 if onesided else n_fft, frames, 2) with frames = (length - n_fft) //
hop_length + 1 and, as TVM's kernel, the frequency of bin r over the window being r / win_length;
normalized divides by sqrt(n_fft). Angles reduce n * k modulo N in integers first, and the sums
run in float64 whatever the data's dtype (a float32 sum of N terms leaves absolute errors of
N * eps * max|x| in bins that are exactly 0, where numpy's fft gives ~1e-15), rounded once.
"""
import dataclasses
import math

import numpy as np

from ... import te, tir
from ...errors import AttrsError, TypeInferenceError
from ...ir.attrs import Attrs, always_printed
from ...ir.dims import is_static
from ...ir.types import TensorType, TupleType, type_to_str
from .. import samples as S
from ..compute_common import cast as te_cast
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..relations import expect_tensor, is_float_dtype


def _angle(step, period, sign, dtype):
    """sign * 2 pi * (step mod period) / period, in `dtype` (step, period: int64 PrimExprs)."""
    turns = tir.floormod(step, period).astype(dtype) / period.astype(dtype)
    return turns * tir.const(sign * 2.0 * math.pi, dtype)


# --- dft ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DFTAttrs(Attrs):
    inverse: bool = always_printed(False)

    def __post_init__(self):
        object.__setattr__(self, "inverse", bool(self.inverse))


def _dft_rel(arg_types, attrs):
    re = expect_tensor(arg_types[0], "re_data")
    im = expect_tensor(arg_types[1], "im_data")
    if re != im:
        raise TypeInferenceError(f"dft: re_data and im_data must have one type, got {type_to_str(re)} and "
                                 f"{type_to_str(im)}")
    if not is_float_dtype(re.dtype) or len(re.shape) == 0:
        raise TypeInferenceError(f"dft: expects float tensors of rank >= 1, got {type_to_str(re)}")
    return TupleType([re, im])


def _dft_ref(re, im, attrs):
    if re.shape[-1] == 0:
        return [re.copy(), im.copy()]
    signal = re.astype("float64") + 1j * im.astype("float64")
    out = np.fft.ifft(signal, axis=-1) if attrs.inverse else np.fft.fft(signal, axis=-1)
    return [out.real.astype(re.dtype), out.imag.astype(re.dtype)]


def _dim64(d):
    return tir.const(int(d), "int64") if isinstance(d, int) or isinstance(d, tir.IntImm) else d.astype("int64")


def _dft_compute(attrs, inputs, out_type):
    re, im = inputs
    dtype, acc = re.dtype, "float64"
    shape = list(re.shape)
    n_fft = shape[-1]
    period = _dim64(n_fft)
    sign = 1.0 if attrs.inverse else -1.0

    def part_sum(part):
        k = te.reduce_axis((0, n_fft), "k")

        def element(*index):
            w = _angle(index[-1].astype("int64") * k.var.astype("int64"), period, sign, acc)
            at = tuple(index[:-1]) + (k.var,)
            x_re, x_im = te_cast(re[at], acc), te_cast(im[at], acc)
            value = x_re * te.cos(w) - x_im * te.sin(w) if part == "re" else x_re * te.sin(w) + x_im * te.cos(w)
            return te.sum(value, axis=[k])
        total = te.compute(shape, element, name=f"T_dft_{part}_sum", tag="dft")

        def scaled(*i):
            v = total[i]
            if attrs.inverse:
                v = v / period.astype(acc)
            return te_cast(v, dtype)
        return te.compute(shape, scaled, name=f"T_dft_{part}", tag="dft")
    return [part_sum("re"), part_sum("im")]


def _dft_samples(rng):
    def pair(shape, dtype="float32"):
        return [S.rand(rng, shape, dtype), S.rand(rng, shape, dtype)]
    long16 = S.FLOAT16_REDUCTION_TERMS
    return [Sample(pair((2, 8)), DFTAttrs(False)),
            Sample(pair((3, 5), "float64"), DFTAttrs(True)),
            Sample(pair((1,)), DFTAttrs(False)),
            Sample(pair((2, 0)), DFTAttrs(True)),
            Sample([S.rand(rng, (2, 3, 6)), np.zeros((2, 3, 6), "float32")], DFTAttrs(False)),
            Sample([S.rand(rng, (long16,), "float16", 0.0, 1.0), np.zeros((long16,), "float16")], DFTAttrs(True))]


DFT = defop("dft", inputs=("re_data", "im_data"), attrs=DFTAttrs, rel=_dft_rel, pattern=OpPattern.OPAQUE,
            ref=_dft_ref, compute=_dft_compute, level=10, samples=_dft_samples,
            doc="discrete Fourier transform along the last axis: (re, im)")


def dft(re_data, im_data, inverse=False):
    """relay.dft: the (inverse) discrete Fourier transform along the last axis; a TupleWrapper
    (re, im) as tvm.relay's.

    Parameters
    ----------
    re_data : relay.Expr
        The real part of the input.
    im_data : relay.Expr
        The imaginary part, of re_data's shape.
    inverse : bool, optional
        If True, the inverse transform (divided by the length of the last axis). Defaults to
        False.

    Returns
    -------
    result : relay.TupleWrapper
        (real part, imaginary part) of the transform, each of the input's shape.
    """
    from ...ir.expr import TupleWrapper
    return TupleWrapper(DFT(re_data, im_data, attrs=DFTAttrs(inverse)), 2)


# --- stft --------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class StftAttrs(Attrs):
    n_fft: int = always_printed(1)
    hop_length: int = always_printed(1)
    win_length: int = always_printed(1)
    normalized: bool = False
    onesided: bool = True

    def __post_init__(self):
        for name in ("n_fft", "hop_length", "win_length"):
            value = int(getattr(self, name))
            if value < 1:
                raise AttrsError(f"stft: {name} must be >= 1, got {value}")
            object.__setattr__(self, name, value)
        object.__setattr__(self, "normalized", bool(self.normalized))
        object.__setattr__(self, "onesided", bool(self.onesided))


def _stft_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "data")
    window = expect_tensor(arg_types[1], "window")
    if len(data.shape) not in (1, 2) or not is_float_dtype(data.dtype):
        raise TypeInferenceError(f"stft: data must be a float signal (length,) or batch (batch, length), "
                                 f"got {type_to_str(data)}")
    if len(window.shape) != 1:
        raise TypeInferenceError(f"stft: window must be 1-D, got {type_to_str(window)}")
    if is_static(window.shape[0]) and int(window.shape[0]) < attrs.win_length:
        raise TypeInferenceError(f"stft: window has {window.shape[0]} values for win_length={attrs.win_length}")
    length = data.shape[-1]
    if is_static(length):
        if int(length) < max(attrs.n_fft, attrs.win_length):
            raise TypeInferenceError(f"stft: the signal ({length} samples) is shorter than n_fft={attrs.n_fft} "
                                     f"/ win_length={attrs.win_length}")
        frames = (int(length) - attrs.n_fft) // attrs.hop_length + 1
    else:
        frames = (length - attrs.n_fft) // attrs.hop_length + 1
    bins = attrs.n_fft // 2 + 1 if attrs.onesided else attrs.n_fft
    return TensorType(tuple(data.shape[:-1]) + (bins, frames, 2), data.dtype)


def _stft_ref(data, window, attrs):
    signal = data.astype("float64").reshape(-1, data.shape[-1])
    bins = attrs.n_fft // 2 + 1 if attrs.onesided else attrs.n_fft
    frames = (data.shape[-1] - attrs.n_fft) // attrs.hop_length + 1
    taps = np.arange(attrs.win_length)
    starts = np.arange(frames) * attrs.hop_length
    pieces = signal[:, starts[:, None] + taps[None, :]] * window[: attrs.win_length].astype("float64")
    phase = np.exp(-2j * np.pi * np.outer(np.arange(bins), taps) / attrs.win_length)    # (bins, taps)
    spectrum = np.einsum("bft,rt->brf", pieces, phase)
    if attrs.normalized:
        spectrum = spectrum / np.sqrt(attrs.n_fft)
    out = np.stack([spectrum.real, spectrum.imag], axis=-1).astype(data.dtype)
    return out.reshape(data.shape[:-1] + out.shape[1:])


def _stft_compute(attrs, inputs, out_type):
    data, window = inputs
    dtype, acc = data.dtype, "float64"
    batched = len(data.shape) == 2
    shape = [data.shape[0]] if batched else []
    length = data.shape[-1]
    if isinstance(length, tir.IntImm):
        frames = (int(length.value) - attrs.n_fft) // attrs.hop_length + 1
    else:
        frames = tir.floordiv(length - attrs.n_fft, attrs.hop_length) + 1
    bins = attrs.n_fft // 2 + 1 if attrs.onesided else attrs.n_fft
    shape += [bins, frames, 2]
    period = tir.const(attrs.win_length, "int64")
    w_axis = te.reduce_axis((0, attrs.win_length), "w")

    def element(*index):
        row, col, part = index[-3:]
        sample = col * attrs.hop_length + w_axis.var
        x = te_cast(data[tuple(index[:-3]) + (sample,)], acc) * te_cast(window[w_axis.var], acc)
        angle = _angle(row.astype("int64") * w_axis.var.astype("int64"), period, -1.0, acc)
        return te.sum(te.if_then_else(part == 0, x * te.cos(angle), x * te.sin(angle)), axis=[w_axis])
    total = te.compute(shape, element, name="T_stft_sum", tag="stft")
    scale = tir.const(1.0 / math.sqrt(attrs.n_fft) if attrs.normalized else 1.0, acc)
    return [te.compute(shape, lambda *i: te_cast(total[i] * scale, dtype), name="T_stft", tag="stft")]


def _stft_samples(rng):
    long16 = S.FLOAT16_REDUCTION_TERMS
    return [Sample([S.rand(rng, (16,)), S.rand(rng, (4,))], StftAttrs(4, 2, 4, False, True)),
            Sample([S.rand(rng, (2, 12), "float64"), S.rand(rng, (5,), "float64")], StftAttrs(6, 3, 5, True, False)),
            Sample([np.arange(1, 7, dtype="float32"), np.array([4.0, 3.0, 2.0], "float32")],
                   StftAttrs(3, 3, 3, False, True)),
            Sample([S.rand(rng, (long16,), "float16", 0.0, 1.0), S.rand(rng, (long16,), "float16", 0.0, 1.0)],
                   StftAttrs(long16, 1, long16, True, True))]


STFT = defop("stft", inputs=("data", "window"), attrs=StftAttrs, rel=_stft_rel, pattern=OpPattern.OPAQUE,
             ref=_stft_ref, compute=_stft_compute, level=3, samples=_stft_samples,
             doc="short-time Fourier transform: (batch?, bins, frames, 2)")


def stft(data, n_fft, hop_length=None, win_length=None, window=None, normalized=False, onesided=True):
    """relay.stft: hop_length defaults to n_fft // 4, win_length to n_fft, window to ones.

    Parameters
    ----------
    data : relay.Expr
        The signal, 1-D, or 2-D for a batch of signals.
    n_fft : int
        The length of each frame and of its Fourier transform.
    hop_length : None or int, optional
        The step between frames; None means n_fft // 4. Defaults to None.
    win_length : None or int, optional
        The length of the window; None means n_fft. Defaults to None.
    window : None or relay.Expr, optional
        The 1-D window of win_length samples the frames are multiplied by; None means ones.
        Defaults to None.
    normalized : bool, optional
        If True, the result is divided by sqrt(n_fft). Defaults to False.
    onesided : bool, optional
        If True, only the n_fft // 2 + 1 non-redundant frequencies; if False, all n_fft.
        Defaults to True.
    Returns
    -------
    result : relay.Expr
        ([batch,] frequencies, frames, 2), the last axis holding the real and imaginary parts.
    """
    from ...ir.expr import const
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if window is None:
        window = const(np.ones((win_length,), "float32"))
    return STFT(data, window, attrs=StftAttrs(n_fft, hop_length, win_length, normalized, onesided))


__all__ = ["dft", "stft", "DFTAttrs", "StftAttrs"]
