"""Reading constructor arguments that must be static (shapes, slice bounds, arange limits).

tvm.relay accepts either Python values or relay expressions for these; a relay Constant is read
into the attrs so output shapes stay static, while any other expression (`is_dynamic_arg`) makes
the constructor build the op's dyn.* form (op/dyn/) where one exists.
"""
import numpy as np

from ..errors import AttrsError, OpNotImplemented
from ..ir.expr import Constant, Expr


def is_dynamic_arg(value) -> bool:
    """Whether a shape-like constructor argument is a Relay expression known only at run time (not
    a Constant): the constructor then builds the op's dyn.* form, as tvm.relay's do."""
    return isinstance(value, Expr) and not isinstance(value, Constant)


def _constant_value(value, op_name: str, arg: str):
    if isinstance(value, Constant):
        return value.data.numpy() if hasattr(value.data, "numpy") else np.asarray(value.data)
    if isinstance(value, Expr):
        raise OpNotImplemented(
            f"{op_name}: dynamic {op_name} is not supported yet (`{arg}` is a non-constant relay "
            f"expression, known only at run time); pass Python values or a relay.const instead")
    return value


def static_ints(value, op_name: str, arg: str) -> tuple:
    """An int / sequence of ints / numpy array / relay Constant -> tuple of Python ints."""
    value = _constant_value(value, op_name, arg)
    if isinstance(value, np.ndarray):
        value = value.reshape(-1).tolist()
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    try:
        out = []
        for v in value:
            v = _constant_value(v, op_name, arg)
            if isinstance(v, np.ndarray):
                v = v.item()
            if isinstance(v, (bool, np.bool_)) or int(v) != v:
                raise ValueError(v)
            out.append(int(v))
        return tuple(out)
    except (TypeError, ValueError) as err:
        raise AttrsError(f"{op_name}: `{arg}` must be an int or a sequence of ints, got {value!r}") from err


def static_scalar(value, op_name: str, arg: str):
    """A Python number or a 0-d/1-element relay Constant -> a Python int or float."""
    value = _constant_value(value, op_name, arg)
    arr = np.asarray(value)
    if arr.size != 1 or arr.dtype.kind not in "iuf":
        raise AttrsError(f"{op_name}: `{arg}` must be a number, got {value!r}")
    return arr.reshape(()).item()
