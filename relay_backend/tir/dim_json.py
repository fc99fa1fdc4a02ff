"""Shape dims as the runtime's signatures store them: JSON-able ints, variable names, [op, a, b].

A kernel's boundary signature (codegen) and a VM function's parameter types (the VM compiler)
both describe dims that may be symbolic; runtime/signature.py evaluates and validates that form
(`eval_dim`, `dim_from_json`). This module is the one writer of it from tir expressions:

    4            a constant
    "n"          a shape variable (names made unique per signature with `unique_var_names`)
    ["*", "n", 2]  + - * // % min max of dims
"""
from . import expr as E

_DIM_OPS = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.FloorDiv: "//", E.FloorMod: "%",
            E.Min: "min", E.Max: "max"}


def unique_var_names(variables) -> dict:
    """{id(var): name}: each Var's name, suffixed `_1`, `_2`... where two distinct Vars share one
    (two `te.size_var("n")` are different variables)."""
    names, used = {}, set()
    for v in variables:
        if id(v) in names:
            continue
        name, k = v.name, 0
        while name in used:
            k += 1
            name = f"{v.name}_{k}"
        used.add(name)
        names[id(v)] = name
    return names


def dim_to_json(dim, names: dict):
    """The JSON form of a dim: an int, a var name from `names` ({id(var): name}), or [op, a, b].

    Raises ValueError for a node that is not integer arithmetic on variables (the caller names
    the function and the buffer)."""
    if isinstance(dim, int):
        return int(dim)
    if isinstance(dim, E.IntImm):
        return int(dim.value)
    if isinstance(dim, E.Var):
        if id(dim) not in names:
            raise ValueError(f"dimension `{dim}` names a variable that is not a shape parameter")
        return names[id(dim)]
    if isinstance(dim, E.Cast):
        return dim_to_json(dim.value, names)
    op = _DIM_OPS.get(type(dim))
    if op is None:
        raise ValueError(f"dimension `{dim}` is not an int, a shape variable or +,-,*,//,%,min,max of them")
    return [op, dim_to_json(dim.a, names), dim_to_json(dim.b, names)]


__all__ = ["unique_var_names", "dim_to_json"]
