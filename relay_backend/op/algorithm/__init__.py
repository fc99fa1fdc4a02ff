"""Algorithms along an axis: sorts (argsort, sort, topk), scans (cumsum, cumprod), einsum and
the Fourier transforms (dft, stft). Sorts and scans carry state from one element to the next,
so their kernels are te.extern stages with hand-built loops (loops.py)."""
from . import contraction, fourier, scan, sorting  # noqa: F401  (importing registers the ops)
from .contraction import einsum
from .fourier import dft, stft
from .scan import cumprod, cumsum
from .sorting import argsort, sort, topk

__all__ = ["argsort", "sort", "topk", "cumsum", "cumprod", "einsum", "dft", "stft"]
