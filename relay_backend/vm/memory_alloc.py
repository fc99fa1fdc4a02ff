"""Bytecode for the memory dialect (dialect.py) that ManifestAlloc writes: one or two
instructions per dialect call, as TVM's VMFunctionCompiler emits them.

  memory.alloc_storage   load_consti $size <bytes> (a constant size; else the shape function's
                         register); alloc_storage $s $size 64 dtype dev0 [shape]
  memory.alloc_tensor    alloc_tensor $t $s $zero [shape] dtype (a constant shape), else
                         alloc_tensor_reg $t $s $zero $shape dtype
  vm.shape_of            shape_of $sh $x
  vm.shape_func          invoke_packed <shape function> (in: shapes or data, out: $shape.., $nbytes..)
  vm.check_shapes        invoke_packed <shape check> (in: inputs, out: none)
  vm.invoke_tvm_op       invoke_packed <kernel> (in: inputs, out: outputs); a tuple of outputs
                         is gathered with alloc_data
  vm.reshape_tensor      reshape_tensor $y $x $newshape

Immediate arguments (sizes, offsets, alignments, constant shapes) are read from their
constants rather than compiled; the int registers they need are loaded once in the function's
prologue (VMFunctionCompiler.const_int). `vm.shape_func` and `vm.check_shapes` results are
only used through `%r.i`, which names the i-th register they wrote or passed through, so no
tuple is built for them.
"""
import numpy as np

from ..errors import CompileError
from ..ir.expr import Constant
from ..ir.excerpt import excerpt
from .bytecode import Opcode
from . import dialect as D

HOST_DEVICE = 0
TUPLE_RESULT_OPS = (D.SHAPE_FUNC, D.CHECK_SHAPES)     # used through TupleGetItem only


def _const_value(expr, what: str):
    if not isinstance(expr, Constant):
        raise CompileError(f"{what} must be a constant, got `{excerpt(expr)}`")
    return expr.data.view_numpy()


def _ints(expr, what: str) -> list:
    return [int(v) for v in np.asarray(_const_value(expr, what)).reshape(-1)]


def dialect_children(call) -> list:
    """The arguments of a dialect call the compiler evaluates into registers first, in order."""
    op, args = call.op, call.args
    if op is D.ALLOC_STORAGE:
        return [] if isinstance(args[0], Constant) else [args[0]]
    if op is D.ALLOC_TENSOR:
        return [args[0]] + ([] if isinstance(args[2], Constant) else [args[2]])
    if op in (D.SHAPE_OF,):
        return [args[0]]
    if op in (D.SHAPE_FUNC, D.INVOKE_TVM_OP):
        return list(args[1].fields) + list(args[2].fields)
    if op is D.CHECK_SHAPES:
        return list(args[1].fields)
    if op is D.RESHAPE_TENSOR:
        return [args[0], args[1]]
    raise CompileError(f"the VM compiler has no rule for {op.name}")


def emit_dialect(fc, call, scope) -> int:
    """Emit the instructions of dialect `call`; returns the register holding its value."""
    op, args = call.op, call.args
    if op is D.ALLOC_STORAGE:
        size = fc.const_int(_ints(args[0], "alloc_storage size")[0]) if isinstance(args[0], Constant) \
            else scope[args[0]]
        shape = _ints(args[1], "alloc_storage shape")
        dst = fc.new_register()
        fc.emit(Opcode.AllocStorage, size, _ints(args[2], "alignment")[0], call.attrs.dtype_hint,
                HOST_DEVICE, shape, dst)
        return dst
    if op is D.ALLOC_TENSOR:
        dst = fc.new_register()
        offset = fc.const_int(_ints(args[1], "alloc_tensor offset")[0])
        if isinstance(args[2], Constant):
            fc.emit(Opcode.AllocTensor, scope[args[0]], offset, _ints(args[2], "shape"), call.attrs.dtype, dst)
        else:
            fc.emit(Opcode.AllocTensorReg, scope[args[0]], offset, scope[args[2]], call.attrs.dtype, dst)
        return dst
    if op is D.SHAPE_OF:
        dst = fc.new_register()
        fc.emit(Opcode.ShapeOf, scope[args[0]], dst)
        return dst
    if op is D.SHAPE_FUNC:
        program = fc.ctx.shape_program(args[0])
        ins, outs = [scope[a] for a in args[1].fields], [scope[a] for a in args[2].fields]
        fc.emit(Opcode.InvokePacked, fc.ctx.packed_index(program.name, program), len(ins) + len(outs),
                len(outs), ins + outs)
        return fc.tuple_result(call, outs)
    if op is D.CHECK_SHAPES:
        ins = [scope[a] for a in args[1].fields]
        program = fc.ctx.shape_check(args[0], call.attrs.shapes)
        fc.emit(Opcode.InvokePacked, fc.ctx.packed_index(program.name, program), len(ins), 0, ins)
        return fc.tuple_result(call, ins)
    if op is D.INVOKE_TVM_OP:
        ins, outs = [scope[a] for a in args[1].fields], [scope[a] for a in args[2].fields]
        kernel = fc.ctx.kernel_index(args[0])
        fc.emit(Opcode.InvokePacked, kernel, len(ins) + len(outs), len(outs), ins + outs)
        if len(outs) == 1:
            return outs[0]
        dst = fc.new_register()
        fc.emit(Opcode.AllocADT, 0, outs, dst)
        return dst
    if op is D.RESHAPE_TENSOR:
        dst = fc.new_register()
        fc.emit(Opcode.ReshapeTensor, scope[args[0]], scope[args[1]], dst)
        return dst
    raise CompileError(f"the VM compiler has no rule for {op.name}")


__all__ = ["dialect_children", "emit_dialect", "TUPLE_RESULT_OPS", "HOST_DEVICE"]
