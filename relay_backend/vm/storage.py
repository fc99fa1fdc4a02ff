"""The VM's storages (alloc_storage) and their reuse across runs (TVM's pooled allocator).

A Storage is an aligned block of bytes that tensors are carved from (alloc_tensor). Without
reuse every `alloc_storage` of every run allocates (and page-faults) a fresh block and every
`alloc_tensor` builds a fresh numpy view, which on a small model costs more than its kernels.

StoragePool keeps the static-size blocks it handed out, by size, and hands one out again only
when nothing can reach its bytes any more: no register holds the Storage, and no tensor carved
from it (or view of such a tensor: a result the caller still holds, a numpy view of it) is
alive. Every numpy view of the bytes references the block's owning array (numpy collapses a
view's `base` to the array that owns the memory), and a Storage remembers the tensors it carved
(to hand the same NDArray out again for the same offset, shape and dtype when no one holds it),
so reference counts say exactly whether a block is in use. The counts an unused block and an
unused carved tensor show are measured once, on probes, read the same way as later.

One pool per VirtualMachine and thread (runs in two threads never share a block). It also
holds the thread's buffers of the straight lines' internal sites and kernel batches (`sites`,
straight_line.py and kernel_batches.py), which need no counting. It keeps at
most MAX_BLOCKS_PER_SIZE blocks of a size and MAX_POOLED_BYTES in all; beyond that a block is
allocated for the run and freed by Python as before.
"""
import sys

import numpy as np

from ..errors import ExecutionError
from ..runtime.device import Device, cpu
from ..runtime.limits import check_tensor_size
from ..runtime.ndarray import ALIGNMENT, NDArray

MAX_BLOCKS_PER_SIZE = 8
MAX_POOLED_BYTES = 1 << 30
MAX_CARVED = 4                  # tensors a Storage remembers for reuse


def _tensor_references(tensor) -> tuple:
    """(references to a carved NDArray, references to its numpy array)."""
    return sys.getrefcount(tensor), sys.getrefcount(tensor.view_numpy())


class Storage:
    """A block of aligned bytes that tensors are carved from (the VM's alloc_storage).

    Parameters
    ----------
    nbytes : int
        The size of the block; checked against the allocation limit first.
    device : Device
        The device the block belongs to.
    """

    __slots__ = ("buffer", "device", "address", "owner", "carved")

    def __init__(self, nbytes: int, device: Device):
        check_tensor_size((nbytes,), "uint8", "VM alloc_storage")
        size = max(int(nbytes), 1)
        raw = np.empty(size + ALIGNMENT, dtype=np.uint8)
        base = raw.ctypes.data
        start = (-base) % ALIGNMENT
        self.buffer = raw[start:start + size]
        self.device = device
        self.address = base + start          # of buffer[0]; tensors carved here know theirs
        self.owner = raw                     # the array owning the bytes (see the module doc)
        self.carved = {}                     # (offset, shape, dtype) -> NDArray

    def alloc_tensor(self, offset: int, shape, dtype, nbytes=None) -> NDArray:
        """A tensor carved from this block (the VM's alloc_tensor): a view of its bytes, no copy.

        Parameters
        ----------
        offset : int
            Where the tensor starts, in bytes from the start of the block.
        shape : tuple of int
            The tensor's shape.
        dtype : str or numpy.dtype
            Its element type.
        nbytes : int, optional
            Its size when the compiler knows it; None (the default) computes it from `shape`, which
            is then checked against the allocation limit (a shape computed at run time).

        Returns
        -------
        tensor : NDArray
            The tensor (the one carved before at this offset, shape and dtype when nothing
            references it any more); an ExecutionError when it does not fit in the block.
        """
        dt = np.dtype(dtype)
        key = (offset, tuple(shape), dt)
        cached = self.carved.get(key)
        if cached is not None and _tensor_references(cached) == UNUSED_CACHED:
            return cached
        if nbytes is None:                   # a shape computed at run time
            nbytes = check_tensor_size(shape, dt, "VM alloc_tensor_reg")
        end = offset + nbytes
        if offset < 0 or end > self.buffer.size:
            raise ExecutionError(f"alloc_tensor: {tuple(shape)} {dtype} at offset {offset} needs {end} bytes, "
                                 f"the storage has {self.buffer.size}")
        tensor = NDArray(self.buffer[offset:end].view(dt).reshape(key[1]), self.device, self.address + offset)
        if cached is None and len(self.carved) < MAX_CARVED:
            self.carved[key] = tensor
        return tensor


