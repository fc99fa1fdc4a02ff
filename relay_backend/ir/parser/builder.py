"""From a lark parse tree to Relay IR: name resolution, scopes, literals, attrs and spans.

One `Builder` reads one source. Names resolve as in TVM's parser:

  %x        the innermost `let`, parameter, pattern variable or `free_var` called x
  %0        a graph binding `%0 = ...;` of this or an enclosing block (the same node, shared)
  @f        the module's global function f (defined anywhere in the text, or in the initial module)
  Name      a constructor of an ADT, else a registered operator (`nn.conv2d`); a constructor
            with no fields written without arguments is a call of it (`Nil` is `Nil()`)
  types     dtype names (`float32` is `Tensor[(), float32]`), type parameters in scope, ADTs
            (`List[A]`; a bare ADT name is applied to no arguments)

Type definitions are read before functions, so a function may use a constructor defined further
down. Every node gets a `Span` of the text it came from. Walks are generators run by
ir.drive, so nesting depth is not limited by Python's recursion limit.
"""
import dataclasses

import numpy as np

from ...errors import RelayError
from ..adt import Clause, Match, PatternConstructor, PatternTuple, PatternVar, PatternWildcard
from ..attrs import Attrs
from ..drive import drive
from ..expr import (Call, Constant, Function, If, Let, Op, RefCreate, RefRead, RefWrite, Tuple,
                    TupleGetItem, Var)
from ..module import IRModule
from . import literals
from .type_builder import TypeBuilder

# TVM's infix operators: the op each calls and its precedence (all associate to the left)
_INFIX_OPS = {"*": ("multiply", 12), "/": ("divide", 12), "+": ("add", 10), "-": ("subtract", 10),
              "<": ("less", 8), ">": ("greater", 8), "<=": ("less_equal", 8),
              ">=": ("greater_equal", 8), "==": ("equal", 7), "!=": ("not_equal", 7)}


