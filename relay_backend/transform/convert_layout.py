"""ConvertLayout (tvm.relay.transform.ConvertLayout): run chosen operators in other data layouts.

`ConvertLayout({"nn.conv2d": ["NHWC", "default"]})` rewrites every conv2d to NHWC data (and the
default kernel layout for it, HWIO; or the given one) using the op's FTVMConvertOpLayout rule,
inserting layout_transform where a value's layout must change. The new layout then travels
forward through the ops whose FInferCorrectLayout rule allows it (elementwise and broadcast
ops, bias_add, pools, batch_norm, softmax, reductions, pad: their axis attributes are remapped;
op/layout_rules.py), so a conv -> bias -> relu -> pool -> conv chain is transformed once at its
start and once at its end. Wherever a value must be in its original layout (an op without a
rule, a tuple, the function's result, ...) it is transformed back.

Guarantee: the result computes the same values as the input (layout_transform is exact); only
data movement changes. Opt_level 3; needs types (InferType runs first when missing) and, as in
Relay, CanonicalizeOps is required. Run FoldConstant afterwards to fold the transforms of
constant weights.
"""
from ..errors import RelayError
from ..ir.expr import Call, Function, If, Let, Tuple, TupleGetItem
from ..ir.functor import ExprMutator
from ..op.layout_rules import UNKNOWN, Transform, keep_original
from ..op.registry import OpDef
from .pass_infra import function_pass
from .rewrite import typed_function


class LayoutRewriter(ExprMutator):
    """Rewrites calls bottom-up; `info` holds the LayoutInfo (or list for tuples) of each new
    expression; every non-call consumer gets the original layout back (`realize`).

    `new_op_and_attrs(call)` says what a call becomes (ConvertLayout: the same op with converted
    layouts; AlterOpLayout: possibly another op); the (new) op's FInferCorrectLayout rule then
    decides how each argument is adapted and which layout the result is in. A literal Tuple
    argument (concatenate's input) passes its fields' layouts to the rule as a list."""

    def __init__(self):
        super().__init__()
        self.info = {}
        self._transforms = {}

    def new_op_and_attrs(self, call):
        return call.op, call.attrs

    def layout_of(self, expr):
        return self.info.get(expr, UNKNOWN)

    def realize(self, expr):
        """`expr` in its original layout."""
        info = self.info.get(expr)
        if info is None:
            return expr
        if isinstance(info, list):
            if not any(i.changed for i in info):
                return expr
            return Tuple([self._realize_one(TupleGetItem(expr, k), i) for k, i in enumerate(info)])
        return self._realize_one(expr, info)

    def _realize_one(self, expr, info):
        if not info.changed:
            return expr
        return self._adapt(expr, Transform(info.cur, info.orig))

    def _visit_arg(self, arg):
        """(new argument, its layout info): a literal Tuple keeps its fields' layouts."""
        if isinstance(arg, Tuple):
            fields = [self.visit(f) for f in arg.fields]
            return Tuple(fields), [self._tensor_info(f) for f in fields]
        new = self.visit(arg)
        return new, self._tensor_info(new)

    def visit_call(self, call):
        if not isinstance(call.op, OpDef):
            args = [self.visit(a) for a in call.args]
            return Call(self.visit(call.op), [self.realize(a) for a in args], call.attrs, call.type_args)
        args, infos = zip(*[self._visit_arg(a) for a in call.args]) if call.args else ((), ())
        op, attrs = self.new_op_and_attrs(call)
        rule = op.get_attr("FInferCorrectLayout") or keep_original
        decision = rule(call, attrs, list(infos))
        new_args = [self._adapt(a, adapt) if adapt is not None else self._realize_fields(a, info)
                    for a, info, adapt in zip(args, infos, decision.inputs)]
        new = Call(op, new_args, decision.attrs, call.type_args if op is call.op else None)
        self.info[new] = decision.outputs
        return new

    def _adapt(self, arg, adapt):
        """adapt(arg); a layout Transform of a value is made once and shared by its consumers."""
        if not isinstance(adapt, Transform):
            return adapt(arg)
        key = (arg, adapt.src, adapt.dst)
        if key not in self._transforms:
            self._transforms[key] = adapt(arg)
        return self._transforms[key]

    def _realize_fields(self, arg, info):
        """An argument taken as it is; a Tuple's changed fields go back to their layouts unless
        the rule adapted the tuple itself."""
        if isinstance(info, list):
            return Tuple([self._realize_one(f, i) for f, i in zip(arg.fields, info)])
        return arg

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
        return Tuple([self.realize(self.visit(f)) for f in tup.fields])

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
    """Function pass (opt_level 3; requires InferType and CanonicalizeOps, as Relay)."""
    if not isinstance(desired_layouts, dict):
        raise RelayError("ConvertLayout expects a dict {op name: [layouts]}, e.g. "
                         "{'nn.conv2d': ['NHWC', 'default']}")
    return function_pass(lambda func, mod, ctx: convert_layout(func, desired_layouts, mod),
                         opt_level=3, name="ConvertLayout", required=["InferType", "CanonicalizeOps"])


__all__ = ["ConvertLayout", "convert_layout", "LayoutConverter", "LayoutRewriter"]
