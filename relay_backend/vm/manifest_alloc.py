"""ManifestAlloc: make every kernel call's memory explicit (TVM's transform.ManifestAlloc).

After FuseOps and LambdaLift, each call of a primitive function (or of an operator FuseOps
left alone, wrapped as one) becomes the memory dialect of dialect.py, e.g. for a static output:

    %0 = memory.alloc_storage(24i64, meta[shape], 64i64, dtype_hint="float32")
    %1 = memory.alloc_tensor(%0, 0i64, meta[shape], dtype="float32", const_shape=[2, 3])
    %2 = vm.invoke_tvm_op(%fused_add, (%x, %y), (%1,))

An output with dims known only at run time (`Any`, size variables such as `n`, the results of
data-dependent dyn.* ops) gets its shape and byte size from the primitive's shape function
first (`vm.shape_of` of each input whose shape it reads, int64 tensors for its results,
`vm.shape_func`), then storage of that size and a tensor of that shape. A function marked
`relay.reshape_only` runs no kernel: `vm.reshape_tensor(x, newshape)` of its data operand x
(the first; reshape_like's second operand only gives the shape, read by the shape function
when the output is dynamic), as the graph executor's __nop. A static output whose
inputs have dynamic dims passes its inputs through `vm.check_shapes` first (the kernel was
compiled for that one output shape, so inputs of another run-time shape are an InputError). Tuple arguments are
taken apart (`%t.0`, `%t.1`) and tuple results put back together, so kernels see flat tensors.

Every output gets its own storage, as in TVM; the VM compiler frees dead registers itself
(compiler.insert_kills). The pass keeps graph form: a call used twice is rewritten once and
its replacement shared, and primitive functions' own bodies are left alone.
"""
import numpy as np

from ..errors import CompileError
from ..ir.excerpt import excerpt
from ..ir.expr import Call, Constant, Function, Tuple, TupleGetItem, Var, bind_type
from ..ir.functor import ExprMutator, dataflow_children
from ..ir.module import IRModule
from ..ir.dims import is_static
from ..ir.types import FuncType, TensorType, TupleType
from ..op.registry import OpDef
from ..transform.fuse_ops import aliases_first_param
from ..transform.pass_infra import module_pass
from . import dialect as D
from .shape_func import STATE_DATA, ShapeProgram, flatten_types

ALIGNMENT = 64


def _type_of(expr):
    ty = getattr(expr, "_checked_type_", None)
    if ty is None:
        raise CompileError(f"ManifestAlloc needs the type of `{excerpt(expr)}`; run InferType first")
    return ty


def is_dynamic(ty) -> bool:
    """Whether a tensor of `ty` has a dim known only at run time (Any or a size variable)."""
    return any(t.is_dynamic for t in flatten_types(ty))


def wrap_op_call(call: Call) -> Function:
    """A primitive function calling `call.op` once, for op calls that FuseOps left unfused."""
    params = [Var(f"p{i}", _type_of(a)) for i, a in enumerate(call.args)]
    body = bind_type(Call(call.op, params, call.attrs, call.type_args), _type_of(call))
    fn = Function(params, body, _type_of(call), None, {"Primitive": 1})
    return bind_type(fn, FuncType([_type_of(a) for a in call.args], _type_of(call)))


def _typed(expr, ty):
    return bind_type(expr, ty)


def _int64(value) -> Constant:
    return _typed(Constant(np.array(value, dtype="int64")), TensorType(np.shape(value), "int64"))


def _nbytes(ty: TensorType) -> int:
    return int(np.prod([int(d) for d in ty.shape], dtype=np.int64)) * np.dtype(ty.dtype).itemsize


def alloc_static(ty: TensorType):
    """storage then tensor for one static tensor of type `ty`."""
    shape = [int(d) for d in ty.shape]
    storage = _typed(D.ALLOC_STORAGE(_int64(_nbytes(ty)), _int64(shape), _int64(ALIGNMENT),
                                     attrs=D.AllocStorageAttrs(ty.dtype)), D.STORAGE_TYPE)
    return _typed(D.ALLOC_TENSOR(storage, _int64(0), _int64(shape),
                                 attrs=D.AllocTensorAttrs(ty.dtype, tuple(shape))), ty)


def _flatten(expr, ty) -> list:
    """One expression per flat tensor of `expr` (tuple fields taken apart)."""
    if isinstance(ty, TensorType):
        return [expr]
    return [e for i, f in enumerate(ty.fields) for e in _flatten(_typed(TupleGetItem(expr, i), f), f)]


def _field(expr, i, ty):
    return _typed(TupleGetItem(expr, i), ty)


def _regroup(ty, flat):
    """The value of type `ty` from an iterator of flat tensor expressions."""
    if isinstance(ty, TensorType):
        return next(flat)
    return _typed(Tuple([_regroup(f, flat) for f in ty.fields]), ty)


def _shape_func(prim, flat_in, in_types, out_types):
    """The shape function call: (expression of output i's shape, of output i's byte size)."""
    states = ShapeProgram.from_function(prim, "manifest").input_states
    args = []
    for x, t, state in zip(flat_in, in_types, states):
        if state == STATE_DATA:
            args.append(x)
        else:
            args.append(_typed(D.SHAPE_OF(x), TensorType((len(t.shape),), "int64")))
    outs = ([alloc_static(TensorType((len(t.shape),), "int64")) for t in out_types]
            + [alloc_static(TensorType((), "int64")) for _ in out_types])
    out_tys = [_type_of(o) for o in outs]
    call = _typed(D.SHAPE_FUNC(prim, _typed(Tuple(args), TupleType([_type_of(a) for a in args])),
                               _typed(Tuple(outs), TupleType(out_tys)),
                               attrs=D.ShapeFuncAttrs(tuple(int(s == STATE_DATA) for s in states))),
                  TupleType(out_tys))
    n = len(out_types)
    return ([_field(call, i, out_tys[i]) for i in range(n)], [_field(call, n + i, out_tys[n + i]) for i in range(n)])


