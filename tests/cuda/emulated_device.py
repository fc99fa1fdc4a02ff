"""A CUDA device API (runtime.cuda_driver's backend protocol) backed by the CPU emulation:
"device memory" is aligned host memory, a module load compiles the CUDA source for emulation,
a launch runs the emulated kernel. With it installed (`cuda_driver.use_backend`), CUDAModule,
CudaNDArray, the graph executor and the VM run their real CUDA code paths in CI without a GPU:
everything but pycuda itself."""
import ctypes

import numpy as np

from .emulator import compile_library, launch


class _Allocation:
    """Host bytes standing in for a device allocation; int() is the address."""

    def __init__(self, nbytes: int):
        raw = np.zeros(nbytes + 256, np.uint8)
        start = (-raw.ctypes.data) % 256
        self.raw = raw
        self.address = raw.ctypes.data + start

    def __int__(self) -> int:
        return self.address


class _Module:
    def __init__(self, source: str):
        self.lib, names = compile_library(source, "-O0")
        self.names = set(names)

    def get_function(self, name: str):
        assert name in self.names, name
        return (self.lib, name)


class EmulatedBackend:
    """One emulated CUDA device; counts launches and copies so tests can see what ran."""

    def __init__(self):
        self.launches = []
        self.copies = {"htod": 0, "dtoh": 0, "dtod": 0}

    def count(self):
        return 1, ""

    def alloc(self, device_id, nbytes):
        return _Allocation(int(nbytes))

    def htod(self, device_id, ptr, host):
        self.copies["htod"] += 1
        ctypes.memmove(ptr, host.ctypes.data, host.nbytes)

    def dtoh(self, device_id, host, ptr):
        self.copies["dtoh"] += 1
        ctypes.memmove(host.ctypes.data, ptr, host.nbytes)

    def dtod(self, device_id, dst, src, nbytes):
        self.copies["dtod"] += 1
        ctypes.memmove(dst, src, nbytes)

    def load(self, device_id, ptx, source):
        assert b".entry" in ptx or not ptx        # real PTX from nvcc rides along
        return _Module(source)

    def launch(self, device_id, kernel, grid, block, args):
        lib, name = kernel
        scalars = [np.array(a) for a in args if not isinstance(a, np.uintp)]
        cells, k = [], 0
        for a in args:                  # pointers pass themselves, scalars their address
            if isinstance(a, np.uintp):
                cells.append(int(a))
            else:
                cells.append(scalars[k].ctypes.data)
                k += 1
        argv = (ctypes.c_void_p * max(len(cells), 1))(*cells)
        launch(lib, name, argv, list(grid), list(block))
        self.launches.append(name)

    def synchronize(self, device_id):
        pass
