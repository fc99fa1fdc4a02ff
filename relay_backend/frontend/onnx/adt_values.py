"""Python values <-> Relay runtime values for imported models whose inputs or outputs are ONNX
sequences or optionals, led by the Relay types of main's parameters and result.

In:  a Python list (or tuple) of arrays for a `List[...]` parameter, None or a value for an
     `Option[...]`, an array-like for a tensor (checked against the element type inside a list,
     which no executor checks: an InputError names the input and the element).
Out: a List becomes a Python list, an Option None or its value, a tensor a numpy array, a tuple
     a list of its fields. The debug interpreter gives ConstructorValues and the VM tag-numbered
     ADTs; both carry the constructor's tag, which the type's constructors decode.
"""
import numpy as np

from ...errors import InputError
from ...ir.shape_math import dims_differ
from ...ir.types import TensorType, TupleType, TypeCall, type_to_str
from ...runtime.ndarray import NDArray
from ...runtime.ndarray import array as nd_array
from ...runtime.values import ConstructorValue


def _constructors(mod, ty: TypeCall) -> dict:
    """{name: Constructor} of the ADT `ty` applies."""
    return {c.name_hint: c for c in mod.get_type(ty.func.name_hint)[1:]}


def to_runtime(value, ty, mod, where: str, inside_adt: bool = False):
    """`value` as a runtime value of Relay type `ty` (tensors stay numpy arrays for the executor;
    those inside a list or optional, which no executor checks, are checked here)."""
    if isinstance(ty, TypeCall) and ty.func.name_hint == "List":
        if isinstance(value, np.ndarray) or not isinstance(value, (list, tuple)):
            raise InputError(f"{where} is a sequence: pass a list of arrays, got {type(value).__name__}")
        ctors = _constructors(mod, ty)
        items = [to_runtime(v, ty.args[0], mod, f"{where}[{i}]", True) for i, v in enumerate(value)]
        out = ConstructorValue(ctors["Nil"].tag, [], ctors["Nil"])
        for item in reversed(items):
            out = ConstructorValue(ctors["Cons"].tag, [item, out], ctors["Cons"])
        return out
    if isinstance(ty, TypeCall) and ty.func.name_hint == "Option":
        ctors = _constructors(mod, ty)
        if value is None:
            return ConstructorValue(ctors["None"].tag, [], ctors["None"])
        return ConstructorValue(ctors["Some"].tag, [to_runtime(value, ty.args[0], mod, where, True)], ctors["Some"])
    if isinstance(ty, TupleType):
        return tuple(to_runtime(v, t, mod, f"{where}.{i}", inside_adt)
                     for i, (v, t) in enumerate(zip(value, ty.fields)))
    if value is None:
        raise InputError(f"{where} expects {type_to_str(ty)}, got None (only an optional input may be None)")
    array = value.numpy() if isinstance(value, NDArray) else np.asarray(value)
    if inside_adt:  # executors convert top-level arrays themselves, not those inside an ADT value
        if isinstance(ty, TensorType):
            _check_element(array, ty, where)
        return nd_array(array)
    return array


def _check_element(array, ty: TensorType, where: str):
    if array.dtype != np.dtype(ty.dtype) or array.ndim != ty.ndim or \
            any(dims_differ(d, s) for d, s in zip(ty.shape, array.shape)):
        raise InputError(f"{where} expects {type_to_str(ty)}, got an array of shape {array.shape} and dtype "
                         f"{array.dtype}")


def from_runtime(value, ty, mod):
    """The Python value of runtime `value` of Relay type `ty` (lists, None, numpy arrays)."""
    if isinstance(ty, TypeCall) and ty.func.name_hint == "List":
        cons = _constructors(mod, ty)["Cons"].tag
        items = []
        while value.tag == cons:  # iterative: a long list is fine
            items.append(from_runtime(value.fields[0], ty.args[0], mod))
            value = value.fields[1]
        return items
    if isinstance(ty, TypeCall) and ty.func.name_hint == "Option":
        some = _constructors(mod, ty)["Some"].tag
        return from_runtime(value.fields[0], ty.args[0], mod) if value.tag == some else None
    if isinstance(ty, TupleType):
        return [from_runtime(v, t, mod) for v, t in zip(value.fields, ty.fields)]
    return value.numpy() if isinstance(value, NDArray) else np.asarray(value)
