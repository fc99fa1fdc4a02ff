"""The VM's inputs: Python arguments as VM values (`convert`), and the check of a call's values
against a function's parameter types (`check_inputs`), with the errors that name what is wrong.

A parameter type is a descriptor (compiler.type_descriptor): a tensor's dtype and dims, where a
dim is an int, a size variable's name (bound by the first input that has it; every other use
must agree) or an expression of size variables (checked once every input has bound its
variables), or a tuple of descriptors.
"""
import numpy as np

from ..errors import InputError
from ..runtime import ndarray as _nd
from ..runtime.container import ADT
from ..runtime.ndarray import NDArray
from ..runtime.signature import dim_str, eval_dim
from ..runtime.values import ConstructorValue
from .loop import VMClosure


def convert(arg, device):
    """A Python argument as a VM value (tvm.runtime.vm._convert). Containers (tuples, runtime
    ADTs, the interpreter's ConstructorValues) become ADTs, rebuilt bottom-up without recursion
    so a long list or a large nat is fine."""
    if type(arg) is NDArray and (arg.device is device or arg.device == device):
        return arg                       # the common case, without the container walk
    built = {}
    stack = [(arg, False)]
    while stack:
        value, fields_done = stack.pop()
        fields = _container_fields(value)
        if fields is None:
            built[id(value)] = _convert_leaf(value, device)
        elif not fields_done:
            stack.append((value, True))
            stack.extend((f, False) for f in fields if id(f) not in built)
        else:
            tag = 0 if isinstance(value, (tuple, list)) else value.tag
            built[id(value)] = ADT(tag, [built[id(f)] for f in fields])
    return built[id(arg)]


def _container_fields(value):
    if isinstance(value, (ADT, ConstructorValue)):
        return value.fields
    if isinstance(value, (tuple, list)):
        return value
    return None


def _convert_leaf(arg, device):
    if isinstance(arg, NDArray):
        return arg if arg.device == device else _nd.array(arg, device=device)
    if isinstance(arg, (np.ndarray, np.generic)):
        return _nd.array(np.asarray(arg), device=device)
    if isinstance(arg, VMClosure):
        return arg
    if isinstance(arg, bool):
        return _nd.array(np.array(arg, dtype="bool"), device=device)
    if isinstance(arg, int):
        return _nd.array(np.array(arg, dtype="int32"), device=device)
    if isinstance(arg, float):
        return _nd.array(np.array(arg, dtype="float32"), device=device)
    raise InputError(f"cannot pass a {type(arg).__name__} to the VM: use a numpy array, an NDArray, "
                     f"a Python scalar, or a tuple or ADT value of these")


def _check(value, desc, where: str, sizes: dict) -> None:
    """InputError unless `value` fits the parameter type descriptor (see
    compiler.type_descriptor). `sizes` ({name: int}) holds the size variables bound so far by
    this call's inputs: a plain variable dim binds its name, and a name met again (in the same
    or another input) must get the same size. Expression dims are checked by `_check_exprs`
    once every input has bound its variables."""
    if desc is None:
        return
    if "tuple" in desc:
        if not isinstance(value, ADT) or len(value) != len(desc["tuple"]):
            raise InputError(f"{where}: expects a tuple of {len(desc['tuple'])} fields, got {_describe(value)}")
        for i, (v, d) in enumerate(zip(value.fields, desc["tuple"])):
            _check(v, d, f"{where}.{i}", sizes)
        return
    want = _want(desc)
    if not isinstance(value, NDArray):
        raise InputError(f"{where}: expects {want}, got {_describe(value)}")
    if value.dtype != desc["dtype"]:
        raise InputError(f"{where}: expects {want}, got dtype {value.dtype} (shape {value.shape}); "
                         f"convert it with .astype({desc['dtype']!r})")
    shape = desc["shape"]
    if len(value.shape) != len(shape):
        raise InputError(f"{where}: expects {want}, got shape {value.shape}")
    for axis, (d, s) in enumerate(zip(shape, value.shape)):
        if isinstance(d, str):
            if sizes.setdefault(d, s) != s:
                raise InputError(f"{where}: expects {want}, got shape {value.shape}: dimension {axis} is "
                                 f"{s}, but {d} = {sizes[d]} (bound by an earlier dimension or input); "
                                 f"inputs sharing a size variable must agree on it")
        elif isinstance(d, int) and d != s:
            raise InputError(f"{where}: expects {want}, got shape {value.shape}")


def check_inputs(func_name: str, names, values, param_types) -> None:
    """Check `values` against their parameter type descriptors: each one's dims, then the size
    variables they bind (one name, one size across all of them), then expression dims."""
    sizes = {}
    for name, value, desc in zip(names, values, param_types):
        _check(value, desc, f"{func_name}: parameter '{name}'", sizes)
    for name, value, desc in zip(names, values, param_types):
        _check_exprs(value, desc, f"{func_name}: parameter '{name}'", sizes)


def _check_exprs(value, desc, where: str, sizes: dict) -> None:
    """InputError unless the expression dims of `desc` (like `n * 2`) equal `value`'s sizes
    under the bound size variables (dims whose variables no input binds are left to the
    kernels' checked calls)."""
    if desc is None:
        return
    if "tuple" in desc:
        for i, (v, d) in enumerate(zip(value.fields, desc["tuple"])):
            _check_exprs(v, d, f"{where}.{i}", sizes)
        return
    for axis, (d, s) in enumerate(zip(desc["shape"], value.shape)):
        if isinstance(d, list):
            expected = eval_dim(d, sizes)
            if expected is not None and expected != s:
                bound = ", ".join(f"{k}={v}" for k, v in sorted(sizes.items()))
                raise InputError(f"{where}: expects {_want(desc)}, got shape {value.shape}: dimension {axis} "
                                 f"is {s}, but {_dim_text(d)} = {expected} ({bound})")


def _dim_text(dim) -> str:
    """A descriptor dim as Relay prints it: `n * 2`, not the signature's `(n * 2)`."""
    text = dim_str(dim)
    return text[1:-1] if isinstance(dim, list) else text


def _want(desc) -> str:
    dims = ("?" if d is None else _dim_text(d) for d in desc["shape"])
    return "Tensor[(" + ", ".join(dims) + f"), {desc['dtype']}]"


def _describe(value) -> str:
    if isinstance(value, NDArray):
        return f"Tensor[{value.shape}, {value.dtype}]"
    if isinstance(value, ADT):
        return f"an ADT with tag {value.tag} and {len(value)} fields"
    return type(value).__name__


__all__ = ["convert", "check_inputs"]
