"""A VM function with no jumps, as one flat list of steps specialised to its code.

Most models compile to a `main` that is one basic block: loads, allocations, kernel calls,
kills, then a ret. run_loop runs such a function as a loop over the steps this module builds
(`straight_line`), which may assume what the absence of jumps proves: every instruction runs
once, in order, so a register written by exactly one load (load_const / load_consti, never
killed, never a kernel's output, not a parameter) holds that constant at every later read.

Specialisations, each behaving as the instructions it replaces:

* reads of such constants are bound when the step is built: the size of a static
  alloc_storage (never read), the offset of an alloc_tensor, the shape of a reshape_tensor,
  the address of a kernel's input; a load nothing else reads is dropped (a kernel falling
  back to its general call writes the elided loads into their registers first);
* an alloc_storage of static size followed by the alloc_tensor carving it at a constant offset
  is one step;
* that pair is an *internal* site when its tensor cannot outlive the run: the storage is read by
  nothing else, and the tensor only by kernel calls (as an input, or as the output they
  write) and is not returned; no view, tuple, move or result can then reach its bytes. Each
  internal site gets one tensor per thread (StoragePool.sites), made on the first run and
  handed out again with no reference counting, as a graph executor's planned buffer; sites
  whose tensors are never live at once share a block (site_plan.py, the graph executor's
  memory plan), up to MAX_SITE_BYTES of blocks per function; sites past that, and the
  others, take pooled blocks, whose reference counts prove them free,
  StoragePool.reuse_carved; the kills of its registers are dropped (they only released a
  reference for the pool's counts);
* consecutive kernel calls, with the static allocations between them, run as one native call
  per thread (kernel_batches.py);
* in an executable loaded from bytes, whose kernels are otherwise called with every argument
  checked, the calls whose arguments the bytecode fixes (static_calls.py) get the same fast
  calls and batches.
"""
import numpy as np

from ..runtime.limits import max_tensor_bytes
from ..runtime.ndarray import NDArray
from .bytecode import FIELDS, Opcode, read_registers
from .loop import (ALLOC_STORAGE, ALLOC_TENSOR, INVOKE_PACKED, KILL_REGISTER, LOAD_CONST, LOAD_CONSTI,
                   RESHAPE_TENSOR, RET, _allocation_error, _fatal, _tensor)
from .kernel_batches import batch_kernels
from .site_plan import plan_sites
from .static_calls import known_constant, proven_calls
from .storage import Storage

# bytes of internal-site tensors one straight-line function keeps per thread
MAX_SITE_BYTES = 32 << 20


