"""te compute builders shared by the elementwise, broadcast, creation and reduction ops.

An op's `compute(attrs, inputs, out_type) -> [te.Tensor]` (see registry.py) is usually made
by one of the factories here from a scalar function, so a table row only names its scalar
rule. Output shapes come from the input te shapes (which may hold symbolic dims for Any), so
the same compute serves static and dynamic shapes; out_type only supplies the dtype.
Broadcast dims index element 0 of a size-1 input; a symbolic input dim that might be 1 at run
time selects index 0 when it is.
"""
import numpy as np

from .. import te, tir
from ..errors import CompileError
from ..ir.types import TupleType
from .relations import reduce_axes


# --- names, tags, dtypes ---------------------------------------------------------------------
def stage_name(op_name: str) -> str:
    """The te stage name of an op's main compute, e.g. "T_nn_relu"."""
    return "T_" + op_name.replace(".", "_")


def op_tag(op_name: str) -> str:
    """The registered op's tag ("elemwise", "broadcast", "comm_reduce", ...), looked up when
    the compute runs, so the tag always follows the op's declared pattern."""
    from .registry import get
    return get(op_name).tag


def out_dtype(out_type, k: int = 0) -> str:
    """The dtype of output k of the call's checked type."""
    return out_type.fields[k].dtype if isinstance(out_type, TupleType) else out_type.dtype


def is_float(dtype: str) -> bool:
    return tir.is_float_dtype(dtype)


def cast(x, dtype: str):
    """numpy's astype on a scalar expression: to bool means `x != 0` (NaN is true)."""
    if x.dtype == dtype:
        return x
    if dtype == "bool":
        return x != tir.const(0, x.dtype)
    return x.astype(dtype)


def _check_dtype(op_name, value, dtype):
    if value.dtype != dtype:
        raise CompileError(f"{op_name}: the te compute produced {value.dtype} but the call's "
                           f"type says {dtype}; this is a bug in the op's compute")
    return value


# --- broadcasting ----------------------------------------------------------------------------
def _is_one(d) -> bool:
    return isinstance(d, tir.IntImm) and d.value == 1


def _same(a, b) -> bool:
    if isinstance(a, tir.IntImm) and isinstance(b, tir.IntImm):
        return a.value == b.value
    return a is b


