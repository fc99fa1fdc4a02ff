"""What every dyn operator shares: a dyn op is its static op with some attrs read at run time.

TVM v0.18's `relay.dyn.*` operators take shape-like arguments (a new shape, begin/end, pad
widths, reps) as Relay tensors instead of attributes. Here each one is declared with `defdyn`
from three pieces:

  * `to_static(attrs, values) -> (static_op, static_attrs)`: the static op and its attrs for
    concrete argument values (numpy arrays of the shape arguments). The reference, the VM's
    shape function and DynamicToStatic all go through it, so they agree by construction: the
    reference runs `static_op.ref`, the shape function replays `static_op.rel` on the concrete
    data types (TVM's data-dependent shape functions), and DynamicToStatic rewrites a call whose
    shape arguments are constants into the static call;
  * a type relation: the output rank comes from the shape argument's static length, every dim
    is Any (what TVM's Dyn*Rel give);
  * a te compute whose output dims are the run-time sizes (fresh te vars bound by the output
    buffer's shape) and which reads the shape arguments' values as tensors.

Bad run-time values (a newshape that does not fit, a negative size) are InputErrors naming the
op and the values, raised by the interpreter and by the VM's shape function alike; an output
over the tensor size limit is an AllocationError there, before anything allocates it.
"""
import numpy as np

from ... import te, tir
from ...errors import InputError, RelayError, TypeInferenceError
from ...ir.dims import is_any, is_static
from ...ir.types import Any, TensorType, type_to_str
from ..output_size import check_output_size
from ..pattern import OpPattern
from ..registry import defop
from ..relations import expect_tensor

INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def shape_arg(t, op_name: str, what: str, ndim: int = 1) -> TensorType:
    """The type of a shape argument: an integer tensor of rank `ndim` with a static length
    (the output rank depends on it, and a Relay type has a fixed rank)."""
    t = expect_tensor(t, f"{op_name} {what}")
    if t.dtype not in INT_DTYPES:
        raise TypeInferenceError(f"{op_name}: {what} must be an integer tensor, got {type_to_str(t)}")
    if t.ndim != ndim:
        raise TypeInferenceError(f"{op_name}: {what} must have rank {ndim}, got {type_to_str(t)}")
    if not all(is_static(d) for d in t.shape):
        raise TypeInferenceError(f"{op_name}: the length of {what} must be static (it sets the output's "
                                 f"rank), got {type_to_str(t)}")
    return t


def any_shape(rank: int) -> tuple:
    """A shape of `rank` dims all known only at run time."""
    return tuple(Any() for _ in range(rank))


def read_ints(value, op_name: str, what: str) -> tuple:
    """The values of a shape argument as Python ints (any rank, row-major)."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise InputError(f"{op_name}: {what} must hold integers, got dtype {arr.dtype}")
    return tuple(int(v) for v in arr.reshape(-1))


def te_out_shape(out_type: TensorType, name: str) -> list:
    """The te shape of a dyn op's output: each Any dim becomes a fresh variable that the kernel
    binds from its output buffer (the VM allocates it with the shape function's result)."""
    return [te.var(f"{name}_dim{k}") if is_any(d) else d for k, d in enumerate(out_type.shape)]


def load_index(tensor, *indices):
    """tensor[indices] as an int32 index expression."""
    value = tensor[tuple(tir.const(i, "int32") if isinstance(i, int) else i for i in indices)]
    return value if value.dtype == "int32" else value.astype("int32")


def defdyn(name: str, *, inputs, static_inputs, to_static, rel, compute, samples, attrs=None,
           level: int = 3, doc: str = ""):
    """Declare a dyn operator (see the module doc). `static_inputs` are the positions of the
    arguments the static op takes (its data), the others are shape arguments whose values
    `to_static(attrs, values)` reads (values in argument order, None at the data positions)."""
    def static_call(args, attrs):
        values = [None if k in static_inputs else a for k, a in enumerate(args)]
        try:
            return to_static(attrs, values)
        except InputError:
            raise
        except RelayError as err:
            shown = ", ".join(f"{inputs[k]}={np.asarray(v).tolist()}" for k, v in enumerate(values) if v is not None)
            raise InputError(f"{name}: the run-time values {shown} are not valid: {err}") from None

    def shape_func(attrs, arrays):
        static_op, static_attrs = static_call(arrays, attrs)
        data_types = [_type_of(arrays[k]) for k in static_inputs]
        try:
            out_type = static_op.rel(data_types, static_attrs)
        except RelayError as err:
            raise InputError(f"{name}: {err}") from None
        check_output_size(static_op, out_type, f"{name} with its run-time values")   # before anything allocates it
        return out_type

    def ref(*args):
        *args, attrs = args
        shape_func(attrs, args)              # the same checks as the VM's shape function
        static_op, static_attrs = static_call(args, attrs)
        return static_op.ref(*(args[k] for k in static_inputs), static_attrs)

    return defop(name, inputs=inputs, attrs=attrs, rel=rel, pattern=OpPattern.OPAQUE, ref=ref,
                 samples=samples, level=level, compute=compute, shape_func=shape_func, doc=doc,
                 to_static=static_call, static_inputs=static_inputs)


def _type_of(value) -> TensorType:
    arr = np.asarray(value)
    return TensorType(arr.shape, str(arr.dtype))


__all__ = ["defdyn", "shape_arg", "any_shape", "read_ints", "te_out_shape", "load_index", "INT_DTYPES"]
