"""ToANormalForm: bind every non-atomic expression to a variable (tvm.relay.transform).

Guarantee: in the result every operand of a call, tuple, projection, If condition or reference
operation is atomic (a variable, global variable, operator or constructor); each compound
expression, constants and nested functions included, is bound once by a `let`, in the
innermost scope enclosing all of its uses (analysis.scope_tree), so shared sub-expressions are
computed once and a value used only inside a branch stays inside it. Existing lets are flattened
into their enclosing block. Meaning is unchanged: evaluation order follows the dataflow order of
the input. Primitive (fused) functions and functions given to an external compiler are left
alone; rebuilt expressions keep their inferred types. Idempotent.

`Fill` is shared with ToBasicBlockNormalForm, which binds only the lifted expressions.
"""
from ..analysis.scope_tree import ATOMS, LetBinding, ScopeTree
from ..ir.adt import Clause, Match
from ..ir.expr import (Call, Constant, Function, If, Let, RefCreate, RefRead, RefWrite, Tuple,
                       TupleGetItem, Var)
from ..ir.functor import ExprMutator
from .pass_infra import module_pass


def keep_type(new, old):
    """Give a rebuilt expression the inferred type of the one it replaces."""
    if new is not old and getattr(old, "_checked_type_", None) is not None and \
            getattr(new, "_checked_type_", None) is None:
        new._checked_type_ = old._checked_type_
    return new


class TypedMutator(ExprMutator):
    """An ExprMutator whose rebuilt calls, tuples, projections, lets, Ifs and functions keep the
    inferred type of the node they replace (so rewrites can keep reading `checked_type`)."""

    def visit_call(self, call):
        return keep_type(super().visit_call(call), call)

    def visit_tuple(self, tup):
        return keep_type(super().visit_tuple(tup), tup)

    def visit_tuple_getitem(self, tgi):
        return keep_type(super().visit_tuple_getitem(tgi), tgi)

    def visit_let(self, let):
        return keep_type(super().visit_let(let), let)

    def visit_if(self, ite):
        return keep_type(super().visit_if(ite), ite)

    def visit_function(self, fn):
        return keep_type(super().visit_function(fn), fn)


