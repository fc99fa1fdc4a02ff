"""Tensor dimensions as Relay types hold them: constants, size variables, expressions and Any.

A TensorType dim is one of
  * an IntDim: a constant. It is a Python int (so `d == 3`, `int(d)`, `range(d)`, numpy and
    hashing behave like the int) that also answers TVM IntImm's `.value` and `.dtype`;
  * a tir PrimExpr of an integer dtype: a size variable (`te.size_var("n")`, `te.var("n")`,
    `tir.Var`) or arithmetic on them (`n * 2`, `(h + 2*p - k) // s + 1`), kept simplified by the
    tir simplifier, so `n + 0` and `(n*2)//2` are `n`;
  * Any (`relay.Any()`): a dim known only at run time, with no name to relate it to others.

This module owns how a dim is normalized (`normalize_dim`), classified (`is_static`, `is_any`,
`is_symbolic`), printed (`dim_to_str`, the one printer of dims: the text parser mirrors it) and
compared (`dim_key`: structural, variables by identity). Arithmetic and proofs over dims for
type relations live in ir/shape_math.py.

Printed form (what `Tensor[(n, 3), float32]` shows):
    dim   := INT | "?" | NAME | NAME ": " DTYPE | dim op dim | "min(" dim ", " dim ")"
             | "max(" dim ", " dim ")" | "(" dim ")" | DTYPE "(" dim ")"   (a cast between int dtypes)
An int32 size variable prints as its name; one of another dtype as `n: int64` (Relay keeps a size
variable's dtype: TVM's printer puts it in the metadata section, this one next to the name). An
integer constant of a dtype other than int32 carries TVM's IntImm suffix (`2i64`, `3000000000i64`).
    op    := "+" | "-" | "*" | "//" | "%"      (+ - bind looser than * // %, left-associative)
Parentheses appear only where precedence needs them: `n * 2 + 1`, `(n + 2) // 3`, `n - (m - 1)`.
"""
import numpy as np

from ..errors import IRConstructionError
from ..tir import expr as E
from ..tir.simplify import simplify_expr
from .node import Node


class IntDim(int):
    """A constant dimension: an int with TVM IntImm's `.value` and `.dtype` (int32, or int64 when
    the value needs it). Equal to, and hashed like, the plain int."""

    __slots__ = ()

    @property
    def value(self) -> int:
        return int(self)

    @property
    def dtype(self) -> str:
        return "int32" if -2 ** 31 <= self < 2 ** 31 else "int64"

    def same_as(self, other) -> bool:
        """Object identity, as TVM's same_as (use == to compare values)."""
        return self is other

    def __repr__(self) -> str:
        return int.__repr__(self)

    __str__ = __repr__


_SMALL = tuple(IntDim(i) for i in range(1025))


def int_dim(value: int) -> IntDim:
    """The IntDim of a non-negative Python int (small ones are shared)."""
    return _SMALL[value] if value < 1025 else IntDim(value)


class Any(Node):
    """An unknown (dynamic) dimension: `relay.Any()`. All Any dims compare equal; a relation
    meeting Any in an input gives Any (or the other side) in its output; `same_as` is Node's
    (the very same object)."""

    __slots__ = ()

    def __eq__(self, other) -> bool:
        return isinstance(other, Any)

    def __hash__(self) -> int:
        return hash("relay.Any")

    def __repr__(self) -> str:
        return "?"


# Operators a symbolic dim may use: what kernels can evaluate as buffer extents.
DIM_NODE_TYPES = (E.Var, E.IntImm, E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod, E.Min, E.Max, E.Cast)
_SYMBOLS = {E.Add: ("+", 1), E.Sub: ("-", 1), E.Mul: ("*", 2), E.FloorDiv: ("//", 2),
            E.FloorMod: ("%", 2)}


def is_any(dim) -> bool:
    return isinstance(dim, Any)


def is_static(dim) -> bool:
    """A constant dim (an int)."""
    return isinstance(dim, int)


