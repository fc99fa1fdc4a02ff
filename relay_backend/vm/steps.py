"""The VM's straight-line instructions as closures built once per VirtualMachine.

`build_steps(vm)` turns every function's decoded bytecode into a list with one entry per pc:
a closure `step(regs, pool)` for the instructions that only read and write registers and then
fall through to pc + 1 (kernel calls, allocations, constants, moves, tuples, closures, shapes,
reshapes, device copies, kills), None for the control instructions run_loop executes itself
(ret, invoke, invoke_closure, if, goto, fatal, an unknown opcode). Each closure has its operands
bound, so a run does no per-instruction decoding or opcode if-chain. A function that is one
basic block also gets its straight line (straight_line.py), which run_loop runs instead.

The fast forms, chosen at build time when the bytecode allows them:

* a kernel call of a static kernel (Function.native_entry) reads its registers' cached
  addresses and calls the native code with the address of a pointer array holding them, the
  same array as the last call's while the addresses repeat; a register that holds no tensor (a
  tuple to flatten, an unset one) falls back to the general call, which behaves as before;
* `alloc_storage` of a static size takes a block from the thread's StoragePool (a block nothing
  references any more) instead of a fresh allocation;
* `alloc_tensor` whose offset register is only ever set by one `load_consti` uses that
  constant (falling back to reading the register when it is unset at run time).
Everything else, including every error message, is the general behaviour of loop.py.
"""
import ctypes

import numpy as np

from ..errors import InputError
from ..runtime import ndarray as _nd
from ..runtime.container import ADT
from ..runtime.limits import max_tensor_bytes
from ..runtime.module import Function
from ..runtime.ndarray import NDArray
from .loop import (ALLOC_ADT, ALLOC_CLOSURE, ALLOC_STORAGE, ALLOC_TENSOR, ALLOC_TENSOR_REG, DEVICE_COPY,
                   GET_FIELD, GET_TAG, INVOKE_PACKED, KILL_REGISTER, LOAD_CONST, LOAD_CONSTI, MOVE,
                   RESHAPE_TENSOR, SHAPE_OF, VMClosure, _allocation_error, _fatal, _flatten,
                   _scalar, _tensor)
from .storage import Storage
from .static_calls import static_function
from .straight_line import decoded_dst, straight_line


def build_steps(vm) -> tuple:
    """(per function of `vm`'s executable the list of per-pc steps, per function its straight
    line (steps, returned register, register file size) or None); see the module docstring."""
    steps, lines = [], []
    for f, code in enumerate(vm._code):
        constants = _constant_registers(code, len(vm.exe.functions[f].params))
        steps.append([_step(vm, f, pc, ins, constants) for pc, ins in enumerate(code)])
        lines.append(straight_line(vm, f, steps[-1], code, _invoke_packed))
    return steps, lines


def _constant_registers(code, num_params: int) -> dict:
    """{register: (int, pc)} for registers written by exactly one load_consti (at pc) and
    nothing else (not a parameter, never a kernel's argument, which could write into the
    tensor, never killed)."""
    writes, values, packed_args, killed = {}, {}, set(), set()
    for pc, ins in enumerate(code):
        if ins[0] == INVOKE_PACKED:
            packed_args.update(ins[4])
        if ins[0] == KILL_REGISTER:
            killed.add(ins[1])
            continue
        dst = decoded_dst(ins)
        if dst is not None:
            writes[dst] = writes.get(dst, 0) + 1
            if ins[0] == LOAD_CONSTI:
                values[dst] = (int(ins[1].view_numpy()[0]), pc)
    return {r: v for r, v in values.items()
            if writes[r] == 1 and r not in packed_args and r not in killed and r >= num_params}


def _store(dst, value):
    def step(regs, pool):
        regs[dst] = value
    return step


def _step(vm, func_index, pc, ins, constants):
    op = ins[0]
    if op == INVOKE_PACKED:
        return _invoke_packed(vm, func_index, pc, ins) or _general_packed(vm, func_index, pc, ins)
    if op == LOAD_CONSTI or op == LOAD_CONST:
        return _store(ins[2], ins[1])
    if op == ALLOC_STORAGE:
        return _alloc_storage(vm, func_index, pc, ins)
    if op == ALLOC_TENSOR:
        return _alloc_tensor(ins, constants)
    builder = _SIMPLE.get(op)
    return None if builder is None else builder(vm, func_index, pc, ins)


