"""The unifier behind InferType: IncompleteType holes bound by union-find, structural
unification of Relay types (Any dims are compatible with any dim; a size variable unifies with
itself, an equal expression, or a constant it is then bound to, as TVM's UnifyDim), substitution
of type variables, and the "unable to unify ... in particular ..." error text.

TypeVars are rigid: they unify only with themselves. A polymorphic FuncType met where a
monomorphic one is expected (a polymorphic function passed as a value) is instantiated first.

Every walk over a type uses an explicit stack (unification runs its per-field steps as
generators on one), so types nested 10,000 deep are fine; resolve keeps sub-types that need no
change, and takes a memo so that resolving many types that share parts costs their total size.
"""
from types import GeneratorType

from ..errors import TypeInferenceError
from ..ir.dims import dim_to_str, is_static
from ..ir.shape_math import dims_equal, substitute_shape
from ..ir.types import (Any, FuncType, GlobalTypeVar, IncompleteType, RefType, TensorType,
                        TupleType, TypeCall, TypeVar, is_any, type_to_str)
from ..tir.expr import Var


class UnifyError(TypeInferenceError):
    """Two types do not unify; `lhs`, `rhs` are the (resolved) types, `detail` the first conflict."""

    def __init__(self, lhs, rhs, detail: str, context: str = ""):
        self.lhs, self.rhs, self.detail, self.context = lhs, rhs, detail, context
        msg = f"unable to unify: `{_short(lhs)}` and `{_short(rhs)}`; in particular {detail}"
        super().__init__(msg + (f"\n  {context}" if context else ""))


