"""Consecutive VM kernel calls of a straight line, run as one native call per thread.

In a straight-line function (straight_line.py) every instruction runs once, in order. A
stretch of the line made of kernel calls (with a fast native entry) and static allocations
(internal sites, pooled allocations whose registers are written nowhere else) runs as:

    the stretch's allocations, in their order       # pool look-ups: they read no tensor data
    the kernels' argument addresses that change from run to run (a parameter, a pooled
        result) written into this thread's pointer arrays
    one native call running the kernels in order    # a KernelSequence (codegen/kernel_sequence.py)

This is the same computation as the steps one by one: an allocation reads only the pool and
the reference counts (which kernels do not change, and no kill sits inside a stretch), and it
writes registers no earlier instruction reads (they are written once, and a read before the
write would be a malformed program), so running it before the kernels that precede it
changes nothing they see. Constants and internal sites have fixed addresses in a thread, so
their pointers are written once, when the thread first runs the stretch (the arrays and the
sequence live in the thread's StoragePool.sites); a site only this stretch's kernels read then
needs no step at all on later runs. A register that holds no tensor at run time (an ADT)
makes the stretch run its sites' and kernels' own steps instead, which handle it.
"""
import ctypes

from ..codegen.kernel_sequence import KernelSequence
from .static_calls import static_function

MIN_KERNELS = 2          # one kernel alone gains nothing from a sequence


def batch_kernels(vm, func_index: int, line: list, kinds: list) -> tuple:
    """`line` (a straight line's steps) with its stretches (module docstring) of at least
    MIN_KERNELS kernels batched. `kinds[i]` says what `line[i]` is: ("site",) an internal site,
    ("alloc",) another static allocation whose registers nothing else writes, ("kernel", ins,
    bound, internal) a kernel with a fast entry, its inputs bound at build time ({register:
    NDArray}) and its arguments held by internal sites (a set of registers), ("other",)
    anything else."""
    out, stretch = [], []

    def flush():
        kernels = [(step, k[1:4]) for step, k in stretch if k[0] == "kernel"]
        if len(kernels) < MIN_KERNELS:
            out.extend(step for step, _ in stretch)
        else:
            inside = {k[4] for _, k in stretch if k[0] == "kernel"}
            # a site read by kernels of this stretch only: its tensor is in the thread's pointer
            # arrays, so after the first run its register is never read
            once = [step for step, k in stretch if k[0] == "site" and k[1] <= inside]
            every_run = [step for step, k in stretch if k[0] != "kernel" and step not in once]
            out.append(_batch(vm, every_run, once, kernels))
        stretch.clear()

    for step, kind in zip(line, kinds):
        if kind[0] == "other":
            flush()
            out.append(step)
        else:
            stretch.append((step, kind))
    flush()
    return tuple(out)


def _batch(vm, allocations: list, first_run: list, kernels: list):
    """The step running `allocations` (steps; `first_run` ones only on the thread's first run)
    then `kernels` ((own step, (ins, bound, internal)) pairs) as one native call."""
    key = object()                       # this stretch, in StoragePool.sites
    natives = []
    for _, (ins, _, _) in kernels:
        native, _ = static_function(vm._packed[ins[1]]).native_entry()
        natives.append(ctypes.cast(native, ctypes.c_void_p).value)
    own_steps = [step for step, _ in kernels]

    def build(regs) -> tuple:
        """(this thread's sequence, [(pointer array, index, register)] to refresh per run)."""
        calls, keep, refresh = [], [], []
        for address, (_, (ins, bound, internal)) in zip(natives, kernels):
            pointers = (ctypes.c_void_p * len(ins[4]))(
                *[(bound[r] if r in bound else regs[r]).data_ptr for r in ins[4]])
            refresh += [(pointers, i, r) for i, r in enumerate(ins[4]) if r not in bound and r not in internal]
            keep.append(pointers)
            calls.append((address, ctypes.addressof(pointers), 0))
        return KernelSequence(calls, keep), tuple(refresh)

    def step(regs, pool):
        for allocation in allocations:
            allocation(regs, pool)
        found = pool.sites.get(key)
        try:
            if found is None:
                for site in first_run:
                    site(regs, pool)
                found = pool.sites[key] = build(regs)
            else:
                for pointers, index, reg in found[1]:
                    pointers[index] = regs[reg].data_ptr
        except AttributeError:           # a register holds no tensor: each kernel's own step
            for site in first_run:
                site(regs, pool)
            for own in own_steps:
                own(regs, pool)
            return
        found[0]()
    return step


__all__ = ["batch_kernels", "MIN_KERNELS"]
