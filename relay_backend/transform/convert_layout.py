"""ConvertLayout (tvm.relay.transform.ConvertLayout): run chosen operators in other data layouts.

`ConvertLayout({"nn.conv2d": ["NHWC", "default"]})` rewrites every conv2d to NHWC data (and the
default kernel layout for it, HWIO; or the given one) using the op's FTVMConvertOpLayout rule,
inserting layout_transform where a value's layout must change. The new layout then travels
forward through the ops whose FInferCorrectLayout rule allows it (elementwise and broadcast
ops, bias_add, pools, batch_norm, layer_norm, softmax, reductions, pad, split, concatenate of
a tuple: their axis attributes are remapped; a transpose absorbs the change; op/layout_rules.py),
so a conv -> bias -> relu -> pool -> conv chain is transformed once at its start and once at its
end, and the branches of a concatenate stay in the new layout. Wherever a value must be in its original layout (an op without a
rule, a tuple, the function's result, ...) it is transformed back.

Guarantee: the result computes the same values as the input (layout_transform is exact); only
data movement changes. Opt_level 3; needs types (InferType runs first when missing) and, as in
Relay, CanonicalizeOps is required. Run FoldConstant afterwards to fold the transforms of
constant weights.
"""
from ..errors import RelayError
from ..ir.adt import Clause, Match
from ..ir.expr import Call, Function, If, Let, Tuple, TupleGetItem
from ..ir.functor import ExprMutator
from ..op.layout_rules import UNKNOWN, PerField, Transform, keep_original
from ..op.registry import OpDef
from .pass_infra import function_pass
from .rewrite import typed_function


class LayoutRewriter(ExprMutator):
    """Rewrites calls bottom-up; `info` holds the LayoutInfo (or list for tuples) of each new
    expression; every non-call consumer gets the original layout back (`realize`).

    `new_op_and_attrs(call)` says what a call becomes (ConvertLayout: the same op with converted
    layouts; AlterOpLayout: possibly another op); the (new) op's FInferCorrectLayout rule then
    decides how each argument is adapted and which layout the result is in. A tuple keeps its
    fields' layouts: a rule with `takes_tuples` (concatenate) gets them as a list, any other
    consumer gets the tuple realized. One layout transform of a value per (source, destination)
    is shared by all its consumers."""

    def __init__(self):
        super().__init__()
        self.info = {}
        self._transforms = {}

    def new_op_and_attrs(self, call):
        return call.op, call.attrs

    def layout_of(self, expr):
        return self.info.get(expr, UNKNOWN)

    def realize(self, expr):
        """`expr` in its original layout (a tuple field by field)."""
        info = self.info.get(expr)
        if info is None:
            return expr
        if isinstance(info, list):
            if not any(i.changed for i in info):
                return expr
            fields = expr.fields if isinstance(expr, Tuple) else \
                [TupleGetItem(expr, k) for k in range(len(info))]
            return Tuple([self._realize_one(f, i) for f, i in zip(fields, info)])
        return self._realize_one(expr, info)

    def _realize_one(self, expr, info):
        if not info.changed:
            return expr
        return self._adapt(expr, Transform(info.cur, info.orig))

    def _adapt(self, arg, adapt):
        """adapt(arg); a layout Transform of a value is made once and shared by its consumers
        (also inside a tuple adapted field by field)."""
        if isinstance(adapt, PerField):
            return adapt(arg, self._adapt)
        if not isinstance(adapt, Transform):
            return adapt(arg)
        key = (arg, adapt.src, adapt.dst)
        if key not in self._transforms:
            self._transforms[key] = adapt(arg)
        return self._transforms[key]

    def visit_call(self, call):
        args = [self.visit(a) for a in call.args]
        if not isinstance(call.op, OpDef):
            return Call(self.visit(call.op), [self.realize(a) for a in args], call.attrs, call.type_args)
        op, attrs = self.new_op_and_attrs(call)
        rule = op.get_attr("FInferCorrectLayout") or keep_original
        if getattr(rule, "takes_tuples", False):
            infos = [self._field_infos(a, orig) for a, orig in zip(args, call.args)]
        else:
            args = [self.realize(a) if isinstance(self.info.get(a), list) else a for a in args]
            infos = [self._tensor_info(a) for a in args]
        decision = rule(call, attrs, infos)
        new_args = [self._adapt(a, adapt) if adapt is not None else a for a, adapt in zip(args, decision.inputs)]
        new = Call(op, new_args, decision.attrs, call.type_args if op is call.op else None)
        self.info[new] = decision.outputs
        return new

    def _field_infos(self, expr, original):
        """The list of a tuple argument's field layouts; a tuple that no rewritten op made (a
        tuple-typed parameter, a call returning a tuple) has every field in its original layout."""
        info = self.info.get(expr)
        if isinstance(info, list):
            return info
        fields = getattr(original.checked_type, "fields", None)
        return [UNKNOWN] * len(fields) if fields is not None else UNKNOWN

    def _tensor_info(self, expr):
        info = self.info.get(expr, UNKNOWN)
        return UNKNOWN if isinstance(info, list) else info

    def visit_tuple_getitem(self, tgi):
        value = self.visit(tgi.tuple_value)
        info = self.info.get(value)
        new = TupleGetItem(value, tgi.index)
        if isinstance(info, list):
            self.info[new] = info[tgi.index]
        return new

    def visit_tuple(self, tup):
        """Fields keep their new layouts (a consumer with a tuple rule, e.g. concatenate, can use
        them; any other consumer realizes the tuple); nested tuples are realized."""
        fields = [self.visit(f) for f in tup.fields]
        fields = [self.realize(f) if isinstance(self.info.get(f), list) else f for f in fields]
        new = Tuple(fields)
        self.info[new] = [self._tensor_info(f) for f in fields]
        return new

    def visit_let(self, let):
        return Let(let.var, self.realize(self.visit(let.value)), self.realize(self.visit(let.body)))

    def visit_if(self, ite):
        return If(self.realize(self.visit(ite.cond)), self.realize(self.visit(ite.true_branch)),
                  self.realize(self.visit(ite.false_branch)))

    def visit_function(self, fn):
        if fn.is_primitive:
            return fn
        return Function(fn.params, self.realize(self.visit(fn.body)), fn.ret_type, fn.type_params,
                        fn.attrs)

    def visit_match(self, m):
        clauses = [Clause(c.lhs, self.realize(self.visit(c.rhs))) for c in m.clauses]
        return Match(self.realize(self.visit(m.data)), clauses, m.complete)

    def visit_ref_create(self, r):
        return type(r)(self.realize(self.visit(r.value)))

    def visit_ref_write(self, r):
        return type(r)(self.realize(self.visit(r.ref)), self.realize(self.visit(r.value)))


