"""Legalize (tvm.relay.transform.Legalize) and the QNN lowering built on it.

Legalize(attr) replaces every call to an op that registered a rule under `attr` with the
rule's expression: `rule(attrs, args, types) -> Expr or None` (TVM's FTVMLegalize signature:
`types` is the argument types followed by the call's type; None keeps the call). Rules are
looked up when the pass runs, so one a user registers with `register_op_attr` takes part.
Replacements are typed and rewritten again (rewrite.py), so a rule may emit other ops that have
rules (qnn.add emits qnn.requantize).

The QNN dialect (op/qnn) registers "FTVMQnnCanonicalize" rules writing each qnn op with basic
integer and float ops; `qnn_lowering_passes()` (TVM's relay.qnn.transform.Legalize: the target
rules "FTVMQnnLegalize", then the canonicalizations) run in the default pipeline, at opt_level 0
(TVM: 1) because a qnn op has no compute of its own: without it no compiled executor can run a
quantized program.
"""
from ..ir.expr import Call
from ..ir.functor import post_order
from ..op.registry import list_ops
from .pass_infra import Sequential, function_pass, register_pass_factory
from .rewrite import rewrite_function

QNN_LEGALIZE = "FTVMQnnLegalize"
QNN_CANONICALIZE = "FTVMQnnCanonicalize"


def _rule(fn):
    def rule(call):
        types = [arg.checked_type for arg in call.args] + [call.checked_type]
        return fn(call.attrs, list(call.args), types)
    return rule


def legalize_rules(attr_name: str) -> dict:
    """{op name: [rule]} for every op with a rule registered under `attr_name`."""
    rules = {}
    for op in list_ops():
        fn = op.get_attr(attr_name)
        if fn is not None:
            rules[op.name] = [_rule(fn)]
    return rules


def _legalize_pass(attr_name: str, name: str, opt_level: int):
    def run(func, mod, ctx):
        rules = legalize_rules(attr_name)
        if not rules or not any(isinstance(n, Call) and getattr(n.op, "name", None) in rules
                                for n in post_order(func.body)):
            return func     # nothing to rewrite: no walk that rebuilds the program
        return rewrite_function(func, mod, rules)
    return function_pass(run, opt_level=opt_level, name=name, required=["InferType"])


def Legalize(legalize_map_attr_name: str = "FTVMLegalize"):  # noqa: N802 - tvm.relay naming
    """Function pass (opt_level 1): rewrite calls by the rules registered under the attr.

    Parameters
    ----------
    legalize_map_attr_name : str, optional
        The op attribute the rules are registered under (`register_op_attr(op_name, attr_name,
        rule)`): each call of an op with a rule there is replaced by the rule's expression.
        Defaults to 'FTVMLegalize', TVM's target legalization rules.

    Returns
    -------
    pass : Pass
        The function pass named "Legalize".
    """
    return _legalize_pass(legalize_map_attr_name, "Legalize", 1)


def qnn_canonicalize():
    """relay.qnn.transform.CanonicalizeOps: qnn ops to basic ops (opt_level 0)."""
    return _legalize_pass(QNN_CANONICALIZE, "QnnCanonicalize", 0)


def qnn_lowering_passes() -> list:
    """TVM's qnn.transform.Legalize as the pipeline runs it: the "FTVMQnnLegalize" rules
    ("QnnLegalize"), then the canonicalizations ("QnnCanonicalize"), both at opt_level 0."""
    return [_legalize_pass(QNN_LEGALIZE, "QnnLegalize", 0), qnn_canonicalize()]


def qnn_legalize():
    """The two passes of qnn_lowering_passes as one Sequential named "qnn.Legalize"."""
    return Sequential(qnn_lowering_passes(), opt_level=0, name="qnn.Legalize")


register_pass_factory("Legalize", Legalize)

__all__ = ["Legalize", "legalize_rules", "qnn_canonicalize", "qnn_legalize", "qnn_lowering_passes", "QNN_LEGALIZE",
           "QNN_CANONICALIZE"]
