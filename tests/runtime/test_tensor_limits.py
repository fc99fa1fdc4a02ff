"""runtime.limits.check_tensor_size: the one size check before allocating from a shape a user or a
file chose. numpy is the reference for which shapes can exist at all: a zero-size shape whose
other extents multiply past int64 bytes cannot be built (numpy raises ValueError), so the check
rejects it with an AllocationError naming the tensor instead of letting numpy's error leak."""
import numpy as np
import pytest

from relay_backend.errors import AllocationError, RelayError
from relay_backend.runtime.limits import check_tensor_size

ZERO_SIZE_SHAPES = [(0, 1 << 62), (1 << 61, 0), (0, 1 << 31, 1 << 31), (3, 0, 1 << 60, 4)]


@pytest.mark.parametrize("shape", ZERO_SIZE_SHAPES)
def test_zero_size_shape_numpy_cannot_represent_is_rejected_by_name(shape):
    with pytest.raises(ValueError):                  # the reference: numpy cannot build it
        np.empty(shape, "float32")
    with pytest.raises(AllocationError, match=r"weights: .*shape .* cannot be represented") as info:
        check_tensor_size(shape, "float32", "weights")
    assert isinstance(info.value, RelayError)


@pytest.mark.parametrize("shape", [(0,), (0, 1 << 40), (5, 0, 7), ()])
def test_zero_size_and_small_shapes_numpy_accepts_pass_with_their_byte_size(shape):
    expected = np.empty(shape, "float32").nbytes   # numpy builds these (no memory for zero size)
    assert check_tensor_size(shape, "float32", "t") == expected


def test_negative_and_oversized_shapes_still_raise():
    with pytest.raises(AllocationError, match="t: negative dimension"):
        check_tensor_size((2, -1), "float32", "t")
    with pytest.raises(AllocationError, match="t: a tensor of shape"):
        check_tensor_size((1 << 40, 1 << 40), "float32", "t")


def test_more_dimensions_than_numpy_supports_are_rejected():
    with pytest.raises(ValueError):                  # the reference: numpy refuses 65 dims of 1
        np.empty((1,) * 65, "float32")
    with pytest.raises(AllocationError, match=r"t: 65 dimensions cannot be represented"):
        check_tensor_size((1,) * 65, "float32", "t")
    assert check_tensor_size((1,) * 32, "float32", "t") == 4