class LayoutConverter(LayoutRewriter):
    """ConvertLayout's rewriter: ops named in `desired_layouts` get their FTVMConvertOpLayout
    attrs."""

    def __init__(self, desired_layouts: dict):
        super().__init__()
        self.desired = desired_layouts

    def new_op_and_attrs(self, call):
        convert = call.op.get_attr("FTVMConvertOpLayout")
        if call.op.name in self.desired and convert is not None:
            return call.op, convert(call, self.desired[call.op.name])
        return call.op, call.attrs


def convert_layout(func: Function, desired_layouts: dict, mod=None) -> Function:
    """`func` with the ops of `desired_layouts` ({op name: [layouts]}) converted."""
    if not isinstance(desired_layouts, dict) or not all(
            isinstance(k, str) and isinstance(v, (list, tuple)) for k, v in desired_layouts.items()):
        raise RelayError("ConvertLayout expects {op name: [data layout, kernel layout]}, e.g. "
                         "{'nn.conv2d': ['NHWC', 'default']}")
    func = typed_function(func, mod)
    return LayoutConverter(desired_layouts).visit(func)


def ConvertLayout(desired_layouts: dict):  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 3; requires InferType and CanonicalizeOps, as Relay): rewrite
    layout-sensitive ops to the layouts asked for, with layout_transforms around them.

    Parameters
    ----------
    desired_layouts : dict of str to list of str
        {op name: [data layout, kernel layout]}, e.g. {"nn.conv2d": ["NHWC", "default"]};
        "default" picks the kernel layout that goes with the data layout.

    Returns
    -------
    pass : Pass
        The pass; call it on an IRModule.
    """
    if not isinstance(desired_layouts, dict):
        raise RelayError("ConvertLayout expects a dict {op name: [layouts]}, e.g. "
                         "{'nn.conv2d': ['NHWC', 'default']}")
    return function_pass(lambda func, mod, ctx: convert_layout(func, desired_layouts, mod),
                         opt_level=3, name="ConvertLayout", required=["InferType", "CanonicalizeOps"])


__all__ = ["ConvertLayout", "convert_layout", "LayoutConverter", "LayoutRewriter"]
