"""Structural equality and hashing of Relay IR (expressions, types, modules, attrs, patterns).

Two programs are structurally equal when they have the same shape of nodes, the same ops, attrs,
dtypes, shapes and constant bytes, up to renaming of *bound* variables: vars bound by Function
params, Let and Match patterns (and TypeVars bound by type params) are matched by position, so
alpha-renamed functions are equal. Free vars compare by identity unless map_free_vars=True.
Shared sub-expressions compare as trees (a DAG equals its unshared copy).

The hash is consistent with equality and stable across processes (it keys the on-disk kernel
cache), so it never uses id() or Python's salted str hash. Both walks use explicit stacks: a
10,000-op chain costs constant Python stack depth.
"""
import dataclasses
import hashlib

import numpy as np

from ..docstrings import shared_parameters
from ..runtime.ndarray import NDArray
from .adt import (Clause, Constructor, Match, PatternConstructor, PatternTuple,
                  PatternVar, PatternWildcard, TypeData, pattern_vars)
from .attrs import Attrs
from .expr import (Call, Constant, Expr, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                   RefWrite, Tuple, TupleGetItem, Var)
from .module import IRModule
from .dims import dim_key, dim_to_str, match_dims
from .types import (Any, FuncType, GlobalTypeVar, IncompleteType, RefType, TensorType, TupleType,
                    Type, TypeCall, TypeVar)

# Node kind by class, most specific first (OpDef is an Op, so kinds come from isinstance).
_KINDS = (
    (Var, "Var"), (GlobalVar, "GlobalVar"), (Constant, "Constant"), (Constructor, "Constructor"),
    (Op, "Op"), (Call, "Call"), (Function, "Function"), (Tuple, "Tuple"),
    (TupleGetItem, "TupleGetItem"), (Let, "Let"), (If, "If"), (RefCreate, "RefCreate"),
    (RefRead, "RefRead"), (RefWrite, "RefWrite"), (Match, "Match"),
    (TensorType, "TensorType"), (TupleType, "TupleType"), (FuncType, "FuncType"),
    (TypeVar, "TypeVar"), (GlobalTypeVar, "GlobalTypeVar"), (TypeCall, "TypeCall"),
    (RefType, "RefType"), (IncompleteType, "IncompleteType"),
    (PatternWildcard, "PatternWildcard"), (PatternVar, "PatternVar"),
    (PatternConstructor, "PatternConstructor"), (PatternTuple, "PatternTuple"),
    (Clause, "Clause"), (TypeData, "TypeData"), (IRModule, "IRModule"), (Attrs, "Attrs"),
)


def _kind(node) -> str:
    if node is None:
        return "None"
    for klass, name in _KINDS:
        if isinstance(node, klass):
            return name
    return "value"


# ------------------------------------------------------------------------------------------------
# Attribute values (op attrs, function attrs): shallow data compared by value.
# ------------------------------------------------------------------------------------------------
def _norm_number(v):
    """Python/numpy numbers normalized so that equal values (1, 1.0, True) share one key."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _array_key(arr) -> tuple:
    arr = np.ascontiguousarray(arr.view_numpy() if isinstance(arr, NDArray) else arr)
    return ("array", str(arr.dtype), tuple(arr.shape), hashlib.blake2b(arr.tobytes(), digest_size=16).hexdigest())


def _attr_key(value, map_free_vars: bool):
    """A deterministic, hashable key of an attribute value; equal values get equal keys."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Attrs):
        return ("attrs", type(value).__name__,
                tuple((f.name, _attr_key(getattr(value, f.name), map_free_vars)) for f in dataclasses.fields(value)))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), _attr_key(v, map_free_vars)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_attr_key(v, map_free_vars) for v in value))
    if isinstance(value, (NDArray, np.ndarray)):
        return _array_key(value)
    if isinstance(value, (Expr, Type)):
        return ("node", structural_hash(value, map_free_vars))
    if isinstance(value, Any):
        return ("Any",)
    if isinstance(value, (int, float, bool, np.generic)):
        v = _norm_number(value)
        return ("nan",) if isinstance(v, float) and v != v else v
    return (type(value).__name__, repr(value))


