"""Per-dtype tolerances for comparing an executor's output with the reference interpreter.

A float comparison passes when |actual - expected| <= atol * max(1, max|expected|) + rtol * |expected|:
the absolute part scales with the output's magnitude, because compiled kernels reassociate sums
and a difference of two large numbers loses relative precision. Integer and bool outputs must
match exactly.
"""
import numpy as np

from ..errors import RelayError

# dtype -> (rtol, atol); float32 allows reassociated reductions over a few hundred terms and
# polynomial transcendentals accurate to a few ulps.
TOLERANCES = {
    "float16": (5e-3, 5e-3),
    "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-10),
}


class OutputMismatch(RelayError, AssertionError):
    """Two executors (or an executor and a reference) disagree beyond tolerance."""


def tolerance(dtype) -> tuple:
    """The (rtol, atol) this project compares results of a dtype with.

    Parameters
    ----------
    dtype : str or numpy.dtype
        The dtype of the expected values.

    Returns
    -------
    tolerances : tuple of float
        (rtol, atol); (0, 0), an exact match, for integer and bool dtypes.
    """
    dtype = str(np.dtype(dtype))
    if dtype in TOLERANCES:
        return TOLERANCES[dtype]
    if np.dtype(dtype).kind in "iub":
        return (0.0, 0.0)
    raise RelayError(f"tolerances: no tolerance for dtype {dtype}; add it to TOLERANCES")


def assert_allclose(actual, expected, what: str = "output", scale: float = 1.0) -> None:
    """Raise OutputMismatch naming what was compared, the worst element and both values when
    `actual` is not within the dtype's tolerance of `expected` (shape and dtype must match
    exactly).

    Parameters
    ----------
    actual : array-like
        The computed values.
    expected : array-like
        The reference values; their dtype picks the tolerance.
    what : str, optional
        What is compared, named in the error. Defaults to "output".
    scale : float, optional
        A factor on both tolerances (e.g. for long chains of float32 ops). Defaults to 1.0.
    """
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        raise OutputMismatch(f"{what}: shape {actual.shape} != expected {expected.shape}")
    if actual.dtype != expected.dtype:
        raise OutputMismatch(f"{what}: dtype {actual.dtype} != expected {expected.dtype}")
    rtol, atol = tolerance(expected.dtype)
    if rtol == 0 and atol == 0:
        if not np.array_equal(actual, expected):
            bad = int(np.count_nonzero(actual != expected))
            raise OutputMismatch(f"{what}: {bad} of {expected.size} elements differ (exact match required "
                                 f"for {expected.dtype})")
        return
    a = actual.astype("float64")
    e = expected.astype("float64")
    same_nonfinite = (np.isnan(a) & np.isnan(e)) | (np.isinf(a) & (a == e))
    finite = np.isfinite(e)
    magnitude = float(np.max(np.abs(e[finite]))) if finite.any() else 0.0
    limit = np.where(finite, scale * (atol * max(1.0, magnitude) + rtol * np.abs(np.where(finite, e, 0))), 0.0)
    err = np.where(same_nonfinite, 0.0, np.abs(a - e))
    err = np.where(np.isnan(err), np.inf, err)
    bad = err > limit
    if bad.any():
        idx = np.unravel_index(int(np.argmax(np.where(bad, err - limit, -np.inf))), e.shape)
        raise OutputMismatch(
            f"{what}: {int(bad.sum())} of {e.size} elements out of tolerance (rtol={rtol * scale:g}, "
            f"atol={atol * scale:g} x max(1, {magnitude:.3g})); worst at {tuple(int(i) for i in idx)}: "
            f"got {a[idx]!r}, expected {e[idx]!r}")
