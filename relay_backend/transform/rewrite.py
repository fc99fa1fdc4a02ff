"""The rewrite engine behind SimplifyExpr, CanonicalizeOps and FastMath: bottom-up rewriting
of operator calls by rules looked up by op name, to a fixpoint, keeping every expression typed.

A rule is `rule(call) -> Expr or None`; it sees a call whose arguments are already rewritten
and typed (`arg.checked_type`) and returns a replacement with the same type, or None. A
replacement is typed locally (each new call's type from its op's relation, `type_locally`) and
rewritten again, so rules compose (x * 1 * 1 collapses in one run). Functions that are
primitive (fused) are left alone. Input functions without types are typed first.
"""
from ..ir.expr import Call, Constant, Function, GlobalVar, Tuple, TupleGetItem
from ..ir.functor import dataflow_children, post_order
from ..ir.module import IRModule
from ..ir.types import TensorType, TupleType
from ..op.registry import OpDef
from .infer_type import InferType
from .to_a_normal_form import TypedMutator, keep_type

MAX_REWRITES_PER_NODE = 64


def _untyped_children(expr):
    return [c for c in dataflow_children(expr) if getattr(c, "_checked_type_", None) is None]


def type_locally(expr):
    """Give the new (untyped) operator calls, tuples, projections and constants of `expr` their
    types from their children's; returns expr. Nodes already typed are trusted."""
    for node in post_order(expr, children=_untyped_children):
        if getattr(node, "_checked_type_", None) is not None:
            continue
        if isinstance(node, Constant):
            node._checked_type_ = TensorType(node.data.shape, node.data.dtype)
        elif isinstance(node, Tuple):
            if all(getattr(f, "_checked_type_", None) is not None for f in node.fields):
                node._checked_type_ = TupleType([f.checked_type for f in node.fields])
        elif isinstance(node, TupleGetItem):
            t = getattr(node.tuple_value, "_checked_type_", None)
            if isinstance(t, TupleType):
                node._checked_type_ = t.fields[node.index]
        elif isinstance(node, Call) and isinstance(node.op, OpDef):
            if all(getattr(a, "_checked_type_", None) is not None for a in node.args):
                node._checked_type_ = node.op.rel([a.checked_type for a in node.args], node.attrs)
    return expr


class Rewriter(TypedMutator):
    """Applies `rules` ({op name: [rule, ...]}) bottom-up until none fires."""

    def __init__(self, rules: dict):
        super().__init__()
        self.rules = rules

    def visit_function(self, fn):
        return fn if fn.is_primitive else super().visit_function(fn)

    def visit_call(self, call):
        new = super().visit_call(call)
        type_locally(new)
        return self.rewrite(new)

    def rewrite(self, expr):
        for _ in range(MAX_REWRITES_PER_NODE):
            if not (isinstance(expr, Call) and isinstance(expr.op, OpDef)):
                return expr
            for rule in self.rules.get(expr.op.name, ()):
                out = rule(expr)
                if out is not None and out is not expr:
                    type_locally(out)
                    expr = self._rewrite_new_parts(out)
                    break
            else:
                return expr
        return expr

    def _rewrite_new_parts(self, expr):
        """Rewrite the sub-expressions a rule just built (old ones are memoized), not the root."""
        if isinstance(expr, Call):
            args = [self.visit(a) for a in expr.args]
            if all(n is o for n, o in zip(args, expr.args)):
                return expr
            return type_locally(keep_type(Call(expr.op, args, expr.attrs, expr.type_args), expr))
        return self.visit(expr)


def typed_function(func: Function, mod: IRModule) -> Function:
    """`func` with inferred types, inferring them in the context of `mod` if missing."""
    if func._checked_type_ is not None:
        return func
    scratch = mod.copy() if mod is not None else IRModule()
    gv = next((g for g, f in scratch.functions.items() if f is func), None)
    if gv is None:
        gv = GlobalVar("__rewrite_target")
        scratch[gv] = func
    return InferType()(scratch)[gv]


def rewrite_function(func: Function, mod: IRModule, rules: dict) -> Function:
    """`func` typed and rewritten by `rules`."""
    return Rewriter(rules).visit(typed_function(func, mod))


__all__ = ["Rewriter", "type_locally", "typed_function", "rewrite_function"]