def _general_packed(vm, func_index, pc, ins):
    """The kernel call for any register contents: tuples flattened, an empty output skipped,
    a shape check's InputError named with the op."""
    function, reg_ids, n_out = vm._packed[ins[1]], ins[4], ins[3]

    def step(regs, pool):
        values = [regs[r] for r in reg_ids]
        if any(isinstance(v, ADT) for v in values):
            values = _flatten(values, [])
        if n_out == 1 and 0 in values[-1].shape:
            return
        try:
            function(*values)
        except InputError as err:
            # a shape check / shape function rejecting run-time shapes names the op itself
            why = str(err) if ins[1] in vm.exe.shape_funcs else \
                f"kernel {vm.exe.primitive_names[ins[1]]} rejected its arguments: {err}"
            raise _fatal(vm, func_index, pc, why, InputError) from err
    return step


def _invoke_packed(vm, func_index, pc, ins, bound=None, unchecked=False):
    """The fast call of a static kernel (see the module docstring), or None when the kernel has
    none. `bound` ({register: NDArray}, straight_line.py) are inputs known when the step is
    built: their registers are not read (the general call, for a register holding no tensor,
    writes them into their registers first, as the loads it stands for would have).
    `unchecked`: the straight line proved this call's arguments (static_calls.py), so a loaded
    executable's kernel, otherwise always checked, may take the fast call too."""
    packed = vm._packed[ins[1]]
    checked = static_function(packed) if unchecked else getattr(packed, "checked", None)
    entry = checked.native_entry() if isinstance(checked, Function) else None
    outputs = checked.info.params[-ins[3]:] if entry is not None and ins[3] else ()
    if entry is None or len(ins[4]) != len(checked.info.params) or \
            any(0 in p.shape for p in outputs):
        return None
    general = _general_packed(vm, func_index, pc, ins)
    native, pointer_array = entry
    bound = bound or {}
    reg_ids = ins[4]
    dynamic = [i for i, r in enumerate(reg_ids) if r not in bound]
    dynamic_regs = [reg_ids[i] for i in dynamic]
    addresses = _address_reader(dynamic_regs)
    template = [bound[r].data_ptr if r in bound else None for r in reg_ids]
    bound_items = tuple(bound.items())
    # (addresses, the address of a pointer array holding them, that array): the last call's,
    # replaced whole (never mutated), so threads sharing the step each see a consistent one
    last = [(None, 0, None)]

    def step(regs, pool):
        try:
            key = addresses(regs)
        except AttributeError:           # a tuple (or nothing) in a register: the general call
            for r, value in bound_items:
                regs[r] = value
            return general(regs, pool)
        cached = last[0]
        if cached[0] != key:
            if None in key:              # a tensor whose address is not known yet
                key = tuple([regs[r].data_ptr for r in dynamic_regs])
            pointers = list(template)
            for i, address in zip(dynamic, key):
                pointers[i] = address
            array = pointer_array(*pointers)
            cached = last[0] = (key, ctypes.addressof(array), array)
        native(cached[1], None)
    return step


def _address_reader(reg_ids):
    """regs -> the tuple of the addresses of the tensors in registers `reg_ids` (an entry None
    for a tensor whose address is not cached yet; AttributeError when a register holds no
    tensor). Reads NDArray's cached address slot: the property costs more than a small kernel's
    whole call here. Written out for the usual argument counts, which a generic loop doubles."""
    if len(reg_ids) == 1:
        a, = reg_ids
        return lambda regs: (regs[a]._ptr,)
    if len(reg_ids) == 2:
        a, b = reg_ids
        return lambda regs: (regs[a]._ptr, regs[b]._ptr)
    if len(reg_ids) == 3:
        a, b, c = reg_ids
        return lambda regs: (regs[a]._ptr, regs[b]._ptr, regs[c]._ptr)
    if len(reg_ids) == 4:
        a, b, c, d = reg_ids
        return lambda regs: (regs[a]._ptr, regs[b]._ptr, regs[c]._ptr, regs[d]._ptr)
    return lambda regs: tuple([regs[r]._ptr for r in reg_ids])


