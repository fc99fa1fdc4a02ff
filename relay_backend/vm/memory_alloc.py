"""Explicit memory for kernel calls (TVM's ManifestAlloc, done while emitting bytecode).

Every output of a kernel call is allocated before the call, then the kernel writes into it:

  static output   load_consti $size <bytes>; alloc_storage $s $size 64 dtype dev0 [shape];
                  alloc_tensor $t $s $zero [shape] dtype
  dynamic output  shape_of $sh_i for each input; allocate int64 shape/size tensors statically;
                  invoke_packed <shape function> (in: $sh.., out: $shape_j.., $nbytes_j..);
                  alloc_storage $s $nbytes_j 64 dtype dev0; alloc_tensor_reg $t $s $zero $shape_j dtype
  then            invoke_packed <kernel> (in: inputs, out: $t...)

A static output whose inputs have dynamic (Any or symbolic) dims is checked first: the kernel was compiled for that
one output shape and reads its inputs by it, so inputs of the wrong run-time shape would make it
read out of bounds. `invoke_packed <shape check> (in: inputs, out: none)` replays the type
relations on the real input shapes and raises InputError (naming the op and the shapes) when
they are rejected or give another output shape.

A primitive marked `relay.reshape_only=1` needs no kernel: `reshape_tensor` makes a view with
the new shape (a constant, or computed by the shape function). As in TVM, every static output
gets its own storage; the memory of dead registers is released by the `kill` instructions the
compiler appends (see compiler.insert_kills).
"""
import numpy as np

from ..ir.types import TensorType
from .bytecode import Opcode
from .shape_func import STATE_DATA, flatten_types

ALIGNMENT = 64
HOST_DEVICE = 0


def _nbytes(ty: TensorType) -> int:
    return int(np.prod([int(d) for d in ty.shape], dtype=np.int64)) * np.dtype(ty.dtype).itemsize


def is_dynamic(ty) -> bool:
    """Whether a tensor of `ty` has a dim known only at run time (Any or a size variable)."""
    return any(t.is_dynamic for t in flatten_types(ty))


def alloc_static(fc, ty: TensorType) -> int:
    """Registers for one static tensor: storage then tensor; returns the tensor register."""
    shape = [int(d) for d in ty.shape]
    size = fc.const_int(_nbytes(ty))
    storage = fc.new_register()
    fc.emit(Opcode.AllocStorage, size, ALIGNMENT, ty.dtype, HOST_DEVICE, shape, storage)
    tensor = fc.new_register()
    fc.emit(Opcode.AllocTensor, storage, fc.const_int(0), shape, ty.dtype, tensor)
    return tensor


def flatten_inputs(fc, arg_regs, arg_types) -> list:
    """One register per flattened tensor input (tuple arguments are taken apart with get_field)."""
    out = []
    for reg, ty in zip(arg_regs, arg_types):
        out.extend(_flatten_reg(fc, reg, ty))
    return out


def _flatten_reg(fc, reg, ty) -> list:
    if isinstance(ty, TensorType):
        return [reg]
    regs = []
    for i, field in enumerate(ty.fields):
        sub = fc.new_register()
        fc.emit(Opcode.GetField, reg, i, sub)
        regs.extend(_flatten_reg(fc, sub, field))
    return regs


def emit_shape_func(fc, prim, flat_inputs, out_types) -> tuple:
    """Run the primitive's shape function; returns (shape registers, nbytes registers)."""
    program = fc.ctx.shape_program(prim)
    ins = []
    for reg, state in zip(flat_inputs, program.input_states):
        if state == STATE_DATA:
            ins.append(reg)
        else:
            sh = fc.new_register()
            fc.emit(Opcode.ShapeOf, reg, sh)
            ins.append(sh)
    shapes = [alloc_static(fc, TensorType((len(t.shape),), "int64")) for t in out_types]
    sizes = [alloc_static(fc, TensorType((), "int64")) for _ in out_types]
    outs = shapes + sizes
    fc.emit(Opcode.InvokePacked, fc.ctx.packed_index(program.name, program), len(ins) + len(outs),
            len(outs), ins + outs)
    return shapes, sizes


def emit_shape_check(fc, prim, flat_inputs, out_types) -> None:
    """Check the run-time input shapes of a call with a static output (see the module doc)."""
    program = fc.ctx.shape_check(prim, [tuple(int(d) for d in t.shape) for t in out_types])
    fc.emit(Opcode.InvokePacked, fc.ctx.packed_index(program.name, program), len(flat_inputs), 0,
            flat_inputs)


def _regroup(fc, ty, regs):
    """The register holding a value of type `ty` built from flat tensor registers."""
    if isinstance(ty, TensorType):
        return next(regs)
    fields = [_regroup(fc, f, regs) for f in ty.fields]
    dst = fc.new_register()
    fc.emit(Opcode.AllocADT, 0, fields, dst)
    return dst


def emit_kernel_call(fc, prim, arg_regs, arg_types, out_type) -> int:
    """Allocate the outputs of a call of primitive `prim`, invoke its kernel; returns the result register."""
    flat_in = flatten_inputs(fc, arg_regs, arg_types)
    out_types = flatten_types(out_type)
    dynamic = is_dynamic(out_type)
    if not dynamic and any(is_dynamic(t) for t in arg_types):
        emit_shape_check(fc, prim, flat_in, out_types)
    reshape_only = (int(prim.attrs.get("relay.reshape_only", 0)) == 1 and len(flat_in) == 1
                    and isinstance(out_type, TensorType))
    if reshape_only:
        if dynamic:
            shapes, _ = emit_shape_func(fc, prim, flat_in, out_types)
            newshape = shapes[0]
        else:
            newshape = fc.new_register()
            const = fc.ctx.add_constant(np.array([int(d) for d in out_type.shape], dtype="int64"))
            fc.emit(Opcode.LoadConst, const, HOST_DEVICE, newshape)
        dst = fc.new_register()
        fc.emit(Opcode.ReshapeTensor, flat_in[0], newshape, dst)
        return dst
    if dynamic:
        shapes, sizes = emit_shape_func(fc, prim, flat_in, out_types)
        outs = []
        for ty, shape_reg, size_reg in zip(out_types, shapes, sizes):
            storage = fc.new_register()
            fc.emit(Opcode.AllocStorage, size_reg, ALIGNMENT, ty.dtype, HOST_DEVICE, [], storage)
            tensor = fc.new_register()
            fc.emit(Opcode.AllocTensorReg, storage, fc.const_int(0), shape_reg, ty.dtype, tensor)
            outs.append(tensor)
    else:
        outs = [alloc_static(fc, ty) for ty in out_types]
    kernel = fc.ctx.kernel_index(prim)
    fc.emit(Opcode.InvokePacked, kernel, len(flat_in) + len(outs), len(outs), flat_in + outs)
    return _regroup(fc, out_type, iter(outs))


__all__ = ["emit_kernel_call", "emit_shape_check", "alloc_static", "is_dynamic", "flatten_inputs", "ALIGNMENT"]
