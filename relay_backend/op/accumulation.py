"""Accumulation dtypes: the dtype a reduction adds up in before its result is cast back.

A float16 sum that adds up in float16 stops growing once the running total's spacing exceeds
the terms (4,096 ones sum to 2,048) and overflows past 65,504; Relay's mixed-precision rules
accumulate float16 in float32, and so do the te computes here (`acc_dtype`). Averages (mean,
variance) go one step wider (`average_acc_dtype`): their result always fits the input dtype,
so the running sum must not overflow before it is divided — float32 adds up in float64 (the
mean of four 3e38 values is 3e38, not inf) and integers in int64 (the mean of int8 100s is 100).
Only float64 and 64-bit integer averages keep the input's range as their bound. Average pools
and dot products (dense, conv2d) accumulate float32 in float32 for speed (their vectorized
loops would halve in width): their window or dot sums must fit float32 (3.4e38).
"""
import numpy as np


def acc_dtype(dtype: str) -> str:
    """The dtype sums, products and dot products accumulate in: float16 -> float32, else itself."""
    return "float32" if dtype == "float16" else dtype


def average_acc_dtype(dtype: str) -> str:
    """The dtype mean and variance add up in: floats one size wider (float16 -> float32,
    float32 -> float64), integers int64 (uint64 stays uint64), bool unchanged."""
    kind = np.dtype(dtype).kind
    if kind == "f":
        return "float32" if dtype == "float16" else "float64"
    if kind in "iu":
        return "uint64" if dtype == "uint64" else "int64"
    return dtype


__all__ = ["acc_dtype", "average_acc_dtype"]
