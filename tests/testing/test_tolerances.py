"""testing.tolerances: the comparison the property tests rely on accepts rounding noise and
rejects real differences, naming the worst element."""
import numpy as np
import pytest

from relay_backend.testing.tolerances import OutputMismatch, assert_allclose, tolerance


def test_float32_noise_passes_and_real_error_fails():
    e = np.linspace(-3, 3, 50).astype("float32")
    assert_allclose(e * np.float32(1 + 3e-6), e)
    bad = e.copy()
    bad[7] += 1e-3
    with pytest.raises(OutputMismatch, match=r"worst at \(7,\)"):
        assert_allclose(bad, e, what="out")


def test_absolute_part_scales_with_magnitude():
    e = np.array([1000.0, 0.0], "float32")
    assert_allclose(np.array([1000.0, 5e-3], "float32"), e)     # 5e-3 <= 1e-5 * 1000
    with pytest.raises(OutputMismatch):
        assert_allclose(np.array([1000.0, 5e-2], "float32"), e)


def test_integers_exact_and_shape_dtype_checked():
    assert tolerance("int32") == (0.0, 0.0)
    with pytest.raises(OutputMismatch, match="1 of 3"):
        assert_allclose(np.array([1, 2, 4]), np.array([1, 2, 3]))
    with pytest.raises(OutputMismatch, match="shape"):
        assert_allclose(np.zeros(3, "float32"), np.zeros(4, "float32"))
    with pytest.raises(OutputMismatch, match="dtype"):
        assert_allclose(np.zeros(3, "float64"), np.zeros(3, "float32"))


def test_nan_matches_only_nan():
    e = np.array([np.nan, 1.0], "float32")
    assert_allclose(e.copy(), e)
    with pytest.raises(OutputMismatch):
        assert_allclose(np.array([0.0, 1.0], "float32"), e)