class Fill:
    """Emits the let bindings of a ScopeTree. bind_all=True gives A-normal form (every compound
    bound, lets flattened); False gives basic block normal form (lifted ones only)."""

    def __init__(self, tree: ScopeTree, bind_all: bool):
        self.tree = tree
        self.bind_all = bind_all
        self.lists = {}     # Scope -> [(var, value)] in binding order
        self.atom = {}      # expr -> its replacement (a variable, or the rebuilt expr inline)
        self.direct = {}    # ANF: a let's single-use compound value -> the let's own variable
        if bind_all:
            for let, marker in tree.markers.items():
                value = let.value
                if not isinstance(value, ATOMS + (Let,)) and tree.uses.get(value) == 1:
                    self.direct[value] = let.var

    # --- blocks --------------------------------------------------------------------------------
    def block(self, scope) -> list:
        if self.bind_all:   # A-normal form flattens lets into the block around them
            while scope.is_let:
                scope = scope.parent
        return self.lists.setdefault(scope, [])

    def wrap(self, scope, body):
        """`body` preceded by the bindings placed in `scope`."""
        for var, value in reversed(self.lists.pop(scope, [])):
            body = keep_type(Let(var, value, body), body)
        return body

    def get(self, expr):
        return self.atom.get(expr, expr)

    # --- emission ------------------------------------------------------------------------------
    def run(self):
        tree = self.tree
        for item in tree.order:
            if isinstance(item, LetBinding):
                let = item.let
                if self.direct.get(let.value) is not let.var:
                    self.block(tree.sub_scope(let, "let")).append((let.var, self.get(let.value)))
                continue
            if isinstance(item, ATOMS):
                continue
            if isinstance(item, Let) and self.bind_all:
                self.atom[item] = self.get(item.body)
                continue
            self.atom[item] = self._place(item, keep_type(self._rebuild(item), item))
        result = self.get(tree.root)
        if isinstance(tree.root, Function):
            return result
        return self.wrap(tree.scope(tree.root), result)

    def _place(self, item, new):
        """Bind `new` (the rebuilt `item`) to a variable if this normal form wants it bound."""
        tree = self.tree
        if item is tree.root and isinstance(item, Function):
            return new
        if self.bind_all:
            var = self.direct.get(item) or Var("x")
        elif item in tree.lifted and not isinstance(item, Constant):  # constants are atoms here
            var = Var("x")
        else:
            return new
        keep_type(var, item)
        self.block(tree.scope(item)).append((var, new))
        return var

    def _rebuild(self, e):
        get, sub = self.get, self.tree.sub_scope
        if isinstance(e, Constant) or isinstance(e, Function) and e.is_primitive:
            return e
        if isinstance(e, Call):
            op, args = get(e.op), [get(a) for a in e.args]
            if op is e.op and all(n is o for n, o in zip(args, e.args)):
                return e
            return Call(op, args, e.attrs, e.type_args)
        if isinstance(e, Tuple):
            fields = [get(f) for f in e.fields]
            return e if all(n is o for n, o in zip(fields, e.fields)) else Tuple(fields)
        if isinstance(e, TupleGetItem):
            value = get(e.tuple_value)
            return e if value is e.tuple_value else TupleGetItem(value, e.index)
        if isinstance(e, RefCreate):
            value = get(e.value)
            return e if value is e.value else RefCreate(value)
        if isinstance(e, RefRead):
            ref = get(e.ref)
            return e if ref is e.ref else RefRead(ref)
        if isinstance(e, RefWrite):
            ref, value = get(e.ref), get(e.value)
            return e if ref is e.ref and value is e.value else RefWrite(ref, value)
        if isinstance(e, Function):
            body = self.wrap(sub(e, "body"), get(e.body))
            if body is e.body:
                return e
            return Function(e.params, body, e.ret_type, e.type_params, e.attrs)
        if isinstance(e, If):
            cond = get(e.cond)
            then = self.wrap(sub(e, "then"), get(e.true_branch))
            other = self.wrap(sub(e, "else"), get(e.false_branch))
            if cond is e.cond and then is e.true_branch and other is e.false_branch:
                return e
            return If(cond, then, other)
        if isinstance(e, Match):
            data = get(e.data)
            clauses = [Clause(c.lhs, self.wrap(sub(e, i), get(c.rhs))) for i, c in enumerate(e.clauses)]
            if data is e.data and all(n.rhs is o.rhs for n, o in zip(clauses, e.clauses)):
                return e
            return Match(data, clauses, e.complete)
        if isinstance(e, Let):   # basic block form keeps the let, its block wrapped around the body
            body = self.wrap(sub(e, "let"), get(e.body))
            if isinstance(body, Let) and body.var is e.var and body.value is e.value and \
                    body.body is e.body:
                return e
            return body
        raise TypeError(f"normal form: unknown expression {type(e).__name__}")


def to_a_normal_form(expr):
    """The A-normal form of one expression or function (tvm's ToANormalFormExpr): every
    intermediate value bound by a let.

    Parameters
    ----------
    expr : Expr
        The expression or function to convert; a function keeps its parameters and gets its
        body converted.

    Returns
    -------
    expr : Expr
        The expression in A-normal form.
    """
    return Fill(ScopeTree(expr), bind_all=True).run()


ToANormalFormExpr = to_a_normal_form


def skip_for_normal_form(func) -> bool:
    """Functions the module-level normal-form passes leave alone (given to external compilers)."""
    return not isinstance(func, Function) or func.attrs.get("Compiler") is not None


def normal_form_pass(convert, name: str):
    """A module pass (opt_level 1) applying `convert` to every global function except those
    given to an external compiler."""

    def transform(mod, ctx):
        out = mod.copy()
        for gv, func in mod.functions.items():
            if not skip_for_normal_form(func):
                out[gv] = convert(func)
        return out

    return module_pass(transform, opt_level=1, name=name)


def ToANormalForm():  # noqa: N802 - tvm.relay naming
    """Module pass (opt_level 1): every global function in A-normal form."""
    return normal_form_pass(to_a_normal_form, "ToANormalForm")


__all__ = ["ToANormalForm", "ToANormalFormExpr", "to_a_normal_form", "Fill", "keep_type",
           "skip_for_normal_form", "normal_form_pass", "TypedMutator"]
