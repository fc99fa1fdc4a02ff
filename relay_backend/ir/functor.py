"""ExprVisitor and ExprMutator: memoized traversals that do not hit Python's recursion limit.

`visit(e)` first walks e's dataflow sub-graph (call args, tuple fields, let values and bodies,
if conditions) with an explicit stack in post-order, dispatching each node once. When the
dispatched `visit_call` etc. then call `self.visit(child)`, the child is already memoized, so a
10,000-op chain costs constant stack depth. Function bodies, If branches and Match clauses are
entered by their own `visit`, so depth grows only with how deeply functions/branches nest.
"""
import inspect
import textwrap

from ..docstrings import WIDTH, section
from .adt import (Clause, Constructor, Match, PatternConstructor, PatternTuple, PatternVar,
                  PatternWildcard)
from .expr import (Call, Constant, Expr, Function, GlobalVar, If, Let, Op, RefCreate, RefRead,
                   RefWrite, Tuple, TupleGetItem, Var)

_DISPATCH = {
    Var: "visit_var", GlobalVar: "visit_global_var", Constant: "visit_constant", Op: "visit_op",
    Call: "visit_call", Function: "visit_function", Tuple: "visit_tuple",
    TupleGetItem: "visit_tuple_getitem", Let: "visit_let", If: "visit_if",
    RefCreate: "visit_ref_create", RefRead: "visit_ref_read", RefWrite: "visit_ref_write",
    Match: "visit_match", Constructor: "visit_constructor",
}


def _method_name(expr) -> str:
    for klass in type(expr).__mro__:
        name = _DISPATCH.get(klass)
        if name is not None:
            return name
    raise TypeError(f"not a relay expression: {type(expr).__name__}")


def dataflow_children(expr: Expr) -> tuple:
    """The sub-expressions a traversal pre-visits iteratively (not function bodies or branches)."""
    if isinstance(expr, Call):
        return (expr.op, *expr.args) if not isinstance(expr.op, Op) else expr.args
    if isinstance(expr, Tuple):
        return expr.fields
    if isinstance(expr, TupleGetItem):
        return (expr.tuple_value,)
    if isinstance(expr, Let):
        return (expr.value, expr.body)
    if isinstance(expr, If):
        return (expr.cond,)
    if isinstance(expr, RefCreate):
        return (expr.value,)
    if isinstance(expr, RefRead):
        return (expr.ref,)
    if isinstance(expr, RefWrite):
        return (expr.ref, expr.value)
    if isinstance(expr, Match):
        return (expr.data,)
    return ()


def post_order(expr: Expr, seen=None, children=dataflow_children):
    """Yield the dataflow sub-graph of `expr` in post-order, each node once (iteratively)."""
    seen = set() if seen is None else seen
    stack = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if node in seen:
            continue
        if expanded:
            seen.add(node)
            yield node
            continue
        stack.append((node, True))
        for child in reversed(children(node)):
            if child not in seen:
                stack.append((child, False))


class ExprFunctor:
    """Memoized dispatch on the expression's class; subclasses define visit_<kind>."""

    def __init__(self):
        self.memo_map = {}

    def visit(self, expr: Expr):
        """The result of the visit_<kind> method for `expr`'s class, computed once per node.

        The dataflow sub-graph of `expr` is dispatched first, children before parents, with an
        explicit stack, so a visit_<kind> that visits its children finds them memoized.

        Parameters
        ----------
        expr : Expr
            The expression to visit.

        Returns
        -------
        result : object
            What the visit_<kind> method returned for it (the same object on every call).
        """
        memo = self.memo_map
        if expr in memo:
            return memo[expr]
        for node in post_order(expr, seen=set(), children=self._previsit_children):
            if node not in memo:
                memo[node] = getattr(self, _method_name(node))(node)
        return memo[expr]

    def _previsit_children(self, expr):
        return [c for c in dataflow_children(expr) if c not in self.memo_map]


