"""CUDA device memory and kernel launches, behind one small device API (TVM's DeviceAPI idea).

Everything that touches a GPU goes through `backend()`: the default `PyCudaBackend` uses pycuda
(the optional `cuda` extra: the primary context of a device, made current in the calling thread
on first use); a test may install another with `use_backend` (tests/cuda runs the executors on
an emulated device this way). So the package imports and runs without pycuda, and every device
use without one is a clear RelayError. `CudaNDArray` is an NDArray in device memory: a view of
one allocation at a byte offset, copied to and from the host explicitly.
"""
import atexit
import contextlib
import threading

import numpy as np

from ..errors import InputError, RelayError
from .device import Device
from .ndarray import NDArray, aligned_empty, dtype_name


class PyCudaBackend:
    """The device API on pycuda's driver module."""

    def __init__(self):
        self._local = threading.local()
        self._count = None

    def _driver(self):
        import pycuda.driver as drv
        drv.init()
        return drv

    def count(self) -> tuple:
        """(number of CUDA devices, why none); checked once."""
        if self._count is None:
            try:
                n = self._driver().Device.count()
                self._count = (n, "" if n else "the CUDA driver reports no devices")
            except ImportError as err:
                self._count = (0, f"pycuda is not installed ({err}); install the cuda extra "
                                  f"(pip install pycuda)")
            except Exception as err:  # noqa: BLE001 - pycuda raises its own driver error classes
                self._count = (0, f"the CUDA driver did not start: {type(err).__name__}: {err}")
        return self._count

    def _activate(self, device_id: int):
        drv = self._driver()
        contexts = getattr(self._local, "contexts", None)
        if contexts is None:
            contexts = self._local.contexts = {}
        if device_id not in contexts:
            ctx = drv.Device(device_id).retain_primary_context()
            ctx.push()
            contexts[device_id] = ctx
            if threading.current_thread() is threading.main_thread():
                atexit.register(ctx.pop)      # leave pycuda's context stack as we found it
        return drv

    def alloc(self, device_id: int, nbytes: int):
        return self._activate(device_id).mem_alloc(max(int(nbytes), 1))

    def htod(self, device_id: int, ptr: int, host: np.ndarray) -> None:
        self._activate(device_id).memcpy_htod(ptr, host)

    def dtoh(self, device_id: int, host: np.ndarray, ptr: int) -> None:
        self._activate(device_id).memcpy_dtoh(host, ptr)

    def dtod(self, device_id: int, dst: int, src: int, nbytes: int) -> None:
        self._activate(device_id).memcpy_dtod(dst, src, nbytes)

    def load(self, device_id: int, ptx: bytes, source: str):
        """A loaded module of `ptx` (get_function(name) -> kernel)."""
        return self._activate(device_id).module_from_buffer(ptx)

    def launch(self, device_id: int, kernel, grid, block, args) -> None:
        """Launch `kernel`; args are numpy scalars (np.uintp for pointers)."""
        self._activate(device_id)
        kernel(*args, grid=tuple(int(g) for g in grid), block=tuple(int(b) for b in block))

    def synchronize(self, device_id: int) -> None:
        self._activate(device_id).Context.synchronize()


_BACKENDS = [PyCudaBackend()]


def backend():
    """The device API in use."""
    return _BACKENDS[-1]


@contextlib.contextmanager
def use_backend(api):
    """Use `api` (an object with PyCudaBackend's methods) as the CUDA device API inside the block."""
    _BACKENDS.append(api)
    try:
        yield api
    finally:
        _BACKENDS.remove(api)


def device_count() -> tuple:
    """(number of CUDA devices, why none)."""
    return backend().count()


def require_device(device: Device) -> None:
    """RelayError unless `device` is a CUDA device this machine has."""
    count, why = device_count()
    if not count:
        raise RelayError(f"no CUDA device/driver available: {why}; {device} was requested. "
                         f"Use relay_backend.cpu() (target 'llvm') on this machine")
    if device.device_id >= count:
        raise RelayError(f"no CUDA device/driver available: {device} was requested but this "
                         f"machine has {count} CUDA device(s), cuda(0)..cuda({count - 1})")


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
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        return cls(backend().alloc(device.device_id, nbytes), 0, shape, dtype, device)

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
        out = aligned_empty(self._shape, self._dtype)
        if self.nbytes:
            backend().dtoh(self.device.device_id, out, self.data_ptr)
        return out

    def copyfrom(self, source) -> "CudaNDArray":
        if isinstance(source, CudaNDArray):
            _check_same(source.shape, source.dtype, self)
            self.copy_bytes_from(source)
            return self
        src = source.numpy() if isinstance(source, NDArray) else np.asarray(source)
        _check_same(tuple(src.shape), dtype_name(src.dtype), self)
        if self.nbytes:
            backend().htod(self.device.device_id, self.data_ptr, np.ascontiguousarray(src))
        return self

    def copy_bytes_from(self, source: "CudaNDArray") -> None:
        """Copy `source`'s bytes (same size, any shape): a reshape on the device."""
        if source.nbytes != self.nbytes:
            raise RelayError(f"device copy of {source.nbytes} bytes into {self.nbytes}")
        if self.nbytes:
            backend().dtod(self.device.device_id, self.data_ptr, source.data_ptr, self.nbytes)

    def copyto(self, target) -> NDArray:
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        if isinstance(target, Device) and target.device_type == self.device.device_type:
            return CudaNDArray.empty(self._shape, self._dtype, target).copyfrom(self)
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


__all__ = ["CudaNDArray", "PyCudaBackend", "backend", "use_backend", "device_count",
           "require_device"]
