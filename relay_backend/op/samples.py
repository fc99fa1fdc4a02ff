"""Sample-input generators shared by op declarations (the conformance tests run every sample).

Each generator takes a numpy Generator and returns a list of registry.Sample.
"""
import math

import numpy as np

from .registry import Sample

FLOAT_DTYPES = ("float32", "float16", "float64")
# Every op whose compute reduces has a float16 sample reducing over at least this many values:
# added up in float16 they would be off by far more than the float16 tolerance (2,048 ones
# already sum to 2,048 only by luck; the next one is lost), so the conformance test catches an
# op that forgets to accumulate in float32 (tests/op/test_float16_samples.py checks the rule).
FLOAT16_REDUCTION_TERMS = 2048
# the side of a square window with at least FLOAT16_REDUCTION_TERMS cells (pools, depthwise convs)
LONG_WINDOW_SIDE = math.isqrt(FLOAT16_REDUCTION_TERMS - 1) + 1
UNARY_SHAPES = ((), (1,), (5,), (2, 3), (1, 4, 1, 3))
BROADCAST_PAIRS = (((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 4)), ((1, 3, 1, 2), (3, 4, 2)),
                   ((), (2, 2)), ((5, 1), ()))


def rand(rng, shape, dtype="float32", low=-2.0, high=2.0) -> np.ndarray:
    """Random values of `dtype` in [low, high) (ints and bools drawn accordingly)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def unary(dtypes=FLOAT_DTYPES, low=-2.0, high=2.0, attrs=None):
    """A generator of one-input samples over several shapes and dtypes."""
    def gen(rng):
        out = []
        for i, shape in enumerate(UNARY_SHAPES):
            dtype = dtypes[i % len(dtypes)]
            out.append(Sample([rand(rng, shape, dtype, low, high)], attrs))
        return out
    return gen


def binary(dtypes=FLOAT_DTYPES, low=-2.0, high=2.0, rhs_low=None, rhs_high=None, avoid_zero_rhs=False):
    """A generator of two-input samples over broadcasting shape pairs and several dtypes."""
    def gen(rng):
        out = []
        for i, (ls, rs) in enumerate(BROADCAST_PAIRS):
            dtype = dtypes[i % len(dtypes)]
            lhs = rand(rng, ls, dtype, low, high)
            rhs = rand(rng, rs, dtype, low if rhs_low is None else rhs_low,
                       high if rhs_high is None else rhs_high)
            if avoid_zero_rhs:
                rhs = np.where(rhs == 0, np.ones_like(rhs), rhs)
            out.append(Sample([lhs, rhs]))
        return out
    return gen
