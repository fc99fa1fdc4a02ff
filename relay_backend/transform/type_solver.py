"""The unifier behind InferType: IncompleteType holes bound by union-find, structural
unification of Relay types (Any dims are compatible with any dim), substitution of type
variables, and the "unable to unify ... in particular ..." error text.

TypeVars are rigid: they unify only with themselves. A polymorphic FuncType met where a
monomorphic one is expected (a polymorphic function passed as a value) is instantiated first.
"""
from ..errors import TypeInferenceError
from ..ir.types import (Any, FuncType, GlobalTypeVar, IncompleteType, RefType, TensorType,
                        TupleType, TypeCall, TypeVar, is_any, type_to_str)


class UnifyError(TypeInferenceError):
    """Two types do not unify; `lhs`, `rhs` are the (resolved) types, `detail` the first conflict."""

    def __init__(self, lhs, rhs, detail: str, context: str = ""):
        self.lhs, self.rhs, self.detail, self.context = lhs, rhs, detail, context
        msg = f"unable to unify: `{type_to_str(lhs)}` and `{type_to_str(rhs)}`; in particular {detail}"
        super().__init__(msg + (f"\n  {context}" if context else ""))


class _Conflict(Exception):
    """Internal: the innermost mismatch found while unifying (becomes a UnifyError)."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


def _kind_name(t) -> str:
    return {TensorType: "a tensor type", TupleType: "a tuple type", FuncType: "a function type",
            TypeCall: "an ADT type", RefType: "a reference type", TypeVar: "a type variable",
            GlobalTypeVar: "an ADT name"}.get(type(t), type(t).__name__)


class TypeSolver:
    """Holes (IncompleteType) and their bindings; unify/resolve/instantiate over them."""

    def __init__(self):
        self._binding = {}   # IncompleteType -> Type

    def fresh(self) -> IncompleteType:
        return IncompleteType()

    # --- union-find ---------------------------------------------------------------------------
    def find(self, t):
        """Follow hole bindings to the representative (a non-hole type or an unbound hole)."""
        binding = self._binding
        if not isinstance(t, IncompleteType) or t not in binding:
            return t
        path = []
        while isinstance(t, IncompleteType) and t in binding:
            path.append(t)
            t = binding[t]
        for h in path[:-1]:   # path compression
            binding[h] = t
        return t

    def resolve(self, t):
        """`t` with every bound hole replaced by its binding (unbound holes stay)."""
        if isinstance(t, TensorType):
            return t
        t = self.find(t)
        if isinstance(t, (TensorType, IncompleteType, TypeVar, GlobalTypeVar)) or t is None:
            return t
        if isinstance(t, TupleType):
            return TupleType([self.resolve(f) for f in t.fields])
        if isinstance(t, FuncType):
            return FuncType([self.resolve(a) for a in t.arg_types], self.resolve(t.ret_type),
                            t.type_params, t.type_constraints)
        if isinstance(t, TypeCall):
            return TypeCall(t.func, [self.resolve(a) for a in t.args])
        if isinstance(t, RefType):
            return RefType(self.resolve(t.value))
        return t

    def is_complete(self, t) -> bool:
        """True when `t` has no unbound hole (so a type relation can be run on it)."""
        if isinstance(t, TensorType):
            return True
        t = self.find(t)
        if isinstance(t, IncompleteType):
            return False
        return all(self.is_complete(c) for c in _children(t))

    # --- instantiation ------------------------------------------------------------------------
    def instantiate(self, ft: FuncType, type_args=()) -> FuncType:
        """A monomorphic copy of `ft`: its type params replaced by `type_args` or fresh holes."""
        if not ft.type_params:
            return ft
        if type_args and len(type_args) == len(ft.type_params):
            mapping = dict(zip(ft.type_params, type_args))
        else:
            mapping = {tp: self.fresh() for tp in ft.type_params}
        return FuncType([substitute(a, mapping) for a in ft.arg_types],
                        substitute(ft.ret_type, mapping))

    # --- unification --------------------------------------------------------------------------
    def unify(self, lhs, rhs, context: str = ""):
        """The unified type of lhs and rhs, binding holes; UnifyError naming the first conflict."""
        try:
            return self._unify(lhs, rhs, "")
        except _Conflict as c:
            raise UnifyError(self.resolve(lhs), self.resolve(rhs), c.detail, context) from None

    def _bind(self, hole, t):
        if any(h is hole for h in _holes(self.resolve(t))):
            raise _Conflict(f"`{type_to_str(self.resolve(t))}` contains the type being solved for "
                            f"(an infinite type)")
        self._binding[hole] = t
        return t

    def _unify(self, a, b, where: str):
        if isinstance(a, TensorType) and isinstance(b, TensorType):
            return _unify_tensor(a, b, where)
        a, b = self.find(a), self.find(b)
        if a is b:
            return a
        if isinstance(a, IncompleteType):
            return self._bind(a, b)
        if isinstance(b, IncompleteType):
            return self._bind(b, a)
        if isinstance(a, FuncType) and isinstance(b, FuncType) and \
                bool(a.type_params) != bool(b.type_params):
            a, b = self.instantiate(a), self.instantiate(b)
        if type(a) is not type(b):
            raise _Conflict(f"{where}{_kind_name(a)} does not match {_kind_name(b)}")
        if isinstance(a, TensorType):
            return _unify_tensor(a, b, where)
        if isinstance(a, TupleType):
            if len(a.fields) != len(b.fields):
                raise _Conflict(f"{where}a tuple of {len(a.fields)} fields does not match a tuple of "
                                f"{len(b.fields)} fields")
            return TupleType([self._unify(x, y, f"{where}field {i}: ")
                              for i, (x, y) in enumerate(zip(a.fields, b.fields))])
        if isinstance(a, FuncType):
            return self._unify_func(a, b, where)
        if isinstance(a, TypeCall):
            if a.func is not b.func:
                raise _Conflict(f"{where}{a.func.name_hint} does not match {b.func.name_hint}")
            if len(a.args) != len(b.args):
                raise _Conflict(f"{where}{a.func.name_hint} applied to {len(a.args)} vs "
                                f"{len(b.args)} type arguments")
            return TypeCall(a.func, [self._unify(x, y, f"{where}type argument {i}: ")
                                     for i, (x, y) in enumerate(zip(a.args, b.args))])
        if isinstance(a, RefType):
            return RefType(self._unify(a.value, b.value, f"{where}referenced value: "))
        if isinstance(a, (TypeVar, GlobalTypeVar)):
            raise _Conflict(f"{where}type variable {a.name_hint} does not match {b.name_hint}")
        raise _Conflict(f"{where}{type_to_str(a)} does not match {type_to_str(b)}")

    def _unify_func(self, a: FuncType, b: FuncType, where: str) -> FuncType:
        if len(a.arg_types) != len(b.arg_types):
            raise _Conflict(f"{where}a function of {len(a.arg_types)} argument(s) does not match "
                            f"one of {len(b.arg_types)}")
        if len(a.type_params) != len(b.type_params):
            raise _Conflict(f"{where}a function with {len(a.type_params)} type parameter(s) does not "
                            f"match one with {len(b.type_params)}")
        if a.type_params:   # alpha-rename b's type params to a's
            mapping = dict(zip(b.type_params, a.type_params))
            b = FuncType([substitute(t, mapping) for t in b.arg_types],
                         substitute(b.ret_type, mapping), a.type_params)
        args = [self._unify(x, y, f"{where}argument {i}: ")
                for i, (x, y) in enumerate(zip(a.arg_types, b.arg_types))]
        ret = self._unify(a.ret_type, b.ret_type, f"{where}return type: ")
        return FuncType(args, ret, a.type_params)


def _unify_tensor(a: TensorType, b: TensorType, where: str) -> TensorType:
    if a is b:
        return a
    if a.dtype != b.dtype:
        raise _Conflict(f"{where}dtype {a.dtype} does not match {b.dtype}")
    if len(a.shape) != len(b.shape):
        raise _Conflict(f"{where}rank {len(a.shape)} does not match rank {len(b.shape)}")
    dims = []
    for i, (x, y) in enumerate(zip(a.shape, b.shape)):
        if is_any(x) or is_any(y):
            dims.append(Any())   # a dynamic dim is compatible with anything (as in TVM)
        elif x != y:
            raise _Conflict(f"{where}dimension {i} conflicts: {x} does not match {y}")
        else:
            dims.append(x)
    return a if tuple(dims) == a.shape else TensorType(dims, a.dtype)


def _children(t) -> tuple:
    if isinstance(t, TupleType):
        return t.fields
    if isinstance(t, FuncType):
        return (*t.arg_types, t.ret_type)
    if isinstance(t, TypeCall):
        return t.args
    if isinstance(t, RefType):
        return (t.value,)
    return ()


def _holes(t):
    """Unbound holes in an already-resolved type, left to right."""
    stack = [t]
    while stack:
        u = stack.pop()
        if isinstance(u, IncompleteType):
            yield u
        else:
            stack.extend(reversed(_children(u)))


def substitute(t, mapping: dict):
    """`t` with the TypeVars that are keys of `mapping` replaced by their values."""
    if not mapping or isinstance(t, TensorType):
        return t
    if isinstance(t, TypeVar):
        return mapping.get(t, t)
    if isinstance(t, TupleType):
        return TupleType([substitute(f, mapping) for f in t.fields])
    if isinstance(t, FuncType):
        inner = {k: v for k, v in mapping.items() if k not in t.type_params}
        return FuncType([substitute(a, inner) for a in t.arg_types], substitute(t.ret_type, inner),
                        t.type_params, t.type_constraints)
    if isinstance(t, TypeCall):
        return TypeCall(t.func, [substitute(a, mapping) for a in t.args])
    if isinstance(t, RefType):
        return RefType(substitute(t.value, mapping))
    return t
