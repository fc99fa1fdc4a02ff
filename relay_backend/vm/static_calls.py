"""Which kernel calls of a loaded executable's straight line need no argument check.

An executable read from bytes (Executable.load_exec) calls its kernels through the checked
call (runtime.module.Function: count, dtype, shape, alignment and aliasing of every argument),
because its bytecode came from a file: a hand-edited allocation must not make a kernel write past
a buffer. In a straight line (straight_line.py) every instruction runs once, in order, so most of
those facts are fixed by the bytecode itself, and `proven_calls` proves them once, when the line
is built. A kernel call is proven when each of its argument registers

* is written exactly once, before the call, by a static allocation (an `alloc_tensor` of
  constant shape at a constant, ALIGNMENT-aligned offset that fits inside an `alloc_storage` of
  static size, itself written once, earlier), by a load_const, or is a parameter (below); or is
  a `reshape_tensor` of one of those to a constant shape of the same element count;
* has exactly the dtype and shape of the kernel's parameter at that position;

and each output (as the kernel counts them, or the bytecode if it claims more) is an
allocated tensor sharing no byte with any other argument (two carvings
of one storage must not overlap; distinct storages are distinct blocks while both are held,
which the pool's reference counts and the site plan guarantee, as they do for executables
compiled in this process). A parameter counts as an input of its declared static type only in a
function no instruction of the executable calls (invoke, alloc_closure): only the caller of
`run`/`invoke` reaches it, and the VM checks those inputs against the parameter types on entry; a
function called from bytecode may receive any registers, and a parameter register the body
rewrites no longer holds the checked input. A register found empty at run time
(killed) still sends the fast call to the checked one, as for compiled executables. Unproven
calls stay checked.
"""
import math
import weakref

import numpy as np

from ..runtime.ndarray import ALIGNMENT, NDArray
from .loop import ALLOC_CLOSURE, ALLOC_STORAGE, ALLOC_TENSOR, INVOKE, INVOKE_PACKED, LOAD_CONST, RESHAPE_TENSOR

_CALLED = weakref.WeakKeyDictionary()    # Executable -> _called_functions(exe)


def proven_calls(vm, func_index: int, body, constants: dict, writes: dict) -> set:
    """The pcs of `body` (a straight-line function's decoded instructions but the ret) whose
    kernel call provably passes arguments matching the kernel's signature (module docstring).
    `func_index` is the function's index, `constants` ({register: (value, pc)}) the registers
    written once by a load, `writes` ({register: count}) how many instructions write each
    register (straight_line.py)."""
    # a parameter's register rewritten by the body no longer holds the checked input
    facts = {r: fact for r, fact in _parameter_facts(vm.exe, func_index).items() if not writes.get(r)}
    proven = set()
    for pc, ins in enumerate(body):
        if ins[0] == INVOKE_PACKED:
            if _call_is_proven(vm, ins, facts):
                proven.add(pc)
            continue
        found = _fact(ins, facts, constants, pc)
        if found is not None and writes.get(found[0]) == 1:
            facts[found[0]] = found[1]
    return proven


def _parameter_facts(exe, func_index: int) -> dict:
    """{register: ("param", shape, dtype)} for the static tensor parameters of function
    `func_index` when no instruction calls it (its inputs then pass the VM's entry check); else
    empty."""
    if func_index in _called_functions(exe):
        return {}
    facts = {}
    for r, desc in enumerate(exe.functions[func_index].param_types):
        shape = desc.get("shape") if isinstance(desc, dict) else None
        if shape is not None and all(type(d) is int and d >= 0 for d in shape):
            facts[r] = ("param", tuple(shape), np.dtype(desc["dtype"]))
    return facts


def _called_functions(exe) -> frozenset:
    """The indices of the functions some instruction of `exe` calls (invoke) or closes over
    (alloc_closure): found once per executable, not once per straight-line function."""
    called = _CALLED.get(exe)
    if called is None:
        called = frozenset(ins[1] for func in exe.functions for ins in func.instructions
                           if ins[0] in (INVOKE, ALLOC_CLOSURE))
        _CALLED[exe] = called
    return called


