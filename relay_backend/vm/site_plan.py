"""Shared storage for a straight line's internal sites (the VM's static memory plan).

An internal site (straight_line.py) is an alloc_storage + alloc_tensor pair of static size whose
tensor only kernel calls of the same function touch and which is not returned. Given one block
each, a function of N kernels keeps N intermediates' bytes alive at once (DenseNet-121: some
hundred MB), where the graph executor plans a few blocks that successive kernels reuse while
they are still in cache. TVM's VM gets the same reuse at run time from its pooled allocator (a
killed tensor's block serves the next allocation of its size).

`plan_sites` gives the sites the graph executor's plan instead: in a straight line every kernel
runs once, in order, so a site's tensor is live from the kernel that writes it to the last
kernel that reads it, and the shared planner (analysis.memory_plan: Relay's token allocator)
lets sites whose live ranges do not overlap share one block. A site enters the plan only when
exactly one kernel writes it and no kernel reads it before (or while) that kernel runs; any
other site keeps a block of its own, as before. RB_NO_MEMORY_PLAN=1 gives every site its own
block (the planner's switch).
"""
from dataclasses import dataclass

from ..analysis.memory_plan import Entry, Step, plan_memory
from .bytecode import Opcode

INVOKE_PACKED = int(Opcode.InvokePacked)


@dataclass(frozen=True)
class SitePlan:
    """`block[pc]`: the block id of the site whose alloc_storage is at pc (planned sites only);
    `sizes[block]`: its size in bytes (the largest storage of the sites placed there)."""

    block: dict
    sizes: list


def kernel_arguments(ins) -> tuple:
    """(input registers, output registers) of a decoded invoke_packed."""
    regs = ins[4]
    n_in = len(regs) - ins[3]
    return tuple(regs[:n_in]), tuple(regs[n_in:])


def plan_sites(body, internal) -> SitePlan:
    """The shared blocks of the internal sites of `body` (a straight line's decoded instructions
    but the ret) whose alloc_storage pcs are `internal` (see the module docstring)."""
    # tensor register -> site pc, for the sites of static size
    site_of = {body[pc + 1][5]: pc for pc in internal if body[pc][7] is not None}
    writer, first_read, bad = {}, {}, set()
    kernels = []
    for pc, ins in enumerate(body):
        if ins[0] != INVOKE_PACKED:
            continue
        ins_regs, outs = kernel_arguments(ins)
        for r in ins_regs:
            if r in site_of:
                first_read.setdefault(r, pc)
        for r in outs:
            if r in site_of:
                if r in writer or r in ins_regs:
                    bad.add(r)
                writer[r] = pc
        kernels.append((pc, ins_regs, outs))
    planned = {r for r in site_of if r in writer and r not in bad and first_read.get(r, writer[r] + 1) > writer[r]}
    order = sorted(planned, key=lambda r: site_of[r])
    entry_of = {r: i for i, r in enumerate(order)}
    entries = [Entry(int(body[site_of[r]][7]), name=f"site@{site_of[r]}") for r in order]
    steps = []
    for pc, ins_regs, outs in kernels:
        step_in = tuple(entry_of[r] for r in ins_regs if r in entry_of)
        step_out = tuple(entry_of[r] for r in outs if r in entry_of)
        if step_in or step_out:
            steps.append(Step(step_in, step_out, name=f"pc {pc}"))
    if not entries:
        return SitePlan({}, [])
    plan = plan_memory(steps, entries)
    return SitePlan({site_of[r]: plan.storage_ids[entry_of[r]] for r in order}, list(plan.storage_sizes))


__all__ = ["SitePlan", "plan_sites", "kernel_arguments"]