def is_symbolic(dim) -> bool:
    """A dim that is a tir expression (a size variable or arithmetic on them)."""
    return isinstance(dim, E.PrimExpr)


def is_static_shape(shape) -> bool:
    return all(isinstance(d, int) for d in shape)


def _describe(d) -> str:
    return f"{type(d).__name__} {d!r}"


def _check_dim_expr(expr, where: str) -> None:
    """IRConstructionError unless `expr` is integer arithmetic on variables and constants."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if not isinstance(node, DIM_NODE_TYPES) or not E.is_int_dtype(node.dtype):
            raise IRConstructionError(
                f"{where}: a symbolic dimension must be integer arithmetic (+ - * // % min max) on "
                f"size variables and constants, got `{node}` ({type(node).__name__}, "
                f"{getattr(node, 'dtype', '?')}) in `{expr}`")
        if isinstance(node, E.Cast):
            stack.append(node.value)
        elif isinstance(node, E.BinaryOp):
            stack.extend((node.a, node.b))


def normalize_dim(d, where: str = "TensorType"):
    """A dim as a TensorType stores it: IntDim, Any, or a simplified integer PrimExpr.

    Accepts Python/numpy ints, tir.IntImm, tir expressions, relay.Any() and None (= Any).
    A negative constant, a bool, a float or a non-arithmetic expression is an
    IRConstructionError naming `where` and the value."""
    t = type(d)
    if t is IntDim:
        return d
    if t is int:
        if d < 0:
            raise IRConstructionError(f"{where}: a tensor dimension must be >= 0, got {d}")
        return int_dim(d)
    if isinstance(d, Any):
        return d
    if d is None:
        return Any()
    if isinstance(d, E.PrimExpr):
        if isinstance(d, E.IntImm) and d.dtype != "bool":
            return normalize_dim(int(d.value), where)
        _check_dim_expr(d, where)
        simple = simplify_expr(d)
        if isinstance(simple, E.IntImm):
            return normalize_dim(int(simple.value), where)
        return simple
    if isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)):
        return normalize_dim(int(d), where)
    raise IRConstructionError(f"{where}: a tensor dimension must be an int, a size variable "
                              f"(te.size_var), a tir expression or relay.Any(), got {_describe(d)}")


# --- printing --------------------------------------------------------------------------------

def dim_to_str(d) -> str:
    """The text of one dim (see the module doc for the grammar)."""
    if isinstance(d, E.PrimExpr):
        return _expr_text(d)[0]
    if isinstance(d, Any):
        return "?"
    return _int_text(int(d), "int32" if -2 ** 31 <= int(d) < 2 ** 31 else "int64")


def _int_text(value: int, dtype: str) -> str:
    """An integer as Relay prints an IntImm: bare for int32, with TVM's suffix otherwise (`5i64`)."""
    if dtype == "int32":
        return str(value)
    signed = dtype.startswith("int")
    return f"{value}{'i' if signed else 'u'}{dtype[3:] if signed else dtype[4:]}"


def dim_spec(d):
    """A dim for a JSON spec of inputs and outputs (the CLI, InferenceSession's NodeArg): an int
    when static, None for Any, the printed name or expression (`"n"`, `"n * 2"`) when symbolic,
    as ONNX's dim_param names a symbolic dim."""
    if isinstance(d, Any):
        return None
    if isinstance(d, E.PrimExpr):
        return dim_to_str(d)
    return int(d)


def shape_to_str(shape) -> str:
    """`(n, 3)`; as in Relay, a 1-d shape prints without a trailing comma: `(4)`."""
    return "(" + ", ".join(dim_to_str(d) for d in shape) + ")"


def fold_dim(expr, leaf, combine):
    """Fold a dim expression bottom-up with an explicit stack (no recursion, shared sub-terms
    computed once): `leaf(node)` gives the value of a Var or IntImm, `combine(node, values)`
    that of a Cast / binary node from its operands' values (one for a Cast, two otherwise)."""
    memo = {}
    stack = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in memo:
            continue
        if isinstance(node, (E.Var, E.IntImm)):
            memo[id(node)] = leaf(node)
            continue
        kids = (node.value,) if isinstance(node, E.Cast) else (node.a, node.b)
        if not ready:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in memo)
            continue
        memo[id(node)] = combine(node, [memo[id(k)] for k in kids])
    return memo[id(expr)]


