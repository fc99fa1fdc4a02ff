"""NDArray: a dense tensor on a device, backed by an aligned, C-contiguous numpy buffer.

Kernels take NDArrays in destination-passing style; `data_ptr` is what native code sees.
"""
import functools

import numpy as np

from ..errors import RelayError
from .device import DEVICE_TYPES, Device, cpu

ALIGNMENT = 64  # bytes; lets LLVM assume aligned vector loads


def _aligned_empty(shape, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    # at least one element, so that size-0 shapes can still be viewed as `dtype`
    nbytes = max(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize, dtype.itemsize)
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    offset = (-raw.ctypes.data) % ALIGNMENT
    return raw[offset:offset + nbytes].view(dtype)[: int(np.prod(shape, dtype=np.int64))].reshape(shape)


class NDArray:
    """A tensor on a device (tvm.nd.NDArray). `numpy()` returns a copy."""

    __slots__ = ("_array", "device")

    def __init__(self, array: np.ndarray, device: Device):
        self._array = array
        self.device = device

    @property
    def shape(self) -> tuple:
        return tuple(self._array.shape)

    @property
    def dtype(self) -> str:
        return dtype_name(self._array.dtype)

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def data_ptr(self) -> int:
        return self._array.ctypes.data

    def numpy(self) -> np.ndarray:
        return self._array.copy()

    def asnumpy(self) -> np.ndarray:
        return self.numpy()

    def view_numpy(self) -> np.ndarray:
        """The backing array itself (no copy); writes through. For runtimes, not users."""
        return self._array

    def copyfrom(self, source) -> "NDArray":
        src = source.view_numpy() if isinstance(source, NDArray) else np.asarray(source)
        if tuple(src.shape) != self.shape:
            raise ValueError(f"copyfrom: shape {tuple(src.shape)} does not match {self.shape}")
        if dtype_name(src.dtype) != self.dtype:
            raise ValueError(f"copyfrom: dtype {dtype_name(src.dtype)} does not match {self.dtype}")
        np.copyto(self._array, src)
        return self

    def copyto(self, target) -> "NDArray":
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        return array(self._array, device=target)

    def __repr__(self) -> str:
        return f"<NDArray {self.shape} {self.dtype} @{self.device}>\n{self._array!r}"

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)


def dtype_name(dtype) -> str:
    """Relay's dtype spelling of a numpy dtype ("float32", "bool", ...)."""
    return str(np.dtype(dtype))


@functools.lru_cache(maxsize=None)
def cuda_device_count() -> tuple:
    """(number of CUDA devices, why none) from pycuda's driver; checked once per process."""
    try:
        import pycuda.driver as drv
    except ImportError as err:
        return 0, f"pycuda is not installed ({err}); install the cuda extra (pip install pycuda)"
    try:
        drv.init()
        count = drv.Device.count()
    except Exception as err:  # noqa: BLE001 - pycuda raises its own driver error classes
        return 0, f"the CUDA driver did not start: {type(err).__name__}: {err}"
    return count, "" if count else "the CUDA driver reports no devices"


def check_device(device: Device) -> Device:
    """`device` (cpu(0) for None), or a RelayError if it is a CUDA device this machine lacks,
    rather than silently keeping host memory under a cuda label."""
    if device is None:
        return cpu(0)
    if isinstance(device, Device) and device.device_type == DEVICE_TYPES["cuda"]:
        count, why = cuda_device_count()
        if not count:
            raise RelayError(f"no CUDA device/driver available: {why}; {device} was requested. "
                             f"Use relay_backend.cpu() (target 'llvm') on this machine")
        if device.device_id >= count:
            raise RelayError(f"no CUDA device/driver available: {device} was requested but this "
                             f"machine has {count} CUDA device(s), cuda(0)..cuda({count - 1})")
    return device


def array(arr, device: Device = None, dtype=None) -> NDArray:
    """Copy `arr` (numpy array, list, scalar or NDArray) into a new aligned NDArray on `device`
    (cpu(0) by default; a RelayError if a CUDA device is requested and none is usable)."""
    device = check_device(device)
    if isinstance(arr, NDArray):
        arr = arr.view_numpy()
    src = np.asarray(arr, dtype=dtype)
    out = _aligned_empty(src.shape, src.dtype)
    np.copyto(out, src)
    return NDArray(out, device)


def empty(shape, dtype="float32", device: Device = None) -> NDArray:
    """An uninitialized aligned NDArray (a RelayError for an unusable CUDA device, as array).
    The shape must be concrete non-negative ints (not a type's `Any`) within the size limit."""
    from ..errors import InputError
    from .limits import check_tensor_size
    device = check_device(device)
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in dims):
        raise InputError(f"nd.empty: shape {dims} must hold ints; a dim that is only known at run time "
                         f"(Any) has no size yet")
    dims = tuple(int(d) for d in dims)
    check_tensor_size(dims, dtype, "nd.empty")
    return NDArray(_aligned_empty(dims, dtype), device)
