"""ForwardFoldScaleAxis / BackwardFoldScaleAxis / FoldScaleAxis: before/expected programs from
TVM's test_pass_fold_scale_axis.py (NCHW cases), the cases that must not fold (a negative scale
through relu, a scaled value also used elsewhere), batch norm folded into conv weights, and
numerical agreement."""
import numpy as np

import relay_backend as relay
from relay_backend import transform
from relay_backend.ir.functor import all_nodes_post_order

from .normal_form_helpers import run_opt_pass

F32 = "float32"
RNG = np.random.default_rng(1)


def positive(*shape):
    return RNG.uniform(0.5, 1.0, size=shape).astype(F32)


def typed(func):
    return run_opt_pass(func, transform.InferType())


def run_pass(func, pass_):
    mod = pass_(transform.InferType()(relay.IRModule.from_expr(func)))
    return transform.InferType()(mod)["main"]


def same_values(before, after, *args):
    want = relay.create_executor().evaluate(before)(*args).numpy()
    got = relay.create_executor().evaluate(after)(*args).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def ops(func):
    return [n.op.name for n in all_nodes_post_order(func) if isinstance(n, relay.Call)]


def test_forward_fold_through_relu_and_add():
    x = relay.var("x", shape=(2, 4, 10, 10))
    weight = relay.var("weight", shape=(2, 4, 3, 3))
    in_bias = relay.var("in_bias", shape=(4, 1, 1))
    in_scale = relay.const(positive(4, 1, 1))
    y = relay.nn.conv2d(relay.add(relay.nn.relu(relay.multiply(x, in_scale)), in_bias), weight,
                        channels=2, kernel_size=(3, 3), padding=(1, 1))
    before = relay.Function([x, weight, in_bias], y)
    folded = run_pass(before, transform.ForwardFoldScaleAxis())
    squeezed = relay.squeeze(in_scale, axis=[1, 2])
    bias = relay.divide(in_bias, relay.expand_dims(squeezed, axis=1, num_newaxis=2))
    w = relay.multiply(weight, relay.expand_dims(squeezed, axis=1, num_newaxis=2))
    expected = relay.Function([x, weight, in_bias], relay.nn.conv2d(
        relay.add(relay.nn.relu(x), bias), w, channels=2, kernel_size=(3, 3), padding=(1, 1)))
    relay.assert_structural_equal(folded, typed(expected))
    args = (RNG.normal(size=(2, 4, 10, 10)).astype(F32), RNG.normal(size=(2, 4, 3, 3)).astype(F32),
            RNG.normal(size=(4, 1, 1)).astype(F32))
    same_values(before, folded, *args)


def test_forward_no_fold_for_negative_scale_through_relu():
    x = relay.var("x", shape=(2, 4, 10, 10))
    weight = relay.var("weight", shape=(2, 4, 3, 3))
    scale = relay.const(-positive(4, 1, 1))
    before = relay.Function([x, weight], relay.nn.conv2d(relay.nn.relu(relay.multiply(x, scale)), weight))
    relay.assert_structural_equal(run_pass(before, transform.ForwardFoldScaleAxis()), typed(before))


def test_forward_no_fold_when_the_scaled_value_has_another_use():
    x = relay.var("x", shape=(2, 4, 10, 10))
    weight = relay.var("weight", shape=(2, 4, 3, 3))
    scaled = relay.multiply(x, relay.const(positive(4, 1, 1)))
    before = relay.Function([x, weight], relay.Tuple([relay.nn.conv2d(scaled, weight), relay.exp(scaled)]))
    relay.assert_structural_equal(run_pass(before, transform.ForwardFoldScaleAxis()), typed(before))


def test_forward_fold_into_dense():
    x = relay.var("x", shape=(3, 5))
    w = relay.var("w", shape=(4, 5))
    scale = relay.const(positive(5))
    before = relay.Function([x, w], relay.nn.dense(relay.multiply(x, scale), w))
    folded = run_pass(before, transform.ForwardFoldScaleAxis())
    relay.assert_structural_equal(folded, typed(relay.Function([x, w], relay.nn.dense(x, relay.multiply(w, scale)))))
    same_values(before, folded, RNG.normal(size=(3, 5)).astype(F32), RNG.normal(size=(4, 5)).astype(F32))


def test_backward_fold_through_bias_add_and_relu():
    x = relay.var("x", shape=(2, 4, 10, 10))
    weight = relay.var("weight", shape=(8, 4, 3, 3))
    bias = relay.var("bias", shape=(8,))
    out_scale = relay.const(positive(8, 1, 1))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, weight, channels=8, kernel_size=(3, 3),
                                                        padding=(1, 1)), bias))
    before = relay.Function([x, weight, bias], relay.multiply(y, out_scale))
    folded = run_pass(before, transform.BackwardFoldScaleAxis())
    squeezed = relay.squeeze(out_scale, axis=[1, 2])
    w = relay.multiply(weight, relay.expand_dims(squeezed, axis=1, num_newaxis=3))
    conv = relay.nn.conv2d(x, w, channels=8, kernel_size=(3, 3), padding=(1, 1))
    expected = relay.Function([x, weight, bias], relay.nn.relu(
        relay.nn.bias_add(conv, relay.multiply(bias, squeezed))))
    relay.assert_structural_equal(folded, typed(expected))
    same_values(before, folded, RNG.normal(size=(2, 4, 10, 10)).astype(F32),
                RNG.normal(size=(8, 4, 3, 3)).astype(F32), RNG.normal(size=(8,)).astype(F32))


def test_backward_no_fold_when_conv_output_is_shared():
    x = relay.var("x", shape=(1, 4, 6, 6))
    weight = relay.var("weight", shape=(8, 4, 3, 3))
    conv = relay.nn.conv2d(x, weight)
    before = relay.Function([x, weight], relay.Tuple([relay.multiply(conv, relay.const(positive(8, 1, 1))),
                                                      relay.exp(conv)]))
    relay.assert_structural_equal(run_pass(before, transform.BackwardFoldScaleAxis()), typed(before))


def test_fold_scale_axis_absorbs_batch_norm_into_constant_weights():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.const(RNG.normal(size=(4, 3, 3, 3)).astype(F32))
    gamma, beta = relay.const(positive(4)), relay.const(RNG.normal(size=4).astype(F32))
    mean, var = relay.const(RNG.normal(size=4).astype(F32)), relay.const(positive(4))
    y = relay.nn.batch_norm(relay.nn.conv2d(x, w, padding=(1, 1)), gamma, beta, mean, var)[0]
    before = relay.Function([x], relay.nn.relu(y))
    with transform.PassContext(opt_level=3):
        out = transform.Sequential([transform.InferType(), transform.SimplifyInference(),
                                    transform.FoldConstant(), transform.FoldScaleAxis(),
                                    transform.InferType()])(relay.IRModule.from_expr(before))["main"]
    assert "multiply" not in ops(out) and ops(out).count("nn.conv2d") == 1
    same_values(before, out, RNG.normal(size=(1, 3, 8, 8)).astype(F32))


def test_pass_metadata():
    assert transform.ForwardFoldScaleAxis().info.opt_level == 3
    assert transform.BackwardFoldScaleAxis().info.opt_level == 3
    seq = transform.FoldScaleAxis()
    assert seq.info.name == "FoldScaleAxis"
    assert [p.info.name for p in seq.passes] == ["BackwardFoldScaleAxis", "ForwardFoldScaleAxis", "FoldConstant"]
