"""The bytecode verifier `Executable.load_exec` runs on every function of a loaded executable.

A checksum only detects accidents: anyone can edit an executable and recompute it. The field
checks in executable.py keep every index in range; this pass proves the rest of what the run
loop relies on, so that no file can make the VM hang or fail with a Python error:

* Jumps go forward only (the VM compiler emits nothing else: If, Match and their Gotos all skip
  ahead), so a function's own code always reaches a ret or fatal. The only unbounded execution
  left is recursion through invoke / invoke_closure, which Relay programs use on purpose for
  loops; run_loop bounds it with a call-depth limit.
* Every path through a function is followed (the code is a DAG) while tracking which kinds of
  value each register may hold: tensor, storage, tuple/ADT, closure, or unset (never written, or
  killed). An instruction is rejected when an operand may be unset, or cannot be of a kind it
  needs. Storages and the tensors a kernel writes come only from alloc instructions in the
  compiler's output, so those operands must be certain. Where the kind is only known at run time
  (a parameter, a tuple field, a call's result) the run loop checks the value itself.
* invoke passes exactly as many arguments as the callee has parameters; alloc_closure captures
  at most that many.

Work is bounded by the file: paths are merged at jump targets, and a function whose jumps times
registers exceed MAX_WORK (far above anything the compiler emits) is rejected rather than slowly
verified.
"""
from ..errors import SerializationError
from .bytecode import FIELDS, Opcode

TENSOR, STORAGE, ADT, CLOSURE, UNSET = 1, 2, 4, 8, 16
VALUE = TENSOR | ADT | CLOSURE          # a parameter, a call's result, a tuple field
_NAMES = ((TENSOR, "tensor"), (STORAGE, "storage"), (ADT, "tuple"), (CLOSURE, "closure"),
          (UNSET, "unset"))
MAX_WORK = 1 << 26                      # jump instructions x registers (bytes of path states)

# operands whose kind must be certain: nothing at run time checks them again
_CERTAIN = {
    (Opcode.AllocTensor, "storage"): STORAGE, (Opcode.AllocTensorReg, "storage"): STORAGE,
    (Opcode.AllocTensorReg, "shape_register"): TENSOR, (Opcode.ReshapeTensor, "newshape"): TENSOR,
}
# operands that must possibly be of the kind; the run loop checks the actual value
_CHECKED = {
    (Opcode.AllocTensor, "offset"): TENSOR, (Opcode.AllocTensorReg, "offset"): TENSOR,
    (Opcode.AllocStorage, "allocation_size"): TENSOR, (Opcode.If, "test"): TENSOR,
    (Opcode.If, "target"): TENSOR, (Opcode.ShapeOf, "tensor"): TENSOR,
    (Opcode.ReshapeTensor, "tensor"): TENSOR, (Opcode.DeviceCopy, "src"): TENSOR,
    (Opcode.GetField, "object"): ADT, (Opcode.GetTag, "object"): ADT,
    (Opcode.InvokeClosure, "closure"): CLOSURE,
}
# the kind an instruction leaves in its dst register (Move copies its source's kinds)
_RESULT = {
    Opcode.Invoke: VALUE, Opcode.InvokeClosure: VALUE, Opcode.GetField: VALUE,
    Opcode.AllocTensor: TENSOR, Opcode.AllocTensorReg: TENSOR, Opcode.LoadConst: TENSOR,
    Opcode.LoadConsti: TENSOR, Opcode.GetTag: TENSOR, Opcode.ShapeOf: TENSOR,
    Opcode.ReshapeTensor: TENSOR, Opcode.DeviceCopy: TENSOR, Opcode.AllocADT: ADT,
    Opcode.AllocClosure: CLOSURE, Opcode.AllocStorage: STORAGE, Opcode.KillRegister: UNSET,
}
_ENDS = (Opcode.Ret, Opcode.Fatal, Opcode.Goto, Opcode.If)


def kind_names(kinds: int) -> str:
    """"tensor or closure" for a kind bit set."""
    return " or ".join(name for bit, name in _NAMES if kinds & bit) or "nothing"