def _attr_equal(a, b, map_free_vars: bool) -> bool:
    if a is b:
        return True
    if isinstance(a, (Expr, Type)) or isinstance(b, (Expr, Type)):
        return structural_equal(a, b, map_free_vars)
    if isinstance(a, Attrs) or isinstance(b, Attrs):
        if type(a) is not type(b):
            return False
        return all(_attr_equal(getattr(a, f.name), getattr(b, f.name), map_free_vars)
                   for f in dataclasses.fields(a))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_attr_equal(a[k], b[k], map_free_vars) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_attr_equal(x, y, map_free_vars) for x, y in zip(a, b))
    return _attr_key(a, map_free_vars) == _attr_key(b, map_free_vars)


def _diff_attr_fields(a, b) -> str:
    """Names the first differing attribute field, for mismatch messages."""
    if isinstance(a, Attrs) and type(a) is type(b):
        for f in dataclasses.fields(a):
            if not _attr_equal(getattr(a, f.name), getattr(b, f.name), False):
                return f"attribute {f.name}: {getattr(a, f.name)!r} vs {getattr(b, f.name)!r}"
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b or not _attr_equal(a[k], b[k], False):
                return f"attribute {k}: {a.get(k, '<missing>')!r} vs {b.get(k, '<missing>')!r}"
    return f"attrs {a!r} vs {b!r}"


# ------------------------------------------------------------------------------------------------
# Equality
# ------------------------------------------------------------------------------------------------
class _Mismatch:
    """Where two programs first differ: a path from the roots, the two nodes, and why."""

    def __init__(self, path, lhs, rhs, reason):
        self.path, self.lhs, self.rhs, self.reason = path, lhs, rhs, reason

    def path_str(self) -> str:
        steps, node = [], self.path
        while node is not None:
            node, step = node
            steps.append(step)
        return "".join(reversed(steps)) or "<root>"


