"""nd.array / nd.empty on a CUDA device need a usable CUDA runtime (pycuda and a GPU): without
one they raise a RelayError instead of silently keeping host memory labelled cuda."""
import numpy as np
import pytest

import relay_backend
from relay_backend.errors import RelayError
from relay_backend.runtime import ndarray

HAS_CUDA = ndarray.cuda_device_count()[0] > 0


@pytest.mark.skipif(HAS_CUDA, reason="this machine has a CUDA device")
def test_cuda_array_without_a_gpu_is_a_clear_error():
    with pytest.raises(RelayError, match=r"no CUDA device/driver available: .*cuda\(0\) was requested"):
        relay_backend.nd.array(np.ones(3, "float32"), relay_backend.cuda())
    with pytest.raises(RelayError, match=r"no CUDA device/driver available"):
        relay_backend.nd.empty((2,), "float32", relay_backend.cuda(1))
    with pytest.raises(RelayError, match=r"no CUDA device/driver available"):
        relay_backend.nd.array(np.ones(3, "float32")).copyto(relay_backend.cuda())


def test_cpu_arrays_are_unaffected():
    arr = relay_backend.nd.array(np.ones(3, "float32"), relay_backend.cpu())
    assert arr.device == relay_backend.cpu(0)
    assert relay_backend.nd.empty((2,)).device == relay_backend.cpu(0)


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_CUDA, reason="needs pycuda and a CUDA GPU")
def test_cuda_array_with_a_gpu():
    count = ndarray.cuda_device_count()[0]
    arr = relay_backend.nd.array(np.arange(3, dtype="float32"), relay_backend.cuda())
    assert arr.device == relay_backend.cuda(0)
    np.testing.assert_array_equal(arr.numpy(), [0, 1, 2])
    with pytest.raises(RelayError, match=rf"has {count} CUDA device\(s\)"):
        relay_backend.nd.array(np.ones(3, "float32"), relay_backend.cuda(count))
