"""The node kinds of the IR's JSON form: for each, its TVM type key and its fields.

A kind lists its reference fields (other nodes, written as node indices) and its plain fields
(written inline as strings, as TVM writes `index`, `name_hint`, `dtype`), with how to take a
node apart (`fields(node)`) and build it back (`build(fields)`). ir/serialization.py walks the
graph and calls these; this file is the one place that knows what each node holds.

Shape dims (ir/dims.py) are ints, Any, size variables and tir arithmetic on them: the leaves are
written by `dim_fields` / read by `dim_build`, the arithmetic nodes are kinds (`tir.Add`, ...,
`tir.Cast`) with TVM's type keys; a variable shared by several dims is one node.
"""
from dataclasses import dataclass
from typing import Callable

from ..tir import expr as E
from .adt import (Clause, Constructor, Match, PatternConstructor, PatternTuple, PatternVar,
                  PatternWildcard, TypeData)
from .expr import (Call, Constant, Function, GlobalVar, If, Let, RefCreate, RefRead, RefWrite,
                   Tuple, TupleGetItem, Var)
from .span import SourceName, Span
from .types import (Any, FuncType, GlobalTypeVar, IncompleteType, RefType, TensorType, TupleType,
                    TypeCall, TypeVar)


@dataclass
class Kind:
    """One node kind: `fields(node)` -> {name: value}; `build({name: value})` -> node."""

    type_key: str
    cls: type
    refs: tuple
    plain: tuple
    fields: Callable
    build: Callable


def _opt(d: dict, key: str, default=None):
    return d.get(key, default)


def _bool(text) -> bool:
    return str(text) in ("1", "True", "true")


