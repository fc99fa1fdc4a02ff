"""FoldScaleAxis, ForwardFoldScaleAxis, BackwardFoldScaleAxis (tvm.relay.transform): fold
per-channel scales into the weights of the conv2d / dense next to them.

Backward folding: `conv2d(x, w) * s` (s constant along the output channel, e.g. what
SimplifyInference leaves of a batch norm), possibly through relu (s > 0), bias_add and add/
subtract of per-channel values, becomes `conv2d(x, w * s')` with the later terms scaled too.
Forward folding: `conv2d(x * s, w)` (s along the input channel, through relu/add/subtract)
becomes `conv2d(x, w * s')`; dense likewise along its input features. A scale is moved only
when every use of the scaled value can absorb it (a prepare phase propagates the demand), so
meaning is unchanged (up to float rounding of the products); FoldConstant then folds w * s'.
FoldScaleAxis is Sequential([BackwardFoldScaleAxis, ForwardFoldScaleAxis, FoldConstant]).

The per-op behaviour is four op attributes registered in fold_scale_axis_rules.py
(FScaleAxisForwardPrep/Rewrite, FScaleAxisBackwardPrep/Transform), as in Relay; here only the
two walks live. Both need types and infer them when missing.
"""
from collections import Counter

from ..ir.expr import Call, Function
from ..ir.functor import ExprMutator, all_children, all_nodes_post_order
from ..op.registry import OpDef
from .fold_constant import FoldConstant
from .fold_scale_axis_rules import ScaledValue, intersect, realize
from .pass_infra import Sequential, function_pass
from .rewrite import typed_function
from .to_a_normal_form import keep_type


def _op_attr(call, key):
    return call.op.get_attr(key) if isinstance(call, Call) and isinstance(call.op, OpDef) else None


def _with_body(func: Function, body) -> Function:
    if body is func.body:
        return func
    return Function(func.params, body, func.ret_type, func.type_params, func.attrs)


# --- forward ---------------------------------------------------------------------------------------
def forward_messages(func: Function) -> dict:
    """The scaling each expression's consumers can all absorb (None where some cannot)."""
    incoming = {func.body: [None]}          # expr -> the message of each consumer edge
    messages = {}
    for node in reversed(list(all_nodes_post_order(func.body))):   # consumers first
        msgs = incoming.get(node, [None])
        msg = msgs[0]
        for m in msgs[1:]:
            msg = intersect(msg, m)
        messages[node] = msg
        prep = _op_attr(node, "FScaleAxisForwardPrep")
        sent = prep(node, msg) if prep is not None else [None] * len(all_children(node))
        kids = node.args if prep is not None else all_children(node)
        for child, m in zip(kids, sent):
            incoming.setdefault(child, []).append(m)
    return messages


class ForwardRewriter(ExprMutator):
    """Rewrites calls producer first; a call whose rule returns a ScaledValue is remembered in
    `scaled` (its realized form is what other users see)."""

    def __init__(self, messages):
        super().__init__()
        self.messages = messages
        self.scaled = {}

    def visit_call(self, call):
        args = [self.visit(a) for a in call.args]
        rewrite = _op_attr(call, "FScaleAxisForwardRewrite")
        if rewrite is not None:
            inputs = [self.scaled.get(orig, new) for orig, new in zip(call.args, args)]
            out = rewrite(call, inputs, self.messages.get(call))
            if isinstance(out, ScaledValue):
                self.scaled[call] = out
                return realize(out)
            if out is not None:
                return keep_type(out, call)
        op = self.visit(call.op)
        if op is call.op and all(n is o for n, o in zip(args, call.args)):
            return call
        return keep_type(Call(op, args, call.attrs, call.type_args), call)


def forward_fold_scale_axis(func: Function, mod=None) -> Function:
    func = typed_function(func, mod)
    messages = forward_messages(func)
    if all(m is None for m in messages.values()):
        return func
    return _with_body(func, ForwardRewriter(messages).visit(func.body))


# --- backward --------------------------------------------------------------------------------------
def backward_messages(func: Function) -> dict:
    """The output scaling each single-use call could absorb into its inputs."""
    uses = Counter(c for n in all_nodes_post_order(func.body) for c in all_children(n))
    messages = {}
    for node in all_nodes_post_order(func.body):          # producers first
        prep = _op_attr(node, "FScaleAxisBackwardPrep")
        if prep is None or uses[node] != 1:
            continue
        msg = prep(node, [messages.get(a) for a in node.args])
        if msg is not None:
            messages[node] = msg
    return messages


class BackwardTransformer(ExprMutator):
    """`transform(expr, message, scale)`: expr with its result scaled by `scale` along the
    message's axes pushed into it; plain visiting is transform(expr, None, None)."""

    def __init__(self, messages):
        super().__init__()
        self.messages = messages

    def message(self, expr):
        return self.messages.get(expr)

    def transform(self, expr, message=None, scale=None):
        if message is None:
            return self.visit(expr)
        rule = _op_attr(expr, "FScaleAxisBackwardTransform")
        return keep_type(rule(expr, message, scale, self), expr)

    def visit_call(self, call):
        rule = _op_attr(call, "FScaleAxisBackwardTransform")
        if rule is not None:
            return keep_type(rule(call, None, None, self), call)
        return self.normal(call)

    def normal(self, call):
        """The call rebuilt from its plainly transformed arguments."""
        return keep_type(ExprMutator.visit_call(self, call), call)


def backward_fold_scale_axis(func: Function, mod=None) -> Function:
    func = typed_function(func, mod)
    messages = backward_messages(func)
    if not messages:
        return func
    return _with_body(func, BackwardTransformer(messages).visit(func.body))


def ForwardFoldScaleAxis():  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 3)."""
    return function_pass(lambda func, mod, ctx: forward_fold_scale_axis(func, mod), opt_level=3,
                         name="ForwardFoldScaleAxis", required=["InferType"])


def BackwardFoldScaleAxis():  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 3)."""
    return function_pass(lambda func, mod, ctx: backward_fold_scale_axis(func, mod), opt_level=3,
                         name="BackwardFoldScaleAxis", required=["InferType"])


def FoldScaleAxis():  # noqa: N802 - tvm.relay naming
    """Backward, then forward folding, then FoldConstant (a Sequential named FoldScaleAxis)."""
    return Sequential([BackwardFoldScaleAxis(), ForwardFoldScaleAxis(), FoldConstant()],
                      name="FoldScaleAxis")


__all__ = ["FoldScaleAxis", "ForwardFoldScaleAxis", "BackwardFoldScaleAxis",
           "forward_fold_scale_axis", "backward_fold_scale_axis"]
