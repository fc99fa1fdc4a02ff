"""NDArray and Device basics: aligned storage, conversions, copy checks."""
import numpy as np
import pytest

from relay_backend import runtime
from relay_backend.runtime import nd


def test_array_roundtrip_and_alignment():
    a = np.arange(12, dtype="float32").reshape(3, 4)
    arr = nd.array(a)
    assert arr.shape == (3, 4) and arr.dtype == "float32"
    assert arr.data_ptr % nd.ALIGNMENT == 0
    np.testing.assert_array_equal(arr.numpy(), a)
    a[0, 0] = 99  # the NDArray holds its own copy
    assert arr.numpy()[0, 0] == 0


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "int64", "bool"])
def test_empty_has_shape_dtype(dtype):
    e = nd.empty((2, 5), dtype)
    assert e.shape == (2, 5) and e.dtype == dtype and e.data_ptr % nd.ALIGNMENT == 0


def test_copyfrom_checks_shape_and_dtype():
    e = nd.empty((2, 2), "float32")
    with pytest.raises(ValueError, match="shape"):
        e.copyfrom(np.zeros((3,), "float32"))
    with pytest.raises(ValueError, match="dtype"):
        e.copyfrom(np.zeros((2, 2), "int32"))
    e.copyfrom(np.ones((2, 2), "float32"))
    assert e.numpy().sum() == 4


def test_devices():
    assert runtime.cpu(0).name == "cpu" and runtime.cuda(1).device_type == 2
    assert runtime.device("llvm") == runtime.cpu(0)
    with pytest.raises(ValueError, match="unknown device"):
        runtime.device("tpu")
