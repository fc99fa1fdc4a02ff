"""EliminateCommonSubexpr, CanonicalizeOps and FastMath: before/expected programs from TVM's
test_pass_eliminate_common_subexpr.py / test_pass_canonicalize_ops.py / test_pass_fast_math.py,
and numerical agreement on the interpreter."""
import numpy as np

import relay_backend as relay
from relay_backend import transform
from relay_backend.ir.functor import all_nodes_post_order

from .normal_form_helpers import evaluate, run_opt_pass

F32 = "float32"


def typed(expr):
    return run_opt_pass(expr, transform.InferType())


# --- EliminateCommonSubexpr ----------------------------------------------------------------------
def _two_branches():
    x = relay.var("x", shape=(1, 16))
    y1 = relay.add(relay.nn.relu(x), relay.const(1.0, F32))
    y2 = relay.add(relay.nn.relu(x), relay.const(1.0, F32))
    return x, relay.Function([x], relay.add(y1, y2))


def test_cse_merges_equal_calls_and_equal_scalar_constants():
    x, before = _two_branches()
    out = run_opt_pass(before, transform.EliminateCommonSubexpr())
    y = relay.add(relay.nn.relu(x), relay.const(1.0, F32))
    relay.assert_structural_equal(out, typed(relay.Function([x], relay.add(y, y))))


def test_cse_fskip_keeps_chosen_calls_apart():
    x, before = _two_branches()

    def fskip(expr):
        return isinstance(expr, relay.Call) and expr.op.name == "add"
    out = run_opt_pass(before, transform.EliminateCommonSubexpr(fskip))
    y = relay.nn.relu(x)
    expected = relay.Function([x], relay.add(relay.add(y, relay.const(1.0, F32)),
                                             relay.add(y, relay.const(1.0, F32))))
    relay.assert_structural_equal(out, typed(expected))


def test_cse_tuple_projections_and_attrs():
    x = relay.var("x", shape=(1, 16, 1, 1))
    params = [relay.var(n, shape=(16,)) for n in ("gamma", "beta", "mean", "var")]
    bn = relay.nn.batch_norm(x, *params, epsilon=1e-5)
    before = relay.Function([x] + params, bn[0] + bn[0])
    out = run_opt_pass(before, transform.EliminateCommonSubexpr())
    adds = [n for n in all_nodes_post_order(out) if isinstance(n, relay.Call) and n.op.name == "add"]
    assert len(adds) == 1 and adds[0].args[0] is adds[0].args[1]
    # different attrs are different calls
    s1, s2 = relay.sum(x, axis=1), relay.sum(x, axis=2)
    out2 = run_opt_pass(relay.Function([x], relay.Tuple([s1, s2])), transform.EliminateCommonSubexpr())
    assert out2.body.fields[0] is not out2.body.fields[1]


def test_cse_does_not_merge_across_functions_or_calls_of_functions():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    inner = relay.Function([y], relay.exp(x))
    f = relay.Var("f")
    body = relay.Let(f, inner, relay.add(relay.Call(f, [x]), relay.Call(f, [x])))
    out = run_opt_pass(relay.Function([x], relay.add(body, relay.exp(x))), transform.EliminateCommonSubexpr())
    calls = [n for n in all_nodes_post_order(out) if isinstance(n, relay.Call) and n.op is f]
    assert len(calls) == 2
    exps = [n for n in all_nodes_post_order(out) if isinstance(n, relay.Call) and getattr(n.op, "name", "") == "exp"]
    assert len(exps) == 2


# --- CanonicalizeOps -----------------------------------------------------------------------------
def test_canonicalize_bias_add():
    x = relay.var("x", shape=(1, 4, 3, 3))
    b = relay.var("b", shape=(4,))
    out = run_opt_pass(relay.Function([x, b], relay.nn.bias_add(x, b)), transform.CanonicalizeOps())
    expected = relay.Function([x, b], relay.add(x, relay.expand_dims(b, axis=1, num_newaxis=2)))
    relay.assert_structural_equal(out, typed(expected))
    # the last axis needs no expansion
    v = relay.var("v", shape=(2, 4))
    out2 = run_opt_pass(relay.Function([v, b], relay.nn.bias_add(v, b, axis=-1)), transform.CanonicalizeOps())
    relay.assert_structural_equal(out2, typed(relay.Function([v, b], relay.add(v, b))))
    data = np.arange(36, dtype=F32).reshape(1, 4, 3, 3)
    bias = np.arange(4, dtype=F32)
    np.testing.assert_allclose(evaluate(out, None, data, bias), data + bias.reshape(4, 1, 1))


# --- FastMath ------------------------------------------------------------------------------------
def test_fast_math_replaces_transcendentals():
    x = relay.var("x", shape=(2, 5))
    before = relay.Function([x], relay.nn.softmax(relay.tanh(relay.exp(relay.erf(x)))))
    out = transform.FastMath()(relay.IRModule.from_expr(before))["main"]
    names = sorted(n.op.name for n in all_nodes_post_order(out) if isinstance(n, relay.Call))
    assert names == ["fast_erf", "fast_exp", "fast_tanh", "nn.fast_softmax"]
    assert transform.FastMath().info.opt_level == 4
    data = np.linspace(-1, 1, 10, dtype=F32).reshape(2, 5)
    for kind in ("debug", "graph"):
        got = relay.create_executor(kind, mod=relay.IRModule.from_expr(out)).evaluate()(data).numpy()
        want = relay.create_executor("debug", mod=relay.IRModule.from_expr(before)).evaluate()(data).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