class _EqualChecker:
    """Explicit-stack comparison with positional maps for bound vars (lhs->rhs and back)."""

    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.lmap, self.rmap = {}, {}
        self.done = set()

    def bind(self, lhs, rhs) -> None:
        """A binder (param, let var, pattern var, type param) matches lhs to rhs from now on."""
        self.lmap[lhs] = rhs
        self.rmap[rhs] = lhs

    def run(self, lhs, rhs):
        # `defining`: inside a binder's type annotation (a Function param, a Let or pattern var),
        # where size variables met for the first time are bound, as TVM's DefEqual maps them
        stack = [(lhs, rhs, None, self.map_free_vars)]
        while stack:
            l, r, path, defining = stack.pop()
            key = (id(l), id(r))
            if key in self.done:
                continue
            self.done.add(key)
            kids = []
            self.defining = defining
            reason = self.compare(l, r, kids)
            if reason is not None:
                return _Mismatch(path, l, r, reason)
            for kid in reversed(kids):
                cl, cr, step = kid[:3]
                stack.append((cl, cr, (path, step), kid[3] if len(kid) > 3 else defining))
        return None

    def _size_vars(self, l, r) -> bool:
        """Whether size variables l and r correspond: mapped before, bound now (first met in a
        binder's annotation, or map_free_vars), or the same object."""
        if l in self.lmap or r in self.rmap:
            return self.lmap.get(l) is r
        if self.defining:
            self.bind(l, r)
            return True
        return l is r

    def _tensor_types(self, l, r):
        if l.dtype != r.dtype or len(l.shape) != len(r.shape):
            return f"tensor types {l} vs {r}"
        if l._key == r._key and not (self.lmap or self.rmap):
            return None
        for x, y in zip(l.shape, r.shape):
            if not match_dims(x, y, self._size_vars):
                return f"tensor types {l} vs {r} (dimension {dim_to_str(x)} vs {dim_to_str(y)})"
        return None

    def _var_like(self, l, r, what: str):
        if l in self.lmap or r in self.rmap:
            if self.lmap.get(l) is r:
                return None
            return f"bound {what}s do not correspond (%{l.name_hint} vs %{r.name_hint})"
        if self.map_free_vars:  # bind even identical vars, so the mapping stays one-to-one
            self.bind(l, r)
            return None
        if l is r:
            return None
        return (f"free {what}s {l.name_hint!r} and {r.name_hint!r} are different objects "
                "(pass map_free_vars=True to match free variables by position)")

    def compare(self, l, r, kids):  # noqa: C901  (one branch per node kind, flat on purpose)
        """Check l and r locally; append child pairs to kids. Returns a reason on mismatch."""
        kl, kr = _kind(l), _kind(r)
        if kl != kr:
            return f"different node kinds: {kl} vs {kr}"
        if kl == "None":
            return None
        if kl == "Var":
            reason = self._var_like(l, r, "variable")
            if reason is None and self.map_free_vars and l is not r and self.lmap.get(l) is r:
                kids.append((l.type_annotation, r.type_annotation, ".type_annotation"))
            return reason
        if kl == "GlobalVar":
            return None if l.name_hint == r.name_hint else f"global vars @{l.name_hint} vs @{r.name_hint}"
        if kl == "Op":
            return None if l.name == r.name else f"ops {l.name} vs {r.name}"
        if kl == "Constructor":
            same = (l is r or (l.name_hint == r.name_hint and l.tag == r.tag
                               and l.belong_to.name_hint == r.belong_to.name_hint))
            return None if same else f"constructors {l.name_hint} vs {r.name_hint}"
        if kl == "Constant":
            a, b = l.data.view_numpy(), r.data.view_numpy()
            if a.dtype != b.dtype or a.shape != b.shape:
                return f"constants of {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
            if np.ascontiguousarray(a).tobytes() != np.ascontiguousarray(b).tobytes():
                return "constant values differ"
            return None
        if kl == "Call":
            if len(l.args) != len(r.args):
                return f"calls with {len(l.args)} vs {len(r.args)} arguments"
            if not _attr_equal(l.attrs, r.attrs, self.map_free_vars):
                return _diff_attr_fields(l.attrs, r.attrs)
            if len(l.type_args) != len(r.type_args):
                return "different numbers of type arguments"
            kids.append((l.op, r.op, ".op"))
            kids.extend((a, b, f".args[{i}]") for i, (a, b) in enumerate(zip(l.args, r.args)))
            kids.extend((a, b, f".type_args[{i}]") for i, (a, b) in enumerate(zip(l.type_args, r.type_args)))
            return None
        if kl == "Function":
            if len(l.params) != len(r.params) or len(l.type_params) != len(r.type_params):
                return f"functions with {len(l.params)} vs {len(r.params)} params"
            if not _attr_equal(dict(l.attrs), dict(r.attrs), self.map_free_vars):
                return _diff_attr_fields(dict(l.attrs), dict(r.attrs))
            for a, b in zip(l.type_params, r.type_params):
                self.bind(a, b)
            for i, (a, b) in enumerate(zip(l.params, r.params)):
                self.bind(a, b)
                kids.append((a.type_annotation, b.type_annotation, f".params[{i}].type_annotation", True))
            kids.append((l.ret_type, r.ret_type, ".ret_type"))
            kids.append((l.body, r.body, ".body"))
            return None
        if kl == "Let":
            self.bind(l.var, r.var)
            kids.extend(((l.var.type_annotation, r.var.type_annotation, ".var.type_annotation", True),
                         (l.value, r.value, ".value"), (l.body, r.body, ".body")))
            return None
        if kl in ("Tuple", "TupleType"):
            if len(l.fields) != len(r.fields):
                return f"tuples of {len(l.fields)} vs {len(r.fields)} fields"
            kids.extend((a, b, f".fields[{i}]") for i, (a, b) in enumerate(zip(l.fields, r.fields)))
            return None
        if kl == "TupleGetItem":
            if l.index != r.index:
                return f"tuple indices {l.index} vs {r.index}"
            kids.append((l.tuple_value, r.tuple_value, ".tuple_value"))
            return None
        if kl == "If":
            kids.extend(((l.cond, r.cond, ".cond"), (l.true_branch, r.true_branch, ".true_branch"),
                         (l.false_branch, r.false_branch, ".false_branch")))
            return None
        if kl == "RefCreate":
            kids.append((l.value, r.value, ".value"))
            return None
        if kl == "RefRead":
            kids.append((l.ref, r.ref, ".ref"))
            return None
        if kl == "RefWrite":
            kids.extend(((l.ref, r.ref, ".ref"), (l.value, r.value, ".value")))
            return None
        if kl == "Match":
            if len(l.clauses) != len(r.clauses) or l.complete != r.complete:
                return (f"matches with {len(l.clauses)} vs {len(r.clauses)} clauses "
                        f"(complete {l.complete} vs {r.complete})")
            kids.append((l.data, r.data, ".data"))
            kids.extend((a, b, f".clauses[{i}]") for i, (a, b) in enumerate(zip(l.clauses, r.clauses)))
            return None
        if kl == "Clause":
            kids.extend(((l.lhs, r.lhs, ".lhs"), (l.rhs, r.rhs, ".rhs")))
            return None
        if kl == "PatternWildcard":
            return None
        if kl == "PatternVar":
            self.bind(l.var, r.var)
            kids.append((l.var.type_annotation, r.var.type_annotation, ".var.type_annotation", True))
            return None
        if kl in ("PatternConstructor", "PatternTuple"):
            if len(l.patterns) != len(r.patterns):
                return f"patterns with {len(l.patterns)} vs {len(r.patterns)} fields"
            if kl == "PatternConstructor":
                kids.append((l.constructor, r.constructor, ".constructor"))
            kids.extend((a, b, f".patterns[{i}]") for i, (a, b) in enumerate(zip(l.patterns, r.patterns)))
            return None
        return self.compare_other(kl, l, r, kids)

    def compare_other(self, kl, l, r, kids):
        """Types, type definitions, modules, attrs and plain values."""
        if kl == "TensorType":
            return self._tensor_types(l, r)
        if kl == "FuncType":
            if len(l.arg_types) != len(r.arg_types) or len(l.type_params) != len(r.type_params):
                return f"function types {l} vs {r}"
            for a, b in zip(l.type_params, r.type_params):
                self.bind(a, b)
            kids.extend((a, b, f".arg_types[{i}]") for i, (a, b) in enumerate(zip(l.arg_types, r.arg_types)))
            kids.append((l.ret_type, r.ret_type, ".ret_type"))
            return None
        if kl == "TypeVar":
            if l.kind != r.kind:
                return f"type vars of kind {l.kind} vs {r.kind}"
            return self._var_like(l, r, "type variable")
        if kl == "GlobalTypeVar":
            return None if l.name_hint == r.name_hint else f"types {l.name_hint} vs {r.name_hint}"
        if kl == "TypeCall":
            if len(l.args) != len(r.args):
                return f"type calls {l} vs {r}"
            kids.append((l.func, r.func, ".func"))
            kids.extend((a, b, f".args[{i}]") for i, (a, b) in enumerate(zip(l.args, r.args)))
            return None
        if kl == "RefType":
            kids.append((l.value, r.value, ".value"))
            return None
        if kl == "IncompleteType":
            return None if l is r else "different incomplete types"
        if kl == "TypeData":
            if (l.header.name_hint != r.header.name_hint or len(l.type_vars) != len(r.type_vars)
                    or len(l.constructors) != len(r.constructors)):
                return f"type definitions {l.header.name_hint} vs {r.header.name_hint}"
            for a, b in zip(l.type_vars, r.type_vars):
                self.bind(a, b)
            for i, (ca, cb) in enumerate(zip(l.constructors, r.constructors)):
                if ca.name_hint != cb.name_hint or len(ca.inputs) != len(cb.inputs):
                    return f"constructors {ca.name_hint} vs {cb.name_hint}"
                kids.extend((a, b, f".constructors[{i}].inputs[{j}]")
                            for j, (a, b) in enumerate(zip(ca.inputs, cb.inputs)))
            return None
        if kl == "IRModule":
            lf = {gv.name_hint: f for gv, f in l.functions.items()}
            rf = {gv.name_hint: f for gv, f in r.functions.items()}
            if sorted(lf) != sorted(rf):
                return f"modules define functions {sorted(lf)} vs {sorted(rf)}"
            lt = {gv.name_hint: d for gv, d in l.type_definitions.items()}
            rt = {gv.name_hint: d for gv, d in r.type_definitions.items()}
            if sorted(lt) != sorted(rt):
                return f"modules define types {sorted(lt)} vs {sorted(rt)}"
            kids.extend((lt[n], rt[n], f"type {n}") for n in sorted(lt))
            kids.extend((lf[n], rf[n], f"@{n}") for n in sorted(lf))
            return None
        # Attrs and plain values (ints, strings, tuples) compare by value.
        return None if _attr_equal(l, r, self.map_free_vars) else _diff_attr_fields(l, r)


