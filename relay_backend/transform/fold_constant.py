"""FoldConstant: evaluate operator calls whose inputs are all constants, at compile time.

Each such call is computed with the operator's own numpy reference (`op.ref`), the same one the
debug interpreter runs, so this pass does not depend on the interpreter or the compiler. The
output's size is checked first (op.output_size), so a constant too large to allocate raises an
AllocationError naming the op instead of a MemoryError. The
output type comes from the op's type relation, and the result is cast to its dtype, so folding
never changes a dtype. Also (as TVM does): `let x = <Constant>` is substituted into its uses and
dropped, `TupleGetItem(Tuple(...), i)` becomes field i, and an If whose condition is (or folds to)
a constant becomes the branch it takes; a shape-only op (shape_of, ndarray_size) of a value whose
inferred shape is static becomes its value. Calls to Functions or GlobalVars, bodies of primitive
(fused) functions and stateful ops are left alone. Dropout of a constant folds to its data through
its reference (inference semantics); of a variable it is SimplifyInference's job, as in Relay.
The pass runs with transparent huge pages off for the process (runtime/page_size.small_pages):
its numpy results are fresh arrays used once, and on fragmented memory each huge-page fault
compacted memory first.
"""
import numpy as np

from ..errors import RelayError
from ..ir.expr import Constant, Tuple, bind_type
from ..ir.types import TensorType, TupleType, is_static, type_to_str
from ..op.output_size import check_output_size
from ..op.pattern import OpPattern
from ..op.registry import OpDef
from ..runtime import ndarray as _nd
from ..runtime.page_size import small_pages
from .let_chain import LetChainMutator
from .pass_infra import function_pass

# Ops with side effects or per-run results (e.g. random number generators). None exist yet; an
# op may also opt out by carrying a truthy `stateful` attribute on its OpDef.
NEVER_FOLD = set()


def is_foldable_op(op) -> bool:
    """Registered with a numpy reference, and not stateful (only OPAQUE ops are considered
    possibly stateful)."""
    if not isinstance(op, OpDef) or op.name in NEVER_FOLD or op.ref is None:
        return False
    return not (op.pattern == OpPattern.OPAQUE and getattr(op, "stateful", False))


def _is_constant(expr) -> bool:
    """A Constant, or a Tuple whose fields are (recursively) constants."""
    if isinstance(expr, Constant):
        return True
    return isinstance(expr, Tuple) and all(_is_constant(f) for f in expr.fields)


def constant_condition(expr):
    """True / False when `expr` is a constant scalar bool (an If condition known now), else None."""
    if not isinstance(expr, Constant) or expr.data.dtype != "bool" or expr.data.shape != ():
        return None   # not known, or ill-typed: InferType reports a non-bool condition
    return bool(expr.data.view_numpy())


def _value_and_type(expr):
    """(numpy value, relay type) of a constant expression; tuples become (list, TupleType)."""
    if isinstance(expr, Constant):
        arr = expr.data.view_numpy()
        return arr, TensorType(arr.shape, expr.data.dtype)
    pairs = [_value_and_type(f) for f in expr.fields]
    return [v for v, _ in pairs], TupleType([t for _, t in pairs])


def _to_expr(call, value, ty):
    """Wrap a reference result as a Constant (or Tuple of them) of type `ty`."""
    if isinstance(ty, TupleType):
        if not isinstance(value, (list, tuple)) or len(value) != len(ty.fields):
            raise RelayError(f"FoldConstant: {call.op.name} reference returned {type(value).__name__}, "
                             f"but its type relation says {type_to_str(ty)}; fix the op's ref")
        return bind_type(Tuple([_to_expr(call, v, t) for v, t in zip(value, ty.fields)]), ty)
    arr = np.asarray(value)
    if not isinstance(ty, TensorType):
        raise RelayError(f"FoldConstant: cannot fold {call.op.name} with output type {type_to_str(ty)}")
    expected = ty.shape
    if len(expected) != arr.ndim or any(is_static(d) and d != s for d, s in zip(expected, arr.shape)):
        raise RelayError(f"FoldConstant: {call.op.name} reference returned shape {tuple(arr.shape)}, "
                         f"but its type relation says {type_to_str(ty)}; fix the op's ref or rel")
    arr = arr.astype(ty.dtype, copy=False)
    return bind_type(Constant(_nd.array(arr)), TensorType(arr.shape, ty.dtype))


