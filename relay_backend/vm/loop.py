"""The VM's run loop (TVM's VirtualMachine::RunLoop) and the runtime objects it creates.

`run_loop(vm, func_index, args)` executes bytecode with an explicit frame stack: Invoke and
InvokeClosure push (code, pc, registers, destination), Ret pops; Python recursion is never
used, so a Relay loop of any depth up to MAX_CALL_DEPTH runs. Instructions are tuples
(bytecode.FIELDS order); those that fall through to the next pc run as closures built once
per VirtualMachine (steps.py), the control instructions are dispatched here. Executables are verified on load (verify.py); the few operand kinds only known at
run time (a tuple field or a call's result used as a tensor or closure) are checked here.
"""
import numpy as np

from ..errors import AllocationError, ExecutionError, InputError
from ..runtime import ndarray as _nd
from ..runtime.container import ADT
from ..runtime.limits import check_tensor_size, tensor_bytes
from ..runtime.module import Function
from ..runtime.ndarray import NDArray
from .bytecode import format_instruction

MOVE, RET, INVOKE, INVOKE_CLOSURE, INVOKE_PACKED = 0, 1, 2, 3, 4
ALLOC_TENSOR, ALLOC_TENSOR_REG, ALLOC_ADT, ALLOC_CLOSURE, GET_FIELD = 5, 6, 7, 8, 9
IF, LOAD_CONST, GOTO, GET_TAG, LOAD_CONSTI, FATAL = 10, 11, 12, 13, 14, 15
ALLOC_STORAGE, SHAPE_OF, RESHAPE_TENSOR, DEVICE_COPY, KILL_REGISTER = 16, 17, 18, 19, 20

# Frames on the call stack before a run stops with ExecutionError: Relay loops are recursion, so
# a program (or an edited file) can recurse forever; this ends it before memory runs out.
MAX_CALL_DEPTH = 100_000



class VMClosure:
    """A closure at run time: a function of the executable with its captured values.

    Parameters
    ----------
    func_index : int
        The index of the function in the executable.
    captured : list
        The values of its captured variables, passed before its own arguments.
    """

    __slots__ = ("func_index", "captured")

    def __init__(self, func_index: int, captured):
        self.func_index = func_index
        self.captured = list(captured)

    def __repr__(self) -> str:
        return f"VMClosure(func={self.func_index}, captured={len(self.captured)})"


def fast_kernel(fn):
    """A static-shape kernel called without the per-call signature check.

    The VM checks its inputs against the function's types on entry and allocates every
    output with the compiled shape, so for kernels without symbolic shape variables the
    check would only repeat the compiler's work (it costs more than a small kernel). Kernels
    with symbolic dims keep the checked call, which also binds the shape variables.
    """
    if isinstance(fn, Function) and fn.is_static:
        return fn.unchecked()
    return fn


def decode(ins, constants, device):
    """Load-time form of an instruction: constants resolved, static sizes precomputed."""
    op = ins[0]
    if op == LOAD_CONST:
        return (op, _nd.array(constants[ins[1]], device=device), ins[3])
    if op == LOAD_CONSTI:
        return (op, _nd.array(np.array([ins[1]], dtype="int64"), device=device), ins[2])
    if op == ALLOC_STORAGE:      # exact Python ints: an absurd shape must not wrap around int64
        return ins + (tensor_bytes(ins[5], ins[3]) if ins[5] else None,)
    if op == ALLOC_TENSOR:
        return ins + (np.dtype(ins[4]), tensor_bytes(ins[3], ins[4]))
    return ins


def _scalar(value) -> int:
    if isinstance(value, NDArray) and value.view_numpy().size:
        return value.view_numpy().reshape(-1)[0].item()
    found = f"an empty tensor {value.shape}" if isinstance(value, NDArray) else type(value).__name__
    raise ExecutionError(f"expected a scalar tensor in a register, found {found}")


def _flatten(values, out):
    for v in values:
        if isinstance(v, ADT):
            _flatten(v.fields, out)
        else:
            out.append(v)
    return out


def _fatal(vm, func_index, pc, why, cls=ExecutionError):
    func = vm.exe.functions[func_index]
    ins = func.instructions[pc]
    where = f"@{func.name} at pc {pc} ({format_instruction(ins, vm.exe.primitive_names)})"
    if cls is InputError:
        return InputError(f"{why} [VM {where}]")
    return cls(f"VM encountered fatal error in {where}: {why}")


def _tensor(vm, func_index, pc, value) -> NDArray:
    """`value` if it is a tensor; a register whose kind only the run reveals may hold another."""
    if not isinstance(value, NDArray):
        name = format_instruction(vm.exe.functions[func_index].instructions[pc]).split()[0]
        raise _fatal(vm, func_index, pc, f"{name} of a {type(value).__name__}, expected a tensor")
    return value


def _closure_mismatch(functions, callee, call_args) -> str:
    if not 0 <= callee < len(functions):
        return f"invoke_closure of a closure over function {callee}, which this executable lacks"
    func = functions[callee]
    return (f"invoke_closure passes {len(call_args)} arguments (captured values included), but "
            f"{func.name} takes {len(func.params)}")


