"""Shared fixtures of the CUDA tests: `device` installs the CPU emulation of the CUDA device API
(emulated_device.py) for one test and yields it, so the test can see the launches and copies."""
import pytest

from relay_backend.runtime import cuda_driver

from .emulated_device import EmulatedBackend


@pytest.fixture
def device():
    with cuda_driver.use_backend(EmulatedBackend()) as api:
        yield api
