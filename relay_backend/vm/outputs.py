"""Caller-provided outputs (`VirtualMachine.invoke_with_outputs`): which registers the kernels
write a function's results into, so those kernels write straight into the caller's tensors.

As TVM's VM does, the instruction that defines the function's returned register is followed
back: an `alloc_tensor` (one output), an `alloc_data` whose fields are `alloc_tensor`s (a tuple of
outputs), or a `reshape_tensor` of an `alloc_tensor`. Those allocations then take the caller's
tensor instead of carving one from storage (a view of it when the kernel's shape is a
reshape of the caller's). A result the kernels do not write through such an allocation (a
parameter returned as is, a result merged from two branches) is copied into the caller's
tensor after the run, where TVM would refuse. The VM keeps its registers in host memory, so
only host tensors can be written in place; a caller's tensor in GPU memory (a VM on cuda) is
filled by a copy after the run.
"""
import numpy as np

from ..errors import InputError
from ..runtime.container import ADT
from ..runtime.ndarray import NDArray
from .bytecode import Opcode, dst_register


def _writers(func) -> dict:
    """register -> the instructions defining it."""
    out = {}
    for ins in func.instructions:
        if ins[0] == Opcode.KillRegister:      # releases the register, defines nothing
            continue
        dst = dst_register(ins)
        if dst is not None:
            out.setdefault(dst, []).append(ins)
    return out


def direct_output_registers(func) -> list:
    """Per result (the fields of a tuple result, else the one result): the register of the
    static alloc_tensor the kernels write it into, or None when it is not written that way."""
    rets = [ins for ins in func.instructions if ins[0] == Opcode.Ret]
    if len(rets) != 1:
        return []
    writers = _writers(func)

    def alloc_of(reg):
        ws = writers.get(reg, [])
        if len(ws) != 1:
            return None
        ins = ws[0]
        if ins[0] == Opcode.AllocTensor:
            return reg
        if ins[0] == Opcode.ReshapeTensor:
            return alloc_of(ins[1])
        return None

    result = rets[0][1]
    ws = writers.get(result, [])
    if len(ws) == 1 and ws[0][0] == Opcode.AllocADT:
        regs = [alloc_of(r) for r in ws[0][2]]
    else:
        regs = [alloc_of(result)]
    seen = set()
    for i, reg in enumerate(regs):            # one tensor in two outputs: copy the second
        if reg in seen:
            regs[i] = None
        seen.add(reg)
    return regs


def check_outputs(func_name: str, outputs, inputs) -> list:
    """The caller's output tensors as a list of NDArrays that share no memory with the inputs."""
    if isinstance(outputs, NDArray):
        outputs = [outputs]
    if not isinstance(outputs, (list, tuple)) or not all(isinstance(o, NDArray) for o in outputs):
        raise InputError(f"{func_name}: output_args must be a list of NDArrays (e.g. "
                         f"relay_backend.nd.empty(shape, dtype)), got {type(outputs).__name__}")
    flat_inputs = []
    _flatten(inputs, flat_inputs)
    for i, out in enumerate(outputs):
        if not _in_host_memory(out):
            continue                           # registers are host memory: no overlap possible
        for value in flat_inputs:
            if isinstance(value, NDArray) and np.shares_memory(out.view_numpy(), value.view_numpy()):
                raise InputError(f"{func_name}: output {i} shares memory with an input; kernels write "
                                 f"outputs while reading inputs, so pass a separate array")
    return list(outputs)


def _in_host_memory(array: NDArray) -> bool:
    return array.device.device_type == 1


def _flatten(values, out) -> None:
    for v in values:
        if isinstance(v, ADT):
            _flatten(v.fields, out)
        else:
            out.append(v)


def bind_outputs(func_name: str, func, outputs) -> dict:
    """{alloc_tensor register: the caller's tensor (viewed with the kernel's shape)} for the
    results written in place; InputError when dtype or element count do not fit."""
    bound = {}
    allocs = {ins[5]: ins for ins in func.instructions if ins[0] == Opcode.AllocTensor}
    for i, (reg, out) in enumerate(zip(direct_output_registers(func), outputs)):
        if reg is None or not _in_host_memory(out):
            continue
        ins = allocs[reg]
        shape, dtype = tuple(ins[3]), str(ins[4])
        if out.dtype != dtype or int(np.prod(shape, dtype=np.int64)) != int(np.prod(out.shape, dtype=np.int64)):
            raise InputError(f"{func_name}: output {i} is Tensor[{tuple(out.shape)}, {out.dtype}] but "
                             f"the function writes Tensor[{shape}, {dtype}] there")
        arr = out.view_numpy()
        if not arr.flags.c_contiguous:
            continue                           # a strided view is filled by a copy instead
        bound[reg] = out if tuple(out.shape) == shape else NDArray(arr.reshape(shape), out.device)
    return bound


def copy_results(func_name: str, result, outputs) -> None:
    """Copy the results not written in place into the caller's tensors (shape and dtype checked)."""
    values = list(result.fields) if isinstance(result, ADT) else [result]
    if len(values) != len(outputs):
        raise InputError(f"{func_name} returns {len(values)} output(s), but {len(outputs)} output "
                         f"tensor(s) were given")
    for i, (value, out) in enumerate(zip(values, outputs)):
        if not isinstance(value, NDArray):
            raise InputError(f"{func_name}: result {i} is a {type(value).__name__}, not a tensor; "
                             f"invoke_with_outputs needs tensor results")
        on_host = _in_host_memory(out)
        if on_host and value.view_numpy().size and np.shares_memory(value.view_numpy(), out.view_numpy()):
            continue                           # written in place by its kernel
        if tuple(value.shape) != tuple(out.shape) or value.dtype != out.dtype:
            raise InputError(f"{func_name}: output {i} is Tensor[{tuple(out.shape)}, {out.dtype}] but "
                             f"the result is Tensor[{tuple(value.shape)}, {value.dtype}]")
        if on_host:
            np.copyto(out.view_numpy(), value.view_numpy())
        else:
            out.copyfrom(value)


__all__ = ["direct_output_registers", "check_outputs", "bind_outputs", "copy_results"]
