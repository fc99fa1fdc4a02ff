"""Relay text format: `astext(expr)` and `module_astext(mod)` (what Expr.astext / IRModule.astext call).

The output follows TVM's printer: every non-atomic sub-expression of a scope is bound once to a
temporary `%N = ...;` line (so shared sub-expressions print once), the scope's result comes last,
`/* ty=... */` annotates expressions whose type is known, op attrs print as key=value for fields
that differ from their defaults, scalar constants print inline (`1f`, `2i64`, `True`) and larger
constants as `meta[relay.Constant][k]`. Within a scope the walk is iterative, so a 10,000-op
chain prints fine; recursion grows only with the nesting of functions, branches and clauses.
Output depends only on the program, so it is stable across runs.
"""
import dataclasses
import sys

import numpy as np

from .adt import (Constructor, Match, PatternConstructor, PatternTuple, PatternVar,
                  PatternWildcard, TypeData)
from .attrs import Attrs
from .expr import (Call, Constant, Expr, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                   RefWrite, Tuple, TupleGetItem, Var)
from .functor import post_order
from .types import Any, FuncType, TensorType, Type, type_to_str

VERSION_HEADER = '#[version = "0.0.5"]'
_INDENT = "  "


def _indent(text: str) -> str:
    return "\n".join(_INDENT + line if line else line for line in text.split("\n"))


def format_scalar(value, dtype: str) -> str:
    """A scalar constant in Relay syntax: 1f (float32), 1 (int32), 1i64, 1f64, 1f16, True."""
    dtype = str(dtype)
    if dtype == "bool":
        return "True" if bool(value) else "False"
    if dtype.startswith("float"):
        text = str(np.dtype(dtype).type(value))  # shortest text that round-trips in this dtype
        if text.endswith(".0"):
            text = text[:-2]
        return text + {"float32": "f", "float64": "f64", "float16": "f16"}.get(dtype, "f" + dtype[5:])
    if dtype.startswith("int"):
        return str(int(value)) + ("" if dtype == "int32" else "i" + dtype[3:])
    if dtype.startswith("uint"):
        return f"{int(value)}u{dtype[4:]}"
    return f"{value}{dtype}"


