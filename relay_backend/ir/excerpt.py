"""Short one-line excerpts of expressions for error messages.

`excerpt(e)` uses the printer's `astext()` when that is one short line, else a shallow rendering
(a call with its direct arguments abbreviated), so messages stay short even for a node at the end
of a 10,000-op chain and do not depend on how the printer lays out nested bindings.
"""
import numpy as np

from .adt import Constructor, Match
from .expr import (Call, Constant, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                       RefWrite, Tuple, TupleGetItem, Var)

_LIMIT = 160


def excerpt(expr, limit: int = _LIMIT) -> str:
    """A one-line description of `expr`, at most about `limit` characters."""
    try:
        text = expr.astext().strip()
    except Exception:  # noqa: BLE001 - the printer is optional here; fall back to our rendering
        text = ""
    if text and "\n" not in text and len(text) <= limit:
        return text
    text = shallow(expr, depth=2)
    return text if len(text) <= limit else text[: limit - 4] + " ..."


def shallow(e, depth: int = 1) -> str:
    """Render `e` down to `depth` levels of sub-expressions ("..." below)."""
    if isinstance(e, Var):
        return f"%{e.name_hint}"
    if isinstance(e, GlobalVar):
        return f"@{e.name_hint}"
    if isinstance(e, Op):
        return e.name
    if isinstance(e, Constructor):
        return e.name_hint
    if isinstance(e, Constant):
        return _const_text(e)
    if depth <= 0:
        return "..."
    sub = depth - 1
    if isinstance(e, Call):
        callee = shallow(e.op, sub) if not isinstance(e.op, Function) else "(fn ...)"
        return f"{callee}({', '.join(shallow(a, sub) for a in e.args)})"
    if isinstance(e, Tuple):
        inner = ", ".join(shallow(f, sub) for f in e.fields)
        return f"({inner},)" if len(e.fields) == 1 else f"({inner})"
    if isinstance(e, TupleGetItem):
        return f"{shallow(e.tuple_value, sub)}.{e.index}"
    if isinstance(e, Let):
        return f"let %{e.var.name_hint} = {shallow(e.value, sub)}; ..."
    if isinstance(e, If):
        return f"if ({shallow(e.cond, sub)}) {{ ... }} else {{ ... }}"
    if isinstance(e, Function):
        params = ", ".join(f"%{p.name_hint}" for p in e.params)
        return f"fn ({params}) {{ {shallow(e.body, sub)} }}"
    if isinstance(e, Match):
        return f"match ({shallow(e.data, sub)}) {{ ... }}"
    if isinstance(e, RefCreate):
        return f"ref({shallow(e.value, sub)})"
    if isinstance(e, RefRead):
        return f"!{shallow(e.ref, sub)}"
    if isinstance(e, RefWrite):
        return f"{shallow(e.ref, sub)} := {shallow(e.value, sub)}"
    return type(e).__name__


def _const_text(c: Constant) -> str:
    data = c.data
    if data.shape == ():
        value = np.asarray(data).item()
        return f"{value}" + ("f" if data.dtype == "float32" else "" if data.dtype in ("int32", "bool")
                             else f"<{data.dtype}>")
    return f"meta[relay.Constant]<{data.shape}, {data.dtype}>"
