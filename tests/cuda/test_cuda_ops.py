"""Every op of the registry through its CUDA implementation, without a GPU: each sample's kernel
is generated for target "cuda", (a) compiled to PTX with nvcc (skipped with the reason where the
toolkit is missing) and (b) run on the CPU under the emulation header (tests/cuda/cuda_emu.h:
blocks and threads, shared memory, __syncthreads as a barrier) against the op's numpy reference.

All kernels go into one translation unit (one g++ run, one nvcc run). By default the first sample
of every op runs; `-m slow` runs every sample of every op."""
import numpy as np
import pytest

from relay_backend.codegen import codegen_cuda
from relay_backend.codegen.cuda_compile import compile_ptx, find_nvcc

from .emulator import Emulator, gxx
from .kernels import check_outputs, op_kernels

pytestmark = pytest.mark.compile
needs_gxx = pytest.mark.skipif(gxx() is None, reason="the CUDA emulation needs a C++ compiler")
needs_nvcc = pytest.mark.skipif(not find_nvcc(), reason="nvcc (CUDA toolkit) is not installed: "
                                                        "the PTX check cannot run here")


@pytest.fixture(scope="module")
def first_samples():
    kernels = op_kernels(samples_per_op=1)
    assert len(kernels) >= 80            # every op of the registry
    return kernels


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


def _ptx(kernels):
    source, plans = codegen_cuda([k.func for k in kernels])
    ptx = compile_ptx(source, "sm_75")
    for plan in plans:
        for kernel in plan.kernels:
            assert f".entry {kernel.name}(".encode() in ptx, f"{kernel.name} missing from the PTX"


@needs_gxx
def test_every_op_under_emulation(first_samples):
    _emulate_all(first_samples)


@pytest.mark.slow  # walks the registry through nvcc
@needs_nvcc
def test_every_op_compiles_to_ptx(first_samples):
    _ptx(first_samples)


@pytest.mark.slow
@needs_gxx
def test_every_sample_of_every_op_under_emulation():
    _emulate_all(op_kernels())


@pytest.mark.slow
@needs_nvcc
def test_every_sample_of_every_op_compiles_to_ptx():
    _ptx(op_kernels())
