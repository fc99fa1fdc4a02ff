"""DynamicToStatic: dyn.* calls whose shape arguments are constants become the static ops.

`dyn.reshape(%x, [6, -1])` becomes `reshape(%x, newshape=[6, -1])`, so the output type is static
again and the graph and AOT executors can run the program. Shape arguments often become constant
only after folding (`dyn.reshape(%x, shape_of(%y))` with %y static: FoldConstant turns shape_of
into a constant), so the pass repeats InferType, the rewrite and FoldConstant until nothing
changes, as TVM's does. Each op says how (OpDef.to_static / static_inputs, op/dyn/common.py), so
the pass has no per-op code. A constant that the static op rejects (a newshape that does not
fit the data) is reported here, naming the op and the values.
"""
from ..ir.expr import Call, Constant, Function
from ..ir.functor import ExprMutator
from ..ir.dims import is_any
from ..ir.types import TensorType, tuple_leaves
from ..op.registry import OpDef
from .fold_constant import FoldConstant
from .infer_type import InferType
from .pass_infra import module_pass

MAX_ROUNDS = 16   # each round that changes something removes at least one dyn call


class _Rewriter(ExprMutator):
    """One bottom-up sweep replacing dyn calls whose shape arguments are all constants."""

    def __init__(self):
        super().__init__()
        self.changed = False

    def visit_call(self, call):
        new = super().visit_call(call)
        op = new.op
        if not isinstance(op, OpDef) or op.to_static is None:
            return new
        shape_args = [a for k, a in enumerate(new.args) if k not in op.static_inputs]
        if not all(isinstance(a, Constant) for a in shape_args):
            return new
        values = [None if k in op.static_inputs else a.data.numpy() for k, a in enumerate(new.args)]
        static_op, attrs = op.to_static(values, new.attrs)
        self.changed = True
        return Call(static_op, [new.args[k] for k in op.static_inputs], attrs)

    def visit_function(self, fn):
        if fn.is_primitive:
            return fn
        return super().visit_function(fn)


def _fresh_ret_type(fn: Function) -> Function:
    """`fn` without a return type that has Any dims (InferType wrote it for the dyn calls), so
    the next InferType gives the one the static body has."""
    if any(is_any(d) for t in tuple_leaves(fn.ret_type) if isinstance(t, TensorType) for d in t.shape):
        return Function(fn.params, fn.body, None, fn.type_params, fn.attrs)
    return fn


def dynamic_to_static(mod):
    """The DynamicToStatic rewrite of every function of `mod` (a new module)."""
    fold = FoldConstant()
    for _ in range(MAX_ROUNDS):
        mod = fold(InferType()(mod))
        changed = False
        updates = {}
        for gv, fn in mod.functions.items():
            rewriter = _Rewriter()
            new = rewriter.visit(fn)
            if rewriter.changed:
                updates[gv] = new
                changed = True
        if not changed:
            break
        mod = mod.copy()
        for gv, fn in updates.items():
            mod[gv] = fn
    out = mod.copy()
    for gv, fn in mod.functions.items():
        out[gv] = _fresh_ret_type(fn)
    return InferType()(out)


def DynamicToStatic():  # noqa: N802 - tvm.relay naming
    """Module pass (opt_level 3): dyn.* calls with constant shape arguments -> static ops."""

    def transform(mod, ctx):
        return dynamic_to_static(mod)

    return module_pass(transform, opt_level=3, name="DynamicToStatic")


__all__ = ["DynamicToStatic", "dynamic_to_static"]