def _allocation_error(vm, func_index, pc, regs, nbytes) -> AllocationError:
    """The AllocationError for the storage alloc_storage at `pc` would allocate, naming the
    tensor placed in it (its shape and the kernel that writes it) when the code shows them."""
    func = vm.exe.functions[func_index]
    storage_reg = func.instructions[pc][6]
    what = f"the VM (@{func.name} at pc {pc}: {format_instruction(func.instructions[pc], vm.exe.primitive_names)})"
    shape, dtype = None, None
    for later in func.instructions[pc + 1:]:
        if later[0] in (ALLOC_TENSOR, ALLOC_TENSOR_REG) and later[1] == storage_reg:
            tensor_reg = later[5]
            if later[0] == ALLOC_TENSOR:
                shape, dtype = later[3], later[4]
            elif isinstance(regs[later[3]], NDArray):
                shape, dtype = tuple(int(d) for d in regs[later[3]].view_numpy().reshape(-1)), later[4]
            writer = next((ins for ins in func.instructions[pc + 1:]
                           if ins[0] == INVOKE_PACKED and tensor_reg in ins[4][len(ins[4]) - ins[3]:]), None)
            if writer is not None:
                what = f"{what}: the output of kernel {vm.exe.primitive_names[writer[1]]}"
            break
    try:
        if shape is not None and tensor_bytes(shape, dtype) == nbytes:
            check_tensor_size(shape, dtype, what)
        check_tensor_size((nbytes,), "uint8", f"{what}: a storage of {nbytes:,} bytes")
    except AllocationError as err:
        return err
    return AllocationError(f"{what}: cannot allocate {nbytes} bytes")


def _outside_steps(steps: list, code: tuple, outside: dict) -> list:
    """`steps` with the alloc_tensor of every register in `outside` (invoke_with_outputs) taking
    the caller's tensor instead."""
    steps = list(steps)
    for pc, ins in enumerate(code):
        if ins[0] == ALLOC_TENSOR and ins[5] in outside:
            def take(regs, pool, dst=ins[5], tensor=outside[ins[5]]):
                regs[dst] = tensor
            steps[pc] = take
    return steps


def run_loop(vm, func_index: int, args, outside=None):
    """Run function `func_index` on the register values `args`; returns its result value.

    `outside` ({register: NDArray}, see outputs.py) gives the entry function's alloc_tensor
    registers whose tensors the caller provides (invoke_with_outputs). The straight-line
    instructions run as the closures of vm/steps.py (`vm._compiled()`); the control
    instructions are executed here."""
    all_steps, straight = vm._steps or vm._compiled()
    pool = vm._state.pool
    block = straight[func_index]
    if block is not None and not outside:        # one basic block: no dispatch at all
        regs = [None] * block[2]
        regs[:len(args)] = args
        for step in block[0]:
            step(regs, pool)
        return regs[block[1]]
    functions, codes = vm.exe.functions, vm._code
    regs = [None] * functions[func_index].register_file_size
    regs[:len(args)] = args
    frames = []
    code = codes[func_index]
    steps = all_steps[func_index]
    if outside:
        steps = _outside_steps(steps, code, outside)
    pc = 0
    while True:
        step = steps[pc]
        if step is not None:
            step(regs, pool)
            pc += 1
            continue
        ins = code[pc]
        op = ins[0]
        if op == RET:
            result = regs[ins[1]]
            if not frames:
                return result
            code, steps, pc, regs, dst, func_index = frames.pop()
            regs[dst] = result
            pc += 1
        elif op == INVOKE or op == INVOKE_CLOSURE:
            if op == INVOKE:
                callee, call_args = ins[1], [regs[r] for r in ins[2]]
            else:
                closure = regs[ins[1]]
                if not isinstance(closure, VMClosure):
                    raise _fatal(vm, func_index, pc, f"invoke_closure of a {type(closure).__name__}")
                callee, call_args = closure.func_index, closure.captured + [regs[r] for r in ins[2]]
                if not 0 <= callee < len(functions) or len(call_args) != len(functions[callee].params):
                    raise _fatal(vm, func_index, pc, _closure_mismatch(functions, callee, call_args))
            if len(frames) >= MAX_CALL_DEPTH:
                raise _fatal(vm, func_index, pc, f"call depth exceeds {MAX_CALL_DEPTH} frames (unbounded "
                                                 f"recursion?); raise relay_backend.vm.loop.MAX_CALL_DEPTH "
                                                 f"for deeper loops")
            frames.append((code, steps, pc, regs, ins[3], func_index))
            func_index = callee
            code = codes[callee]
            steps = all_steps[callee]
            regs = [None] * functions[callee].register_file_size
            regs[:len(call_args)] = call_args
            pc = 0
        elif op == IF:
            pc += ins[3] if _scalar(regs[ins[1]]) == _scalar(regs[ins[2]]) else ins[4]
        elif op == GOTO:
            pc += ins[1]
        elif op == FATAL:
            raise _fatal(vm, func_index, pc, "no match clause applied (or unreachable code was reached)")
        else:
            raise _fatal(vm, func_index, pc, f"unknown opcode {op}")
