"""The stated size limit on a single tensor, checked before anything is allocated.

Shapes that type-check can still be far too large to allocate (`ones((2**20, 2**20))`, a conv
with padding 1e6, a size field in a hand-edited file). numpy then raises a bare MemoryError, or
the OS kills the process. Every place that allocates from a shape it did not choose calls
`check_tensor_size` first, so the user gets an `AllocationError` naming the tensor instead.

The limit is the machine's physical memory, or `RB_MAX_TENSOR_BYTES` when set. A shape must also
be representable, which numpy otherwise refuses with a ValueError: at most MAX_NDIM dimensions,
and for a zero-size shape, non-zero extents whose product fits int64 bytes (a flipped bit in
`(0, 3)` giving `(0, 2**62)`).
"""
import os

import numpy as np

from .. import config
from ..errors import AllocationError

INT64_MAX = (1 << 63) - 1           # numpy's largest array, in bytes
MAX_NDIM = 32                       # numpy 1.x's NPY_MAXDIMS (2.x allows 64)


def _physical_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):   # not POSIX: a generous fixed bound
        return 1 << 40


def max_tensor_bytes() -> int:
    """The largest tensor, in bytes, that relay_backend will allocate."""
    return config.get().max_tensor_bytes or _physical_memory_bytes()


def tensor_bytes(shape, dtype) -> int:
    """Exact byte size of a tensor (Python ints: no int64 overflow for absurd shapes)."""
    size = np.dtype(dtype).itemsize
    for dim in shape:
        size *= int(dim)
    return size


def check_tensor_size(shape, dtype, what: str) -> int:
    """Raise AllocationError naming `what` when `shape` x `dtype` exceeds the limit (or, for a
    zero-size shape, cannot be represented); else its bytes."""
    if len(shape) > MAX_NDIM:
        raise AllocationError(f"{what}: {len(shape)} dimensions cannot be represented (at most "
                              f"{MAX_NDIM}, numpy's limit on every version relay_backend supports)")
    if any(int(dim) < 0 for dim in shape):
        raise AllocationError(f"{what}: negative dimension in shape {tuple(int(d) for d in shape)}")
    nbytes = tensor_bytes(shape, dtype)
    if nbytes == 0:
        span = tensor_bytes([dim for dim in shape if int(dim)], dtype)
        if span > INT64_MAX:
            raise AllocationError(
                f"{what}: shape {tuple(int(d) for d in shape)} cannot be represented: its non-zero "
                f"extents span {span:,} bytes, more than int64 can index (numpy cannot build it)")
        return 0
    limit = max_tensor_bytes()
    if nbytes > limit:
        raise AllocationError(
            f"{what}: a tensor of shape {tuple(int(d) for d in shape)} and dtype {np.dtype(dtype).name} "
            f"needs {nbytes:,} bytes, more than the limit of {limit:,} bytes (the machine's memory, "
            f"or RB_MAX_TENSOR_BYTES); reduce the shape or raise RB_MAX_TENSOR_BYTES")
    return nbytes


__all__ = ["check_tensor_size", "max_tensor_bytes", "tensor_bytes"]