def evaluate_call(call):
    """The folded form of `call` (all args constant, op foldable), or None when it cannot fold."""
    op = call.op
    pairs = [_value_and_type(a) for a in call.args]
    try:
        out_type = op.rel([t for _, t in pairs], call.attrs)
    except RelayError:
        return None  # ill-typed: leave it for InferType to report with context
    check_output_size(op, out_type, "FoldConstant")   # before numpy allocates it
    with np.errstate(all="ignore"):  # fold exactly what run time would compute (inf/nan included)
        value = op.ref(*[v for v, _ in pairs], call.attrs)
    return _to_expr(call, value, out_type)


def _fold_shape_only(call, new):
    """The value of a call to a shape-only op (shape_of, ndarray_size) whose arguments' inferred
    types are static, from zero-stride stand-ins of those shapes (None when a shape is not known)."""
    types = [a._checked_type_ for a in call.args]
    if not all(isinstance(t, TensorType) and not t.is_dynamic for t in types):
        return None
    stand_ins = [np.broadcast_to(np.zeros((), t.dtype), tuple(int(d) for d in t.shape)) for t in types]
    try:
        out_type = new.op.rel(types, new.attrs)
    except RelayError:
        return None
    return _to_expr(new, new.op.ref(*stand_ins, new.attrs), out_type)


class ConstantFolder(LetChainMutator):
    """Rewrites bottom-up, so a chain of constant ops collapses in one traversal."""

    def visit_call(self, call):
        new = super().visit_call(call)
        if is_foldable_op(new.op) and all(_is_constant(a) for a in new.args):
            folded = evaluate_call(new)
            if folded is not None:
                return folded
        if isinstance(new.op, OpDef) and new.op.shape_only:
            folded = _fold_shape_only(call, new)
            if folded is not None:
                return folded
        return new

    def visit_if(self, ite):
        taken = constant_condition(self.visit(ite.cond))
        if taken is None:
            return super().visit_if(ite)
        return self.visit(ite.true_branch if taken else ite.false_branch)

    def visit_tuple_getitem(self, tgi):
        new = super().visit_tuple_getitem(tgi)
        if isinstance(new.tuple_value, Tuple):
            return new.tuple_value.fields[new.index]
        return new

    def visit_function(self, fn):
        if fn.is_primitive:
            return fn  # a fused kernel is compiled as a whole; folding inside it is not our job
        return super().visit_function(fn)

    def bind_let(self, let):
        super().bind_let(let)
        _, value = self._bound[let]
        if isinstance(value, Constant):
            self.memo_map[let.var] = value  # uses of the var now see the constant

    def rebuild_let(self, let, body):
        _, value = self._bound[let]
        if isinstance(value, Constant):
            del self._bound[let]
            return body
        return super().rebuild_let(let, body)


def fold_constant(expr, mod=None, fold_qnn: bool = False):
    """Fold the constant sub-expressions of one expression (tvm's FoldConstantExpr).

    Parameters
    ----------
    expr : Expr
        The expression.
    mod : IRModule, optional
        The module it belongs to (accepted for TVM's signature). Defaults to None.
    fold_qnn : bool, optional
        Accepted for TVM's signature. Defaults to False.

    Returns
    -------
    expr : Expr
        The folded expression.
    """
    return ConstantFolder().visit(expr)


FoldConstantExpr = fold_constant


def FoldConstant(fold_qnn: bool = False):  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 2): replace sub-expressions whose inputs are all constants by
    their values.

    Parameters
    ----------
    fold_qnn : bool, optional
        Accepted for TVM's signature (there are no QNN ops here). Defaults to False.

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """

    def transform(func, mod, ctx):
        with small_pages():       # hundreds of fresh arrays used once: no huge-page compaction
            return ConstantFolder().visit(func)

    return function_pass(transform, opt_level=2, name="FoldConstant")


__all__ = ["FoldConstant", "FoldConstantExpr", "fold_constant", "NEVER_FOLD", "is_foldable_op"]
