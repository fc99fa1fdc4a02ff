"""check_kind (tvm.relay.analysis.check_kind): the kind of a type, checking that every part of
it has the kind its position needs.

Kinds (tvm.ir.TypeKind): tensors, tuples, functions, references and ADT applications are of
kind Type; a type variable has the kind it was declared with; an ADT's name (GlobalTypeVar) is
an AdtHandle. A tuple field, function argument or result, reference cell or ADT argument must
be of kind Type, and an ADT application must apply an AdtHandle to as many arguments as the ADT
declares (when `mod` holds its definition). A violation is a KindCheckError naming the part.
"""
from enum import IntEnum

from ..errors import RelayError
from ..ir.types import (FuncType, GlobalTypeVar, IncompleteType, RefType, TensorType, TupleType,
                        Type, TypeCall, TypeVar, type_to_str)


class TypeKind(IntEnum):
    """The kinds of Relay types (tvm.ir.TypeKind)."""

    Type = 0
    ShapeVar = 1
    BaseType = 2
    Constraint = 4
    AdtHandle = 5
    TypeData = 6


class KindCheckError(RelayError):
    """A type whose parts do not have the kinds their positions need."""


def _declared_kind(t) -> TypeKind:
    kind = t.kind
    if isinstance(kind, TypeKind):
        return kind
    try:
        return TypeKind[str(kind)]
    except KeyError:
        raise KindCheckError(f"type variable {getattr(t, 'name_hint', '?')} has unknown kind {kind!r}; use one of "
                             f"{[k.name for k in TypeKind]}") from None


def _expect_type_kind(child, what: str, whole, mod) -> None:
    kind = check_kind(child, mod)
    if kind != TypeKind.Type:
        raise KindCheckError(f"{what} of {type_to_str(whole)} must be of kind Type, but "
                             f"{type_to_str(child)} is of kind {kind.name}")


def check_kind(t, mod=None) -> TypeKind:
    """The kind of a type (tvm.relay.analysis.check_kind); KindCheckError for an ill-kinded
    type (e.g. a shape variable where a type is expected).

    Parameters
    ----------
    t : Type
        The type to check.
    mod : IRModule, optional
        The module defining the ADTs `t` refers to. Defaults to None.

    Returns
    -------
    kind : TypeKind
        The kind of `t`.
    """
    if isinstance(t, TensorType):
        return TypeKind.Type
    if isinstance(t, (TypeVar, GlobalTypeVar, IncompleteType)):
        return _declared_kind(t)
    if isinstance(t, TupleType):
        for i, field in enumerate(t.fields):
            _expect_type_kind(field, f"field {i}", t, mod)
        return TypeKind.Type
    if isinstance(t, FuncType):
        for i, arg in enumerate(t.arg_types):
            _expect_type_kind(arg, f"argument {i}", t, mod)
        _expect_type_kind(t.ret_type, "the result", t, mod)
        return TypeKind.Type
    if isinstance(t, RefType):
        _expect_type_kind(t.value, "the cell", t, mod)
        return TypeKind.Type
    if isinstance(t, TypeCall):
        head = check_kind(t.func, mod)
        if head != TypeKind.AdtHandle:
            raise KindCheckError(f"{type_to_str(t)} applies {type_to_str(t.func)}, of kind "
                                 f"{head.name}; only an ADT (kind AdtHandle) can be applied")
        for i, arg in enumerate(t.args):
            _expect_type_kind(arg, f"argument {i}", t, mod)
        if mod is not None and t.func in mod.type_definitions:
            want = len(mod.type_definitions[t.func].type_vars)
            if want != len(t.args):
                raise KindCheckError(f"{type_to_str(t)} gives {len(t.args)} type argument(s) but "
                                     f"{t.func.name_hint} takes {want}")
        return TypeKind.Type
    if isinstance(t, Type):
        raise KindCheckError(f"check_kind: unsupported type {type(t).__name__}")
    raise KindCheckError(f"check_kind expects a relay type, got {type(t).__name__}")


__all__ = ["check_kind", "TypeKind", "KindCheckError"]