def straight_line(vm, func_index, steps: list, code: tuple, kernel_step):
    """(steps, returned register, register file size) when function `func_index` is one basic
    block (every instruction a step but the last, a ret), else None. `steps` are its per-pc
    steps; `kernel_step(vm, func_index, pc, ins, bound, unchecked)` builds a kernel call with the
    inputs `bound` ({register: NDArray}) taken as given, or returns None when the kernel has no
    fast call (it then reads every register itself); `unchecked` says the call may skip the
    argument check (always for executables compiled in this process; for loaded ones, the calls
    static_calls.py proves)."""
    if not code or code[-1][0] != RET or any(s is None for s in steps[:-1]):
        return None
    func = vm.exe.functions[func_index]
    body, returned = code[:-1], code[-1][1]
    constants = _loaded_constants(body, len(func.params))
    writes = _write_counts(body)
    # a loaded executable's kernels are checked at every call, but those proven here
    proven = proven_calls(vm, func_index, body, constants, writes) if getattr(vm.exe, "checked_calls", False) else None
    kernels, bounds, reads = {}, {}, {returned: [len(code) - 1]}
    for pc, ins in enumerate(body):
        bound = {}
        if ins[0] == INVOKE_PACKED:
            n_in = len(ins[4]) - ins[3]
            bound = {r: constants[r][0] for r in ins[4][:n_in] if known_constant(constants, r, pc, NDArray)}
            kernels[pc] = kernel_step(vm, func_index, pc, ins, bound, proven is None or pc in proven)
            if kernels[pc] is None:
                bound = {}
            bounds[pc] = bound
        for r in _dynamic_reads(ins, pc, constants, bound):
            reads.setdefault(r, []).append(pc)
    internal = _internal_sites(body, reads, returned, writes)
    plan = plan_sites(body, {pc: constants[body[pc + 1][2]][0] for pc in internal
                             if body[pc][7] is not None and known_constant(constants, body[pc + 1][2], pc + 1, int)},
                      getattr(vm.exe, "concat_kernels", None))
    line, kinds, pc, site_bytes, internal_regs, admitted = [], [], 0, 0, set(), set()
    while pc < len(body):
        ins = body[pc]
        after = body[pc + 1] if pc + 1 < len(body) else None
        if ins[0] == ALLOC_STORAGE and ins[7] is not None and after is not None and \
                after[0] == ALLOC_TENSOR and after[1] == ins[6] and known_constant(constants, after[2], pc + 1, int):
            block = plan.block.get(pc)
            cost = 0 if block in admitted else ins[7] if block is None else plan.sizes[block]
            own = pc in internal and site_bytes + cost <= MAX_SITE_BYTES
            if own:
                site_bytes += cost
                internal_regs.update((ins[6], after[5]))
                if block is not None:
                    admitted.add(block)
            offset = constants[after[2]][0]
            line.append(_site(vm, func_index, pc, ins, after, plan.offset.get(pc, offset), block, plan) if own else
                        _carved(vm, func_index, pc, ins, after, offset))
            single = writes[ins[6]] == 1 and writes[after[5]] == 1
            # an in-place concatenation does not read its inputs (it runs nothing)
            readers = frozenset(p for p in reads.get(after[5], ()) if plan.dropped.get(p, -1) not in admitted)
            kinds.append(("site", readers) if own else ("alloc",) if single else ("other",))
            pc += 2
            continue
        if ins[0] in (LOAD_CONST, LOAD_CONSTI) and ins[-1] in constants and ins[-1] not in reads:
            pass                                     # nothing reads it: dropped
        elif ins[0] == KILL_REGISTER and ins[1] in internal_regs:
            pass                                     # the site keeps the tensor anyway
        elif pc in plan.dropped and plan.dropped[pc] in admitted:
            pass                                     # in place: its inputs were written into its output
        elif ins[0] == ALLOC_TENSOR and known_constant(constants, ins[2], pc, int):
            line.append(_alloc_tensor_at(ins, constants[ins[2]][0]))
        elif ins[0] == RESHAPE_TENSOR and known_constant(constants, ins[2], pc, NDArray):
            line.append(_reshape_to(vm, func_index, pc, ins, constants[ins[2]][0]))
        elif pc in kernels and kernels[pc] is not None:
            line.append(kernels[pc])
            kinds.append(("kernel", ins, bounds[pc], frozenset(r for r in ins[4] if r in internal_regs), pc))
        else:
            line.append(steps[pc])
        if len(kinds) < len(line):
            kinds.append(("other",))
        pc += 1
    return batch_kernels(vm, func_index, line, kinds), returned, func.register_file_size


def _loaded_constants(body, num_params: int) -> dict:
    """{register: (value, pc)}: registers written once, by a load_consti (value an int) or a
    load_const (value the NDArray), never killed, never a kernel's output, not a parameter."""
    writes, values, excluded = {}, {}, set(range(num_params))
    for pc, ins in enumerate(body):
        op = ins[0]
        if op == KILL_REGISTER:
            excluded.add(ins[1])
            continue
        if op == INVOKE_PACKED:
            excluded.update(ins[4][len(ins[4]) - ins[3]:])
            continue
        dst = decoded_dst(ins)
        if dst is None:
            continue
        writes[dst] = writes.get(dst, 0) + 1
        if op == LOAD_CONSTI:
            values[dst] = (int(ins[1].view_numpy()[0]), pc)
        elif op == LOAD_CONST:
            values[dst] = (ins[1], pc)
    return {r: v for r, v in values.items() if writes[r] == 1 and r not in excluded}


def decoded_dst(ins):
    """The register a decoded instruction writes, or None (loop.decode appends precomputed
    fields to the allocations, so their dst is not the last field; a decoded load's is)."""
    spec = FIELDS[Opcode(ins[0])]
    if not spec or spec[-1][0] != "dst":
        return None
    return ins[len(spec)] if ins[0] in (ALLOC_STORAGE, ALLOC_TENSOR) else ins[-1]


def _dynamic_reads(ins, pc, constants, bound) -> list:
    """The registers the step for `ins` reads at run time (those bound at build time left out)."""
    regs = read_registers(ins)
    op = ins[0]
    if op == ALLOC_STORAGE and ins[7] is not None:
        return regs[1:]                              # a static size: never read
    if op == ALLOC_TENSOR and known_constant(constants, ins[2], pc, int) or \
            op == RESHAPE_TENSOR and known_constant(constants, ins[2], pc, NDArray):
        return [r for r in regs if r != ins[2]]
    if op == INVOKE_PACKED:
        return [r for r in regs if r not in bound]
    return regs


def _write_counts(body) -> dict:
    """{register: how many instructions write it} (kills left out)."""
    writes = {}
    for ins in body:
        dst = decoded_dst(ins) if ins[0] != KILL_REGISTER else None
        if dst is not None:
            writes[dst] = writes.get(dst, 0) + 1
    return writes


