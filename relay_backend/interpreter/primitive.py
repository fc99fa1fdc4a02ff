"""Running one operator call in the interpreter: the op's numpy reference, nothing compiled.

Before the reference runs, the output's size is checked (op.output_size), so a program asking
for more memory than the stated limit raises an AllocationError naming the op, never a bare
MemoryError or an out-of-memory kill while numpy fills the array.

Arguments go in as read-only numpy arrays (a tuple-typed argument as a list), the result comes
back as NDArrays (a tuple result as an ADT), and is checked against the call's inferred type: a
reference that disagrees with its own type relation is a bug in the op declaration, and saying so
here is far cheaper than debugging a wrong answer three executors later.
"""
import numpy as np

from ..errors import ExecutionError, InputError, RelayError
from ..ir.types import TensorType, TupleType
from ..op.output_size import check_output_size, output_type_from_args, tensor_types
from ..runtime import ndarray as _nd
from ..runtime.container import ADT
from ..runtime.ndarray import NDArray
from ..executor import type_mismatch
from ..runtime.values import describe


def _readonly(arr: np.ndarray) -> np.ndarray:
    view = arr.view()
    view.flags.writeable = False
    return view


def to_numpy_arg(value, op_name: str, index: int):
    """An op argument as the reference sees it: ndarray, or a (nested) list for a tuple."""
    if isinstance(value, NDArray):
        return _readonly(value.view_numpy())
    if isinstance(value, ADT) and value.tag == 0:
        return [to_numpy_arg(f, op_name, index) for f in value.fields]
    raise ExecutionError(
        f"{op_name}: argument {index} must be a tensor or a tuple of tensors, got {describe(value)}")


def from_numpy_result(result, device):
    """Wrap a reference's result: ndarray/scalar -> NDArray, tuple/list -> ADT(0, ...)."""
    if isinstance(result, (tuple, list)):
        return ADT(0, [from_numpy_result(r, device) for r in result])
    if isinstance(result, NDArray):
        return result
    return _nd.array(np.asarray(result), device=device)


def _value_type(value):
    """The type of a runtime tensor or tuple of tensors (None for anything else)."""
    if isinstance(value, NDArray):
        return TensorType(value.shape, value.dtype)
    if isinstance(value, ADT) and value.tag == 0:
        fields = [_value_type(f) for f in value.fields]
        return None if any(f is None for f in fields) else TupleType(fields)
    return None


def is_dynamic_type(ty) -> bool:
    """Whether a tensor (or tuple of tensors) type has a dim known only at run time."""
    return ty is not None and any(t.is_dynamic for t in tensor_types(ty))


def _known_output_type(op, args, attrs, out_type, dynamic_inputs):
    """The call's output type as far as it is known before the reference runs.

    A static inferred type is used as is when the inputs were static too. Otherwise (symbolic
    or Any dims) the relation is replayed on the actual argument shapes, as the VM's shape
    functions do: dims the type checker could not compare (`n` against 8, TVM's AssertEQ) are
    compared now, and an op that rejects the run-time shapes is an InputError naming them,
    never a wrong answer."""
    if out_type is not None and not dynamic_inputs and not is_dynamic_type(out_type):
        return out_type
    arg_types = [_value_type(a) for a in args]
    if out_type is None or any(t is None for t in arg_types):
        return output_type_from_args(op, arg_types, attrs)
    try:
        return op.rel(arg_types, attrs)
    except RelayError as err:
        shapes = ", ".join(describe(a) for a in args)
        raise InputError(f"{op.name}: the run-time argument shapes ({shapes}) do not fit the op: {err}") from err


def invoke_op(op, args, attrs, out_type, device, dynamic_inputs: bool = True):
    """Run `op`'s numpy reference on runtime values `args`; check against `out_type` if known.
    `dynamic_inputs` (False when every argument's inferred type is static) says whether the
    relation must be replayed on the run-time shapes first."""
    if op.ref is None:
        raise ExecutionError(op.missing("ref"))
    if 0 <= op.num_inputs != len(args):
        raise ExecutionError(f"{op.name} takes {op.num_inputs} argument(s) {list(op.input_names)}, "
                             f"got {len(args)}")
    if attrs is None and op.attrs_type is not None:
        attrs = op.attrs_type()
    out_type = _known_output_type(op, args, attrs, out_type, dynamic_inputs)
    check_output_size(op, out_type, "interpreter")
    np_args = [to_numpy_arg(a, op.name, i) for i, a in enumerate(args)]
    try:
        result = op.ref(*np_args, attrs)
    except RelayError:
        raise
    except Exception as err:  # a reference crashing on well-typed input is an op bug: say which op
        shapes = ", ".join(describe(a) for a in args)
        raise ExecutionError(f"{op.name}: the numpy reference failed on ({shapes}) with attrs {attrs!r}: "
                             f"{type(err).__name__}: {err}") from err
    value = from_numpy_result(result, device)
    if out_type is not None:
        why = type_mismatch(value, out_type)
        if why:
            shapes = ", ".join(describe(a) for a in args)
            raise ExecutionError(
                f"{op.name}: the numpy reference disagrees with the op's type relation: {why} "
                f"(inputs: {shapes}; attrs: {attrs!r}). This is a bug in the declaration of "
                f"{op.name}: fix its rel or its ref so they agree.")
    return value


__all__ = ["invoke_op", "to_numpy_arg", "from_numpy_result", "type_mismatch", "is_dynamic_type"]