def _text_leaf(node) -> tuple:
    if isinstance(node, E.Var):
        if node.dtype != "int32":  # Relay keeps the dtype; `n: int64` (parenthesized inside arithmetic)
            return f"{node.name}: {node.dtype}", 0
        return node.name, 3
    value = int(node.value)
    return _int_text(value, node.dtype), 3 if value >= 0 else 0


def _text_combine(node, texts) -> tuple:
    if isinstance(node, E.Cast):
        return f"{node.dtype}({texts[0][0]})", 3
    if isinstance(node, (E.Min, E.Max)):
        return f"{node.symbol}({texts[0][0]}, {texts[1][0]})", 3
    symbol, prec = _SYMBOLS[type(node)]
    (lt, lp), (rt, rp) = texts
    left = lt if lp >= prec else f"({lt})"
    right = rt if rp > prec or (rp == prec and isinstance(node, (E.Add, E.Mul))) else f"({rt})"
    return f"{left} {symbol} {right}", prec


def _expr_text(expr) -> tuple:
    """(text, precedence) of a dim expression."""
    return fold_dim(expr, _text_leaf, _text_combine)


# --- structural keys -------------------------------------------------------------------------

def dim_key(d, var_key=id):
    """A hashable key of a dim: equal keys mean structurally equal dims. Variables are keyed by
    `var_key(var)` (identity by default; the structural hash passes a position instead)."""
    if not isinstance(d, E.PrimExpr):
        return d
    return fold_dim(d, lambda node: ("var", var_key(node)) if isinstance(node, E.Var) else int(node.value),
                    lambda node, keys: (type(node).__name__, node.dtype, *keys))


def shape_key(shape) -> tuple:
    """The structural key of a shape: the shape itself when no dim is symbolic."""
    if all(not isinstance(d, E.PrimExpr) for d in shape):
        return shape
    return tuple(dim_key(d) for d in shape)


def dim_vars(d) -> list:
    """The tir Vars of a dim in order of first appearance (none for a constant or Any)."""
    if not isinstance(d, E.PrimExpr):
        return []
    out, seen, stack = [], set(), [d]
    while stack:
        node = stack.pop()
        if isinstance(node, E.Var):
            if id(node) not in seen:
                seen.add(id(node))
                out.append(node)
        elif isinstance(node, E.Cast):
            stack.append(node.value)
        elif isinstance(node, E.BinaryOp):
            stack.extend((node.b, node.a))
    return out


def shape_vars(shape) -> list:
    """The tir Vars of a shape in order of first appearance."""
    out, seen = [], set()
    for d in shape:
        for v in dim_vars(d):
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    return out


def match_dims(a, b, bind_vars) -> bool:
    """Whether dims `a` and `b` have the same structure, with `bind_vars(va, vb) -> bool` deciding
    each pair of variables met at the same place (structural equality's var mapping)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, E.Var) and isinstance(y, E.Var):
            if x.dtype != y.dtype or not bind_vars(x, y):
                return False
        elif isinstance(x, E.PrimExpr) or isinstance(y, E.PrimExpr):
            if type(x) is not type(y) or x.dtype != y.dtype:
                return False
            if isinstance(x, E.IntImm):
                if x.value != y.value:
                    return False
            elif isinstance(x, E.Cast):
                stack.append((x.value, y.value))
            else:
                stack.extend(((x.a, y.a), (x.b, y.b)))
        elif not x == y:
            return False
    return True


__all__ = ["IntDim", "Any", "int_dim", "normalize_dim", "is_any", "is_static", "is_symbolic",
           "is_static_shape", "dim_to_str", "dim_spec", "shape_to_str", "dim_key", "shape_key", "dim_vars",
           "shape_vars", "match_dims", "fold_dim", "DIM_NODE_TYPES"]