def verify_function(func, functions) -> None:
    """SerializationError naming the function, pc, instruction and operand unless `func` (a
    VMFunction whose fields are already range-checked) is safe to run; see the module doc."""
    code, registers = func.instructions, func.register_file_size
    jumps = sum(1 for ins in code if ins[0] in (Opcode.If, Opcode.Goto))
    if jumps * registers > MAX_WORK:
        raise SerializationError(f"VM executable: function {func.name}: {jumps} jumps over {registers} "
                                 f"registers is more than the verifier checks ({MAX_WORK}); the VM "
                                 f"compiler never emits functions this large")
    entry = bytearray([UNSET]) * registers
    entry[:len(func.params)] = bytes([VALUE]) * len(func.params)
    pending = {0: entry}                  # pc -> register kinds on the paths that reach it
    for pc, ins in enumerate(code):
        state = pending.pop(pc, None)
        if state is None:
            continue                      # unreachable: never runs
        op = Opcode(ins[0])
        _check_operands(func, functions, pc, ins, state)
        for target in _successors(op, ins, pc):
            if target in pending:
                pending[target] = _merge(pending[target], state)
            else:
                pending[target] = state if op not in (Opcode.If,) else bytearray(state)
        if op not in _ENDS:
            _apply(op, ins, state)
            pending[pc + 1] = _merge(pending[pc + 1], state) if pc + 1 in pending else state


def _successors(op, ins, pc) -> tuple:
    if op == Opcode.Goto:
        return (pc + ins[1],)
    if op == Opcode.If:
        return (pc + ins[3], pc + ins[4])
    return ()


def _merge(a: bytearray, b: bytearray) -> bytearray:
    """Kinds on either path (bitwise or of the two states)."""
    merged = int.from_bytes(a, "little") | int.from_bytes(b, "little")
    return bytearray(merged.to_bytes(len(a), "little"))


def _apply(op, ins, state: bytearray) -> None:
    """The register kinds after `ins` (the dst it writes)."""
    if op == Opcode.Move:
        state[ins[2]] = state[ins[1]]
    elif op in _RESULT:
        state[ins[-1]] = _RESULT[op]


def _check_operands(func, functions, pc, ins, state) -> None:
    op = Opcode(ins[0])
    for value, (name, kind) in zip(ins[1:], FIELDS[op]):
        if name == "dst" or kind not in ("reg", "regs"):
            continue
        for i, reg in enumerate(value if kind == "regs" else (value,)):
            label = f"{name}[{i}]" if kind == "regs" else name
            need = _operand_need(op, name, i, ins)
            _check_register(func, pc, label, reg, state[reg], need)
    if op == Opcode.Invoke and len(ins[2]) != len(functions[ins[1]].params):
        callee = functions[ins[1]]
        raise _bad(func, pc, f"passes {len(ins[2])} argument(s), but {callee.name} takes "
                             f"{len(callee.params)}")
    if op == Opcode.AllocClosure and len(ins[2]) > len(functions[ins[1]].params):
        callee = functions[ins[1]]
        raise _bad(func, pc, f"captures {len(ins[2])} value(s), but {callee.name} takes only "
                             f"{len(callee.params)} parameter(s)")


def _operand_need(op, name, index, ins) -> tuple:
    """(kinds, certain) an operand needs; kinds None = any value that is set."""
    if op == Opcode.InvokePacked:
        if index >= ins[2] - ins[3]:                 # an output: an allocated tensor
            return TENSOR, True
        return TENSOR | ADT, False                   # inputs: tuples are flattened, then checked
    if (op, name) in _CERTAIN:
        return _CERTAIN[(op, name)], True
    if (op, name) in _CHECKED:
        return _CHECKED[(op, name)], False
    return None, False


def _check_register(func, pc, label, reg, kinds, need) -> None:
    wanted, certain = need
    if kinds & UNSET:
        raise _bad(func, pc, f"{label}=${reg} may be read while unset (never written on some path "
                             f"to here, or killed)")
    if wanted is None:
        return
    if (certain and kinds & ~wanted) or not kinds & wanted:
        raise _bad(func, pc, f"{label}=${reg} holds a {kind_names(kinds)}, not a {kind_names(wanted)}")


def _bad(func, pc, what: str) -> SerializationError:
    return SerializationError(f"VM executable: function {func.name}[{pc}] "
                              f"{Opcode(func.instructions[pc][0]).name}: {what}")


__all__ = ["verify_function", "kind_names", "MAX_WORK"]
