"""FoldConstant on control flow and dropout, as Relay v0.18's FoldConstant: an If whose condition
folds to a constant becomes the taken branch; dropout of a constant folds to its data (inference
semantics: out = data, mask = 1), while dropout of a non-constant stays for SimplifyInference
(which turns `dropout(x)[0]` into `x`). Values are checked against numpy."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.ir import Constant, Function, If, IRModule, var
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.ir.structural import assert_structural_equal
from relay_backend.transform import FoldConstant, InferType, SimplifyInference


def _fold(func):
    return FoldConstant()(InferType()(IRModule.from_expr(func)))["main"]


def _ifs(expr) -> int:
    return sum(isinstance(n, If) for n in all_nodes_post_order(expr))


@pytest.mark.parametrize("flag", [True, False])
def test_if_on_a_constant_becomes_the_taken_branch(flag):
    x = var("x", shape=(2, 3))
    folded = _fold(Function([x], If(relay.const(flag), relay.exp(x), relay.negative(x))))
    x2 = var("x", shape=(2, 3))
    expected = InferType()(IRModule.from_expr(
        Function([x2], relay.exp(x2) if flag else relay.negative(x2))))["main"]
    assert_structural_equal(folded, expected)


def test_condition_that_folds_to_a_constant_selects_a_branch():
    # less(1, 2) folds to True first; nested Ifs inside the taken branch fold as well
    x = var("x", shape=(3,))
    inner = If(relay.greater(relay.const(1.0), relay.const(2.0)), relay.exp(x), relay.add(x, relay.const(1.0)))
    body = If(relay.less(relay.const(1), relay.const(2)), inner, relay.negative(x))
    folded = _fold(Function([x], body))
    assert _ifs(folded) == 0
    data = np.array([1.0, -2.0, 0.5], "float32")
    out = relay.create_executor("debug", mod=IRModule.from_expr(folded)).evaluate()(data)
    np.testing.assert_allclose(out.numpy(), data + 1, rtol=0, atol=0)


def test_if_on_a_variable_is_kept_and_its_branches_fold():
    x = var("x", shape=(2,))
    c = var("c", shape=(), dtype="bool")
    body = If(c, relay.add(x, relay.add(relay.const(1.0), relay.const(2.0))), x)
    folded = _fold(Function([x, c], body))
    assert isinstance(folded.body, If)
    constant = folded.body.true_branch.args[1]
    assert isinstance(constant, Constant) and float(constant.data.numpy()) == 3.0


def test_dropout_of_a_constant_folds_to_its_data():
    data = np.arange(6, dtype="float32").reshape(2, 3)
    x = var("x", shape=(2, 3))
    folded = _fold(Function([x], relay.add(relay.nn.dropout(relay.const(data), rate=0.4), x)))
    constant = folded.body.args[0]
    assert isinstance(constant, Constant)
    np.testing.assert_array_equal(constant.data.numpy(), data)     # inference: no scaling, no zeros
    pair = _fold(Function([], relay.nn.dropout_raw(relay.const(data)).astuple()))
    np.testing.assert_array_equal(pair.body.fields[1].data.numpy(), np.ones_like(data))


def test_dropout_of_a_variable_is_removed_by_simplify_inference_then_folding():
    x = var("x", shape=(2, 3))
    func = Function([x], relay.nn.dropout(relay.multiply(x, relay.const(2.0))))
    mod = FoldConstant()(SimplifyInference()(InferType()(IRModule.from_expr(func))))
    names = {n.op.name for n in all_nodes_post_order(mod["main"]) if isinstance(n, relay.Call)}
    assert names == {"multiply"}