def _find_mismatch(lhs, rhs, map_free_vars: bool):
    return _EqualChecker(map_free_vars).run(lhs, rhs)


# what the two comparisons share (shared_parameters completes their docstrings)
COMPARISON_PARAMETERS = {
    "lhs": ("object", "An expression, type, module or attrs."),
    "rhs": ("object", "The node to compare it with."),
    "map_free_vars": ("bool", "If True, free variables may also correspond by position rather than "
                              "identity (as when comparing two separately built programs)."),
}


@shared_parameters(COMPARISON_PARAMETERS)
def structural_equal(lhs, rhs, map_free_vars: bool = False) -> bool:
    """Whether two IR nodes are equal up to renaming of bound variables (tvm.ir.structural_equal).

    Returns
    -------
    equal : bool
        True when they are equal.
    """
    return _find_mismatch(lhs, rhs, map_free_vars) is None


def _excerpt(node, limit: int = 600) -> str:
    try:
        text = node.astext() if isinstance(node, (Expr, IRModule)) else repr(node)
        if text.startswith("#[version"):
            text = text.split("\n", 1)[-1]
    except Exception as err:  # the printer must never hide the real mismatch
        text = f"<{type(node).__name__}: cannot print ({err})>"
    return text if len(text) <= limit else text[:limit] + " ..."


