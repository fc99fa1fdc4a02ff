"""CUDA C -> PTX: with pycuda's compiler when pycuda is installed, else `nvcc -ptx` from PATH.

Both run the CUDA toolkit's nvcc (pycuda.compiler drives it with its own cache); the PTX is
for `-arch` (compute capability sm_XX from the target) and is JIT-compiled by the driver for
the GPU it finally runs on. Results are kept per process by (source, arch).
"""
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

from ..errors import CompileError

NVCC_FLAGS = ("-O3", "-std=c++14")
_CACHE = {}
_LOCK = threading.Lock()


@functools.lru_cache(maxsize=None)
def find_nvcc() -> str:
    """The nvcc on PATH (or under $CUDA_HOME/bin), or "" when there is none."""
    found = shutil.which("nvcc")
    if found:
        return found
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    candidate = os.path.join(home, "bin", "nvcc")
    return candidate if os.access(candidate, os.X_OK) else ""


def compile_ptx(source: str, arch: str) -> bytes:
    """PTX text (bytes) of a CUDA translation unit for compute capability `arch` ("sm_80").

    A compiler error is a CompileError quoting nvcc's diagnostics; no toolkit at all is a
    CompileError saying what to install."""
    key = hashlib.sha256(f"{arch}\0{source}".encode()).hexdigest()
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    try:
        import pycuda.compiler as pycuda_compiler
    except ImportError:
        pycuda_compiler = None
    if pycuda_compiler is not None:
        try:
            ptx = pycuda_compiler.compile(source, target="ptx", arch=arch, no_extern_c=True,
                                          options=list(NVCC_FLAGS))
        except Exception as err:  # noqa: BLE001 - pycuda.driver.CompileError and OSError
            raise CompileError(f"cuda codegen: nvcc (through pycuda) rejected the generated "
                               f"source for -arch={arch}:\n{str(err)[:4000]}\n(set RB_DEBUG=4 "
                               f"to print the CUDA source)") from None
    else:
        ptx = nvcc_ptx(source, arch)
    with _LOCK:
        _CACHE[key] = ptx
    return ptx


def nvcc_ptx(source: str, arch: str) -> bytes:
    """`nvcc -ptx -arch=<arch>` of `source` (CompileError with the diagnostics on failure)."""
    nvcc = find_nvcc()
    if not nvcc:
        raise CompileError("the cuda target compiles kernels to PTX with the CUDA toolkit's nvcc, "
                           "which is not on PATH (nor in $CUDA_HOME/bin): install the CUDA toolkit, "
                           "or build for target 'llvm'")
    with tempfile.TemporaryDirectory(prefix="rb_nvcc_") as tmp:
        src, out = os.path.join(tmp, "kernels.cu"), os.path.join(tmp, "kernels.ptx")
        with open(src, "w") as f:
            f.write(source)
        cmd = [nvcc, "-ptx", f"-arch={arch}", *NVCC_FLAGS, src, "-o", out]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise CompileError(f"cuda codegen: nvcc rejected the generated source:\n{' '.join(cmd)}\n"
                               f"{proc.stderr.strip()[:4000]}\n(set RB_DEBUG=4 to print the CUDA source)")
        with open(out, "rb") as f:
            return f.read()