class Builder(TypeBuilder):
    """Turns the parse tree of one source into IR (see the module docstring for the rules)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._handlers = {name: getattr(self, "_" + name) for name in _EXPR_RULES}

    # --- module -----------------------------------------------------------------------------
    def module(self, tree) -> IRModule:
        """The IRModule of a `start_module` tree (type definitions first, then functions)."""
        defs = [c for c in tree.children if hasattr(c, "data")]
        for d in defs:
            if d.data in ("type_def", "extern_type"):
                self.declare_type(d)
        for d in defs:
            if d.data in ("type_def", "extern_type"):
                self.define_type(d)
        for d in defs:   # every def first, so a function may call one defined further down
            if d.data == "func_def":
                name_tok = d.children[0]
                if str(name_tok)[1:] in self.new_globals:
                    raise self.error(f"global function `{name_tok}` is defined twice", name_tok)
                self.new_globals.add(str(name_tok)[1:])
                self.defined_globals.add(str(name_tok)[1:])
        functions = []
        for d in defs:
            if d.data == "func_def":
                gv = self.global_var(d.children[0])
                functions.append((gv, drive(self._function(d.children[1:], d))))
        self.check_names()
        mod = IRModule()
        for gtv, data in self.type_data.items():
            if gtv.name_hint in self.new_types:
                mod.add_type_definition(data)
        for gv, fn in functions:
            mod[gv] = fn
        return mod

    # --- functions --------------------------------------------------------------------------
    def _function(self, parts, tree):
        """(generator) A Function from [type_params?, fn_params, ret_type?, block]."""
        parts = [p for p in parts if p is not None]
        self.type_scopes.append({})
        self.push()
        try:
            tparams = self.type_params(parts.pop(0)) if parts[0].data == "type_params" else []
            params, attrs = [], {}
            for p in parts.pop(0).children:
                if p is None:
                    continue
                if p.data == "param":
                    tok, ty = (p.children + [None])[:2]
                    params.append(self.bind_local(tok, ty))
                else:
                    key, value = self.attr(p)
                    attrs[key] = value
            ret = self.type(parts.pop(0).children[0]) if parts[0].data == "ret_type" else None
            body = yield self._block(parts[0])
        finally:
            self.pop()
            self.type_scopes.pop()
        return Function(params, body, ret, tparams, attrs, span=self.span(tree))

    # --- expressions ------------------------------------------------------------------------
    def expr(self, tree):
        """(generator) The Expr of an expression tree or token."""
        handler = self._handlers.get(getattr(tree, "data", None))
        if handler is None:
            raise self.error(f"unexpected syntax `{getattr(tree, 'data', tree)}` in an expression", tree)
        return (yield handler(tree))

    def _block(self, tree):
        self.push()
        try:
            return (yield self._seq(tree.children[0]))
        finally:
            self.pop()

    def _block_expr(self, tree):
        return (yield self._block(tree.children[0]))

    def _seq(self, tree):
        """Bindings in order, then the result; `let`s nest, `%N = ...` share, `e;` sequences."""
        *stmts, last = tree.children
        lets, scopes = [], 0
        try:
            for st in stmts:
                kind = st.data
                if kind == "let_stmt":
                    tok, ty, value_tree = (st.children if len(st.children) == 3 else
                                           (st.children[0], None, st.children[-1]))
                    self.locals.append({})
                    scopes += 1
                    v = self.bind_local(tok, ty)      # in scope in its value (recursive closures)
                    value = yield self.expr(value_tree)
                    lets.append((v, value, self.span(st)))
                elif kind == "graph_stmt":
                    value = yield self.expr(st.children[1])
                    self.graph[-1][str(st.children[0])] = value
                elif kind == "free_var_stmt":
                    tok, ty = (st.children + [None])[:2]
                    self.bind_local(tok, ty)
                else:   # `e;` evaluates e for its effect, as TVM reads it: let %_ = e; ...
                    value = yield self.expr(st.children[0])
                    lets.append((Var("_"), value, self.span(st)))
            body = yield self.expr(last)
        finally:
            del self.locals[len(self.locals) - scopes:]
        for v, value, span in reversed(lets):
            body = Let(v, value, body, span=span)
        return body

    def _local(self, tok):
        return self.lookup_local(tok.children[0])
        yield  # noqa: unreachable - makes this a generator like every handler

    def _graph_ref(self, tree):
        return self.lookup_graph(tree.children[0])
        yield  # noqa

    def _global_ref(self, tree):
        return self.global_var(tree.children[0])
        yield  # noqa

    def _name_ref(self, tree, callee: bool = False):
        tok = tree.children[0]
        name = str(tok)
        ctor = self.ctors.get(name)
        if ctor is not None:
            if not callee and not ctor.inputs:
                return Call(ctor, [], span=self.span(tok))   # `Nil` is `Nil()` (TVM)
            return ctor
        op = Op.get(name)
        if op is None:
            raise self.error(f"operator `{name}` not found, perhaps you forgot to register it "
                             f"(relay.op.register) or to define the type whose constructor it is", tok)
        return op
        yield  # noqa

    def _int_literal(self, tree):
        return self.constant(tree.children[0], literals.int_literal)
        yield  # noqa

    def _float_literal(self, tree):
        return self.constant(tree.children[0], literals.float_literal)
        yield  # noqa

    def _true_literal(self, tree):
        return self.constant(None, lambda _: True, tree)
        yield  # noqa

    def _false_literal(self, tree):
        return self.constant(None, lambda _: False, tree)
        yield  # noqa

    def constant(self, tok, convert, tree=None) -> Constant:
        try:
            value = np.asarray(convert(None if tok is None else str(tok)))
        except ValueError as err:
            raise self.error(str(err), tok) from None
        return Constant(value, span=self.span(tok if tok is not None else tree))

    def _meta_ref(self, tree):
        node = self.meta_node(tree.children[0])
        if not isinstance(node, Constant):
            raise self.error(f"`{tree.children[0]}` is not an expression", tree.children[0])
        return node
        yield  # noqa

    def meta_node(self, tok):
        text = str(tok)
        kind, index = text[5:text.index("]")], int(text[text.rindex("[") + 1:-1])
        rows = self.meta_table.get(kind)
        if rows is None:
            raise self.error(f"`{text}` refers to a metadata section with no {kind} entries; print "
                             f"the program with astext(show_meta_data=True) to keep its constants", tok)
        if index >= len(rows):
            raise self.error(f"`{text}`: the metadata section has only {len(rows)} {kind} "
                             f"entr{'y' if len(rows) == 1 else 'ies'}", tok)
        return rows[index]

    def _call(self, tree):
        callee_tree, args_tree = tree.children
        if getattr(callee_tree, "data", None) == "name_ref":
            callee = yield self._name_ref(callee_tree, callee=True)
        else:
            callee = yield self.expr(callee_tree)
        args, kwargs, meta_attrs = [], {}, None
        for a in args_tree.children:
            if a is None:
                continue
            if a.data == "attr":
                key, value = self.attr(a)
                kwargs[key] = value
                continue
            inner = a.children[-1] if a.data == "seq" and len(a.children) == 1 else None
            if getattr(inner, "data", None) == "meta_ref":
                node = self.meta_node(inner.children[0])
                if isinstance(node, Attrs):
                    meta_attrs = node
                    continue
            args.append((yield self.expr(a)))
        attrs = self.call_attrs(callee, kwargs, meta_attrs, tree)
        return Call(callee, args, attrs, span=self.span(tree))

    def call_attrs(self, callee, kwargs: dict, meta_attrs, tree):
        """The attrs of a call: the op's attrs class built from `key=value`s (defaults for the
        rest), or attrs given as a meta reference."""
        if meta_attrs is not None:
            return meta_attrs
        attrs_type = getattr(callee, "attrs_type", None) if isinstance(callee, Op) else None
        if attrs_type is None:
            if kwargs:
                what = f"operator `{callee.name}`" if isinstance(callee, Op) else "this callee"
                raise self.error(f"{what} takes no attributes, got {', '.join(kwargs)}", tree)
            return None
        names = {f.name for f in dataclasses.fields(attrs_type)}
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            raise self.error(f"`{callee.name}` has no attribute {unknown[0]!r}; its attributes are "
                             f"{sorted(names)}", tree)
        try:
            return attrs_type(**kwargs)
        except (RelayError, TypeError, ValueError) as err:   # the attrs class validates
            raise self.error(f"invalid attributes for `{callee.name}`: {err}", tree) from None

    def attr(self, tree):
        """(key, plain value) of a `key=value` attribute."""
        key, value = tree.children
        return str(key), self.attr_value(value)

    def attr_value(self, tree):
        kind = tree.data
        kids = tree.children
        try:
            if kind in ("int_literal", "float_literal"):
                return literals.attr_number(kids[0].type, str(kids[0]))
        except ValueError as err:
            raise self.error(str(err), kids[0]) from None
        if kind == "string_literal":
            return literals.string_literal(str(kids[0]))
        if kind in ("true_literal", "false_literal"):
            return kind == "true_literal"
        if kind == "name_value":
            return literals.name_value(str(kids[0]))
        if kind == "meta_ref":
            return self.meta_node(kids[0])
        if kind == "list_value":
            return tuple(self.attr_value(k) for k in kids if k is not None)
        raise self.error(f"unexpected attribute value syntax {kind}", tree)

    def _projection(self, tree):
        value = yield self.expr(tree.children[0])
        return TupleGetItem(value, int(str(tree.children[1])), span=self.span(tree))

    def _infix_chain(self, tree):
        """`a + b * c ...`: operands left to right, then grouped by precedence (shunting-yard)."""
        operands, ops = [], []
        for i, kid in enumerate(tree.children):
            if i % 2:
                ops.append(kid)
            else:
                operands.append((yield self.expr(kid)))
        out, pending = [operands[0]], []

        def reduce_top():
            tok = pending.pop()
            rhs, lhs = out.pop(), out.pop()
            op = Op.get(_INFIX_OPS[str(tok)][0])
            attrs = op.attrs_type() if getattr(op, "attrs_type", None) is not None else None
            span = lhs.span.merge(rhs.span) if lhs.span is not None else self.span(tok)
            out.append(Call(op, [lhs, rhs], attrs, span=span))

        for tok, rhs in zip(ops, operands[1:]):
            while pending and _INFIX_OPS[str(pending[-1])][1] >= _INFIX_OPS[str(tok)][1]:
                reduce_top()
            pending.append(tok)
            out.append(rhs)
        while pending:
            reduce_top()
        return out[0]

    def _fn_expr(self, tree):
        return (yield self._function(tree.children, tree))

    def _if_expr(self, tree):
        cond = yield self.expr(tree.children[0])
        then = yield self._block(tree.children[1])
        other = yield self._block(tree.children[2])
        return If(cond, then, other, span=self.span(tree))

    def _match_total(self, tree):
        return (yield self._match(tree, True))

    def _match_partial(self, tree):
        return (yield self._match(tree, False))

    def _match(self, tree, complete: bool):
        body = tree.children[-1]
        data = yield self.expr(body.children[0])
        clauses = []
        for clause in body.children[1:]:
            if clause is None:
                continue
            self.push()
            try:
                lhs = self.pattern(clause.children[0])
                rhs = yield self.expr(clause.children[1])
            finally:
                self.pop()
            clauses.append(Clause(lhs, rhs))
        return Match(data, clauses, complete, span=self.span(tree))

    def pattern(self, tree):
        kind = tree.data
        if kind == "pat_wildcard":
            return PatternWildcard()
        if kind == "pat_var":
            tok, ty = (tree.children + [None])[:2]
            return PatternVar(self.bind_local(tok, ty))
        if kind == "pat_ctor":
            name_tok = tree.children[0]
            ctor = self.ctors.get(str(name_tok))
            if ctor is None:
                raise self.error(f"undefined constructor `{name_tok}` in a pattern; to bind a "
                                 f"variable write `%{name_tok}`", name_tok)
            subs = tree.children[1].children if len(tree.children) > 1 and tree.children[1] is not None else ()
            return PatternConstructor(ctor, [self.pattern(p) for p in subs if p is not None])
        subs = tree.children[0].children
        return PatternTuple([self.pattern(p) for p in subs if p is not None])

    def _ref_create(self, tree):
        value = yield self.expr(tree.children[0])
        return RefCreate(value, span=self.span(tree))

    def _ref_read(self, tree):
        ref = yield self.expr(tree.children[0])
        return RefRead(ref, span=self.span(tree))

    def _ref_write(self, tree):
        ref = yield self.expr(tree.children[0])
        value = yield self.expr(tree.children[1])
        return RefWrite(ref, value, span=self.span(tree))

    def _unit(self, tree):
        return Tuple([], span=self.span(tree))
        yield  # noqa

    def _paren(self, tree):
        return (yield self.expr(tree.children[0]))

    def _tuple(self, tree):
        fields = []
        for f in tree.children:
            if f is not None:
                fields.append((yield self.expr(f)))
        return Tuple(fields, span=self.span(tree))


_EXPR_RULES = ("block_expr", "seq", "local", "graph_ref", "global_ref", "name_ref", "int_literal",
               "float_literal", "true_literal", "false_literal", "meta_ref", "call", "projection",
               "infix_chain", "fn_expr", "if_expr", "match_total", "match_partial", "ref_create",
               "ref_read", "ref_write", "unit", "paren", "tuple")

__all__ = ["Builder"]