def manifest_call(prim: Function, args, arg_types, out_type):
    """The memory dialect for `prim(args)` (arg_types / out_type: the original call's types)."""
    flat_in = [e for a, t in zip(args, arg_types) for e in _flatten(a, t)]
    in_types = flatten_types(TupleType(list(arg_types)))
    out_types = flatten_types(out_type)
    dynamic = is_dynamic(out_type)
    if not dynamic and any(is_dynamic(t) for t in arg_types):
        shapes = tuple(tuple(int(d) for d in t.shape) for t in out_types)
        checked = _typed(D.CHECK_SHAPES(prim, _typed(Tuple(flat_in), TupleType(in_types)),
                                        attrs=D.CheckShapesAttrs(shapes)), TupleType(in_types))
        flat_in = [_field(checked, i, t) for i, t in enumerate(in_types)]
    if aliases_first_param(prim) and len(flat_in) == len(prim.params) and isinstance(out_type, TensorType):
        if dynamic:
            newshape = _shape_func(prim, flat_in, in_types, out_types)[0][0]
        else:
            newshape = _int64([int(d) for d in out_type.shape])
        dims = tuple(int(d) if is_static(d) else -1 for d in out_type.shape)
        return _typed(D.RESHAPE_TENSOR(flat_in[0], newshape, attrs=D.ReshapeTensorAttrs(dims)), out_type)
    if dynamic:
        shapes, sizes = _shape_func(prim, flat_in, in_types, out_types)
        outs = []
        for ty, shape, size in zip(out_types, shapes, sizes):
            storage = _typed(D.ALLOC_STORAGE(size, _int64(np.zeros(0, "int64")), _int64(ALIGNMENT),
                                             attrs=D.AllocStorageAttrs(ty.dtype)), D.STORAGE_TYPE)
            outs.append(_typed(D.ALLOC_TENSOR(storage, _int64(0), shape, attrs=D.AllocTensorAttrs(ty.dtype)), ty))
    else:
        outs = [alloc_static(ty) for ty in out_types]
    flat_ty = out_types[0] if len(out_types) == 1 else TupleType(out_types)
    call = _typed(D.INVOKE_TVM_OP(prim, _typed(Tuple(flat_in), TupleType(in_types)),
                                  _typed(Tuple(outs), TupleType(out_types))), flat_ty)
    if isinstance(out_type, TensorType) or all(isinstance(f, TensorType) for f in out_type.fields):
        return call
    return _regroup(out_type, iter(_field(call, i, t) for i, t in enumerate(out_types)))


def _primitive_callee(call: Call):
    op = call.op
    if isinstance(op, Function) and op.is_primitive:
        return op
    if isinstance(op, OpDef):
        return wrap_op_call(call)
    return None


class _Manifest(ExprMutator):
    """Rewrites the kernel calls of one global function (primitive bodies are left alone)."""

    def _previsit_children(self, expr):
        if isinstance(expr, Function) and expr.is_primitive:
            return []
        if isinstance(expr, Call) and (isinstance(expr.op, OpDef)
                                       or isinstance(expr.op, Function) and expr.op.is_primitive):
            return [a for a in expr.args if a not in self.memo_map]
        return [c for c in dataflow_children(expr) if c not in self.memo_map]

    def visit(self, expr):
        new = super().visit(expr)
        if new is not expr and getattr(new, "_checked_type_", None) is None:
            ty = getattr(expr, "_checked_type_", None)      # a rebuilt node keeps its type
            if ty is not None:
                bind_type(new, ty)
        return new

    def visit_function(self, fn):
        if fn.is_primitive:
            return fn
        return super().visit_function(fn)

    def visit_call(self, call):
        prim = _primitive_callee(call)
        if prim is None:
            return super().visit_call(call)
        args = [self.visit(a) for a in call.args]
        return manifest_call(prim, args, [_type_of(a) for a in call.args], _type_of(call))


def manifest_alloc(mod: IRModule) -> IRModule:
    """A copy of a typed, fused, lambda-lifted module in which every kernel call's memory is
    explicit: storage allocations, tensors carved from them, and calls that write into them
    (the VM's ManifestAlloc).

    Parameters
    ----------
    mod : IRModule
        A typed module whose kernels are fused into primitive functions and whose nested
        functions are lifted to globals (lambda_lift); it is not changed.

    Returns
    -------
    mod : IRModule
        The module with explicit allocations.
    """
    out = mod.copy()
    for gv, fn in mod.functions.items():
        if isinstance(fn, Function) and not fn.is_primitive:
            out[gv] = _Manifest().visit(fn)
    return out


def ManifestAlloc():  # noqa: N802 - tvm.relay naming
    """Module pass: explicit allocations, shape functions and kernel invocations (see above)."""
    return module_pass(lambda mod, ctx: manifest_alloc(mod), opt_level=0, name="ManifestAlloc")


__all__ = ["ManifestAlloc", "manifest_alloc", "manifest_call", "wrap_op_call", "alloc_static", "is_dynamic",
           "ALIGNMENT"]