def _probe_counts() -> tuple:
    """(UNUSED_BLOCK, UNUSED_TENSOR, UNUSED_CACHED): the reference counts of an unused pooled
    block (and of its owning array, less its carved tensors), of an unused carved tensor (and
    of its array) met in the loop over `carved`, both read exactly as StoragePool.reuse_carved
    reads them, and of an unused carved tensor read as Storage.alloc_tensor reads it (one
    local, passed to _tensor_references)."""
    blocks = [Storage(4, cpu(0))]
    for storage in blocks:
        block = (sys.getrefcount(storage), sys.getrefcount(storage.owner))
    del storage
    carved = {0: NDArray(np.empty(1), cpu(0))}
    for tensor in carved.values():
        in_loop = (sys.getrefcount(tensor), sys.getrefcount(tensor.view_numpy()))
    del tensor
    cached = carved[0]
    return block, in_loop, _tensor_references(cached)


UNUSED_BLOCK, UNUSED_TENSOR, UNUSED_CACHED = _probe_counts()


class StoragePool:
    """Static-size storages of one VM in one thread, reused once unreferenced.

    Parameters
    ----------
    device : Device
        The device of the storages (the VM's host).
    """

    def __init__(self, device):
        self.device = device
        self.by_size = {}                 # nbytes -> [Storage]
        self.pooled_bytes = 0
        # (function index, pc) -> (Storage, its tensor): the internal sites of straight-line
        # functions (straight_line.py), one tensor each, reused with no reference counting
        self.sites = {}

    def reuse(self, nbytes: int):
        """A pooled storage of `nbytes` bytes that no one references, or None."""
        found = self.reuse_carved(nbytes, None)
        return None if found is None else found[0]

    def reuse_carved(self, nbytes: int, key):
        """(storage, tensor): a pooled storage of `nbytes` bytes that nothing but the pool
        references, nor its bytes, nor the tensors it carved, and the tensor it carved before at
        `key` ((offset, shape, numpy dtype), as Storage.alloc_tensor keys them; None when it
        carved none there); None when every such storage is in use. One loop, no calls: this
        runs for every allocation a run returns, and the counts are read as _probe_counts
        reads them."""
        blocks = self.by_size.get(nbytes)
        if blocks:
            getrefcount = sys.getrefcount
            for storage in blocks:
                carved = storage.carved
                if getrefcount(storage) == UNUSED_BLOCK[0] and \
                        getrefcount(storage.owner) == UNUSED_BLOCK[1] + len(carved):
                    for tensor in carved.values():
                        if getrefcount(tensor) != UNUSED_TENSOR[0] or \
                                getrefcount(tensor.view_numpy()) != UNUSED_TENSOR[1]:
                            break
                    else:
                        return storage, carved.get(key)
        return None

    def add(self, nbytes: int, storage: Storage) -> Storage:
        """Keep a freshly allocated `storage` of `nbytes` bytes for later runs while the pool has
        room; returns it."""
        blocks = self.by_size.setdefault(nbytes, [])
        if len(blocks) < MAX_BLOCKS_PER_SIZE and self.pooled_bytes + nbytes <= MAX_POOLED_BYTES:
            blocks.append(storage)
            self.pooled_bytes += nbytes
        return storage


__all__ = ["Storage", "StoragePool", "MAX_BLOCKS_PER_SIZE", "MAX_POOLED_BYTES"]
