"""Binding parameters by name: turn chosen function parameters into Constants.

`bind_params_by_name(func, params)` is what `build(..., params=...)` and
`create_executor(..., params=...)` use: each parameter of `func` whose name_hint is a key of
`params` is replaced by a Constant and dropped from the parameter list (TVM's BindParamsByName).
Keys matching no parameter are ignored, as in TVM. `BindParams(params)` does it on a module's main.
"""
import numpy as np

from ..errors import InputError, RelayError
from ..ir.expr import Constant, Function
from ..ir.functor import ExprMutator
from ..ir.module import IRModule
from ..ir.shape_math import bind_shape, shape_mismatch
from ..ir.types import TensorType, type_to_str
from ..runtime import ndarray as _nd
from ..runtime.ndarray import NDArray
from .pass_infra import module_pass


def _as_numpy(name: str, value) -> np.ndarray:
    """The numpy view of a params value (NDArray, numpy array or anything np.asarray accepts)."""
    if isinstance(value, NDArray):
        return value.view_numpy()
    if isinstance(value, Constant):
        return value.data.view_numpy()
    try:
        return np.asarray(value)
    except Exception as err:  # noqa: BLE001 - report any conversion failure as an input error
        raise InputError(f"bind_params_by_name: value for parameter {name!r} is not array-like "
                         f"({type(value).__name__}): {err}") from err


def _check_matches(param, arr: np.ndarray, sizes: dict) -> None:
    """Raise InputError when `arr` disagrees with the parameter's tensor annotation; `sizes`
    binds the size variables of the annotations across the parameters bound together."""
    ann = param.type_annotation
    if ann is None:
        return
    if not isinstance(ann, TensorType):
        raise InputError(f"bind_params_by_name: parameter {param.name_hint!r} has non-tensor type "
                         f"{type_to_str(ann)} and cannot be bound to an array")
    given = type_to_str(TensorType(arr.shape, arr.dtype))
    why = bind_shape(ann.shape, arr.shape, sizes) or shape_mismatch(ann.shape, arr.shape, sizes)
    if why:
        raise InputError(f"bind_params_by_name: parameter {param.name_hint!r} expects shape "
                         f"{type_to_str(ann)}, but the given value is {given} ({why}); pass an array "
                         f"of that shape")
    if str(arr.dtype) != ann.dtype:
        raise InputError(f"bind_params_by_name: parameter {param.name_hint!r} expects dtype {ann.dtype} "
                         f"({type_to_str(ann)}), but the given value is {given}; "
                         f"convert it with .astype({ann.dtype!r})")


class _Substitute(ExprMutator):
    """Replace each var in `mapping` by its value everywhere in an expression."""

    def __init__(self, mapping):
        super().__init__()
        self.memo_map.update(mapping)


def bind_params_by_name(func: Function, params) -> Function:
    """Replace the parameters of a function that have values by Constants of those values.

    Parameters
    ----------
    func : Function
        The function; two parameters of one name cannot be bound by name (RelayError).
    params : dict of str to numpy.ndarray or NDArray
        The values, keyed by parameter name; names that are not parameters are ignored.

    Returns
    -------
    func : Function
        The function without the bound parameters (the same object when nothing was bound).
    """
    if not isinstance(func, Function):
        raise RelayError(f"bind_params_by_name expects a relay Function, got {type(func).__name__}")
    if not params:
        return func
    by_name = {}
    for p in func.params:
        if p.name_hint in params:
            if p.name_hint in by_name:
                raise RelayError(f"Multiple args in the function have name {p.name_hint}: "
                                 f"rename one of the parameters before binding it by name")
            by_name[p.name_hint] = p
    if not by_name:
        return func
    mapping, sizes = {}, {}
    for name, p in by_name.items():
        arr = _as_numpy(name, params[name])
        _check_matches(p, arr, sizes)
        mapping[p] = Constant(_nd.array(arr))  # nd.array copies
    new_params = [p for p in func.params if p not in mapping]
    body = _Substitute(mapping).visit(func.body)
    return Function(new_params, body, func.ret_type, func.type_params, func.attrs)


def bind_params_to_main(mod: IRModule, params, who: str, keep_others: bool = False) -> IRModule:
    """A module whose main has params bound as constants: the one place every executor binds
    params. Like TVM's build and create_executor, only main is kept unless `keep_others`.

    Parameters
    ----------
    mod : IRModule
        The module; it must have a main when `params` is given.
    params : dict of str to numpy.ndarray or NDArray or None
        The values by parameter name; None or {} returns `mod` unchanged.
    who : str
        The caller's name, used to open error messages.
    keep_others : bool, optional
        If True, keep the module's other functions (the VM compiler: main may call them).
        Defaults to False.

    Returns
    -------
    mod : IRModule
        The module with main's params bound.
    """
    if not params:
        return mod
    if "main" not in mod:
        raise RelayError(f"{who}: params were given but the module has no 'main' function to bind them into")
    bound = bind_params_by_name(mod["main"], params)
    if not keep_others:
        return IRModule.from_expr(bound)
    new_mod = mod.copy()
    new_mod["main"] = bound
    return new_mod


def BindParams(params):  # noqa: N802 - tvm.relay naming
    """Module pass: bind values by name into the module's main as constants (other functions
    untouched).

    Parameters
    ----------
    params : dict of str to numpy.ndarray or NDArray
        The values, keyed by the names of main's parameters.

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """

    def transform(mod: IRModule, ctx) -> IRModule:
        if "main" not in mod:
            return mod
        main = mod["main"]
        bound = bind_params_by_name(main, params)
        if bound is main:
            return mod
        new_mod = mod.copy()
        new_mod[mod.get_global_var("main")] = bound
        return new_mod

    return module_pass(transform, opt_level=0, name="BindParams")


__all__ = ["bind_params_by_name", "bind_params_to_main", "BindParams"]
