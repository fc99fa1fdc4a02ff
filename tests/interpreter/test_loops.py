"""relay.loops.while_loop builds Relay's recursive loop function and runs on the debug
interpreter and the VM: summing 0 + 1 + ... + (n - 1) gives n (n - 1) / 2 for several bounds."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.ir.expr import Function, If, Let


def _sum_to_bound():
    """main(n) = the (i, s) the loop ends with, from i = 0, s = 0, adding i to s while i < n."""
    n = relay.var("n", shape=(), dtype="int32")
    i = relay.var("i", shape=(), dtype="int32")
    s = relay.var("s", shape=(), dtype="int32")
    one = relay.const(1, "int32")
    loop = relay.loops.while_loop(lambda i, s: relay.less(i, n), [i, s],
                                  lambda i, s: [relay.add(i, one), relay.add(s, i)])
    zero = relay.const(0, "int32")
    return relay.IRModule.from_expr(relay.Function([n], relay.Call(loop, [zero, zero]))), loop


def test_while_loop_is_a_let_bound_recursive_function():
    _, loop = _sum_to_bound()
    assert isinstance(loop, Let) and loop.body is loop.var and loop.var.name_hint == "while_loop"
    func = loop.value
    assert isinstance(func, Function) and [p.name_hint for p in func.params] == ["i", "s"]
    assert isinstance(func.body, If)
    assert func.body.true_branch.op is loop.var                 # the recursive call
    typed = relay.transform.InferType()(_sum_to_bound()[0])
    assert typed["main"].body.checked_type == relay.TupleType([relay.TensorType((), "int32")] * 2)


@pytest.mark.parametrize("kind", ["debug", "vm"])
@pytest.mark.parametrize("bound", [0, 1, 10, 100])
def test_while_loop_sums_to_the_bound(kind, bound):
    mod, _ = _sum_to_bound()
    result = relay.create_executor(kind, mod=mod).evaluate()(np.array(bound, dtype="int32"))
    i, s = (field.numpy() for field in result)
    assert int(i) == bound and int(s) == bound * (bound - 1) // 2


def test_loop_values_that_are_not_variables_get_fresh_names():
    x = relay.var("x", shape=(2,))
    loop = relay.loops.while_loop(lambda a: relay.less(relay.sum(a), relay.const(10.0)), [relay.const(np.ones(2, "float32"))],
                                  lambda a: [relay.multiply(a, relay.const(2.0))])
    assert loop.value.params[0].name_hint == "arg0"
    mod = relay.IRModule.from_expr(relay.Function([x], relay.TupleGetItem(relay.Call(loop, [x]), 0)))
    for kind in ("debug", "vm"):
        out = relay.create_executor(kind, mod=mod).evaluate()(np.ones(2, "float32")).numpy()
        np.testing.assert_array_equal(out, [8.0, 8.0], err_msg=kind)
