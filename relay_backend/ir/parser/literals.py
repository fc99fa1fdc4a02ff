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
from ...tir.expr import SizeVar
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


def make_dim(text: str, size_vars: dict):
    """One dimension of a `Tensor[(...), dtype]` shape.

    An integer is that size, `?` is `relay.Any()`, and a name is a symbolic size: the same name
    gives the same `tir.SizeVar` throughout one parse (`size_vars` holds them), so
    `Tensor[(n, 3), float32]` and `Tensor[(n), int32]` share `n`. This is the one place that
    decides how a dim is represented."""
    if text == "?":
        return Any()
    if text[:1].isdigit() or text[:1] == "-":
        value = int(text)
        if value < 0:
            raise ValueError(f"a tensor dimension must be >= 0, got {value}")
        return value
    var = size_vars.get(text)
    if var is None:
        var = size_vars[text] = SizeVar(text)
    return var


__all__ = ["int_literal", "float_literal", "string_literal", "attr_number", "name_value", "make_dim"]
