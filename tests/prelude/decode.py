"""Reading a program's result as Python data, guided by its Relay type, so tests compare
Prelude results with plain Python lists, tuples and ints.

Both executors' values work: the debug interpreter's ConstructorValues and the VM's ADTs carry
a constructor tag and fields; tensors become numpy arrays (0-d ones Python scalars).
"""
import numpy as np

import relay_backend as relay


def decode(value, ty, mod):
    """`value` (of Relay type `ty` in module `mod`) as Python data:
    List -> list, Option -> None or the value, Tree -> (value, [subtrees]), nat -> int,
    a tensor-array element -> (constructor name, array) or None for its nil, tuple -> tuple."""
    if isinstance(ty, relay.TensorType):
        array = value.numpy()
        return array.item() if array.ndim == 0 else array
    if isinstance(ty, relay.TupleType):
        return tuple(decode(v, t, mod) for v, t in zip(value.fields, ty.fields))
    if isinstance(ty, relay.TypeCall) or isinstance(ty, relay.GlobalTypeVar):
        return _decode_adt(value, ty, mod)
    raise TypeError(f"cannot decode a value of type {ty}")


def _decode_adt(value, ty, mod):
    header = ty.func if isinstance(ty, relay.TypeCall) else ty
    args = ty.args if isinstance(ty, relay.TypeCall) else ()
    data = mod.type_definitions[header]
    name = header.name_hint
    ctor_of = {c.tag: c for c in data.constructors}
    if name == "List":
        items = []
        while ctor_of[value.tag].name_hint == "Cons":
            items.append(decode(value.fields[0], args[0], mod))
            value = value.fields[1]
        return items
    if name == "nat":
        count = 0
        while ctor_of[value.tag].name_hint == "succ":
            count, value = count + 1, value.fields[0]
        return count
    ctor = ctor_of[value.tag]
    if name == "Option":
        return decode(value.fields[0], args[0], mod) if ctor.name_hint == "Some" else None
    if name == "Tree":
        return (decode(value.fields[0], args[0], mod), decode(value.fields[1], relay.TypeCall(
            mod.get_global_type_var("List"), [ty]), mod))
    if not value.fields:   # a tensor array's nil
        return None
    return ctor.name_hint, np.asarray(value.fields[0].numpy())


def run(mod, kind, *args):
    """main's result on `kind`, decoded by main's return type."""
    out = relay.create_executor(kind, mod=mod).evaluate()(*args)
    return decode(out, mod["main"].checked_type.ret_type, mod)