class ExprVisitor(ExprFunctor):
    """Visits every sub-expression once; override visit_<kind> and call super() to descend.

    (The visit_<kind> docstrings are written from _VISITED_PARTS, at the end of this module.)
    """

    def visit_var(self, var):
        pass

    def visit_global_var(self, gv):
        pass

    def visit_constant(self, c):
        pass

    def visit_op(self, op):
        pass

    def visit_constructor(self, c):
        pass

    def visit_call(self, call):
        self.visit(call.op)
        for a in call.args:
            self.visit(a)

    def visit_function(self, fn):
        for p in fn.params:
            self.visit(p)
        self.visit(fn.body)

    def visit_tuple(self, tup):
        for f in tup.fields:
            self.visit(f)

    def visit_tuple_getitem(self, tgi):
        self.visit(tgi.tuple_value)

    def visit_let(self, let):
        self.visit(let.var)
        self.visit(let.value)
        self.visit(let.body)

    def visit_if(self, ite):
        self.visit(ite.cond)
        self.visit(ite.true_branch)
        self.visit(ite.false_branch)

    def visit_ref_create(self, r):
        self.visit(r.value)

    def visit_ref_read(self, r):
        self.visit(r.ref)

    def visit_ref_write(self, r):
        self.visit(r.ref)
        self.visit(r.value)

    def visit_match(self, m):
        self.visit(m.data)
        for clause in m.clauses:
            self.visit_pattern(clause.lhs)
            self.visit(clause.rhs)

    def visit_pattern(self, pattern):
        if isinstance(pattern, PatternVar):
            self.visit(pattern.var)
        elif isinstance(pattern, (PatternConstructor, PatternTuple)):
            for p in pattern.patterns:
                self.visit_pattern(p)


class ExprMutator(ExprFunctor):
    """Rebuilds an expression bottom-up; a node whose children are unchanged is returned as is.

    (The visit_<kind> docstrings are written from _VISITED_PARTS, at the end of this module.)
    """

    def visit_var(self, var):
        return var

    def visit_global_var(self, gv):
        return gv

    def visit_constant(self, c):
        return c

    def visit_op(self, op):
        return op

    def visit_constructor(self, c):
        return c

    def visit_call(self, call):
        new_op = self.visit(call.op)
        new_args = [self.visit(a) for a in call.args]
        if new_op is call.op and all(n is o for n, o in zip(new_args, call.args)):
            return call
        return Call(new_op, new_args, call.attrs, call.type_args, span=call.span)

    def visit_function(self, fn):
        new_params = [self.visit(p) for p in fn.params]
        new_body = self.visit(fn.body)
        if new_body is fn.body and all(n is o for n, o in zip(new_params, fn.params)):
            return fn
        return Function(new_params, new_body, fn.ret_type, fn.type_params, fn.attrs, span=fn.span)

    def visit_tuple(self, tup):
        fields = [self.visit(f) for f in tup.fields]
        if all(n is o for n, o in zip(fields, tup.fields)):
            return tup
        return Tuple(fields, span=tup.span)

    def visit_tuple_getitem(self, tgi):
        value = self.visit(tgi.tuple_value)
        return tgi if value is tgi.tuple_value else TupleGetItem(value, tgi.index, span=tgi.span)

    def visit_let(self, let):
        var, value, body = self.visit(let.var), self.visit(let.value), self.visit(let.body)
        if var is let.var and value is let.value and body is let.body:
            return let
        return Let(var, value, body, span=let.span)

    def visit_if(self, ite):
        c, t, f = self.visit(ite.cond), self.visit(ite.true_branch), self.visit(ite.false_branch)
        if c is ite.cond and t is ite.true_branch and f is ite.false_branch:
            return ite
        return If(c, t, f, span=ite.span)

    def visit_ref_create(self, r):
        v = self.visit(r.value)
        return r if v is r.value else RefCreate(v, span=r.span)

    def visit_ref_read(self, r):
        v = self.visit(r.ref)
        return r if v is r.ref else RefRead(v, span=r.span)

    def visit_ref_write(self, r):
        ref, v = self.visit(r.ref), self.visit(r.value)
        return r if ref is r.ref and v is r.value else RefWrite(ref, v, span=r.span)

    def visit_match(self, m):
        data = self.visit(m.data)
        clauses = [Clause(self.visit_pattern(c.lhs), self.visit(c.rhs)) for c in m.clauses]
        if data is m.data and all(n.lhs is o.lhs and n.rhs is o.rhs for n, o in zip(clauses, m.clauses)):
            return m
        return Match(data, clauses, m.complete, span=m.span)

    def visit_pattern(self, pattern):
        if isinstance(pattern, PatternVar):
            v = self.visit(pattern.var)
            return pattern if v is pattern.var else PatternVar(v)
        if isinstance(pattern, PatternConstructor):
            subs = [self.visit_pattern(p) for p in pattern.patterns]
            if all(n is o for n, o in zip(subs, pattern.patterns)):
                return pattern
            return PatternConstructor(pattern.constructor, subs)
        if isinstance(pattern, PatternTuple):
            subs = [self.visit_pattern(p) for p in pattern.patterns]
            if all(n is o for n, o in zip(subs, pattern.patterns)):
                return pattern
            return PatternTuple(subs)
        assert isinstance(pattern, PatternWildcard), pattern
        return pattern


