"""Relay types: TensorType (with Any dims), TupleType, FuncType, TypeVar, TypeCall, RefType,
IncompleteType. Types are immutable values; equality is structural except for type variables,
which compare by identity (alpha-equivalence is handled by ir.structural).

Composite types hash in O(1) (the hash is computed once, from the fields' cached hashes) and
compare and print with explicit stacks, so a tuple type nested 10,000 deep is fine."""
from ..errors import IRConstructionError
from ..runtime.dtypes import supported_dtype
from .node import Node
from .dims import Any, is_any, is_static, normalize_dim, shape_key, shape_to_str  # noqa: F401


class Type(Node):
    """Base class of all Relay types."""

    def __repr__(self) -> str:
        return type_to_str(self)

    __str__ = __repr__


def _norm_dtype(dtype) -> str:
    return supported_dtype(dtype, "TensorType")


def _norm_shape(shape) -> tuple:
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise IRConstructionError(f"a tensor shape must be a sequence of dimensions, e.g. (3,) or "
                                  f"(1, 3), got {type(shape).__name__} {shape!r}")
    return tuple(normalize_dim(d) for d in shape)


class TensorType(Type):
    """The type of a tensor: its shape and dtype.

    Equality and hashing are structural over the dims, with size variables compared by
    identity.

    Parameters
    ----------
    shape : tuple, optional
        The dims: ints, size variables or tir expressions on them, or relay.Any() for a size
        known only at run time. Defaults to () (a scalar).
    dtype : str, optional
        The element type, a numpy name. Defaults to "float32".
    """

    __slots__ = ("shape", "dtype", "_key")

    def __init__(self, shape=(), dtype="float32"):
        self.shape = _norm_shape(shape)
        self.dtype = _norm_dtype(dtype)
        self._key = shape_key(self.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions (0 for a scalar)."""
        return len(self.shape)

    @property
    def is_dynamic(self) -> bool:
        """True when some dim is not a constant (Any or symbolic)."""
        return not all(is_static(d) for d in self.shape)

    @property
    def concrete_shape(self) -> tuple:
        """The shape as ints, for a type whose every dim is static; a ValueError when one is not."""
        if self.is_dynamic:
            raise ValueError(f"{self} has dynamic dimensions")
        return self.shape

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorType) and self._key == other._key and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("TensorType", self._key, self.dtype))


def scalar_type(dtype) -> TensorType:
    """The type of a 0-d tensor (a scalar).

    Parameters
    ----------
    dtype : str
        The element type, a numpy name.

    Returns
    -------
    type : TensorType
        TensorType((), dtype).
    """
    return TensorType((), dtype)


class _CompositeType(Type):
    """A type with sub-types. Its hash is computed once at construction (from the sub-types'
    own cached hashes, so it costs O(fields)); equality walks both types with an explicit stack."""

    __slots__ = ("_hash",)

    def __eq__(self, other) -> bool:
        return _types_equal(self, other)

    def __hash__(self) -> int:
        return self._hash


class TupleType(_CompositeType):
    """The type of a tuple.

    Parameters
    ----------
    fields : list of Type
        The types of the elements, in order.
    """
    __slots__ = ("fields",)

    def __init__(self, fields):
        self.fields = tuple(fields)
        self._hash = hash(("TupleType", self.fields))


def tuple_leaves(ty) -> list:
    """The types inside a (nested) TupleType that are not tuples, in field order ([ty] for any
    other type). Iterative, so a tuple nested thousands deep is fine."""
    out, stack = [], [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(reversed(t.fields))
        else:
            out.append(t)
    return out


def regroup_by_type(ty, leaf, make_tuple):
    """Rebuild the nesting of `ty`: `leaf(t)` gives the value of each non-tuple type t, called
    in field order (typically next() of an iterator over flat values), `make_tuple(values)` the
    value of a TupleType from its fields' values. Iterative (post-order over the type)."""
    values, stack = [], [(ty, False)]
    while stack:
        t, fields_done = stack.pop()
        if not isinstance(t, TupleType):
            values.append(leaf(t))
        elif fields_done:
            start = len(values) - len(t.fields)
            fields = values[start:]
            del values[start:]
            values.append(make_tuple(fields))
        else:
            stack.append((t, True))
            stack.extend((f, False) for f in reversed(t.fields))
    return values[0]


class TypeVar(Type):
    """A type parameter of a polymorphic function or ADT; compared by identity.

    Parameters
    ----------
    name_hint : str
        The name shown when printed.
    kind : str, optional
        What the variable stands for: "Type" (the default) for a type, or another kind such
        as "ShapeVar".
    """

    __slots__ = ("name_hint", "kind")

    def __init__(self, name_hint: str, kind: str = "Type"):
        self.name_hint = name_hint
        self.kind = kind

    def __call__(self, *args) -> "TypeCall":
        """`T(a, b)` is the type call TypeCall(T, [a, b]), as in tvm.relay."""
        return TypeCall(self, args)


class GlobalTypeVar(Type):
    """The name of an ADT definition in a module (e.g. `List`); compared by identity.

    Parameters
    ----------
    name_hint : str
        The type's name in the module.
    kind : str, optional
        Its kind. Defaults to "AdtHandle" (an algebraic data type).
    """

    __slots__ = ("name_hint", "kind")

    def __init__(self, name_hint: str, kind: str = "AdtHandle"):
        self.name_hint = name_hint
        self.kind = kind

    def __call__(self, *args) -> "TypeCall":
        """The ADT applied to type arguments: `List(t)` is `List[t]` (tvm GlobalTypeVar.__call__)."""
        return TypeCall(self, args)


class TypeCall(_CompositeType):
    """An ADT applied to type arguments, e.g. `List[Tensor[(), int32]]`.

    Parameters
    ----------
    func : GlobalTypeVar
        The data type.
    args : list of Type
        One type per type parameter of the data type.
    """

    __slots__ = ("func", "args")

    def __init__(self, func: GlobalTypeVar, args):
        self.func = func
        self.args = tuple(args)
        self._hash = hash(("TypeCall", id(self.func), self.args))


class FuncType(_CompositeType):
    """The type of a function: `fn [type_params] (arg_types) -> ret_type`.

    Parameters
    ----------
    arg_types : list of Type
        The parameter types, in order.
    ret_type : Type
        The type of the result.
    type_params : list of TypeVar, optional
        The type parameters of a polymorphic function. Defaults to None (none).
    type_constraints : list, optional
        Constraints (type relations) on the type parameters. Defaults to None (none).
    """
    __slots__ = ("arg_types", "ret_type", "type_params", "type_constraints")

    def __init__(self, arg_types, ret_type, type_params=None, type_constraints=None):
        self.arg_types = tuple(arg_types)
        self.ret_type = ret_type
        self.type_params = tuple(type_params or ())
        self.type_constraints = tuple(type_constraints or ())
        self._hash = hash(("FuncType", self.arg_types, self.ret_type))


class RefType(_CompositeType):
    """The type of a mutable reference cell.

    Parameters
    ----------
    value : Type
        The type of the value the cell holds.
    """

    __slots__ = ("value",)

    def __init__(self, value: Type):
        self.value = value
        self._hash = hash(("RefType", self.value))


def _eq_children(a, b):
    """The pairs of sub-types to compare when a and b have the same class, or None when they
    already differ at the top (arity, ADT name)."""
    if isinstance(a, TupleType):
        return None if len(a.fields) != len(b.fields) else zip(a.fields, b.fields)
    if isinstance(a, FuncType):
        if len(a.arg_types) != len(b.arg_types) or len(a.type_params) != len(b.type_params):
            return None
        return zip((*a.arg_types, a.ret_type, *a.type_params),
                   (*b.arg_types, b.ret_type, *b.type_params))
    if isinstance(a, TypeCall):
        return None if a.func is not b.func or len(a.args) != len(b.args) else zip(a.args, b.args)
    return ((a.value, b.value),)   # RefType


def _types_equal(a, b) -> bool:
    """Structural equality of types (type variables and holes by identity), iteratively."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        if not isinstance(x, _CompositeType):
            if not x == y:
                return False
            continue
        if type(x) is not type(y) or x._hash != y._hash:
            return False
        pairs = _eq_children(x, y)
        if pairs is None:
            return False
        stack.extend(pairs)
    return True


class IncompleteType(Type):
    """A placeholder for a type not known yet, which the type solver fills in; compared by
    identity.

    Parameters
    ----------
    kind : str, optional
        What it stands for. Defaults to "Type".
    """

    __slots__ = ("kind",)

    def __init__(self, kind: str = "Type"):
        self.kind = kind


def type_to_str(t, memo: dict = None) -> str:
    """The Relay text of a type: Tensor[(1, 3), float32], (T1, T2), fn (T) -> T, ...

    Built as one list of pieces with an explicit stack, so deep nesting costs O(output).

    Parameters
    ----------
    t : Type
        The type to print.
    memo : dict, optional
        A cache shared by one printout (id -> (type, text)): sub-types printed before are
        reused and `t`'s text is remembered, so printing the types of nested tuples costs
        their text's length. Defaults to None (no cache).

    Returns
    -------
    text : str
        The text.
    """
    if isinstance(t, TensorType):
        return _type_pieces(t)
    out, stack = [], [(False, t)]
    while stack:
        is_text, item = stack.pop()
        if is_text:
            out.append(item)
            continue
        if memo is not None:
            known = memo.get(id(item))
            if known is not None:
                out.append(known[1])
                continue
        pieces = _type_pieces(item)
        if isinstance(pieces, str):
            out.append(pieces)
        else:
            stack.extend(reversed(pieces))
    text = "".join(out)
    if memo is not None:
        memo[id(t)] = (t, text)
    return text


def _text(s: str) -> tuple:
    return (True, s)


def _sep(types) -> list:
    """Pieces for the sub-types `types` separated by ", "."""
    out = []
    for i, sub in enumerate(types):
        if i:
            out.append(_text(", "))
        out.append((False, sub))
    return out


def _type_pieces(t):
    """The text of `t` as a str, or as pieces in order: (True, text) or (False, sub-type)."""
    if isinstance(t, TensorType):
        if t.shape == ():
            return t.dtype
        return f"Tensor[{shape_to_str(t.shape)}, {t.dtype}]"
    if isinstance(t, TupleType):
        return [_text("("), *_sep(t.fields), _text(",)" if len(t.fields) == 1 else ")")]
    if isinstance(t, FuncType):
        params = [_text("["), *_sep(t.type_params), _text("]")] if t.type_params else []
        return [_text("fn "), *params, _text("("), *_sep(t.arg_types), _text(") -> "),
                (False, t.ret_type)]
    if isinstance(t, (TypeVar, GlobalTypeVar)):
        return t.name_hint
    if isinstance(t, TypeCall):
        return [_text(f"{t.func.name_hint}["), *_sep(t.args), _text("]")]
    if isinstance(t, RefType):
        return [_text("ref("), (False, t.value), _text(")")]
    if isinstance(t, IncompleteType):
        return "?"
    if t is None:
        return "None"
    if isinstance(t, Type):
        return type(t).__name__
    return repr(t)
