"""The VM's run loop (TVM's VirtualMachine::RunLoop) and the runtime objects it creates.

`run_loop(vm, func_index, args)` executes bytecode with an explicit frame stack: Invoke and
InvokeClosure push (code, pc, registers, destination), Ret pops; Python recursion is never
used, so a Relay loop of any depth up to MAX_CALL_DEPTH runs. Instructions are tuples
(bytecode.FIELDS order); the dispatch is an if-chain ordered by how often each opcode runs in a
typical model. Executables are verified on load (verify.py); the few operand kinds only known at
run time (a tuple field or a call's result used as a tensor or closure) are checked here.
"""
import numpy as np

from ..errors import AllocationError, ExecutionError, InputError
from ..runtime import ndarray as _nd
from ..runtime.container import ADT
from ..runtime.device import Device
from ..runtime.limits import check_tensor_size, max_tensor_bytes, tensor_bytes
from ..runtime.module import Function
from ..runtime.ndarray import ALIGNMENT, NDArray
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


class Storage:
    """A block of aligned bytes that tensors are carved from (the VM's alloc_storage).

    Parameters
    ----------
    nbytes : int
        The size of the block; checked against the allocation limit first.
    device : Device
        The device the block belongs to.
    """

    __slots__ = ("buffer", "device")

    def __init__(self, nbytes: int, device: Device):
        check_tensor_size((nbytes,), "uint8", "VM alloc_storage")
        raw = np.empty(max(int(nbytes), 1) + ALIGNMENT, dtype=np.uint8)
        start = (-raw.ctypes.data) % ALIGNMENT
        self.buffer = raw[start:start + max(int(nbytes), 1)]
        self.device = device

    def alloc_tensor(self, offset: int, shape, dtype, nbytes=None) -> NDArray:
        """A tensor carved from this block (the VM's alloc_tensor): a view of its bytes, no copy.

        Parameters
        ----------
        offset : int
            Where the tensor starts, in bytes from the start of the block.
        shape : tuple of int
            The tensor's shape.
        dtype : str or numpy.dtype
            Its element type.
        nbytes : int, optional
            Its size when the compiler knows it; None (the default) computes it from `shape`, which
            is then checked against the allocation limit (a shape computed at run time).

        Returns
        -------
        tensor : NDArray
            The tensor; an ExecutionError when it does not fit in the block.
        """
        dt = np.dtype(dtype)
        if nbytes is None:                   # a shape computed at run time
            nbytes = check_tensor_size(shape, dt, "VM alloc_tensor_reg")
        end = offset + nbytes
        if offset < 0 or end > self.buffer.size:
            raise ExecutionError(f"alloc_tensor: {tuple(shape)} {dtype} at offset {offset} needs {end} bytes, "
                                 f"the storage has {self.buffer.size}")
        return NDArray(self.buffer[offset:end].view(dt).reshape(tuple(shape)), self.device)


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


