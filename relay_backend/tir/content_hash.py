"""A content digest of a PrimFunc: equal for two kernels that generate the same code, whatever
process built them; different as soon as any field that codegen reads differs.

The disk cache keys compiled kernels by it (codegen/llvm_cache.py), so it must see *everything*:
instead of listing the fields each node class has, it serialises every `__slots__` field of
every node generically, in a fixed pre-order with an explicit stack (a 10,000-deep expression
is fine):

    node        -> its class name, then each slot's value in slot order
    seen node   -> a back-reference to its first appearance; this is how a Var is identified
                   (by the order variables first appear), so its per-process `uid` is left out
                   and rebuilding the same kernel in another process gives the same digest
    tuple/list  -> length, items;  dict -> length, items sorted by key;  numbers, strings, None

A value of any other type (a te tensor left in the IR, an arbitrary object in attrs) raises
UnhashableNode naming it: the caller then compiles without the cache rather than risk serving
a kernel for a key that did not see the whole function.
"""
import hashlib
import numbers

import numpy as np

from ..errors import CompileError
from .buffer import Buffer
from .expr import CommReducer, IterVar, PrimExpr, Range, Var
from .prim_func import PrimFunc
from .stmt import Stmt

_NODE_TYPES = (PrimExpr, Stmt, Buffer, Range, IterVar, CommReducer, PrimFunc)
_SLOTS = {}


class UnhashableNode(CompileError):
    """A PrimFunc holds a value the content digest cannot serialise (named in the message)."""


def _slots(cls) -> tuple:
    """Every slot of `cls`, base classes first (cached per class)."""
    found = _SLOTS.get(cls)
    if found is None:
        names = []
        for klass in reversed(cls.__mro__):
            own = klass.__dict__.get("__slots__", ())
            names.extend([own] if isinstance(own, str) else own)
        found = _SLOTS[cls] = tuple(n for n in names if n != "uid" or not issubclass(cls, Var))
    return found


def _leaf_token(value):
    """The token of a plain value, or None when `value` is not one."""
    if value is None:
        return "N"
    if isinstance(value, (bool, np.bool_)):
        return f"b{int(value)}"
    if isinstance(value, str):
        return "s" + repr(value)
    if isinstance(value, bytes):
        return "y" + value.hex()
    if isinstance(value, numbers.Integral):
        return f"i{int(value)}"
    if isinstance(value, numbers.Real):
        return "f" + float(value).hex()
    if isinstance(value, numbers.Complex):
        return "c" + complex(value).real.hex() + "," + complex(value).imag.hex()
    return None


def prim_func_digest(func) -> str:
    """The hex SHA-256 of `func`'s canonical serialisation (see the module docstring)."""
    digest = hashlib.sha256()
    seen = {}                     # id(node) -> its number; `func` keeps every node (and id) alive
    tokens = []
    stack = [func]
    while stack:
        item = stack.pop()
        leaf = _leaf_token(item)
        if leaf is not None:
            tokens.append(leaf)
            continue
        if isinstance(item, (tuple, list)):
            tokens.append(f"[{len(item)}")
            stack.extend(reversed(item))
            continue
        if isinstance(item, dict):
            keys = sorted(item, key=repr)
            tokens.append(f"{{{len(keys)}")
            for key in reversed(keys):
                stack.append(item[key])
                stack.append(key)
            continue
        if not isinstance(item, _NODE_TYPES):
            raise UnhashableNode(f"the kernel holds a {type(item).__module__}.{type(item).__qualname__} "
                                 f"({str(item)[:80]!r}), which its content digest cannot serialise")
        first = seen.get(id(item))
        if first is not None:
            tokens.append(f"@{first}")
            continue
        seen[id(item)] = len(seen)
        slots = _slots(type(item))
        tokens.append(f"<{type(item).__qualname__}:{len(slots)}")
        stack.extend(reversed([getattr(item, name, None) for name in slots]))
        if len(tokens) > 4096:
            digest.update("\x00".join(tokens).encode())
            digest.update(b"\x00")
            tokens.clear()
    digest.update("\x00".join(tokens).encode())
    return digest.hexdigest()


__all__ = ["prim_func_digest", "UnhashableNode"]