def _internal_sites(body, reads: dict, returned, writes: dict) -> set:
    """pcs of the static alloc_storage + alloc_tensor pairs whose tensor cannot outlive the run
    (see the module docstring)."""
    out = set()
    for pc, ins in enumerate(body[:-1]):
        after = body[pc + 1]
        if not (ins[0] == ALLOC_STORAGE and after[0] == ALLOC_TENSOR and after[1] == ins[6]):
            continue
        storage, tensor = ins[6], after[5]
        if tensor != returned and writes[storage] == 1 and writes[tensor] == 1 and \
                reads.get(storage) == [pc + 1] and all(body[p][0] == INVOKE_PACKED for p in reads.get(tensor, ())):
            out.add(pc)
    return out


def _new_carved(vm, func_index, pc, regs, static_bytes, offset, shape, dtype, nbytes):
    """A fresh storage (within the allocation limit) and the tensor carved from it."""
    if static_bytes > max_tensor_bytes():
        raise _allocation_error(vm, func_index, pc, regs, static_bytes)
    storage = Storage(static_bytes, vm.host)
    return storage, storage.alloc_tensor(offset, shape, dtype, nbytes)


def _site(vm, func_index, pc, storage_ins, tensor_ins, offset: int, block, plan):
    """An internal site: this thread's tensor for it, made on the first run, carved from the
    thread's block `block` of the function's SitePlan `plan` (site_plan.py; shared with the
    sites whose tensors are never live at the same time), or from a block of its own when
    `block` is None."""
    static_bytes, storage_reg = storage_ins[7], storage_ins[6]
    shape, dst, dtype, nbytes = tensor_ins[3], tensor_ins[5], tensor_ins[6], tensor_ins[7]
    site = (func_index, pc)
    shared = None if block is None else (func_index, "block", block)

    def make(regs, pool):
        if shared is None:
            return _new_carved(vm, func_index, pc, regs, static_bytes, offset, shape, dtype, nbytes)
        storage = pool.sites.get(shared)
        if storage is None:
            size = plan.sizes[block]
            if size > max_tensor_bytes():
                raise _allocation_error(vm, func_index, pc, regs, size)
            storage = pool.sites[shared] = Storage(size, vm.host)
        return storage, storage.alloc_tensor(offset, shape, dtype, nbytes)

    def step(regs, pool):
        found = pool.sites.get(site)
        if found is None:
            found = pool.sites[site] = make(regs, pool)
        regs[storage_reg], regs[dst] = found
    return step


def _carved(vm, func_index, pc, storage_ins, tensor_ins, offset: int):
    """alloc_storage + alloc_tensor as one step: an unused pooled block hands out the tensor it
    carved at this offset before (StoragePool.reuse_carved), else the general behaviour."""
    static_bytes, storage_reg = storage_ins[7], storage_ins[6]
    shape, dst, dtype, nbytes = tensor_ins[3], tensor_ins[5], tensor_ins[6], tensor_ins[7]
    key = (offset, tuple(shape), np.dtype(dtype))

    def step(regs, pool):
        found = pool.reuse_carved(static_bytes, key)
        if found is None:
            storage, tensor = _new_carved(vm, func_index, pc, regs, static_bytes, offset, shape, dtype, nbytes)
            pool.add(static_bytes, storage)
        else:
            storage, tensor = found
            if tensor is None:
                tensor = storage.alloc_tensor(offset, shape, dtype, nbytes)
        regs[storage_reg] = storage
        regs[dst] = tensor
    return step


def _alloc_tensor_at(ins, offset: int):
    """alloc_tensor at a constant offset."""
    storage_reg, shape, dst, dtype, nbytes = ins[1], ins[3], ins[5], ins[6], ins[7]

    def step(regs, pool):
        regs[dst] = regs[storage_reg].alloc_tensor(offset, shape, dtype, nbytes)
    return step


def _reshape_to(vm, func_index, pc, ins, shape_tensor):
    """reshape_tensor to a constant shape: a view of the source (its address kept when the view
    starts where the source does, as a reshape of a C-contiguous array does)."""
    src_reg, dst = ins[1], ins[3]
    newshape = tuple(int(d) for d in shape_tensor.view_numpy().reshape(-1))

    def step(regs, pool):
        src = _tensor(vm, func_index, pc, regs[src_reg])
        array = src.view_numpy()
        try:
            view = array.reshape(newshape)
        except ValueError as err:
            raise _fatal(vm, func_index, pc, f"cannot reshape {src.shape} to {newshape}") from err
        regs[dst] = NDArray(view, src.device, src._ptr if array.flags.c_contiguous else None)
    return step


__all__ = ["straight_line", "decoded_dst", "MAX_SITE_BYTES"]
