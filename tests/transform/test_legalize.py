"""transform.Legalize(attr): calls of ops with a rule under `attr` are replaced by the rule's
expression (TVM's FTVMLegalize signature: attrs, args, arg types + the call's type), a rule
returning None keeps the call, and rules registered later (TempOpAttr) take part."""
import numpy as np

import relay_backend as relay
from relay_backend.op.op import TempOpAttr


def _relu_program():
    x = relay.var("x", shape=(2, 3))
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.negative(x))))


def _op_names(mod):
    return [n.op.name for n in relay.ir.functor.post_order(mod["main"].body)
            if isinstance(n, relay.Call) and hasattr(n.op, "name")]


def test_legalize_rewrites_with_the_registered_rule():
    seen = []

    def relu_as_maximum(attrs, args, types):
        seen.append([str(t) for t in types])
        return relay.maximum(args[0], relay.const(0.0))
    with TempOpAttr("nn.relu", "FTVMLegalize", relu_as_maximum):
        out = relay.transform.Legalize()(relay.transform.InferType()(_relu_program()))
    assert _op_names(out) == ["negative", "maximum"]
    assert seen == [["Tensor[(2, 3), float32]", "Tensor[(2, 3), float32]"]]      # argument, then result
    x = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    got = relay.create_executor("debug", mod=out).evaluate()(x).numpy()
    np.testing.assert_array_equal(got, np.maximum(-x, 0))


def test_a_rule_returning_none_keeps_the_call_and_no_rule_is_no_change():
    mod = relay.transform.InferType()(_relu_program())
    with TempOpAttr("nn.relu", "FTVMLegalize", lambda attrs, args, types: None):
        assert _op_names(relay.transform.Legalize()(mod)) == ["negative", "nn.relu"]
    assert relay.transform.Legalize("NoSuchAttr")(mod)["main"] is mod["main"]
