"""Every op of the registry through its CUDA implementation, without a GPU: each sample's kernel
is generated for target "cuda", (a) compiled to PTX with nvcc when the toolkit is installed and
(b) run on the CPU under the emulation header (tests/cuda/cuda_emu.h: blocks and threads, shared
memory, __syncthreads as a barrier) against the op's numpy reference.

All kernels go into one translation unit per test (one g++ and one nvcc run). By default the
first sample of every op runs; `-m slow` runs every sample of every op."""
import numpy as np
import pytest

from relay_backend.codegen.cuda_compile import compile_ptx, find_nvcc

from .emulator import Emulator, gxx
from .kernels import check_outputs, op_kernels

pytestmark = [pytest.mark.compile,
              pytest.mark.skipif(gxx() is None, reason="the CUDA emulation needs a C++ compiler")]


def _emulate_all(kernels):
    emu = Emulator([k.func for k in kernels], opt="-O0")
    failures = []
    for k in kernels:
        outs = [np.zeros_like(e) for e in k.expected]
        try:
            emu.run(k.name, *k.inputs, *outs)
            check_outputs(k.name, outs, k.expected)
        except AssertionError as err:
            failures.append(f"{k.name}: {str(err)[:400]}")
    assert not failures, f"{len(failures)} of {len(kernels)} CUDA kernels failed:\n" + "\n".join(failures)
    return emu


def _ptx(emu):
    ptx = compile_ptx(emu.source, "sm_75")
    assert b".entry" in ptx
    for name in emu.kernel_names:
        assert f".entry {name}(".encode() in ptx, f"{name} missing from the PTX"


def test_every_op_first_sample_under_emulation_and_nvcc():
    kernels = op_kernels(samples_per_op=1)
    assert len(kernels) >= 80
    emu = _emulate_all(kernels)
    if find_nvcc():
        _ptx(emu)


@pytest.mark.skipif(not find_nvcc(), reason="nvcc (CUDA toolkit) is not installed")
def test_nvcc_is_exercised():
    """Guard that (a) above did run here: this machine has nvcc."""
    assert find_nvcc()


@pytest.mark.slow
def test_every_sample_of_every_op_under_emulation_and_nvcc():
    emu = _emulate_all(op_kernels())
    if find_nvcc():
        _ptx(emu)