def format_attr_value(value) -> str:
    """An attribute value: tuples as [a, b], strings quoted, floats with an f suffix."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return (text[:-2] if text.endswith(".0") else text) + "f"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_attr_value(v) for v in value) + "]"
    if isinstance(value, Any):
        return "?"
    if isinstance(value, Type):
        return type_to_str(value)
    if isinstance(value, Expr):
        text = value.astext().split("\n", 1)[-1]
        return text if len(text) < 80 else text[:80] + "..."
    return repr(value)


def format_call_attrs(attrs) -> list:
    """key=value for each field of an Attrs dataclass that differs from its default."""
    if attrs is None:
        return []
    if not isinstance(attrs, Attrs) or not dataclasses.is_dataclass(attrs):
        return [f"{k}={format_attr_value(v)}" for k, v in dict(attrs).items()]
    out = []
    for f in dataclasses.fields(attrs):
        value = getattr(attrs, f.name)
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = dataclasses.MISSING
        try:
            same = bool(value == default)
        except (TypeError, ValueError):  # e.g. arrays: print them
            same = False
        if not same:
            out.append(f"{f.name}={format_attr_value(value)}")
    return out


class _Printer:
    """Holds the naming state of one print: var names, temporaries, scopes and the meta table."""

    def __init__(self, show_meta_data: bool):
        self.show_meta_data = show_meta_data
        self.meta = []           # non-scalar constants, in order of first appearance
        self.meta_index = {}     # id(Constant) -> index in self.meta
        self.reset_names()

    def reset_names(self) -> None:
        self.var_names = {}      # Var -> printed name (without %)
        self.used_names = set()
        self.temp = 0
        self.scopes = []         # one {id(expr): "%N"} per open scope, innermost last

    # --- atoms ---------------------------------------------------------------------------------
    def var_name(self, v: Var) -> str:
        name = self.var_names.get(v)
        if name is None:
            base = v.name_hint or "v"
            if base[0].isdigit():
                base = "v" + base
            name, k = base, 1
            while name in self.used_names:
                name, k = f"{base}{k}", k + 1
            self.used_names.add(name)
            self.var_names[v] = name
        return "%" + name

    def var_decl(self, v: Var) -> str:
        ty = v.type_annotation if v.type_annotation is not None else v._checked_type_
        return self.var_name(v) + ("" if ty is None else ": " + type_to_str(ty))

    def constant(self, c: Constant) -> str:
        arr = c.data.view_numpy()
        if arr.ndim == 0:
            return format_scalar(arr.item(), arr.dtype)
        k = self.meta_index.get(id(c))
        if k is None:
            k = self.meta_index[id(c)] = len(self.meta)
            self.meta.append(c)
        ty = c._checked_type_ if c._checked_type_ is not None else TensorType(arr.shape, arr.dtype)
        return f"meta[relay.Constant][{k}] /* ty={type_to_str(ty)} */"

    def atom(self, e):
        """Text of an expression printed inline wherever it is used, or None."""
        if isinstance(e, Var):
            return self.var_name(e)
        if isinstance(e, GlobalVar):
            return "@" + e.name_hint
        if isinstance(e, Constructor):
            return e.name_hint
        if isinstance(e, Op):
            return e.name
        if isinstance(e, Constant):
            return self.constant(e)
        return None

    def lookup(self, e):
        for scope in reversed(self.scopes):
            name = scope.get(id(e))
            if name is not None:
                return name
        return None

    def ref(self, e) -> str:
        """How a use of e prints: its atom, its temporary, or (unbound) its full text."""
        text = self.atom(e)
        if text is None:
            text = self.lookup(e)
        return text if text is not None else self.node_text(e)

    # --- scopes --------------------------------------------------------------------------------
    def _children(self, e):
        if self.atom(e) is not None or self.lookup(e) is not None:
            return ()
        if isinstance(e, Call):
            kids = (e.op, *e.args)
        elif isinstance(e, Tuple):
            kids = e.fields
        elif isinstance(e, TupleGetItem):
            kids = (e.tuple_value,)
        elif isinstance(e, If):
            kids = (e.cond,)
        elif isinstance(e, Match):
            kids = (e.data,)
        elif isinstance(e, RefCreate):
            kids = (e.value,)
        elif isinstance(e, RefRead):
            kids = (e.ref,)
        elif isinstance(e, RefWrite):
            kids = (e.ref, e.value)
        else:  # Function and Let print as blocks with their own scope
            kids = ()
        return [k for k in kids if self.atom(k) is None and self.lookup(k) is None]

    def emit_inline(self, e: Expr, lines: list) -> str:
        """Bind e's non-atomic sub-expressions to %N lines, then return e's own text."""
        if self.atom(e) is not None or self.lookup(e) is not None:
            return self.ref(e)
        for node in post_order(e, children=self._children):
            if node is e or self.lookup(node) is not None:
                continue
            text = self.node_text(node)
            name = f"%{self.temp}"
            self.temp += 1
            lines.append(f"{name} = {text};")
            self.scopes[-1][id(node)] = name
        return self.node_text(e)

    def print_scope(self, expr: Expr) -> str:
        """A block body: let/temporary lines, then the result expression."""
        self.scopes.append({})
        lines = []
        try:
            while isinstance(expr, Let) and self.lookup(expr) is None:
                value = self.emit_inline(expr.value, lines)
                lines.append(f"let {self.var_decl(expr.var)} = {value};")
                expr = expr.body
            lines.append(self.emit_inline(expr, lines))
        finally:
            self.scopes.pop()
        return "\n".join(lines)

    # --- compound expressions ------------------------------------------------------------------
    @staticmethod
    def type_comment(e: Expr) -> str:
        t = e._checked_type_
        return "" if t is None else f" /* ty={type_to_str(t)} */"

    def node_text(self, e: Expr) -> str:
        if isinstance(e, Call):
            args = [self.ref(a) for a in e.args] + format_call_attrs(e.attrs)
            return f"{self.ref(e.op)}({', '.join(args)}){self.type_comment(e)}"
        if isinstance(e, Tuple):
            inner = ", ".join(self.ref(f) for f in e.fields)
            text = f"({inner},)" if len(e.fields) == 1 else f"({inner})"
            return text + self.type_comment(e)
        if isinstance(e, TupleGetItem):
            return f"{self.ref(e.tuple_value)}.{e.index}{self.type_comment(e)}"
        if isinstance(e, Function):
            return self.function_text(e, "fn ")
        if isinstance(e, If):
            return (f"if ({self.ref(e.cond)}) {{\n{_indent(self.print_scope(e.true_branch))}\n}} "
                    f"else {{\n{_indent(self.print_scope(e.false_branch))}\n}}")
        if isinstance(e, Let):
            return "{\n" + _indent(self.print_scope(e)) + "\n}"
        if isinstance(e, Match):
            return self.match_text(e)
        if isinstance(e, RefCreate):
            return f"ref({self.ref(e.value)}){self.type_comment(e)}"
        if isinstance(e, RefRead):
            return f"ref_read({self.ref(e.ref)}){self.type_comment(e)}"
        if isinstance(e, RefWrite):
            return f"ref_write({self.ref(e.ref)}, {self.ref(e.value)}){self.type_comment(e)}"
        text = self.atom(e)
        if text is None:
            raise TypeError(f"astext: cannot print {type(e).__name__} (not a relay expression)")
        return text

    def function_text(self, fn: Function, head: str) -> str:
        params = [self.var_decl(p) for p in fn.params]
        params += [f"{k}={format_attr_value(v)}" for k, v in fn.attrs.items()]
        tparams = ""
        if fn.type_params:
            tparams = "[" + ", ".join(type_to_str(t) for t in fn.type_params) + "]"
        ret = fn.ret_type
        if ret is None and isinstance(fn._checked_type_, FuncType):
            ret = fn._checked_type_.ret_type
        ret_text = "" if ret is None else " -> " + type_to_str(ret)
        body = self.print_scope(fn.body)
        return f"{head}{tparams}({', '.join(params)}){ret_text} {{\n{_indent(body)}\n}}"

    def pattern_text(self, p) -> str:
        # Patterns nest shallowly (one level per constructor), so recursion is bounded by them.
        if isinstance(p, PatternWildcard):
            return "_"
        if isinstance(p, PatternVar):
            return self.var_name(p.var)
        if isinstance(p, PatternConstructor):
            if not p.patterns:
                return p.constructor.name_hint
            fields = ", ".join(self.pattern_text(q) for q in p.patterns)
            return f"{p.constructor.name_hint}({fields})"
        if isinstance(p, PatternTuple):
            return "(" + ", ".join(self.pattern_text(q) for q in p.patterns) + ")"
        raise TypeError(f"astext: unknown pattern {type(p).__name__}")

    def match_text(self, m: Match) -> str:
        clauses = []
        for c in m.clauses:
            lhs = self.pattern_text(c.lhs)
            body = self.print_scope(c.rhs)
            if "\n" in body:
                clauses.append(f"{lhs} => {{\n{_indent(body)}\n}},")
            else:
                clauses.append(f"{lhs} => {body},")
        keyword = "match" if m.complete else "match?"
        return f"{keyword} ({self.ref(m.data)}) {{\n" + _indent("\n".join(clauses)) + "\n}"

    # --- top level -----------------------------------------------------------------------------
    @staticmethod
    def type_data_text(data: TypeData) -> str:
        head = data.header.name_hint
        if data.type_vars:
            head += "[" + ", ".join(type_to_str(t) for t in data.type_vars) + "]"
        ctors = []
        for c in data.constructors:
            args = ", ".join(type_to_str(t) for t in c.inputs)
            ctors.append(f"{c.name_hint}({args})," if c.inputs else f"{c.name_hint},")
        return f"type {head} {{\n" + _indent("\n".join(ctors)) + "\n}"

    def expr_text(self, expr: Expr) -> str:
        if isinstance(expr, Function):
            return self.function_text(expr, "fn ")
        return self.print_scope(expr)

    def metadata_text(self) -> str:
        if not self.show_meta_data or not self.meta:
            return ""
        rows = ["#[metadata]"]
        for k, c in enumerate(self.meta):
            arr = c.data.view_numpy()
            values = np.array2string(arr, separator=", ", threshold=sys.maxsize)
            rows.append(f"meta[relay.Constant][{k}] = {arr.dtype}{list(arr.shape)} {values}")
        return "\n" + "\n".join(rows)


def astext(expr: Expr, show_meta_data: bool = False) -> str:
    """Relay text of one expression (a Function prints as `fn (...) { ... }`)."""
    printer = _Printer(show_meta_data)
    text = printer.expr_text(expr)
    return f"{VERSION_HEADER}\n{text}{printer.metadata_text()}"


def module_astext(mod, show_meta_data: bool = False) -> str:
    """Relay text of an IRModule: type definitions, then `def @name(...)` for each function,
    both sorted by name."""
    printer = _Printer(show_meta_data)
    parts = []
    for gtv in sorted(mod.type_definitions, key=lambda t: t.name_hint):
        parts.append(printer.type_data_text(mod.type_definitions[gtv]))
    for gv in sorted(mod.functions, key=lambda g: g.name_hint):
        printer.reset_names()
        parts.append(printer.function_text(mod.functions[gv], f"def @{gv.name_hint}"))
    return VERSION_HEADER + "\n" + "\n\n".join(parts) + printer.metadata_text()


__all__ = ["astext", "module_astext", "format_scalar", "format_attr_value", "VERSION_HEADER"]
