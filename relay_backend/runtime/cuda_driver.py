"""CUDA device memory and kernel launches through pycuda (the optional `cuda` extra).

Everything that touches the GPU goes through this file, so the rest of the package imports
without pycuda: `device_count()` says whether a GPU is usable (and why not), `CudaNDArray` is
an NDArray whose data lives in device memory (host <-> device copies), `load_ptx` /
`launch` run compiled kernels. Each process uses the primary context of a device, made
current in the calling thread on first use.
"""
import functools
import threading

import numpy as np

from ..errors import InputError, RelayError
from .device import Device
from .ndarray import NDArray, _aligned_empty, dtype_name

_LOCAL = threading.local()


@functools.lru_cache(maxsize=None)
def _driver():
    import pycuda.driver as drv
    drv.init()
    return drv


def device_count() -> tuple:
    """(number of CUDA devices, why none): pycuda missing or a driver error count as none."""
    try:
        count = _driver().Device.count()
    except ImportError as err:
        return 0, f"pycuda is not installed ({err}); install the cuda extra (pip install pycuda)"
    except Exception as err:  # noqa: BLE001 - pycuda raises its own driver error classes
        return 0, f"the CUDA driver did not start: {type(err).__name__}: {err}"
    return count, "" if count else "the CUDA driver reports no devices"


def require_device(device: Device) -> None:
    """RelayError unless `device` is a CUDA device this machine has."""
    count, why = device_count()
    if not count:
        raise RelayError(f"no CUDA device/driver available: {why}; {device} was requested. "
                         f"Use relay_backend.cpu() (target 'llvm') on this machine")
    if device.device_id >= count:
        raise RelayError(f"no CUDA device/driver available: {device} was requested but this "
                         f"machine has {count} CUDA device(s), cuda(0)..cuda({count - 1})")


def activate(device_id: int):
    """Make device `device_id`'s primary context current in this thread; returns the driver."""
    drv = _driver()
    contexts = getattr(_LOCAL, "contexts", None)
    if contexts is None:
        contexts = _LOCAL.contexts = {}
    if device_id not in contexts:
        ctx = drv.Device(device_id).retain_primary_context()
        ctx.push()
        contexts[device_id] = ctx
    return drv


class CudaNDArray(NDArray):
    """A dense tensor in CUDA device memory (a view of one allocation at a byte offset)."""

    __slots__ = ("_alloc", "_offset", "_shape", "_dtype")

    def __init__(self, alloc, offset: int, shape, dtype, device: Device):
        super().__init__(None, device)
        self._alloc, self._offset = alloc, int(offset)
        self._shape, self._dtype = tuple(int(d) for d in shape), np.dtype(dtype)

    @classmethod
    def empty(cls, shape, dtype, device: Device) -> "CudaNDArray":
        require_device(device)
        drv = activate(device.device_id)
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        return cls(drv.mem_alloc(max(nbytes, 1)), 0, shape, dtype, device)

    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def dtype(self) -> str:
        return dtype_name(self._dtype)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self._shape, dtype=np.int64)) * self._dtype.itemsize

    @property
    def data_ptr(self) -> int:
        return int(self._alloc) + self._offset

    def view(self, offset: int, shape, dtype) -> "CudaNDArray":
        """The bytes at `offset` of this array's allocation seen as (shape, dtype)."""
        return CudaNDArray(self._alloc, self._offset + offset, shape, dtype, self.device)

    def view_numpy(self):
        raise RelayError(f"this NDArray lives in {self.device} memory; copy it to the host with "
                         f".numpy()")

    def numpy(self) -> np.ndarray:
        out = _aligned_empty(self._shape, self._dtype)
        if self.nbytes:
            activate(self.device.device_id).memcpy_dtoh(out, self.data_ptr)
        return out

    def copyfrom(self, source) -> "CudaNDArray":
        if isinstance(source, CudaNDArray):
            _check_same(source.shape, source.dtype, self)
            if self.nbytes:
                activate(self.device.device_id).memcpy_dtod(self.data_ptr, source.data_ptr, self.nbytes)
            return self
        src = source.numpy() if isinstance(source, NDArray) else np.asarray(source)
        _check_same(tuple(src.shape), dtype_name(src.dtype), self)
        if self.nbytes:
            activate(self.device.device_id).memcpy_htod(self.data_ptr, np.ascontiguousarray(src))
        return self

    def copy_bytes_from(self, source: "CudaNDArray") -> None:
        """Copy `source`'s bytes (same size, any shape): a reshape on the device."""
        if source.nbytes != self.nbytes:
            raise RelayError(f"copy of {source.nbytes} bytes into {self.nbytes}")
        if self.nbytes:
            activate(self.device.device_id).memcpy_dtod(self.data_ptr, source.data_ptr, self.nbytes)

    def copyto(self, target) -> NDArray:
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        from .ndarray import array
        return array(self.numpy(), device=target)

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        return f"<NDArray {self.shape} {self.dtype} @{self.device}>"


def _check_same(shape, dtype, dst) -> None:
    if tuple(shape) != dst.shape or str(dtype) != dst.dtype:
        raise InputError(f"copyfrom: Tensor[{tuple(shape)}, {dtype}] does not match "
                         f"Tensor[{dst.shape}, {dst.dtype}]")


def load_ptx(ptx: bytes, device_id: int):
    """A pycuda module of compiled PTX on device `device_id`."""
    return activate(device_id).module_from_buffer(ptx)


def launch(kernel, grid, block, args) -> None:
    """Launch a pycuda kernel function; args are numpy scalars (np.uintp for pointers)."""
    kernel(*args, grid=tuple(int(g) for g in grid), block=tuple(int(b) for b in block))


def synchronize(device_id: int) -> None:
    activate(device_id).Context.synchronize()


__all__ = ["CudaNDArray", "device_count", "require_device", "load_ptx", "launch", "synchronize"]
