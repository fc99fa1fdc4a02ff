"""Relay types: TensorType (with Any dims), TupleType, FuncType, TypeVar, TypeCall, RefType,
IncompleteType. Types are immutable values; equality is structural except for type variables,
which compare by identity (alpha-equivalence is handled by ir.structural)."""
import numpy as np


class Type:
    """Base class of all Relay types."""

    def __repr__(self) -> str:
        return type_to_str(self)

    __str__ = __repr__


class Any:
    """An unknown (dynamic) dimension: `relay.Any()`. All Any dims compare equal."""

    __slots__ = ()

    def __eq__(self, other) -> bool:
        return isinstance(other, Any)

    def __hash__(self) -> int:
        return hash("relay.Any")

    def __repr__(self) -> str:
        return "?"


def is_any(dim) -> bool:
    return isinstance(dim, Any)


def _norm_dim(d):
    if isinstance(d, Any):
        return d
    if d is None:
        return Any()
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"a tensor dimension must be an int or relay.Any(), got {d!r}")
    if d < 0:
        raise ValueError(f"a tensor dimension must be >= 0, got {d}")
    return int(d)


def _norm_dtype(dtype) -> str:
    try:
        return str(np.dtype(dtype))
    except TypeError as err:
        raise TypeError(f"unknown dtype {dtype!r}") from err


class TensorType(Type):
    """A tensor of static rank: `shape` is a tuple of ints and Any(); `dtype` a numpy name."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape=(), dtype="float32"):
        self.shape = tuple(_norm_dim(d) for d in shape)
        self.dtype = _norm_dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_dynamic(self) -> bool:
        return any(is_any(d) for d in self.shape)

    @property
    def concrete_shape(self) -> tuple:
        if self.is_dynamic:
            raise ValueError(f"{self} has dynamic dimensions")
        return self.shape

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorType) and self.shape == other.shape and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("TensorType", self.shape, self.dtype))


def scalar_type(dtype) -> TensorType:
    """A 0-d tensor type."""
    return TensorType((), dtype)


class TupleType(Type):
    __slots__ = ("fields",)

    def __init__(self, fields):
        self.fields = tuple(fields)

    def __eq__(self, other) -> bool:
        return isinstance(other, TupleType) and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(("TupleType", self.fields))


class TypeVar(Type):
    """A type parameter of a polymorphic function or ADT; compared by identity."""

    __slots__ = ("name_hint", "kind")

    def __init__(self, name_hint: str, kind: str = "Type"):
        self.name_hint = name_hint
        self.kind = kind


class GlobalTypeVar(Type):
    """The name of an ADT definition in a module (e.g. `List`); compared by identity."""

    __slots__ = ("name_hint", "kind")

    def __init__(self, name_hint: str, kind: str = "AdtHandle"):
        self.name_hint = name_hint
        self.kind = kind


class TypeCall(Type):
    """An ADT applied to type arguments, e.g. `List[Tensor[(), int32]]`."""

    __slots__ = ("func", "args")

    def __init__(self, func: GlobalTypeVar, args):
        self.func = func
        self.args = tuple(args)

    def __eq__(self, other) -> bool:
        return isinstance(other, TypeCall) and self.func is other.func and self.args == other.args

    def __hash__(self) -> int:
        return hash(("TypeCall", id(self.func), self.args))


class FuncType(Type):
    __slots__ = ("arg_types", "ret_type", "type_params", "type_constraints")

    def __init__(self, arg_types, ret_type, type_params=None, type_constraints=None):
        self.arg_types = tuple(arg_types)
        self.ret_type = ret_type
        self.type_params = tuple(type_params or ())
        self.type_constraints = tuple(type_constraints or ())

    def __eq__(self, other) -> bool:
        return (isinstance(other, FuncType) and self.arg_types == other.arg_types
                and self.ret_type == other.ret_type and self.type_params == other.type_params)

    def __hash__(self) -> int:
        return hash(("FuncType", self.arg_types, self.ret_type))


class RefType(Type):
    """The type of a mutable reference cell holding `value`."""

    __slots__ = ("value",)

    def __init__(self, value: Type):
        self.value = value

    def __eq__(self, other) -> bool:
        return isinstance(other, RefType) and self.value == other.value

    def __hash__(self) -> int:
        return hash(("RefType", self.value))


class IncompleteType(Type):
    """A placeholder the type solver fills in; compared by identity."""

    __slots__ = ("kind",)

    def __init__(self, kind: str = "Type"):
        self.kind = kind


def shape_to_str(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


def type_to_str(t) -> str:
    """Relay text for a type: Tensor[(1, 3), float32], (T1, T2), fn (T) -> T, ..."""
    if isinstance(t, TensorType):
        if t.shape == ():
            return t.dtype
        return f"Tensor[{shape_to_str(t.shape)}, {t.dtype}]"
    if isinstance(t, TupleType):
        inner = ", ".join(type_to_str(f) for f in t.fields)
        return f"({inner},)" if len(t.fields) == 1 else f"({inner})"
    if isinstance(t, FuncType):
        params = ""
        if t.type_params:
            params = "[" + ", ".join(type_to_str(p) for p in t.type_params) + "]"
        args = ", ".join(type_to_str(a) for a in t.arg_types)
        return f"fn {params}({args}) -> {type_to_str(t.ret_type)}"
    if isinstance(t, (TypeVar, GlobalTypeVar)):
        return t.name_hint
    if isinstance(t, TypeCall):
        return f"{t.func.name_hint}[" + ", ".join(type_to_str(a) for a in t.args) + "]"
    if isinstance(t, RefType):
        return f"ref({type_to_str(t.value)})"
    if isinstance(t, IncompleteType):
        return "?"
    if t is None:
        return "None"
    return repr(t)