def run_loop(vm, func_index: int, args, outside=None):
    """Run function `func_index` on the register values `args`; returns its result value.

    `outside` ({register: NDArray}, see outputs.py) gives the entry function's alloc_tensor
    registers whose tensors the caller provides (invoke_with_outputs)."""
    functions, codes, packed, device = vm.exe.functions, vm._code, vm._packed, vm.host
    max_bytes = max_tensor_bytes()
    frames = []
    code = codes[func_index]
    regs = [None] * functions[func_index].register_file_size
    regs[:len(args)] = args
    pc = 0
    while True:
        ins = code[pc]
        op = ins[0]
        if op == INVOKE_PACKED:
            n_out = ins[3]
            values = [regs[r] for r in ins[4]]
            if any(isinstance(v, ADT) for v in values):
                values = _flatten(values, [])
            if n_out == 1 and 0 in values[-1].shape:
                pc += 1
                continue
            try:
                packed[ins[1]](*values)
            except InputError as err:
                # a shape check / shape function rejecting run-time shapes names the op itself
                why = str(err) if ins[1] in vm.exe.shape_funcs else \
                    f"kernel {vm.exe.primitive_names[ins[1]]} rejected its arguments: {err}"
                raise _fatal(vm, func_index, pc, why, InputError) from err
            pc += 1
        elif op == LOAD_CONSTI or op == LOAD_CONST:
            regs[ins[2]] = ins[1]
            pc += 1
        elif op == ALLOC_STORAGE:
            # decoded: (..., dst, nbytes or None) -- static sizes are computed once at load
            nbytes = ins[7] if ins[7] is not None else _scalar(regs[ins[1]])
            if not 0 <= nbytes <= max_bytes:
                raise _allocation_error(vm, func_index, pc, regs, nbytes)
            regs[ins[6]] = Storage(nbytes, device)
            pc += 1
        elif op == ALLOC_TENSOR:
            # decoded: (..., dst, numpy dtype, nbytes)
            if outside and not frames and ins[5] in outside:
                regs[ins[5]] = outside[ins[5]]
            else:
                regs[ins[5]] = regs[ins[1]].alloc_tensor(_scalar(regs[ins[2]]), ins[3], ins[6], ins[7])
            pc += 1
        elif op == KILL_REGISTER:
            regs[ins[1]] = None
            pc += 1
        elif op == RET:
            result = regs[ins[1]]
            if not frames:
                return result
            code, pc, regs, dst, func_index = frames.pop()
            regs[dst] = result
            pc += 1
        elif op == MOVE:
            regs[ins[2]] = regs[ins[1]]
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
            frames.append((code, pc, regs, ins[3], func_index))
            func_index = callee
            code = codes[callee]
            regs = [None] * functions[callee].register_file_size
            regs[:len(call_args)] = call_args
            pc = 0
        elif op == ALLOC_ADT:
            regs[ins[3]] = ADT(ins[1], [regs[r] for r in ins[2]])
            pc += 1
        elif op == GET_FIELD:
            obj = regs[ins[1]]
            if not isinstance(obj, ADT) or ins[2] >= len(obj.fields):
                raise _fatal(vm, func_index, pc, f"get_field {ins[2]} of {obj!r}")
            regs[ins[3]] = obj.fields[ins[2]]
            pc += 1
        elif op == IF:
            pc += ins[3] if _scalar(regs[ins[1]]) == _scalar(regs[ins[2]]) else ins[4]
        elif op == GOTO:
            pc += ins[1]
        elif op == GET_TAG:
            obj = regs[ins[1]]
            if not isinstance(obj, ADT):
                raise _fatal(vm, func_index, pc, f"get_tag of a {type(obj).__name__}")
            regs[ins[2]] = _nd.array(np.array([obj.tag], dtype="int32"), device=device)
            pc += 1
        elif op == ALLOC_TENSOR_REG:
            shape = tuple(int(d) for d in regs[ins[3]].view_numpy().reshape(-1))
            regs[ins[5]] = regs[ins[1]].alloc_tensor(_scalar(regs[ins[2]]), shape, ins[4])
            pc += 1
        elif op == ALLOC_CLOSURE:
            regs[ins[3]] = VMClosure(ins[1], [regs[r] for r in ins[2]])
            pc += 1
        elif op == SHAPE_OF:
            regs[ins[2]] = _nd.array(np.array(_tensor(vm, func_index, pc, regs[ins[1]]).shape,
                                              dtype="int64"), device=device)
            pc += 1
        elif op == RESHAPE_TENSOR:
            src = _tensor(vm, func_index, pc, regs[ins[1]])
            newshape = tuple(int(d) for d in regs[ins[2]].view_numpy().reshape(-1))
            try:
                regs[ins[3]] = NDArray(src.view_numpy().reshape(newshape), src.device)
            except ValueError as err:
                raise _fatal(vm, func_index, pc, f"cannot reshape {src.shape} to {newshape}") from err
            pc += 1
        elif op == DEVICE_COPY:
            regs[ins[4]] = _nd.array(_tensor(vm, func_index, pc, regs[ins[1]]), device=device)
            pc += 1
        elif op == FATAL:
            raise _fatal(vm, func_index, pc, "no match clause applied (or unreachable code was reached)")
        else:
            raise _fatal(vm, func_index, pc, f"unknown opcode {op}")