def _short(t, limit: int = 240) -> str:
    """type_to_str(t), cut in the middle when longer than `limit` (deeply nested types)."""
    text = type_to_str(t)
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} ... {text[-half:]}"


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
        self._dims = {}      # size variable -> the constant dim unification bound it to

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

    def resolve(self, t, memo: dict = None):
        """`t` with every bound hole replaced by its binding (unbound holes stay). Sub-types with
        nothing to replace are kept as they are. `memo` (id -> (type, resolved)) may be shared by
        calls made while no hole is bound in between."""
        if isinstance(t, TensorType):
            return self._bind_dims(t)
        memo = {} if memo is None else memo
        stack = [(t, None)]
        while stack:
            u, rep = stack.pop()
            if rep is None:                       # first visit
                if id(u) in memo:
                    continue
                rep = self.find(u)
                kids = _children(rep)
                if not kids:
                    memo[id(u)] = (u, self._bind_dims(rep) if isinstance(rep, TensorType) else rep)
                    continue
                stack.append((u, rep))
                stack.extend((k, None) for k in kids if id(k) not in memo)
            elif id(u) not in memo:               # children resolved: rebuild
                memo[id(u)] = (u, _rebuild(rep, [memo[id(k)][1] for k in _children(rep)]))
        return memo[id(t)][1]

    def _bind_dims(self, t: TensorType) -> TensorType:
        """`t` with the size variables unification bound to constants replaced by them."""
        if not self._dims or not t.is_dynamic:
            return t
        shape = substitute_shape(t.shape, self._dims)
        return t if all(a is b for a, b in zip(shape, t.shape)) else TensorType(shape, t.dtype)

    def is_complete(self, t, memo: dict = None) -> bool:
        """True when `t` has no unbound hole (so a type relation can be run on it). `memo`
        (id -> (type, complete)) may be shared as for resolve."""
        if isinstance(t, TensorType):
            return True
        return not has_hole(self.resolve(t), memo)

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
            return self._unify(lhs, rhs, ())
        except _Conflict as c:
            raise UnifyError(self.resolve(lhs), self.resolve(rhs), c.detail, context) from None

    def _bind(self, hole, t):
        if any(h is hole for h in _holes(self.resolve(t))):
            raise _Conflict(f"`{type_to_str(self.resolve(t))}` contains the type being solved for "
                            f"(an infinite type)")
        self._binding[hole] = t
        return t

    def _unify(self, a, b, where):
        """Unify on an explicit stack: a step returns a type, or a generator that yields the
        (x, y, where) pairs it needs unified and returns the combined type. `where` is the path
        to the current pair, a linked list of labels rendered only for an error."""
        stack = []
        out = self._unify_step(a, b, where)
        while True:
            if isinstance(out, GeneratorType):
                stack.append(out)
                send = None
            elif not stack:
                return out
            else:
                send = out
            try:
                x, y, w = stack[-1].send(send)
            except StopIteration as stop:
                stack.pop()
                out = stop.value
                continue
            out = self._unify_step(x, y, w)

    def _unify_step(self, a, b, where):
        if isinstance(a, TensorType) and isinstance(b, TensorType):
            return self._unify_tensor(a, b, where)
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
        w = _where_text(where)
        if type(a) is not type(b):
            raise _Conflict(f"{w}{_kind_name(a)} does not match {_kind_name(b)}")
        if isinstance(a, TensorType):
            return self._unify_tensor(a, b, where)
        if isinstance(a, TupleType):
            if len(a.fields) != len(b.fields):
                raise _Conflict(f"{w}a tuple of {len(a.fields)} fields does not match a tuple of "
                                f"{len(b.fields)} fields")
            return _unify_tuple(a, b, where)
        if isinstance(a, FuncType):
            return self._unify_func(a, b, where)
        if isinstance(a, TypeCall):
            if a.func is not b.func:
                raise _Conflict(f"{w}{a.func.name_hint} does not match {b.func.name_hint}")
            if len(a.args) != len(b.args):
                raise _Conflict(f"{w}{a.func.name_hint} applied to {len(a.args)} vs "
                                f"{len(b.args)} type arguments")
            return _unify_type_call(a, b, where)
        if isinstance(a, RefType):
            return _unify_ref(a, b, where)
        if isinstance(a, (TypeVar, GlobalTypeVar)):
            raise _Conflict(f"{w}type variable {a.name_hint} does not match {b.name_hint}")
        raise _Conflict(f"{w}{type_to_str(a)} does not match {type_to_str(b)}")

    def _unify_func(self, a: FuncType, b: FuncType, where):
        w = _where_text(where)
        if len(a.arg_types) != len(b.arg_types):
            raise _Conflict(f"{w}a function of {len(a.arg_types)} argument(s) does not match "
                            f"one of {len(b.arg_types)}")
        if len(a.type_params) != len(b.type_params):
            raise _Conflict(f"{w}a function with {len(a.type_params)} type parameter(s) does not "
                            f"match one with {len(b.type_params)}")
        if a.type_params:   # alpha-rename b's type params to a's
            mapping = dict(zip(b.type_params, a.type_params))
            b = FuncType([substitute(t, mapping) for t in b.arg_types],
                         substitute(b.ret_type, mapping), a.type_params)
        return _unify_func_parts(a, b, where)

    def _unify_tensor(self, a: TensorType, b: TensorType, where) -> TensorType:
        if a is b or a == b:
            return a
        if a.dtype != b.dtype:
            raise _Conflict(f"{_where_text(where)}dtype {a.dtype} does not match {b.dtype}")
        if len(a.shape) != len(b.shape):
            raise _Conflict(f"{_where_text(where)}rank {len(a.shape)} does not match rank {len(b.shape)}")
        dims = []
        for i, (x, y) in enumerate(zip(a.shape, b.shape)):
            d = self._unify_dim(x, y)
            if d is None:
                raise _Conflict(f"{_where_text(where)}dimension {i} conflicts: {dim_to_str(x)} does "
                                f"not match {dim_to_str(y)}")
            dims.append(d)
        return a if all(d is x for d, x in zip(dims, a.shape)) else TensorType(dims, a.dtype)

    def _unify_dim(self, x, y):
        """TVM's UnifyDim: equal dims unify; Any with anything gives Any; a size variable meeting
        a constant is bound to it (for the rest of this solve); anything else is a conflict."""
        x, y = self._dims.get(x, x), self._dims.get(y, y)
        if is_any(x) or is_any(y):
            return Any()   # a dynamic dim is compatible with anything (as in TVM)
        if dims_equal(x, y):
            return x
        if isinstance(x, Var) and is_static(y):
            self._dims[x] = y
            return y
        if is_static(x) and isinstance(y, Var):
            self._dims[y] = x
            return x
        return None


