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
from ..op.layout import layout_transform
from ..op.layout_rules import UNKNOWN, keep_original
from ..op.registry import OpDef
from .pass_infra import function_pass
from .rewrite import typed_function


class LayoutConverter(ExprMutator):
    """Rewrites calls bottom-up; `info` holds the LayoutInfo (or list for tuples) of each new
    expression; every non-call consumer gets the original layout back (`realize`)."""

    def __init__(self, desired_layouts: dict):
        super().__init__()
        self.desired = desired_layouts
        self.info = {}
        self._realized = {}

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
        done = self._realized.get(expr)
        if done is None:
            done = self._realized[expr] = layout_transform(expr, info.cur, info.orig)
        return done

    def visit_call(self, call):
        args = [self.visit(a) for a in call.args]
        if not isinstance(call.op, OpDef):
            return Call(self.visit(call.op), [self.realize(a) for a in args], call.attrs, call.type_args)
        op = call.op
        attrs = call.attrs
        convert = op.get_attr("FTVMConvertOpLayout")
        if op.name in self.desired and convert is not None:
            attrs = convert(call, self.desired[op.name])
        rule = op.get_attr("FInferCorrectLayout") or keep_original
        if getattr(rule, "takes_tuples", False):
            infos = [self.info.get(a, UNKNOWN) for a in args]
        else:
            args = [self.realize(a) if isinstance(self.info.get(a), list) else a for a in args]
            infos = [self._tensor_info(a) for a in args]
        decision = rule(call, attrs, infos)
        new_args = [adapt(a) if adapt is not None else a for a, adapt in zip(args, decision.inputs)]
        new = Call(op, new_args, decision.attrs, call.type_args)
        self.info[new] = decision.outputs
        return new

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


def convert_layout(func: Function, desired_layouts: dict, mod=None) -> Function:
    """`func` with the ops of `desired_layouts` ({op name: [layouts]}) converted."""
    if not isinstance(desired_layouts, dict) or not all(
            isinstance(k, str) and isinstance(v, (list, tuple)) for k, v in desired_layouts.items()):
        raise RelayError("ConvertLayout expects {op name: [data layout, kernel layout]}, e.g. "
                         "{'nn.conv2d': ['NHWC', 'default']}")
    func = typed_function(func, mod)
    return LayoutConverter(desired_layouts).visit(func)


def ConvertLayout(desired_layouts: dict):  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 3; requires InferType and CanonicalizeOps, as Relay)."""
    if not isinstance(desired_layouts, dict):
        raise RelayError("ConvertLayout expects a dict {op name: [layouts]}, e.g. "
                         "{'nn.conv2d': ['NHWC', 'default']}")
    return function_pass(lambda func, mod, ctx: convert_layout(func, desired_layouts, mod),
                         opt_level=3, name="ConvertLayout", required=["InferType", "CanonicalizeOps"])


__all__ = ["ConvertLayout", "convert_layout", "LayoutConverter"]