@shared_parameters(COMPARISON_PARAMETERS)
def assert_structural_equal(lhs, rhs, map_free_vars: bool = False) -> None:
    """Raise AssertionError, showing both programs and the first mismatch, if lhs and rhs differ
    structurally (tvm.ir.assert_structural_equal).
    """
    mismatch = _find_mismatch(lhs, rhs, map_free_vars)
    if mismatch is None:
        return
    raise AssertionError(
        f"structural mismatch at {mismatch.path_str()}: {mismatch.reason}\n"
        f"--- lhs sub-expression:\n{_excerpt(mismatch.lhs)}\n"
        f"--- rhs sub-expression:\n{_excerpt(mismatch.rhs)}\n"
        f"=== lhs:\n{_excerpt(lhs, 4000)}\n"
        f"=== rhs:\n{_excerpt(rhs, 4000)}")


# ------------------------------------------------------------------------------------------------
# Hashing
# ------------------------------------------------------------------------------------------------
_MASK = (1 << 64) - 1


def _digest(payload, size: int = 8) -> int:
    return int.from_bytes(hashlib.blake2b(repr(payload).encode(), digest_size=size).digest(), "little")


def _hash_parts(node, map_free_vars, size_vars: dict):
    """(leaf key, children) of a node for hashing; roles of bound vars are added separately.
    Size variables in tensor types are keyed by the order they are first met (`size_vars`,
    shared by one hash computation), so renaming them keeps the hash, as equality allows."""
    k = _kind(node)
    if k in ("Var", "PatternWildcard", "IncompleteType"):
        return (k,), ((node.type_annotation,) if k == "Var" else ())
    if k in ("GlobalVar", "GlobalTypeVar"):
        return (k, node.name_hint), ()
    if k == "Op":
        return (k, node.name), ()
    if k == "Constructor":
        return (k, node.name_hint, node.tag, node.belong_to.name_hint), ()
    if k == "Constant":
        return (k, _array_key(node.data)), ()
    if k == "Call":
        return ((k, len(node.args), _attr_key(node.attrs, map_free_vars)),
                (node.op, *node.args, *node.type_args))
    if k == "Function":
        params = [p for v in node.params for p in (v, v.type_annotation)]
        return ((k, len(node.params), len(node.type_params), _attr_key(dict(node.attrs), map_free_vars)),
                (*node.type_params, *params, node.ret_type, node.body))
    if k == "Let":
        return (k,), (node.var, node.var.type_annotation, node.value, node.body)
    if k in ("Tuple", "TupleType"):
        return (k, len(node.fields)), node.fields
    if k == "TupleGetItem":
        return (k, node.index), (node.tuple_value,)
    if k == "If":
        return (k,), (node.cond, node.true_branch, node.false_branch)
    if k in ("RefCreate", "RefType"):
        return (k,), (node.value,)
    if k == "RefRead":
        return (k,), (node.ref,)
    if k == "RefWrite":
        return (k,), (node.ref, node.value)
    if k == "Match":
        return (k, len(node.clauses), node.complete), (node.data, *node.clauses)
    if k == "Clause":
        return (k,), (node.lhs, node.rhs)
    if k == "PatternVar":
        return (k,), (node.var, node.var.type_annotation)
    if k == "PatternConstructor":
        return (k, len(node.patterns)), (node.constructor, *node.patterns)
    if k == "PatternTuple":
        return (k, len(node.patterns)), node.patterns
    if k == "TensorType":
        def position(var):
            return size_vars.setdefault(var, (len(size_vars), var.dtype))
        return (k, tuple("?" if isinstance(d, Any) else dim_key(d, position) for d in node.shape),
                node.dtype), ()
    if k == "FuncType":
        return ((k, len(node.arg_types), len(node.type_params)),
                (*node.type_params, *node.arg_types, node.ret_type))
    if k == "TypeVar":
        return (k, node.kind), ()
    if k == "TypeCall":
        return (k, len(node.args)), (node.func, *node.args)
    if k == "TypeData":
        ctors = tuple((c.name_hint, len(c.inputs)) for c in node.constructors)
        return ((k, node.header.name_hint, len(node.type_vars), ctors),
                (*node.type_vars, *(t for c in node.constructors for t in c.inputs)))
    if k == "IRModule":
        funcs = sorted((gv.name_hint, f) for gv, f in node.functions.items())
        types = sorted((gv.name_hint, d) for gv, d in node.type_definitions.items())
        return ((k, tuple(n for n, _ in funcs), tuple(n for n, _ in types)),
                (*(d for _, d in types), *(f for _, f in funcs)))
    return (k, _attr_key(node, map_free_vars)), ()