_EXPR_KINDS = [
    Kind("relay.Id", type(None), (), ("name_hint",), None, None),   # decoded inline by relay.Var
    Kind("relay.Var", Var, ("vid", "type_annotation", "span"), (),
         lambda v: {"vid": ("relay.Id", v.name_hint), "type_annotation": v.type_annotation, "span": v.span},
         lambda f: Var(f["vid"], f["type_annotation"], span=f["span"])),
    Kind("GlobalVar", GlobalVar, ("span",), ("name_hint",),
         lambda g: {"name_hint": g.name_hint, "span": g.span},
         lambda f: GlobalVar(f["name_hint"], span=f["span"])),
    Kind("relay.Constant", Constant, ("span",), ("data",),
         lambda c: {"data": c.data, "span": c.span},
         lambda f: Constant(f["data"], span=f["span"])),
    Kind("relay.Call", Call, ("op", "args", "attrs", "type_args", "span"), (),
         lambda c: {"op": c.op, "args": list(c.args), "attrs": c.attrs, "type_args": list(c.type_args),
                    "span": c.span},
         lambda f: Call(f["op"], f["args"], f["attrs"], _opt(f, "type_args") or (), span=f["span"])),
    Kind("relay.Function", Function, ("params", "body", "ret_type", "type_params", "attrs", "span"), (),
         lambda fn: {"params": list(fn.params), "body": fn.body, "ret_type": fn.ret_type,
                     "type_params": list(fn.type_params), "attrs": fn.attrs, "span": fn.span},
         lambda f: Function(f["params"], f["body"], f["ret_type"], _opt(f, "type_params") or (),
                            f["attrs"] or {}, span=f["span"])),
    Kind("relay.Tuple", Tuple, ("fields", "span"), (),
         lambda t: {"fields": list(t.fields), "span": t.span},
         lambda f: Tuple(f["fields"], span=f["span"])),
    Kind("relay.TupleGetItem", TupleGetItem, ("tuple_value", "span"), ("index",),
         lambda t: {"tuple_value": t.tuple_value, "index": str(t.index), "span": t.span},
         lambda f: TupleGetItem(f["tuple_value"], int(f["index"]), span=f["span"])),
    Kind("relay.Let", Let, ("var", "value", "body", "span"), (),
         lambda e: {"var": e.var, "value": e.value, "body": e.body, "span": e.span},
         lambda f: Let(f["var"], f["value"], f["body"], span=f["span"])),
    Kind("relay.If", If, ("cond", "true_branch", "false_branch", "span"), (),
         lambda e: {"cond": e.cond, "true_branch": e.true_branch, "false_branch": e.false_branch,
                    "span": e.span},
         lambda f: If(f["cond"], f["true_branch"], f["false_branch"], span=f["span"])),
    Kind("relay.RefCreate", RefCreate, ("value", "span"), (),
         lambda e: {"value": e.value, "span": e.span}, lambda f: RefCreate(f["value"], span=f["span"])),
    Kind("relay.RefRead", RefRead, ("ref", "span"), (),
         lambda e: {"ref": e.ref, "span": e.span}, lambda f: RefRead(f["ref"], span=f["span"])),
    Kind("relay.RefWrite", RefWrite, ("ref", "value", "span"), (),
         lambda e: {"ref": e.ref, "value": e.value, "span": e.span},
         lambda f: RefWrite(f["ref"], f["value"], span=f["span"])),
    Kind("relay.Match", Match, ("data", "clauses", "span"), ("complete",),
         lambda m: {"data": m.data, "clauses": list(m.clauses), "complete": str(int(m.complete)),
                    "span": m.span},
         lambda f: Match(f["data"], f["clauses"], _bool(f["complete"]), span=f["span"])),
    Kind("relay.Clause", Clause, ("lhs", "rhs"), (),
         lambda c: {"lhs": c.lhs, "rhs": c.rhs}, lambda f: Clause(f["lhs"], f["rhs"])),
    Kind("relay.PatternWildcard", PatternWildcard, (), (), lambda p: {}, lambda f: PatternWildcard()),
    Kind("relay.PatternVar", PatternVar, ("var",), (),
         lambda p: {"var": p.var}, lambda f: PatternVar(f["var"])),
    Kind("relay.PatternConstructor", PatternConstructor, ("constructor", "patterns"), (),
         lambda p: {"constructor": p.constructor, "patterns": list(p.patterns)},
         lambda f: PatternConstructor(f["constructor"], f["patterns"])),
    Kind("relay.PatternTuple", PatternTuple, ("patterns",), (),
         lambda p: {"patterns": list(p.patterns)}, lambda f: PatternTuple(f["patterns"])),
    Kind("relay.Constructor", Constructor, ("inputs", "belong_to", "span"), ("name_hint", "tag"),
         lambda c: {"name_hint": c.name_hint, "inputs": list(c.inputs), "belong_to": c.belong_to,
                    "tag": str(c.tag), "span": c.span},
         lambda f: Constructor(f["name_hint"], f["inputs"], f["belong_to"], span=f["span"])),
    Kind("relay.TypeData", TypeData, ("header", "type_vars", "constructors"), (),
         lambda d: {"header": d.header, "type_vars": list(d.type_vars),
                    "constructors": list(d.constructors)},
         lambda f: TypeData(f["header"], f["type_vars"], f["constructors"])),
]


def dim_fields(dim):
    """(type key, plain fields) of one leaf of a shape dimension (TVM's keys)."""
    if isinstance(dim, Any):
        return "tir.Any", {}
    if isinstance(dim, E.Var):
        key = "tir.SizeVar" if isinstance(dim, E.SizeVar) else "tir.Var"
        return key, {"name": dim.name, "dtype": dim.dtype}
    if isinstance(dim, E.IntImm):
        return "IntImm", {"dtype": dim.dtype, "value": str(int(dim.value))}
    return "IntImm", {"dtype": "int64", "value": str(int(dim))}


def dim_build(type_key: str, plain: dict):
    """The dimension leaf a dim node denotes (the inverse of dim_fields)."""
    if type_key == "tir.Any":
        return Any()
    if type_key in ("tir.SizeVar", "tir.Var"):
        var_class = E.SizeVar if type_key == "tir.SizeVar" else E.Var
        return var_class(plain.get("name") or plain.get("name_hint", "n"), plain.get("dtype", "int32"))
    return int(plain["value"])


def _dim_operand(value, dtype: str):
    """A built child of a dim expression as a tir expression of `dtype` (an int read back from an
    IntImm node becomes a constant again)."""
    return E.convert(int(value), dtype) if isinstance(value, int) else value