def _where_text(where) -> str:
    """The path (label, parent) linked list as text: "field 0: argument 1: " (outermost first)."""
    labels = []
    while where:
        where, label = where
        labels.append(label)
    labels.reverse()
    if len(labels) > 8:   # a deeply nested conflict: the outermost and innermost steps
        labels[3:-3] = [f"... ({len(labels) - 6} more levels) ... "]
    return "".join(labels)


def _unify_tuple(a: TupleType, b: TupleType, where):
    fields = []
    for i, (x, y) in enumerate(zip(a.fields, b.fields)):
        fields.append((yield x, y, (where, f"field {i}: ")))
    return TupleType(fields)


def _unify_type_call(a: TypeCall, b: TypeCall, where):
    args = []
    for i, (x, y) in enumerate(zip(a.args, b.args)):
        args.append((yield x, y, (where, f"type argument {i}: ")))
    return TypeCall(a.func, args)


def _unify_ref(a: RefType, b: RefType, where):
    return RefType((yield a.value, b.value, (where, "referenced value: ")))


def _unify_func_parts(a: FuncType, b: FuncType, where):
    args = []
    for i, (x, y) in enumerate(zip(a.arg_types, b.arg_types)):
        args.append((yield x, y, (where, f"argument {i}: ")))
    ret = yield a.ret_type, b.ret_type, (where, "return type: ")
    return FuncType(args, ret, a.type_params)


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
    """Unbound holes in an already-resolved type, left to right, each shared sub-type once."""
    stack, seen = [t], set()
    while stack:
        u = stack.pop()
        if id(u) in seen:
            continue
        seen.add(id(u))
        if isinstance(u, IncompleteType):
            yield u
        else:
            stack.extend(reversed(_children(u)))


def _rebuild(t, kids: list):
    """`t` with its sub-types (in _children order) replaced by `kids`; `t` itself if unchanged."""
    if all(k is c for k, c in zip(kids, _children(t))):
        return t
    if isinstance(t, TupleType):
        return TupleType(kids)
    if isinstance(t, FuncType):
        return FuncType(kids[:-1], kids[-1], t.type_params, t.type_constraints)
    if isinstance(t, TypeCall):
        return TypeCall(t.func, kids)
    return RefType(kids[0])


def has_hole(t, memo: dict = None) -> bool:
    """Whether the resolved type `t` contains an IncompleteType (explicit stack, memoized)."""
    memo = {} if memo is None else memo
    stack = [(t, False)]
    while stack:
        u, expanded = stack.pop()
        if id(u) in memo:
            continue
        kids = _children(u)
        if not expanded and kids:
            stack.append((u, True))
            stack.extend((k, False) for k in kids if id(k) not in memo)
            continue
        memo[id(u)] = (u, isinstance(u, IncompleteType) or any(memo[id(k)][1] for k in kids))
    return memo[id(t)][1]


def substitute(t, mapping: dict):
    """`t` with the TypeVars that are keys of `mapping` replaced by their values (a FuncType's
    own type params shadow the mapping inside it)."""
    if not mapping or isinstance(t, TensorType):
        return t
    results, stack = [], [(t, mapping, False)]
    while stack:
        u, m, expanded = stack.pop()
        kids = _children(u)
        if expanded:
            n = len(kids)
            new = results[len(results) - n:]
            del results[len(results) - n:]
            results.append(_rebuild(u, new))
        elif isinstance(u, TypeVar):
            results.append(m.get(u, u))
        elif not m or not kids:
            results.append(u)
        else:
            if isinstance(u, FuncType) and u.type_params:
                m = {k: v for k, v in m.items() if k not in u.type_params}
            stack.append((u, m, True))
            stack.extend((k, m, False) for k in reversed(kids))
    return results[0]