def static_function(packed):
    """The runtime Function behind a VM kernel entry: the fast call's `checked` Function for
    executables compiled in this process, the Function itself for loaded ones."""
    return getattr(packed, "checked", packed)


def known_constant(constants: dict, reg, pc: int, kind) -> bool:
    """Whether `reg` holds a loaded constant of `kind` when the instruction at `pc` runs: int
    (a load_consti, e.g. an offset) or NDArray (a load_const, e.g. a shape or a kernel input);
    `constants` as straight_line._loaded_constants gives them. A hand-edited file may name the
    other kind; that instruction then keeps its general step (and no fact here), which reads the
    register and checks what it finds."""
    found = constants.get(reg)
    return found is not None and found[1] < pc and isinstance(found[0], kind)


def _fact(ins, facts: dict, constants: dict, pc: int):
    """(register, fact) for an instruction whose result is statically known, else None. A fact
    is ("storage", bytes), ("const", shape, dtype), ("param", shape, dtype) or ("tensor", shape,
    dtype, storage register, start byte, end byte)."""
    op = ins[0]
    if op == ALLOC_STORAGE and ins[7] is not None:
        return ins[6], ("storage", int(ins[7]))
    if op == LOAD_CONST and ins[2] in constants:
        value = ins[1]
        return ins[2], ("const", tuple(value.shape), np.dtype(value.dtype))
    if op == ALLOC_TENSOR:
        storage = facts.get(ins[1])
        if storage is None or storage[0] != "storage" or not known_constant(constants, ins[2], pc, int):
            return None
        start, nbytes = constants[ins[2]][0], int(ins[7])
        if start < 0 or start % ALIGNMENT or start + nbytes > storage[1]:
            return None
        return ins[5], ("tensor", tuple(int(d) for d in ins[3]), np.dtype(ins[6]), ins[1], start, start + nbytes)
    if op == RESHAPE_TENSOR:
        src = facts.get(ins[1])
        if src is None or src[0] == "storage" or not known_constant(constants, ins[2], pc, NDArray):
            return None
        newshape = tuple(int(d) for d in constants[ins[2]][0].view_numpy().reshape(-1))
        if any(d < 0 for d in newshape) or math.prod(newshape) != math.prod(src[1]):
            return None
        return ins[3], (src[0], newshape) + src[2:]       # a view: same kind, bytes and dtype
    return None


def _call_is_proven(vm, ins, facts: dict) -> bool:
    """Whether every argument of the kernel call `ins` has a fact matching the kernel's
    parameter, and every output is an allocated tensor overlapping no other argument."""
    function = vm._packed[ins[1]]
    info = getattr(function, "info", None)
    if info is None or not getattr(function, "is_static", False):
        return False
    regs = ins[4]
    # the outputs as the kernel counts them (the last argument when it does not say), or as the
    # bytecode does when it claims more: every one of them must be a fresh, unshared allocation
    n_out = max(info.num_outputs or 1, ins[3])
    if len(regs) != len(info.params) or len(set(regs)) != len(regs) or n_out > len(regs):
        return False
    args = [facts.get(r) for r in regs]
    for fact, param in zip(args, info.params):
        if fact is None or fact[0] not in ("tensor", "const", "param") or fact[2] != np.dtype(param.dtype) or \
                fact[1] != tuple(param.shape):
            return False
    for o in range(len(regs) - n_out, len(regs)):
        out = args[o]
        if out[0] != "tensor":
            return False
        for j, other in enumerate(args):
            if j != o and other[0] == "tensor" and other[3] == out[3] and other[4] < out[5] and out[4] < other[5]:
                return False
    return True


__all__ = ["proven_calls", "static_function", "known_constant"]