def _alloc_storage(vm, func_index, pc, ins):
    static_bytes, dst, device = ins[7], ins[6], vm.host
    size_reg = ins[1]
    if static_bytes is None:
        def step(regs, pool):
            nbytes = _scalar(regs[size_reg])
            if not 0 <= nbytes <= max_tensor_bytes():
                raise _allocation_error(vm, func_index, pc, regs, nbytes)
            regs[dst] = Storage(nbytes, device)
        return step

    def step(regs, pool):
        storage = pool.reuse(static_bytes)
        if storage is None:              # a new block: within the allocation limit
            if static_bytes > max_tensor_bytes():
                raise _allocation_error(vm, func_index, pc, regs, static_bytes)
            storage = pool.add(static_bytes, Storage(static_bytes, device))
        regs[dst] = storage
    return step


def _alloc_tensor(ins, constants):
    storage_reg, offset_reg, shape, dst, dtype, nbytes = ins[1], ins[2], ins[3], ins[5], ins[6], ins[7]
    offset = constants[offset_reg][0] if offset_reg in constants else None

    def step(regs, pool):
        at = offset if offset is not None and regs[offset_reg] is not None else _scalar(regs[offset_reg])
        regs[dst] = regs[storage_reg].alloc_tensor(at, shape, dtype, nbytes)
    return step


def _kill(vm, func_index, pc, ins):
    return _store(ins[1], None)


def _move(vm, func_index, pc, ins):
    src, dst = ins[1], ins[2]

    def step(regs, pool):
        regs[dst] = regs[src]
    return step


def _construct(kind):
    """The builder of alloc_data (kind ADT: tag, fields) or alloc_closure (kind VMClosure:
    function, captured values): `kind(ins[1], the values of registers ins[2])` into ins[3]."""
    def build(vm, func_index, pc, ins):
        first, sources, dst = ins[1], ins[2], ins[3]

        def step(regs, pool):
            regs[dst] = kind(first, [regs[r] for r in sources])
        return step
    return build


def _get_field(vm, func_index, pc, ins):
    src, index, dst = ins[1], ins[2], ins[3]

    def step(regs, pool):
        obj = regs[src]
        if not isinstance(obj, ADT) or index >= len(obj.fields):
            raise _fatal(vm, func_index, pc, f"get_field {index} of {obj!r}")
        regs[dst] = obj.fields[index]
    return step


def _get_tag(vm, func_index, pc, ins):
    src, dst, device = ins[1], ins[2], vm.host

    def step(regs, pool):
        obj = regs[src]
        if not isinstance(obj, ADT):
            raise _fatal(vm, func_index, pc, f"get_tag of a {type(obj).__name__}")
        regs[dst] = _nd.array(np.array([obj.tag], dtype="int32"), device=device)
    return step


def _alloc_tensor_reg(vm, func_index, pc, ins):
    storage_reg, offset_reg, shape_reg, dtype, dst = ins[1:6]

    def step(regs, pool):
        shape = tuple(int(d) for d in regs[shape_reg].view_numpy().reshape(-1))
        regs[dst] = regs[storage_reg].alloc_tensor(_scalar(regs[offset_reg]), shape, dtype)
    return step


def _shape_of(vm, func_index, pc, ins):
    src, dst, device = ins[1], ins[2], vm.host

    def step(regs, pool):
        tensor = _tensor(vm, func_index, pc, regs[src])
        regs[dst] = _nd.array(np.array(tensor.shape, dtype="int64"), device=device)
    return step


def _reshape_tensor(vm, func_index, pc, ins):
    src_reg, shape_reg, dst = ins[1], ins[2], ins[3]

    def step(regs, pool):
        src = _tensor(vm, func_index, pc, regs[src_reg])
        newshape = tuple(int(d) for d in regs[shape_reg].view_numpy().reshape(-1))
        try:
            regs[dst] = NDArray(src.view_numpy().reshape(newshape), src.device)
        except ValueError as err:
            raise _fatal(vm, func_index, pc, f"cannot reshape {src.shape} to {newshape}") from err
    return step


def _device_copy(vm, func_index, pc, ins):
    src, dst, device = ins[1], ins[4], vm.host

    def step(regs, pool):
        regs[dst] = _nd.array(_tensor(vm, func_index, pc, regs[src]), device=device)
    return step


_SIMPLE = {KILL_REGISTER: _kill, MOVE: _move, ALLOC_ADT: _construct(ADT), GET_FIELD: _get_field,
           GET_TAG: _get_tag, ALLOC_TENSOR_REG: _alloc_tensor_reg, ALLOC_CLOSURE: _construct(VMClosure),
           SHAPE_OF: _shape_of, RESHAPE_TENSOR: _reshape_tensor, DEVICE_COPY: _device_copy}

__all__ = ["build_steps"]
