"""Relay text format: `astext(expr)` and `module_astext(mod)` (what Expr.astext / IRModule.astext call).

The output follows TVM's printer: every non-atomic sub-expression of a scope is bound once to a
temporary `%N = ...;` line (so shared sub-expressions print once; one used from several scopes,
e.g. both branches of an If, is bound in the innermost scope holding all its uses, as
ir/sharing.py places it, so text grows linearly with nesting), the scope's result comes last,
`/* ty=... */` annotates expressions whose type is known, op attrs print as key=value for fields
that differ from their defaults, scalar constants print inline (`1f`, `2i64`, `True`) and larger
constants as `meta[relay.Constant][k]`. Output depends only on the program, so it is stable
across runs.

Nothing recurses in Python, so any depth prints: within a scope the walk is an explicit
post-order, and the methods that open nested scopes (branches, bodies, clauses) are generators
that yield the sub-printing they need to `_drive`, which runs them on an explicit stack. Text is
built as `_Doc` trees (pieces and indented blocks) and rendered once at the end, so nesting n
deep costs O(output) rather than re-indenting each block once per enclosing level.
"""
import dataclasses
import re
import sys

import numpy as np

from .adt import (Constructor, Match, PatternConstructor, PatternTuple, PatternVar,
                  PatternWildcard, TypeData)
from .attrs import ALWAYS_PRINTED, Attrs
from .expr import (Call, Constant, Expr, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                   RefWrite, Tuple, TupleGetItem, Var)
from .drive import drive as _drive
from .functor import post_order
from .sharing import SharingPlan, plan_sharing
from .types import Any, FuncType, TensorType, Type, type_to_str

VERSION_HEADER = '#[version = "0.0.5"]'
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_/]")
_INDENT = "  "


class _Doc:
    """Printer text without copying: `parts` are str pieces and nested _Docs, in order; an
    `indented` doc's lines print one _INDENT deeper than the text around it (empty lines stay
    empty). `multiline` tells whether it contains a line break."""

    __slots__ = ("parts", "indented", "multiline")

    def __init__(self, parts, indented: bool = False):
        self.parts = parts
        self.indented = indented
        self.multiline = any(p.multiline if isinstance(p, _Doc) else "\n" in p for p in parts)


def _cat(*parts):
    """The concatenation of parts: a plain str when they all are, else a _Doc."""
    for p in parts:
        if not isinstance(p, str):
            return _Doc(list(parts))
    return "".join(parts)


def _block(doc) -> _Doc:
    """`doc` indented one level (what the old `_indent(text)` did to a string)."""
    return _Doc([doc], indented=True)


def _join(sep: str, docs):
    """docs joined by sep: a plain str when they all are str, else a _Doc."""
    docs = list(docs)
    if all(isinstance(d, str) for d in docs):
        return sep.join(docs)
    parts = []
    for i, d in enumerate(docs):
        if i:
            parts.append(sep)
        parts.append(d)
    return _Doc(parts)


def _multiline(doc) -> bool:
    return doc.multiline if isinstance(doc, _Doc) else "\n" in doc


def _pad(pads: list, depth: int) -> str:
    """The indentation of `depth`, one string per depth (deep nesting repeats it per line)."""
    while len(pads) <= depth:
        pads.append(pads[-1] + _INDENT)
    return pads[depth]


def _render(doc) -> str:
    """The text of a _Doc (or str), in one iterative pass."""
    if isinstance(doc, str):
        return doc
    out, at_line_start, pads = [], False, [""]   # pads[d]: the indentation of depth d, shared
    depth = int(doc.indented)
    stack = [(iter(doc.parts), doc.indented)]
    while stack:
        parts, indented = stack[-1]
        part = next(parts, None)
        if part is None:
            stack.pop()
            depth -= indented
            continue
        if isinstance(part, _Doc):
            stack.append((iter(part.parts), part.indented))
            depth += part.indented
            continue
        if "\n" not in part:
            if part:
                if at_line_start:
                    out.append(_pad(pads, depth))
                    at_line_start = False
                out.append(part)
            continue
        pad = _pad(pads, depth)
        for i, line in enumerate(part.split("\n")):
            if i:
                out.append("\n")
                at_line_start = True
            if line:
                if at_line_start:
                    out.append(pad)
                    at_line_start = False
                out.append(line)
    return "".join(out)


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
    """key=value for each field of an Attrs dataclass that differs from its default, or that
    Relay declares without one (marked `always_printed`), as TVM's printer does."""
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
        if not same or f.metadata.get(ALWAYS_PRINTED):
            out.append(f"{f.name}={format_attr_value(value)}")
    return out


