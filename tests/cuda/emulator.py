"""Run generated CUDA C on the CPU: the kernels of many PrimFuncs are compiled as one C++
translation unit after cuda_emu.h (g++), and each function's launch plan (grid, block,
workspace, shape variables) is executed on numpy arrays, kernel after kernel, as the
CUDAModule launcher does on a GPU. So index math, thread bindings, shared memory, barriers
and cross-thread reductions are checked against numpy references in CI."""
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np

from relay_backend.codegen import codegen_cuda
from relay_backend.runtime.signature import eval_dim

HEADER = os.path.join(os.path.dirname(__file__), "cuda_emu.h")
_KERNEL = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+\) (\w+)\((.*)\) \{$',
                     re.MULTILINE)
_BUILD_DIR = []


class EmulationError(AssertionError):
    """A kernel misbehaved under emulation (e.g. threads skipped a barrier others wait at)."""


def gxx():
    return shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")


def _trampolines(source: str):
    """(C++ text of one `void tramp(void** args)` + launcher per kernel, kernel names)."""
    out, names = [], []
    for m in _KERNEL.finditer(source):
        name, params = m.group(1), [p.strip() for p in m.group(2).split(",") if p.strip()]
        args = []
        for i, param in enumerate(params):
            ctype = param.rsplit(" ", 1)[0].replace("__restrict__", "").strip()
            args.append(f"({ctype})a[{i}]" if ctype.endswith("*") else f"*({ctype}*)a[{i}]")
        barriers = int("__syncthreads" in source[m.end():source.find("\nextern \"C\"", m.end())])
        out.append(f"static void rb_tramp_{name}(void** a) {{ {name}({', '.join(args)}); }}\n"
                   f'extern "C" int rb_launch_{name}(void** a, const int64_t* g, const int64_t* b) '
                   f"{{ return rb_emu_run(rb_tramp_{name}, a, g, b, {barriers}); }}\n")
        names.append(name)
    return "".join(out), names


def _build_dir() -> str:
    if not _BUILD_DIR:
        _BUILD_DIR.append(tempfile.mkdtemp(prefix="rb_cuda_emu_"))
    return _BUILD_DIR[0]


def compile_library(source: str, opt: str = "-O1"):
    """(ctypes library, kernel names) of CUDA source compiled for emulation; each kernel `k` gets
    `int rb_launch_k(void** args, const int64_t* grid, const int64_t* block)` (args: a buffer's
    data pointer, or a scalar's address)."""
    tramps, names = _trampolines(source)
    unit = f'#include "{HEADER}"\n{source}\n{tramps}'
    key = hashlib.sha256(f"{opt}\0{unit}".encode()).hexdigest()[:20]
    path = os.path.join(_build_dir(), f"emu_{key}.so")
    if not os.path.exists(path):
        src = path[:-3] + ".cpp"
        with open(src, "w") as f:
            f.write(unit)
        cmd = [gxx(), opt, "-std=c++14", "-fPIC", "-shared", "-w", src, "-o", path + ".tmp"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise EmulationError(f"g++ rejected the generated CUDA source:\n{proc.stderr[:6000]}")
        os.replace(path + ".tmp", path)
    return ctypes.CDLL(path), names


def launch(lib, kernel: str, argv, grid, block) -> None:
    """Run one kernel of an emulation library; EmulationError when it misbehaved."""
    g = (ctypes.c_int64 * 3)(*grid)
    b = (ctypes.c_int64 * 3)(*block)
    status = getattr(lib, f"rb_launch_{kernel}")(argv, g, b)
    if status == 1:
        raise EmulationError(f"{kernel}: some threads of a block returned while others wait at "
                             f"__syncthreads()")
    if status != 0:
        raise EmulationError(f"{kernel}: emulator error {status}")


class Emulator:
    """The kernels of `prim_funcs` (GPU-scheduled PrimFuncs) compiled for CPU emulation."""

    def __init__(self, prim_funcs, opt: str = "-O1"):
        source, plans = codegen_cuda(prim_funcs, "cuda")
        self._compile(source, plans, opt)

    @classmethod
    def from_source(cls, source: str, plans, opt: str = "-O1") -> "Emulator":
        """An emulator of CUDA source text (e.g. a generated unit edited by a test)."""
        emu = cls.__new__(cls)
        emu._compile(source, list(plans.values()) if isinstance(plans, dict) else plans, opt)
        return emu

    def _compile(self, source, plans, opt):
        self.source = source
        self.plans = {p.info.name: p for p in plans}
        self.lib, self.kernel_names = compile_library(source, opt)

    def run(self, name: str, *arrays):
        """Run function `name` on numpy arrays (inputs then outputs; outputs are written)."""
        plan = self.plans[name]
        env = {}
        for arr, param in zip(arrays, plan.info.params):
            for dim, got in zip(param.shape, arr.shape):
                if isinstance(dim, str):
                    env.setdefault(dim, got)
        values = [env[v] for v in plan.info.shape_vars]
        keep = list(arrays)
        assert all(a.flags.c_contiguous for a in keep), "emulated kernels need C-contiguous arrays"
        keep += [np.zeros(max(eval_dim(nbytes, env), 1), np.uint8) for _, nbytes in plan.workspace]
        scalars = [np.array(v, dtype=t) for t, v in zip(plan.shape_dtypes, values)]
        # buffers pass their data pointer, scalars the address of their value
        cells = [a.ctypes.data for a in keep] + [s.ctypes.data for s in scalars]
        argv = (ctypes.c_void_p * max(len(cells), 1))(*cells)
        for kernel in plan.kernels:
            grid = [eval_dim(d, env) for d in kernel.grid]
            if min(grid) > 0:
                launch(self.lib, kernel.name, argv, grid, kernel.block)
