"""Consecutive VM kernel calls on per-thread fixed buffers, run as one native call.

In a straight-line function (straight_line.py), a kernel whose every argument is a constant
bound at build time or an internal site's tensor (one per thread, never handed to anyone)
sees the same addresses on every run in a thread. `batch_kernels` replaces each stretch of
the line made of such kernels (at least two) and internal-site steps by one step that:

    runs the stretch's site steps         # this thread's tensors, into their registers
    on the thread's first run of it: builds a KernelSequence (codegen/kernel_sequence.py)
        from those registers' addresses and the constants, kept in StoragePool.sites
    calls the sequence                    # one native call for the whole stretch

so the kernels run in the same order on the same buffers as the separate steps would, with one
Python-to-native call instead of one per kernel. Kernels reading a parameter or writing a
tensor the run returns keep their own steps (their addresses change from run to run).
"""
import ctypes

from ..codegen.kernel_sequence import KernelSequence


def batch_kernels(vm, func_index: int, line: list, kinds: list) -> tuple:
    """`line` (a straight line's steps) with the stretches described in the module docstring
    batched. `kinds[i]` says what `line[i]` is: ("site",) an internal site, ("kernel", ins,
    bound) a kernel on constants (`bound`, {register: NDArray}) and internal sites only,
    ("other",) anything else."""
    out, stretch = [], []

    def flush():
        kernels = [(k[1], k[2]) for _, k in stretch if k[0] == "kernel"]
        if len(kernels) < 2:
            out.extend(step for step, _ in stretch)
        else:
            sites = [step for step, k in stretch if k[0] == "site"]
            out.append(_batch(vm, func_index, sites, kernels))
        stretch.clear()

    for step, kind in zip(line, kinds):
        if kind[0] == "other":
            flush()
            out.append(step)
        else:
            stretch.append((step, kind))
    flush()
    return tuple(out)


def _batch(vm, func_index: int, sites: list, kernels: list):
    """The step running `sites` (site steps) then `kernels` ((instruction, bound) pairs) as one
    native call."""
    key = object()                       # this stretch, in StoragePool.sites
    natives = []
    for ins, _ in kernels:
        native, _ = vm._packed[ins[1]].checked.native_entry()
        natives.append(ctypes.cast(native, ctypes.c_void_p).value)

    def build(regs) -> KernelSequence:
        calls, keep = [], []
        for address, (ins, bound) in zip(natives, kernels):
            pointers = (ctypes.c_void_p * len(ins[4]))(
                *[(bound[r] if r in bound else regs[r]).data_ptr for r in ins[4]])
            keep.append(pointers)
            calls.append((address, ctypes.addressof(pointers), 0))
        return KernelSequence(calls, keep)

    def step(regs, pool):
        for site in sites:
            site(regs, pool)
        sequence = pool.sites.get(key)
        if sequence is None:
            sequence = pool.sites[key] = build(regs)
        sequence()
    return step


__all__ = ["batch_kernels"]
