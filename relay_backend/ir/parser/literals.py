"""Literal values of the Relay text format: numbers, strings, attribute values and shape dims.

Numbers carry their dtype in a suffix, as the printer writes them and TVM reads them:

    1 -> int32 (int64 when it does not fit)   -7i64 -> int64     3u8 -> uint8
    1f / 1.5 -> float32    2.5f64 -> float64   1e-05f16 -> float16   inff, -inff, nanf
    True / False -> bool

Each function returns a plain value and raises ValueError with a short reason; the parser turns
that into a ParseError pointing at the token.
"""
import re

import numpy as np

from ...runtime.dtypes import SUPPORTED_DTYPES
from ...tir.expr import Cast, SizeVar
from .. import shape_math
from ..dims import is_any, is_static, normalize_dim
from ..types import Any

_INT_RE = re.compile(r"(-?[0-9]+)(?:([iu])([0-9]+))?$")
_FLOAT_RE = re.compile(r"(-?(?:[0-9][0-9.eE+-]*|inf|nan))(?:f([0-9]*))?$")


def int_literal(text: str) -> np.ndarray:
    """A 0-d integer array for `text` (`12`, `-3i64`, `7u8`)."""
    match = _INT_RE.match(text)
    if match is None:
        raise ValueError(f"invalid integer literal `{text}`")
    digits, kind, bits = match.groups()
    value = int(digits)
    if kind is None:
        dtype = "int32" if -2 ** 31 <= value < 2 ** 31 else "int64"   # TVM's rule
    else:
        dtype = ("int" if kind == "i" else "uint") + bits
    if dtype not in SUPPORTED_DTYPES:
        raise ValueError(f"invalid integer suffix in `{text}`: {dtype} is not a supported dtype")
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise ValueError(f"integer literal `{text}` does not fit in {dtype} "
                         f"([{info.min}, {info.max}])")
    return np.array(value, dtype=dtype)


def float_literal(text: str) -> np.ndarray:
    """A 0-d float array for `text` (`1f`, `1.5`, `-2.5f64`, `1e-05f16`, `inff`, `nanf`)."""
    match = _FLOAT_RE.match(text)
    if match is None:
        raise ValueError(f"invalid floating point literal `{text}`")
    digits, bits = match.groups()
    dtype = "float" + (bits or "32")
    if dtype not in ("float16", "float32", "float64"):
        raise ValueError(f"invalid float suffix in `{text}`: use f16, f32 or f64")
    try:
        value = float(digits)
    except ValueError:
        raise ValueError(f"invalid floating point literal `{text}`") from None
    with np.errstate(over="ignore"):
        out = np.array(value, dtype=dtype)
    if np.isinf(out) and not np.isinf(value):
        raise ValueError(f"floating point literal `{text}` is out of range for {dtype}")
    return out


def string_literal(text: str) -> str:
    """The value of a quoted string token (the printer escapes `\\` and `"` only)."""
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def attr_number(token_type: str, text: str):
    """A number written as an attribute value: a Python int or float (attrs hold plain values).

    Attribute floats are Python floats, which the printer writes with all their digits; the
    `f` suffix is read as a marker only, so `0.2f` is 0.2, not the float32 nearest to it."""
    if token_type == "INT":
        return int(int_literal(text))
    match = _FLOAT_RE.match(text)
    if match is None:
        raise ValueError(f"invalid floating point literal `{text}`")
    return float(match.group(1))


def name_value(text: str):
    """A bare name used as an attribute value: None for `None`/`nullptr`, else the name as a
    string (e.g. `dtype=float32` written without quotes)."""
    return None if text in ("None", "nullptr") else text


def make_dim(text: str, size_vars: dict, allow_negative: bool = False, dtype: str = "int32"):
    """One dimension of a `Tensor[(...), dtype]` shape.

    An integer is that size (a dtype suffix such as `i64` is read and dropped: a constant dim is
    an IntDim, int64 when its value needs it), `?` is `relay.Any()`, and a name is a symbolic
    size of `dtype` (int32 unless written `n: int64`): the same name gives the same
    `tir.SizeVar` throughout one parse (`size_vars` holds them), so `Tensor[(n, 3), float32]`
    and `Tensor[(n), int32]` share `n`. This is the one place that decides how a dim is
    represented."""
    if text == "?":
        return Any()
    if text[:1].isdigit() or text[:1] == "-":
        match = _INT_RE.match(text)
        if match is None:
            raise ValueError(f"invalid dimension `{text}`")
        value = int(match.group(1))
        if value < 0 and not allow_negative:
            raise ValueError(f"a tensor dimension must be >= 0, got {value}")
        return value
    if dtype not in _INT_DTYPES:
        raise ValueError(f"size variable `{text}` has dtype {dtype}; a dimension needs an integer dtype "
                         f"({', '.join(_INT_DTYPES)})")
    var = size_vars.get(text)
    if var is None:
        var = size_vars[text] = SizeVar(text, dtype)
    elif var.dtype != dtype:
        raise ValueError(f"size variable `{text}` is {dtype} here but {var.dtype} elsewhere; one name is one "
                         "variable of one dtype")
    return var


_DIM_OPS = {"+": shape_math.add, "-": shape_math.sub, "*": shape_math.mul,
            "//": shape_math.floordiv, "%": shape_math.floormod}
_DIM_FUNCS = {"min": shape_math.dim_min, "max": shape_math.dim_max}
_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _dim_operand(d, what: str):
    if is_any(d):
        raise ValueError(f"`?` (a dim known only at run time) cannot appear in the dim expression {what}")
    return d


def dim_op(op: str, lhs, rhs):
    """`lhs op rhs` for op in + - * // % over dims (ints and size-variable expressions), as
    ir/shape_math computes them; a division by a constant 0 is a ValueError."""
    what = f"`... {op} ...`"
    lhs, rhs = _dim_operand(lhs, what), _dim_operand(rhs, what)
    if op in ("//", "%") and is_static(rhs) and int(rhs) == 0:
        raise ValueError(f"a dim divides by 0 (`{op} 0`)")
    return _DIM_OPS[op](lhs, rhs)


def dim_call(name: str, args: list):
    """`min(a, b)`, `max(a, b)` or an integer cast `int64(a)` of dims."""
    what = f"`{name}(...)`"
    args = [_dim_operand(a, what) for a in args]
    if name in _DIM_FUNCS and len(args) == 2:
        return _DIM_FUNCS[name](*args)
    if name in _INT_DTYPES and len(args) == 1:
        value = args[0]
        return value if is_static(value) else normalize_dim(Cast(name, value), "a shape dim")
    raise ValueError(f"unknown dim function {name}({', '.join('_' for _ in args)}): a dim may use "
                     f"min(a, b), max(a, b) or an integer cast such as int64(a)")


__all__ = ["int_literal", "float_literal", "string_literal", "attr_number", "name_value", "make_dim",
           "dim_op", "dim_call"]
