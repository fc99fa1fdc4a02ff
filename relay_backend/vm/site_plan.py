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

In-place concatenation, as the graph executor does it (te_compiler/inplace_concat.py): a
kernel that only concatenates its inputs (Executable.concat_kernels, recorded by the compiler)
whose output and inputs are planned sites, each input read by this kernel alone, with slices
back to back and aligned in the output (analysis.pure_concat.slice_offsets, the graph
executor's rule; it also checks the shapes against the bytecode's allocations, which a loaded
executable's claim must pass), makes its inputs views of its output (analysis.memory_views):
each producer writes straight into its slice and the concatenation runs nothing (`dropped`).
"""
from dataclasses import dataclass

from ..analysis.memory_plan import Entry, Step
from ..analysis.memory_views import plan_with_views, resolve
from ..analysis.pure_concat import slice_offsets
from .bytecode import Opcode

INVOKE_PACKED = int(Opcode.InvokePacked)


@dataclass(frozen=True)
class SitePlan:
    """For the planned sites, by the pc of their alloc_storage: `block[pc]` the block id,
    `offset[pc]` the byte offset of the site's tensor in the block; `sizes[block]` the block's
    size in bytes; `dropped[pc]`: the block of the output of the in-place concatenation at pc,
    which runs nothing when the sites of that block are given the planned block."""

    block: dict
    offset: dict
    sizes: list
    dropped: dict


EMPTY = SitePlan({}, {}, [], {})


def kernel_arguments(ins) -> tuple:
    """(input registers, output registers) of a decoded invoke_packed."""
    regs = ins[4]
    n_in = len(regs) - ins[3]
    return tuple(regs[:n_in]), tuple(regs[n_in:])


def plan_sites(body, sites: dict, concat_kernels=None) -> SitePlan:
    """The shared blocks of the internal sites of `body` (a straight line's decoded instructions
    but the ret): `sites` maps the pc of each site's alloc_storage (static size) to the constant
    offset of its alloc_tensor; `concat_kernels` ({packed index: (axis, inputs)}) names the
    kernels that only concatenate their inputs (see the module docstring)."""
    site_of = {body[pc + 1][5]: pc for pc in sites}          # tensor register -> site pc
    writer, first_read, read_count, bad, kernels = {}, {}, {}, set(), []
    for pc, ins in enumerate(body):
        if ins[0] != INVOKE_PACKED:
            continue
        ins_regs, outs = kernel_arguments(ins)
        for r in ins_regs:
            first_read.setdefault(r, pc)
            read_count[r] = read_count.get(r, 0) + 1
        for r in outs:
            if r in site_of:
                if r in writer or r in ins_regs:
                    bad.add(r)
                writer[r] = pc
        kernels.append((pc, ins, ins_regs, outs))
    clear = (r for r in site_of if r in writer and r not in bad and first_read.get(r, writer[r] + 1) > writer[r])
    order = sorted(clear, key=lambda r: site_of[r])
    if not order:
        return EMPTY
    entry_of = {r: i for i, r in enumerate(order)}
    entries = [Entry(int(body[site_of[r]][7]), name=f"site@{site_of[r]}") for r in order]
    steps, views, dropped = [], {}, {}
    for pc, ins, ins_regs, outs in kernels:
        slices = _inplace_slices(body, site_of, entry_of, read_count, ins, ins_regs, outs,
                                 (concat_kernels or {}).get(ins[1]))
        if slices is not None:
            views.update((entry_of[r], (entry_of[outs[0]], offset)) for r, offset in slices)
            dropped[len(steps)] = pc
        step_in = tuple(entry_of[r] for r in ins_regs if r in entry_of)
        step_out = tuple(entry_of[r] for r in outs if r in entry_of)
        if step_in or step_out:
            steps.append(Step(step_in, step_out, name=f"pc {pc}"))
    plan, offsets = plan_with_views(steps, entries, views, set(dropped))
    roots = resolve(views)
    block, offset = {}, {}
    for r in order:
        pc, eid = site_of[r], entry_of[r]
        root = order[roots[eid][0]] if eid in roots else r
        block[pc] = plan.storage_ids[eid]
        offset[pc] = sites[site_of[root]] + offsets[eid]
    out_block = {pc: plan.storage_ids[entry_of[kernel_arguments(body[pc])[1][0]]] for pc in dropped.values()}
    return SitePlan(block, offset, list(plan.storage_sizes), out_block)


def _inplace_slices(body, site_of, entry_of, read_count, ins, ins_regs, outs, concat):
    """[(input register, byte offset in the output)] when the kernel `ins` can run in place (a
    concatenation, see the module docstring), else None."""
    if concat is None or len(outs) != 1 or len(ins_regs) != concat[1] or len(set(ins_regs)) != len(ins_regs) or \
            outs[0] not in entry_of or any(r not in entry_of or read_count.get(r) != 1 for r in ins_regs):
        return None
    out = body[site_of[outs[0]] + 1]                 # its alloc_tensor: shape [3], dtype [6], bytes [7]
    parts = [body[site_of[r] + 1] for r in ins_regs]
    offsets = slice_offsets((out[3], out[6], out[7]), concat[0], [(p[3], p[6], p[7]) for p in parts])
    return None if offsets is None else list(zip(ins_regs, offsets))


__all__ = ["SitePlan", "plan_sites", "kernel_arguments", "EMPTY"]