def _dim_binary(type_key: str, cls):
    """The Kind of a binary node of a symbolic dim (`n * 2`, `(h + 2) // 3`, `min(n, m)`)."""
    return Kind(type_key, cls, ("a", "b"), ("dtype",),
                lambda n: {"a": n.a, "b": n.b, "dtype": n.dtype},
                lambda f: cls(_dim_operand(f["a"], f["dtype"] or "int32"),
                              _dim_operand(f["b"], f["dtype"] or "int32")))


# symbolic dims: tir arithmetic on size variables (the variables and IntImm leaves: dim_fields)
_DIM_KINDS = [_dim_binary(f"tir.{cls.__name__}", cls)
              for cls in (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod, E.Min, E.Max)] + [
    Kind("tir.Cast", E.Cast, ("value",), ("dtype",),
         lambda n: {"value": n.value, "dtype": n.dtype},
         lambda f: E.Cast(f["dtype"], _dim_operand(f["value"], "int32"))),
]


_TYPE_KINDS = [
    Kind("relay.TensorType", TensorType, ("shape",), ("dtype",),
         lambda t: {"shape": list(t.shape), "dtype": t.dtype},
         lambda f: TensorType(f["shape"], f["dtype"])),
    Kind("TupleType", TupleType, ("fields",), (),
         lambda t: {"fields": list(t.fields)}, lambda f: TupleType(f["fields"])),
    Kind("FuncType", FuncType, ("arg_types", "ret_type", "type_params", "type_constraints"), (),
         lambda t: {"arg_types": list(t.arg_types), "ret_type": t.ret_type,
                    "type_params": list(t.type_params), "type_constraints": list(t.type_constraints)},
         lambda f: FuncType(f["arg_types"], f["ret_type"], _opt(f, "type_params") or (),
                            _opt(f, "type_constraints") or ())),
    Kind("TypeVar", TypeVar, (), ("name_hint", "kind"),
         lambda t: {"name_hint": t.name_hint, "kind": t.kind},
         lambda f: TypeVar(f["name_hint"], _kind_name(_opt(f, "kind", "Type"), "Type"))),
    Kind("GlobalTypeVar", GlobalTypeVar, (), ("name_hint", "kind"),
         lambda t: {"name_hint": t.name_hint, "kind": t.kind},
         lambda f: GlobalTypeVar(f["name_hint"], _kind_name(_opt(f, "kind", "AdtHandle"), "AdtHandle"))),
    Kind("TypeCall", TypeCall, ("func", "args"), (),
         lambda t: {"func": t.func, "args": list(t.args)}, lambda f: TypeCall(f["func"], f["args"])),
    Kind("relay.RefType", RefType, ("value",), (),
         lambda t: {"value": t.value}, lambda f: RefType(f["value"])),
    Kind("IncompleteType", IncompleteType, (), ("kind",),
         lambda t: {"kind": t.kind}, lambda f: IncompleteType(_kind_name(_opt(f, "kind", "Type"), "Type"))),
    Kind("Span", Span, ("source_name",), ("line", "column", "end_line", "end_column"),
         lambda s: {"source_name": s.source_name, "line": str(s.line), "column": str(s.column),
                    "end_line": str(s.end_line), "end_column": str(s.end_column)},
         lambda f: Span(f["source_name"], int(f["line"]), int(f["end_line"]), int(f["column"]),
                        int(f["end_column"]))),
    Kind("SourceName", SourceName, (), ("name",),
         lambda s: {"name": s.name}, lambda f: SourceName(f["name"])),
]

# TVM writes a TypeKind as its enum value
_TVM_TYPE_KINDS = {"0": "Type", "1": "ShapeVar", "2": "BaseType", "3": "Constraint", "4": "AdtHandle",
                   "5": "TypeData"}


def _kind_name(value, default: str) -> str:
    return _TVM_TYPE_KINDS.get(str(value), str(value) or default)


KINDS = _EXPR_KINDS + _TYPE_KINDS + _DIM_KINDS
BY_KEY = {k.type_key: k for k in KINDS}
BY_CLASS = {k.cls: k for k in KINDS if k.fields is not None}


def kind_of(node):
    """The Kind that encodes `node` (by class, most specific first), or None."""
    for klass in type(node).__mro__:
        kind = BY_CLASS.get(klass)
        if kind is not None:
            return kind
    return None


__all__ = ["Kind", "KINDS", "BY_KEY", "kind_of", "dim_fields", "dim_build"]