_DATAFLOW = (Call, Tuple, TupleGetItem, RefCreate, RefRead, RefWrite)


class _Unbound(Exception):
    """Internal: flat_text met an operand that has no text yet."""


def _operands(e) -> tuple:
    """The operands of a dataflow node, in printing order (a call's args before its callee)."""
    if isinstance(e, Call):
        return (*e.args, e.op)
    if isinstance(e, Tuple):
        return e.fields
    if isinstance(e, TupleGetItem):
        return (e.tuple_value,)
    if isinstance(e, RefCreate):
        return (e.value,)
    if isinstance(e, RefRead):
        return (e.ref,)
    return (e.ref, e.value)


class _Printer:
    """Holds the naming state of one print: var names, temporaries, scopes and the meta table."""

    def __init__(self, show_meta_data: bool):
        self.show_meta_data = show_meta_data
        self.meta = []           # non-scalar constants, in order of first appearance
        self.meta_index = {}     # id(Constant) -> index in self.meta
        self.type_texts = {}     # type_to_str's memo: id(type) -> (type, text)
        self.plan = SharingPlan()
        self.reset_names()

    def reset_names(self) -> None:
        self.var_names = {}      # Var -> printed name (without %)
        self.used_names = set()
        self.temp = 0
        self.temps = {}          # id(expr) -> "%N" for the temporaries visible now
        self.scopes = []         # per open scope, innermost last: (key, shadowed name) to undo

    # --- atoms ---------------------------------------------------------------------------------
    def var_name(self, v: Var) -> str:
        name = self.var_names.get(v)
        if name is None:
            # names print as the parser reads them: letters, digits, `_` and `/` (an ONNX
            # "input.1" prints as %input_1); a leading digit would read as a graph binding %0
            base = _NAME_UNSAFE.sub("_", v.name_hint or "") or "v"
            if base[0].isdigit():
                base = "v" + base
            name, k = base, 1
            while name in self.used_names:
                name, k = f"{base}{k}", k + 1
            self.used_names.add(name)
            self.var_names[v] = name
        return "%" + name

    def var_decl(self, v: Var) -> str:
        """`%x: annotation`; an unannotated var shows its inferred type as a comment only, so the
        text reads back to the same (unannotated) program."""
        if v.type_annotation is not None:
            return self.var_name(v) + ": " + type_to_str(v.type_annotation, self.type_texts)
        if v._checked_type_ is not None:
            return self.var_name(v) + f" /* ty={type_to_str(v._checked_type_, self.type_texts)} */"
        return self.var_name(v)

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
        return self.temps.get(id(e))

    def bound(self, e):
        """How a use of e prints if it needs no printing of its own: its atom or its temporary."""
        text = self.atom(e)
        return text if text is not None else self.lookup(e)

    def ref(self, e):
        """(generator) How a use of e prints: its atom, its temporary, or (unbound) its full text."""
        text = self.bound(e)
        if text is None:
            text = yield self.node_text(e)
        return text

    # --- scopes --------------------------------------------------------------------------------
    def _children(self, e):
        """What must be printed before e in its scope: its operands, and for a node opening
        scopes (If, Match, Function, a nested Let) the shared nodes its scopes use (plan.hoisted)."""
        if self.bound(e) is not None:
            return ()
        if isinstance(e, Call):
            kids = (e.op, *e.args)
        elif isinstance(e, Tuple):
            kids = e.fields
        elif isinstance(e, TupleGetItem):
            kids = (e.tuple_value,)
        elif isinstance(e, If):
            kids = (e.cond, *self.plan.hoisted(e))
        elif isinstance(e, Match):
            kids = (e.data, *self.plan.hoisted(e))
        elif isinstance(e, RefCreate):
            kids = (e.value,)
        elif isinstance(e, RefRead):
            kids = (e.ref,)
        elif isinstance(e, RefWrite):
            kids = (e.ref, e.value)
        else:  # Function and Let print as blocks with their own scope
            kids = self.plan.hoisted(e)
        return [k for k in kids if self.bound(k) is None]

    def emit_inline(self, e: Expr, lines: list):
        """(generator) Bind e's non-atomic sub-expressions to %N lines, then return e's own text
        (or its %N too, when e is used elsewhere as well)."""
        text = self.bound(e)
        if text is not None:
            return text
        bind_root = self.plan.is_shared(e)
        for node in post_order(e, children=self._children):
            if (node is e and not bind_root) or self.lookup(node) is not None:
                continue
            try:   # the common case: a dataflow node whose operands are all printed already
                text = self.flat_text(node) if isinstance(node, _DATAFLOW) else None
            except _Unbound:
                text = None
            if text is None:
                text = yield self.node_text(node)
            name = f"%{self.temp}"
            self.temp += 1
            lines.append(_cat(name, " = ", text, ";"))
            self.bind_temp(node, name)
        if bind_root:
            return self.lookup(e)
        return (yield self.node_text(e))

    def bind_temp(self, node, name: str) -> None:
        key = id(node)
        self.scopes[-1].append((key, self.temps.get(key)))
        self.temps[key] = name

    def close_scope(self) -> None:
        """Forget the temporaries of the innermost scope (restoring any they shadowed)."""
        for key, shadowed in reversed(self.scopes.pop()):
            if shadowed is None:
                del self.temps[key]
            else:
                self.temps[key] = shadowed

    def print_scope(self, expr: Expr, let_head: bool = False):
        """(generator) A block body: let/temporary lines, then the result expression. A let
        chain prints flat; `let_head`: expr is a Let printed as a block of its own."""
        self.scopes.append([])
        lines = []
        try:
            while isinstance(expr, Let) and self.lookup(expr) is None and \
                    (let_head or expr in self.plan.let_chains):
                let_head = False
                value = yield self.emit_inline(expr.value, lines)
                lines.append(_cat("let ", self.var_decl(expr.var), " = ", value, ";"))
                expr = expr.body
            result = yield self.emit_inline(expr, lines)
            lines.append(result)
        finally:
            self.close_scope()
        return _join("\n", lines)

    def braced(self, expr: Expr, let_head: bool = False):
        """(generator) `{`, the scope of expr indented, `}`."""
        body = yield self.print_scope(expr, let_head)
        return _cat("{\n", _block(body), "\n}")

    # --- compound expressions ------------------------------------------------------------------
    def type_comment(self, e: Expr) -> str:
        t = e._checked_type_
        return "" if t is None else f" /* ty={type_to_str(t, self.type_texts)} */"

    def flat_text(self, e: Expr, texts=None) -> str:
        """The text of a dataflow node (Call, Tuple, TupleGetItem, Ref*): each operand prints as
        its atom or temporary, or as texts[id(operand)] (printed in full already); _Unbound if
        an operand has neither."""
        def ref(k):
            text = self.bound(k)
            if text is None:
                text = texts.get(id(k)) if texts else None
                if text is None:
                    raise _Unbound()
            return text

        if isinstance(e, Call):
            args = [ref(a) for a in e.args] + format_call_attrs(e.attrs)
            return _cat(ref(e.op), "(", _join(", ", args), ")", self.type_comment(e))
        if isinstance(e, Tuple):
            inner = _join(", ", [ref(f) for f in e.fields])
            return _cat("(", inner, ",)" if len(e.fields) == 1 else ")", self.type_comment(e))
        if isinstance(e, TupleGetItem):
            return _cat(ref(e.tuple_value), f".{e.index}", self.type_comment(e))
        if isinstance(e, RefCreate):
            return _cat("ref(", ref(e.value), ")", self.type_comment(e))
        if isinstance(e, RefRead):
            return _cat("ref_read(", ref(e.ref), ")", self.type_comment(e))
        ref_text = ref(e.ref)
        return _cat("ref_write(", ref_text, ", ", ref(e.value), ")", self.type_comment(e))

    def node_text(self, e: Expr):
        """(generator) The text of a compound expression (a str or a _Doc)."""
        if isinstance(e, _DATAFLOW):
            texts = {}
            for k in _operands(e):   # unbound operands print in full, in place
                if id(k) not in texts and self.bound(k) is None:
                    texts[id(k)] = yield self.node_text(k)
            return self.flat_text(e, texts)
        if isinstance(e, Function):
            return (yield self.function_text(e, "fn "))
        if isinstance(e, If):
            cond = yield self.ref(e.cond)
            then = yield self.braced(e.true_branch)
            other = yield self.braced(e.false_branch)
            return _cat("if (", cond, ") ", then, " else ", other)
        if isinstance(e, Let):
            return (yield self.braced(e, let_head=True))
        if isinstance(e, Match):
            return (yield self.match_text(e))
        text = self.atom(e)
        if text is None:
            raise TypeError(f"astext: cannot print {type(e).__name__} (not a relay expression)")
        return text

    def function_text(self, fn: Function, head: str):
        """(generator) `head[tparams](params) -> ret { body }`."""
        params = [self.var_decl(p) for p in fn.params]
        params += [f"{k}={format_attr_value(v)}" for k, v in fn.attrs.items()]
        tparams = ""
        if fn.type_params:
            tparams = "[" + ", ".join(type_to_str(t) for t in fn.type_params) + "]"
        ret_text = "" if fn.ret_type is None else " -> " + type_to_str(fn.ret_type)
        if fn.ret_type is None and isinstance(fn._checked_type_, FuncType):   # inferred: a comment
            ret_text = f" /* ret={type_to_str(fn._checked_type_.ret_type)} */"
        body = yield self.braced(fn.body)
        return _cat(f"{head}{tparams}({', '.join(params)}){ret_text} ", body)

    def pattern_text(self, p) -> str:
        """A pattern's text (patterns are small: nothing in them opens a scope)."""
        out, stack = [], [p]
        while stack:
            q = stack.pop()
            if isinstance(q, str):
                out.append(q)
            elif isinstance(q, PatternWildcard):
                out.append("_")
            elif isinstance(q, PatternVar):   # with its annotation, so the text reads back the same
                ann = q.var.type_annotation
                out.append(self.var_name(q.var) + ("" if ann is None else ": " + type_to_str(ann, self.type_texts)))
            elif isinstance(q, PatternConstructor):
                out.append(q.constructor.name_hint)
                if q.patterns:
                    stack.extend(reversed(["(", *_interleave(q.patterns, ", "), ")"]))
            elif isinstance(q, PatternTuple):
                stack.extend(reversed(["(", *_interleave(q.patterns, ", "), ")"]))
            else:
                raise TypeError(f"astext: unknown pattern {type(q).__name__}")
        return "".join(out)

    def match_text(self, m: Match):
        """(generator) `match (data) { lhs => rhs, ... }`."""
        clauses = []
        for c in m.clauses:
            lhs = self.pattern_text(c.lhs)
            body = yield self.print_scope(c.rhs)
            if _multiline(body):
                clauses.append(_cat(f"{lhs} => {{\n", _block(body), "\n},"))
            else:
                clauses.append(_cat(f"{lhs} => ", body, ","))
        keyword = "match" if m.complete else "match?"
        data = yield self.ref(m.data)
        return _cat(f"{keyword} (", data, ") {\n", _block(_join("\n", clauses)), "\n}")

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
        return _render(_cat(f"type {head} {{\n", _block("\n".join(ctors)), "\n}"))

    def expr_text(self, expr: Expr) -> str:
        self.plan = plan_sharing(expr)
        gen = self.function_text(expr, "fn ") if isinstance(expr, Function) else self.print_scope(expr)
        return _render(_drive(gen))

    def metadata_text(self) -> str:
        if not self.show_meta_data or not self.meta:
            return ""
        rows = ["#[metadata]"]
        for k, c in enumerate(self.meta):
            arr = c.data.view_numpy()
            values = np.array2string(arr, separator=", ", threshold=sys.maxsize, floatmode="unique")
            rows.append(f"meta[relay.Constant][{k}] = {arr.dtype}{list(arr.shape)} {values}")
        return "\n" + "\n".join(rows)