# kind -> (node class, what a visit reaches inside it): the visit_<kind> docstrings of both
# traversals are written from this table, so each node's parts are described once
_VISITED_PARTS = {
    "var": ("Var", ""), "global_var": ("GlobalVar", ""), "constant": ("Constant", ""),
    "op": ("Op", ""), "constructor": ("Constructor", ""),
    "call": ("Call", "its callee and its arguments"),
    "function": ("Function", "its parameters and its body"),
    "tuple": ("Tuple", "its fields"),
    "tuple_getitem": ("TupleGetItem", "the tuple it projects from"),
    "let": ("Let", "its variable, its value and its body"),
    "if": ("If", "its condition and both branches"),
    "ref_create": ("RefCreate", "its initial value"),
    "ref_read": ("RefRead", "the reference it reads"),
    "ref_write": ("RefWrite", "the reference and the value it writes"),
    "match": ("Match", "the matched value, then each clause's pattern and body"),
    "pattern": ("Pattern", "the variables it binds, through its nested patterns"),
}


def _a(node: str) -> str:
    return f"an {node}" if node[0] in "AEIOU" else f"a {node}"


def _visitor_summary(node: str, parts: str) -> str:
    if not parts:
        return (f"Visit {_a(node)} node, a leaf: nothing inside it is visited. Override it to act on "
                f"{node} nodes.")
    return (f"Visit {_a(node)} node by visiting {parts}. Override it to act on {node} nodes; call "
            f"super() to keep descending.")


def _mutator_summary(node: str, parts: str) -> str:
    if not parts:
        return f"Return {_a(node)} node as it is (a leaf); override it to replace {node} nodes."
    return (f"Rebuild {_a(node)} node from the results of visiting {parts}; the node itself when "
            f"none of them changed.")


def _describe_visits(cls, summary, returns: bool) -> None:
    """Write the docstring of each visit_<kind> method `cls` defines from _VISITED_PARTS."""
    for kind, (node, parts) in _VISITED_PARTS.items():
        method = vars(cls)[f"visit_{kind}"]
        parameter = list(inspect.signature(method).parameters)[1]
        entry = (parameter, f"relay.{node}", f"The {node} to visit.")
        doc = [textwrap.fill(summary(node, parts), WIDTH), section("Parameters", [entry])]
        if returns:
            doc.append(section("Returns", [("result", f"relay.{'Pattern' if node == 'Pattern' else 'Expr'}",
                                            f"What replaces the {node} in the rebuilt expression.")]))
        method.__doc__ = "\n\n".join(doc) + "\n"


_describe_visits(ExprVisitor, _visitor_summary, returns=False)
_describe_visits(ExprMutator, _mutator_summary, returns=True)


def post_order_visit(expr: Expr, fvisit) -> None:
    """Call a function on every sub-expression, children before their parents.

    Function bodies, branches and clause bodies are visited too.

    Parameters
    ----------
    expr : Expr
        The expression to walk.
    fvisit : callable
        Called as fvisit(node) once per node; its result is ignored.
    """
    for node in all_nodes_post_order(expr):
        fvisit(node)


def all_children(e) -> tuple:
    """Every direct sub-expression of `e`: function params and bodies, branches, clause bodies,
    let variables, the callee and the arguments (dataflow_children plus the rest)."""
    if isinstance(e, Function):
        return (*e.params, e.body)
    if isinstance(e, If):
        return (e.cond, e.true_branch, e.false_branch)
    if isinstance(e, Match):
        return (e.data, *(c.rhs for c in e.clauses))
    if isinstance(e, Let):
        return (e.var, e.value, e.body)
    if isinstance(e, Call):
        return (e.op, *e.args)
    return dataflow_children(e)


def all_nodes_post_order(expr: Expr):
    """Every sub-expression, including function bodies, branches and clauses, in post-order."""
    return post_order(expr, children=all_children)


def all_nodes_pre_order(expr: Expr, children=all_children):
    """Every sub-expression once, parents before children and left to right (the order a reader
    meets them), iteratively."""
    seen, stack = set(), [expr]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        yield node
        stack.extend(reversed(children(node)))