def broadcast_shape(shapes) -> list:
    """numpy-style broadcast of te shapes (tuples of PrimExpr), right-aligned. Two different
    symbolic dims broadcast to their max (the type relation already rejected mismatches)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        result = None
        for s in shapes:
            k = len(s) - ndim + d
            if k < 0 or _is_one(s[k]):
                continue
            x = s[k]
            if result is None or isinstance(x, tir.IntImm) and not isinstance(result, tir.IntImm):
                result = x
            elif not _same(result, x) and not isinstance(result, tir.IntImm):
                result = tir.max(result, x)
        out.append(result if result is not None else tir.const(1, "int32"))
    return out


def broadcast_index(t, indices, out_shape) -> tuple:
    """The index into `t` for output index `indices` under broadcasting (right-aligned)."""
    lead = len(out_shape) - t.ndim
    idx = []
    for k, dim in enumerate(t.shape):
        i, odim = indices[lead + k], out_shape[lead + k]
        if _is_one(dim):
            idx.append(tir.const(0, "int32"))
        elif isinstance(dim, tir.IntImm) or _same(dim, odim):
            idx.append(i)
        else:  # a symbolic dim that may be 1 at run time
            idx.append(te.if_then_else(dim == 1, tir.const(0, "int32"), i))
    return tuple(idx)


def broadcast_compute(op_name: str, fn):
    """A compute applying `fn(attrs, *scalars) -> PrimExpr` elementwise over the broadcast of
    all inputs (ops with no inputs get a 0-d output; creation ops use shaped_compute)."""
    def compute(attrs, inputs, out_type):
        dtype = out_dtype(out_type)
        shape = broadcast_shape([t.shape for t in inputs])

        def body(*i):
            scalars = [t[broadcast_index(t, i, shape)] for t in inputs]
            return _check_dtype(op_name, tir.convert(fn(attrs, *scalars)), dtype)
        return [te.compute(shape, body, name=stage_name(op_name), tag=op_tag(op_name))]
    compute.__doc__ = f"te compute of {op_name}: elementwise over broadcast inputs."
    return compute


def shaped_compute(op_name: str, fn):
    """A compute for creation ops: output shape from attrs.shape (or `length`), element
    `fn(attrs, dtype, indices, inputs) -> PrimExpr`."""
    def compute(attrs, inputs, out_type):
        dtype = out_dtype(out_type)
        shape = attrs.shape if hasattr(attrs, "shape") else (attrs.length,)

        def body(*i):
            return _check_dtype(op_name, tir.convert(fn(attrs, dtype, i, inputs)), dtype)
        return [te.compute(shape, body, name=stage_name(op_name), tag=op_tag(op_name))]
    compute.__doc__ = f"te compute of {op_name}: a tensor created from its attrs."
    return compute


# --- reductions ------------------------------------------------------------------------------
class ReduceParts:
    """The pieces of a reduction of `data` under Reduce attrs (axis, keepdims, exclude):
    reduced axes, te reduce_axis IterVars, output shape, element count, and `index(out_i)`,
    the data index for an output index (reduced positions read the reduce vars)."""

    def __init__(self, data, attrs):
        self.data = data
        self.axes = reduce_axes(attrs, data.ndim)
        self.keepdims = attrs.keepdims
        self.raxes = [te.reduce_axis((0, data.shape[a]), f"k{a}") for a in self.axes]
        self.out_shape = [tir.const(1, "int32") if a in self.axes else d
                          for a, d in enumerate(data.shape)
                          if self.keepdims or a not in self.axes]
        count = tir.const(1, "int32")
        for a in self.axes:
            count = count * data.shape[a]
        self.count = tir.simplify(count)

    def index(self, out_indices) -> tuple:
        rvars = {a: iv.var for a, iv in zip(self.axes, self.raxes)}
        it = iter(out_indices)
        idx = []
        for a in range(self.data.ndim):
            if a in rvars:
                if self.keepdims:
                    next(it)
                idx.append(rvars[a])
            else:
                idx.append(next(it))
        return tuple(idx)

    def flat_reduce_index(self):
        """The row-major position within the reduced sub-tensor (argmax/argmin's result)."""
        flat = tir.const(0, "int32")
        for a, iv in zip(self.axes, self.raxes):
            flat = flat * self.data.shape[a] + iv.var
        return flat


def reduce_compute(op_name: str, reducer, accumulate=None):
    """A compute reducing its one input with the te reducer `reducer` (te.sum, te.max, ...).

    `accumulate(dtype) -> dtype` names the dtype the reduction adds up in (accumulation.py);
    when it is wider than the input, the reduce stage runs in it and a cast stage follows:
        acc[out_i] = reducer(data[index(out_i, k)].astype(acc) for k in reduce axes)
        out[out_i] = acc[out_i].astype(out_dtype)
    """
    def compute(attrs, inputs, out_type):
        data = inputs[0]
        total = reduce_stage(op_name, reducer, data, ReduceParts(data, attrs), accumulate)
        return [cast_stage(op_name, total, out_dtype(out_type))]
    compute.__doc__ = f"te compute of {op_name}: a commutative reduction."
    return compute


def reduce_stage(op_name, reducer, data, parts, accumulate=None):
    """The reduce stage of `data` over `parts` (a ReduceParts), adding up in accumulate(dtype)."""
    acc = accumulate(data.dtype) if accumulate is not None else data.dtype

    def body(*i):
        return reducer(cast(data[parts.index(i)], acc), axis=parts.raxes)
    return te.compute(parts.out_shape, body, name=stage_name(op_name), tag=op_tag(op_name))


def cast_stage(op_name, t, dtype):
    """`t` itself when it already has `dtype`, else an elementwise stage casting it."""
    if t.dtype == dtype:
        return t
    return te.compute(t.shape, lambda *i: cast(t[i], dtype), name=stage_name(op_name) + "_cast", tag="elemwise")


def divide_by_count(op_name, total, count, dtype):
    """The elementwise stage (total / count).astype(dtype), count an int32 PrimExpr, computed
    in total's (accumulation) dtype: true division for floats, truncation toward zero for ints
    (as the references compute)."""
    acc = total.dtype

    def body(*i):
        value = total[i]
        if is_float(acc):
            return cast(value / count.astype(acc), dtype)
        return cast(tir.truncdiv(value, count.astype(acc)), dtype)
    return te.compute(total.shape, body, name=stage_name(op_name) + "_div", tag="elemwise")


def _mul(x, y):
    return x & y if x.dtype == "bool" else x * y


# prod over bool is logical and, as numpy's multiply of bools (sum/max/min: te/reduction.py)
prod = te.comm_reducer(_mul, lambda t: tir.const(1, t), name="prod")
all_reducer = te.comm_reducer(lambda x, y: x & y, lambda t: tir.const(True, "bool"), name="all")
any_reducer = te.comm_reducer(lambda x, y: x | y, lambda t: tir.const(False, "bool"), name="any")


def arg_reducer(find_max: bool, last: bool, value_dtype: str):
    """A (index, value) comm_reducer for argmax/argmin that matches numpy: the extreme value
    wins, NaN beats every number (numpy returns the first NaN), and ties go to the smaller
    index (the larger one when `last`). The identity's index loses every tie."""
    check_nan = is_float(value_dtype)

    def combine(lhs, rhs):
        (ia, va), (ib, vb) = lhs, rhs
        better = va > vb if find_max else va < vb
        tie = va == vb
        if check_nan:
            nan_a, nan_b = va != va, vb != vb
            better = (nan_a & ~nan_b) | better
            tie = tie | (nan_a & nan_b)
        first = ib < ia if last else ia < ib
        keep = better | (tie & first)
        return te.if_then_else(keep, ia, ib), te.if_then_else(keep, va, vb)

    def identity(t_index, t_value):
        index = -1 if last else int(np.iinfo("int32").max)
        value = tir.min_value(t_value) if find_max else tir.max_value(t_value)
        return tir.const(index, t_index), value

    return te.comm_reducer(combine, identity, name="argmax" if find_max else "argmin")