def astext(expr: Expr, show_meta_data: bool = False) -> str:
    """The Relay text of one expression (a Function prints as `fn (...) { ... }`).

    Parameters
    ----------
    expr : Expr
        The expression to print.
    show_meta_data : bool, optional
        Whether to append the metadata section that holds the values of large constants
        (without it they print as references such as meta[relay.Constant][0]). Defaults to
        False.

    Returns
    -------
    text : str
        The text, starting with the version header.
    """
    printer = _Printer(show_meta_data)
    text = printer.expr_text(expr)
    return f"{VERSION_HEADER}\n{text}{printer.metadata_text()}"


def module_astext(mod, show_meta_data: bool = False) -> str:
    """The Relay text of an IRModule: its type definitions, then `def @name(...)` for each
    function, both sorted by name.

    Parameters
    ----------
    mod : IRModule
        The module to print.
    show_meta_data : bool, optional
        Whether to append the metadata section that holds the values of large constants.
        Defaults to False.

    Returns
    -------
    text : str
        The text, starting with the version header.
    """
    printer = _Printer(show_meta_data)
    parts = []
    for gtv in sorted(mod.type_definitions, key=lambda t: t.name_hint):
        parts.append(printer.type_data_text(mod.type_definitions[gtv]))
    for gv in sorted(mod.functions, key=lambda g: g.name_hint):
        printer.reset_names()
        printer.plan = plan_sharing(mod.functions[gv])
        parts.append(_render(_drive(printer.function_text(mod.functions[gv], f"def @{gv.name_hint}"))))
    return VERSION_HEADER + "\n" + "\n\n".join(parts) + printer.metadata_text()


def _interleave(items, sep: str) -> list:
    out = []
    for i, item in enumerate(items):
        if i:
            out.append(sep)
        out.append(item)
    return out


__all__ = ["astext", "module_astext", "format_scalar", "format_attr_value", "VERSION_HEADER"]
