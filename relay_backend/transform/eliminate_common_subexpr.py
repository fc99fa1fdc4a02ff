"""EliminateCommonSubexpr (tvm.relay.transform.EliminateCommonSubexpr): compute each repeated
operator call once.

Guarantee: two calls of the same operator with the same attributes, type arguments and (after
this rewrite) the very same argument expressions (or scalar constants of equal value and dtype,
as Relay compares them) become one node, and so do two projections of
the same tuple at the same index; everything else is unchanged, so meaning is unchanged
(operators are pure). `fskip(expr) -> bool` exempts chosen calls (build's pipeline keeps
casts to int32 apart, as Relay does). Calls of functions are never merged: a function may
have effects. Function bodies are handled independently of each other (a call is never merged
with one in a different function).
"""
from ..ir.expr import Constant
from ..ir.functor import ExprMutator
from ..op.registry import OpDef
from .pass_infra import function_pass
from .to_a_normal_form import keep_type


def _arg_key(arg):
    """How an argument is compared: scalar constants by dtype and value, the rest by identity."""
    if isinstance(arg, Constant) and arg.data.ndim == 0:
        value = arg.data.view_numpy()
        return ("scalar", str(value.dtype), value.item())
    return arg


def _attrs_equal(a, b) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):   # attrs holding arrays
        return False


class CommonSubexprEliminator(ExprMutator):
    def __init__(self, fskip=None):
        super().__init__()
        self.fskip = fskip
        self.seen = {}   # (op, argument keys...) -> [calls seen so far]

    def visit_function(self, fn):
        if fn.is_primitive:
            return fn
        outer, self.seen = self.seen, {}
        try:
            return keep_type(super().visit_function(fn), fn)
        finally:
            self.seen = outer

    def visit_call(self, call):
        new = keep_type(super().visit_call(call), call)
        if not isinstance(new.op, OpDef) or getattr(new.op, "stateful", False):
            return new
        if self.fskip is not None and self.fskip(new):
            return new
        key = (new.op, *(_arg_key(a) for a in new.args))
        for cand in self.seen.get(key, ()):
            if _attrs_equal(cand.attrs, new.attrs) and tuple(cand.type_args) == tuple(new.type_args):
                return cand
        self.seen.setdefault(key, []).append(new)
        return new

    def visit_tuple_getitem(self, tgi):
        new = keep_type(super().visit_tuple_getitem(tgi), tgi)
        key = ("TupleGetItem", new.tuple_value, new.index)
        cand = self.seen.get(key)
        if cand is not None:
            return cand[0]
        self.seen[key] = [new]
        return new


def eliminate_common_subexpr(expr, fskip=None):
    """`expr` with its repeated operator calls shared."""
    return CommonSubexprEliminator(fskip).visit(expr)


def EliminateCommonSubexpr(fskip=None):  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 3): compute each repeated operator call once.

    Parameters
    ----------
    fskip : callable, optional
        fskip(expr) -> bool; calls for which it returns True are never merged. Defaults to
        None (merge every eligible call).

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """
    return function_pass(lambda func, mod, ctx: eliminate_common_subexpr(func, fskip),
                         opt_level=3, name="EliminateCommonSubexpr", required=["InferType"])


__all__ = ["EliminateCommonSubexpr", "eliminate_common_subexpr"]
