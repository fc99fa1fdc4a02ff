"""The `#[metadata]` section: the values of the constants a program names as `meta[relay.Constant][k]`.

The section follows the program, from a line starting with `#[metadata]` to the end. Two
layouts are read:

  * the printer's (readable, lossless: floats print their shortest round-tripping digits):

        meta[relay.Constant][0] = float32[2, 3] [[1.5, 2, 3],
         [4, 5, 6]]

  * TVM's: a JSON object mapping kinds to arrays of nodes (`{"root": 1, "nodes": [...],
    "b64ndarrays": [...]}`), read by ir/serialization.py.

Values are plain numbers (`nan`, `inf` and `True`/`False` included); nothing is evaluated.
"""
import math
import re

import numpy as np

from ...runtime.dtypes import SUPPORTED_DTYPES
from ...runtime.ndarray import array as nd_array
from ..expr import Constant

_SECTION_RE = re.compile(r"^#\[metadata\][ \t]*$", re.MULTILINE)
_ENTRY_RE = re.compile(r"^meta\[([A-Za-z_][A-Za-z0-9_.]*)\]\[([0-9]+)\] = ([a-z0-9]+)\[([0-9, ]*)\]",
                       re.MULTILINE)
_VALUE_RE = re.compile(r"[^\s,\[\]]+")


class MetadataError(ValueError):
    """A malformed metadata section; `line` is the 1-based line inside the whole source."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def split_metadata(text: str):
    """(program text, metadata text or None, line number of the `#[metadata]` line)."""
    match = None
    for match in _SECTION_RE.finditer(text):
        pass   # the last such line: the section is always at the end
    if match is None:
        return text, None, 0
    line = text.count("\n", 0, match.start()) + 1
    return text[:match.start()], text[match.end():], line


def parse_metadata(section: str, first_line: int) -> dict:
    """The meta table {kind: [node, ...]} of a metadata section (the text after `#[metadata]`)."""
    stripped = section.strip()
    if not stripped:
        return {}
    if stripped.startswith("{"):
        from ..serialization import load_meta_table
        return load_meta_table(stripped, first_line)
    return _parse_printed(section, first_line)


def _parse_printed(section: str, first_line: int) -> dict:
    entries = list(_ENTRY_RE.finditer(section))
    head = section[:entries[0].start()] if entries else section
    if head.strip():
        raise MetadataError("the metadata section must list `meta[relay.Constant][k] = dtype[shape] "
                            "values` entries", first_line + 1 + head.count("\n", 0, len(head) - len(head.lstrip())))
    table = {}
    for i, entry in enumerate(entries):
        end = entries[i + 1].start() if i + 1 < len(entries) else len(section)
        line = first_line + section.count("\n", 0, entry.start())
        kind, index, dtype, dims = entry.group(1), int(entry.group(2)), entry.group(3), entry.group(4)
        if kind != "relay.Constant":
            raise MetadataError(f"metadata of kind {kind} cannot be written in this layout; only "
                                f"relay.Constant", line)
        rows = table.setdefault(kind, [])
        if index != len(rows):
            raise MetadataError(f"meta[{kind}][{index}] is out of order: expected index {len(rows)}", line)
        shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
        values = _VALUE_RE.findall(section[entry.end():end])
        rows.append(Constant(nd_array(_array(values, dtype, shape, line))))
    return table


def _array(values: list, dtype: str, shape: tuple, line: int) -> np.ndarray:
    if dtype not in SUPPORTED_DTYPES:
        raise MetadataError(f"unsupported constant dtype {dtype!r}", line)
    count = math.prod(shape)
    if len(values) != count:
        raise MetadataError(f"a {dtype}{list(shape)} constant needs {count} value(s), found "
                            f"{len(values)}", line)
    try:
        if dtype == "bool":
            bad = [v for v in values if v not in ("True", "False")]
            if bad:
                raise ValueError(bad[0])
            data = [v == "True" for v in values]
        elif dtype.startswith("float"):
            data = [float(v) for v in values]
        else:
            data = [int(v) for v in values]
        with np.errstate(over="raise"):
            arr = np.array(data, dtype=dtype) if data else np.zeros(0, dtype=dtype)
    except (ValueError, OverflowError, FloatingPointError) as err:
        raise MetadataError(f"invalid {dtype} value in a constant: {err}", line) from None
    if dtype.startswith("int") or dtype.startswith("uint"):
        if any(int(a) != b for a, b in zip(arr.tolist(), data)):
            raise MetadataError(f"a value does not fit in {dtype}", line)
    return arr.reshape(shape)


__all__ = ["split_metadata", "parse_metadata", "MetadataError"]
