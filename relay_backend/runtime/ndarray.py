"""NDArray: a dense tensor on a device, backed by an aligned, C-contiguous numpy buffer.

Kernels take NDArrays in destination-passing style; `data_ptr` is what native code sees.
"""
import math

import numpy as np

from ..errors import RelayError
from .device import DEVICE_TYPES, Device, cpu

ALIGNMENT = 64  # bytes; lets LLVM assume aligned vector loads


def aligned_empty(shape, dtype) -> np.ndarray:
    """An uninitialized C-contiguous numpy array at an ALIGNMENT-aligned address (what kernels
    and native code that assume aligned vector loads are given)."""
    return _aligned_block(shape, dtype)[0]


def _aligned_block(shape, dtype) -> tuple:
    """(an uninitialized ALIGNMENT-aligned C-contiguous array, its address)."""
    dtype = np.dtype(dtype)
    count = math.prod(int(d) for d in shape)
    # at least one element, so that size-0 shapes can still be viewed as `dtype`
    nbytes = max(count * dtype.itemsize, dtype.itemsize)
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    address = raw.ctypes.data
    offset = (-address) % ALIGNMENT
    view = raw[offset:offset + nbytes].view(dtype)[:count].reshape(shape)
    return view, address + offset


class NDArray:
    """A tensor on a device (tvm.nd.NDArray); numpy() returns a copy. Make one with
    relay_backend.nd.array(numpy_array, device).

    Parameters
    ----------
    array : numpy.ndarray
        The storage (host memory; a CUDA array keeps its device memory behind it).
    device : Device
        The device the tensor lives on.
    data_ptr : int, optional
        The address of `array`'s first element when the caller knows it (a runtime carving
        tensors from memory it owns); None (the default) asks numpy on first use.
    """

    __slots__ = ("_array", "device", "_ptr")

    def __init__(self, array: np.ndarray, device: Device, data_ptr: int = None):
        self._array = array
        self.device = device
        # the address, asked of numpy on first use (that costs microseconds, more than a small
        # kernel): the backing array is fixed for the NDArray's life, so is its address. A
        # runtime that carved `array` from memory it owns may pass the address it knows.
        self._ptr = data_ptr

    @property
    def shape(self) -> tuple:
        """The shape, a tuple of ints."""
        return tuple(self._array.shape)

    @property
    def dtype(self) -> str:
        """The element type, as Relay spells it ("float32", "bool", ...)."""
        return dtype_name(self._array.dtype)

    @property
    def ndim(self) -> int:
        """The number of dimensions (0 for a scalar)."""
        return self._array.ndim

    @property
    def data_ptr(self) -> int:
        """The address of the first element: what native kernels are given."""
        ptr = self._ptr
        if ptr is None:
            ptr = self._ptr = self._array.ctypes.data
        return ptr

    def numpy(self) -> np.ndarray:
        """A copy of the tensor as a numpy array (from the device's memory for a CUDA tensor).

        Returns
        -------
        array : numpy.ndarray
            The copy; changing it does not change the tensor.
        """
        return self._array.copy()

    def asnumpy(self) -> np.ndarray:
        """The old name of numpy(): a copy of the tensor as a numpy array.

        Returns
        -------
        array : numpy.ndarray
            The copy.
        """
        return self.numpy()

    def view_numpy(self) -> np.ndarray:
        """The backing array itself (no copy); writes through. For runtimes, not users."""
        return self._array

    def copyfrom(self, source) -> "NDArray":
        """Overwrite the tensor's elements with another array's (tvm's NDArray.copyfrom).

        Parameters
        ----------
        source : NDArray or numpy.ndarray or array-like
            The values; they must have exactly this tensor's shape and dtype (a ValueError names
            the mismatch).

        Returns
        -------
        self : NDArray
            This tensor, updated.
        """
        if isinstance(source, NDArray):
            src = source.numpy() if source.device.device_type != 1 else source.view_numpy()
        else:
            src = np.asarray(source)
        if tuple(src.shape) != self.shape:
            raise ValueError(f"copyfrom: shape {tuple(src.shape)} does not match {self.shape}")
        if dtype_name(src.dtype) != self.dtype:
            raise ValueError(f"copyfrom: dtype {dtype_name(src.dtype)} does not match {self.dtype}")
        np.copyto(self._array, src)
        return self

    def copyto(self, target) -> "NDArray":
        """Copy the tensor into another tensor or onto a device (tvm's NDArray.copyto).

        Parameters
        ----------
        target : NDArray or Device
            An NDArray of the same shape and dtype to overwrite, or the device of a new copy.

        Returns
        -------
        copy : NDArray
            `target` updated, or the new tensor on the device.
        """
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        return array(self._array, device=target)

    def __repr__(self) -> str:
        return f"<NDArray {self.shape} {self.dtype} @{self.device}>\n{self._array!r}"

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)


# numpy dtype -> its Relay spelling; str(dtype) costs microseconds (numpy 2 builds the name
# in Python) and NDArray.dtype is read on every checked call
_DTYPE_NAMES = {}


def dtype_name(dtype) -> str:
    """Relay's dtype spelling of a numpy dtype ("float32", "bool", ...)."""
    try:
        return _DTYPE_NAMES[dtype]
    except (KeyError, TypeError):          # a new dtype, or an unhashable spelling
        name = str(np.dtype(dtype))
    if isinstance(dtype, np.dtype) and len(_DTYPE_NAMES) < 1024:
        _DTYPE_NAMES[dtype] = name
    return name


def cuda_device_count() -> tuple:
    """(number of CUDA devices, why none) from pycuda's driver (runtime/cuda.py)."""
    from .cuda_driver import device_count
    return device_count()


def check_device(device: Device) -> Device:
    """`device` (cpu(0) for None), or a RelayError if it is a CUDA device this machine lacks,
    rather than silently keeping host memory under a cuda label."""
    if device is None:
        return cpu(0)
    if isinstance(device, Device) and device.device_type == DEVICE_TYPES["cuda"]:
        from .cuda_driver import require_device
        require_device(device)
    return device


def _is_cuda(device) -> bool:
    return isinstance(device, Device) and device.device_type == DEVICE_TYPES["cuda"]


def array(arr, device: Device = None, dtype=None) -> NDArray:
    """Copy `arr` (numpy array, list, scalar or NDArray) into a new aligned NDArray on `device`
    (cpu(0) by default; on a CUDA device its memory is the GPU's; a RelayError if a CUDA
    device is requested and none is usable)."""
    device = check_device(device)
    if isinstance(arr, NDArray):
        arr = arr.numpy() if _is_cuda(arr.device) else arr.view_numpy()
    src = np.asarray(arr, dtype=dtype)
    if _is_cuda(device):
        from .cuda_driver import CudaNDArray
        return CudaNDArray.empty(src.shape, src.dtype, device).copyfrom(src)
    out, address = _aligned_block(src.shape, src.dtype)
    np.copyto(out, src)
    return NDArray(out, device, address)


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
    if _is_cuda(device):
        from .cuda_driver import CudaNDArray
        return CudaNDArray.empty(dims, dtype, device)
    block, address = _aligned_block(dims, dtype)
    return NDArray(block, device, address)
