"""tir: the loop-nest IR that kernels are lowered to (level 1: imports only level 0).

Expressions (tir/expr.py; every node has `dtype`; children listed in `_fields`):
  IntImm(dtype, value) · FloatImm(dtype, value) · StringImm(value)
  Var(name, dtype="int32") (loop indices, Let vars, symbolic dims; identity-compared)
  SizeVar(name, dtype) (a Var known >= 0)
  Add/Sub/Mul/Div/Mod/FloorDiv/FloorMod/Min/Max(a, b)   (Div: float true division; Mod: C rem)
  EQ/NE/LT/LE/GT/GE(a, b) -> bool · And(a, b) · Or(a, b) · Not(a)
  Select(condition, true_value, false_value) · Cast(dtype, value)
  Call(dtype, op_name, args)  math intrinsic, op_name in INTRINSICS ("exp", "log", "tanh",
      "sqrt", "rsqrt", "erf", "sigmoid", "fabs", "floor", "ceil", "round", "sin", "cos",
      "pow", ...) and bit operations ("bitwise_and", "shift_left", "reinterpret", ...);
      `.op` aliases `.op_name`
  BufferLoad(buffer, indices) · Let(var, value, body)
  te level only (removed by lowering): ProducerLoad(producer, indices),
      Reduce(combiner, source, axis, condition, value_index), CommReducer(lhs, rhs, result,
      identity_element), IterVar(dom, var, iter_type, thread_tag), Range(min, extent)
Buffers (tir/buffer.py):
  Buffer(name, shape, dtype="float32", data=Var(name,"handle"), strides=None (row-major),
      scope="global"|"local"|"shared"); .ndim, .offset_of(indices), .effective_strides()
Statements (tir/stmt.py; children in `_fields`):
  For(loop_var, min, extent, kind, body, thread_binding=None, annotations=None)
      kind in {"serial","parallel","vectorized","unrolled"}; thread_binding e.g. "blockIdx.x"
  BufferStore(buffer, value, indices) · Allocate(buffer, body, scope=buffer.scope)
  IfThenElse(condition, then_case, else_case=None) · LetStmt(var, value, body)
  SeqStmt(seq) (`.stmts` alias) · Evaluate(value) (Evaluate(0) = no-op)
  ThreadAllReduce(combiner, sources, result_vars, body, thread_tag) (GPU cross-thread reduce)
Functions (tir/prim_func.py):
  PrimFunc(params: [Buffer] inputs then outputs, body, name="main", attrs={}); .shape_vars
Passes: simplify(node), expand_branching_unrolled(node) (unroll_branches.py),
  partition_branching_loops(node) (partition_branches.py), verify(func) / verify_errors(func), printer (func_to_str / stmt_to_str / expr_to_str),
interp.run(func, *numpy_arrays) (the kernel-level oracle).
"""
from .buffer import Buffer, decl_buffer
from .expr import (INTRINSICS, Add, And, BinaryOp, BufferLoad, Call, Cast, CmpOp, CommReducer,
                   Div, EQ, FloatImm, FloorDiv, FloorMod, GE, GT, IntImm, IterVar, LE, LT, Let,
                   Max, Min, Mod, Mul, NE, Not, Or, PrimExpr, ProducerLoad, Range, Reduce, Select,
                   SizeVar, StringImm, Sub, Var, all, call_intrin, const, convert, floordiv,
                   floormod, if_then_else, is_float_dtype, is_int_dtype, max, max_value, min,
                   min_value, truncdiv, truncmod)
from .functor import rewrite, substitute, walk
from .prim_func import PrimFunc
from .stmt import (FOR_KINDS, Allocate, BufferStore, Evaluate, For, IfThenElse, LetStmt, SeqStmt,
                   Stmt, ThreadAllReduce, seq)
from .simplify import simplify
from .unroll_branches import expand_branching_unrolled
from .partition_branches import partition_branching_loops
from .verify import verify, verify_errors
from .printer import expr_to_str, func_to_str, stmt_to_str
from . import interp
from . import ir_builder