def _binder_roles(node, roles: dict) -> None:
    """Record the position-based role of each var/type var a binder node introduces (first wins)."""
    if isinstance(node, Function):
        new = [(v, ("param", i)) for i, v in enumerate(node.params)]
        new += [(t, ("tparam", i)) for i, t in enumerate(node.type_params)]
    elif isinstance(node, Let):
        new = [(node.var, ("let",))]
    elif isinstance(node, Clause):
        new = [(v, ("pvar", i)) for i, v in enumerate(pattern_vars(node.lhs))]
    elif isinstance(node, FuncType):
        new = [(t, ("tparam", i)) for i, t in enumerate(node.type_params)]
    elif isinstance(node, TypeData):
        new = [(t, ("adtparam", i)) for i, t in enumerate(node.type_vars)]
    else:
        return
    for v, role in new:
        roles.setdefault(id(v), role)


def structural_hash(node, map_free_vars: bool = False) -> int:
    """A 64-bit hash consistent with structural_equal and stable across runs
    (tvm.ir.structural_hash).

    Parameters
    ----------
    node : object
        An expression, type, module or attrs.
    map_free_vars : bool, optional
        If True, free variables hash by position rather than identity, matching
        structural_equal(..., map_free_vars=True). Defaults to False.

    Returns
    -------
    hash : int
        The hash.
    """
    return _structural_digest(node, map_free_vars, 8)


def structural_digest(node) -> str:
    """A 128-bit structural_hash as 32 hex digits: what a key kept on disk, where no
    structural_equal can confirm a match, is made of (relay_backend/te_compiler/disk_records.py).

    Parameters
    ----------
    node : object
        An expression, type, module or attrs.

    Returns
    -------
    digest : str
        Equal for structurally equal nodes, in every process.
    """
    return f"{_structural_digest(node, False, 16):032x}"


def _structural_digest(node, map_free_vars: bool, size: int) -> int:
    """The structural hash of `node` with `size`-byte digests at every node."""
    roles, memo, parts, size_vars = {}, {}, {}, {}
    order = []
    stack = [(node, False)]
    while stack:  # iterative post-order over every node (bodies, branches, types included)
        n, expanded = stack.pop()
        if n is None or id(n) in memo:
            continue
        if expanded:
            memo[id(n)] = None
            order.append(n)
            continue
        if id(n) in parts:
            continue
        leaf, kids = _hash_parts(n, map_free_vars, size_vars)
        parts[id(n)] = (leaf, kids)
        _binder_roles(n, roles)
        stack.append((n, True))
        stack.extend((c, False) for c in reversed(kids) if c is not None and id(c) not in parts)
    for n in order:
        leaf, kids = parts[id(n)]
        if isinstance(n, (Var, TypeVar)):
            role = roles.get(id(n))
            if role is None:  # free: identity-compared (named) unless mapped by position
                role = ("free",) if map_free_vars else ("free", n.name_hint)
            leaf = leaf + role
        memo[id(n)] = _digest((leaf, tuple(0 if c is None else memo[id(c)] for c in kids)), size)
    return memo[id(node)] if node is not None else _digest(("None",), size)


__all__ = ["structural_equal", "structural_hash", "structural_digest", "assert_structural_equal"]
