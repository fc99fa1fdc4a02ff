"""Adagrad, Adam and Momentum (domain ai.onnx.preview.training, converters/training.py) against
onnx's reference evaluator (onnxruntime has no kernels for them), rtol 1e-5 / atol 1e-5 scaled to
|ref|, on the debug interpreter and the graph executor. R and T are graph inputs, so the T > 0
bias corrections are chosen at run time.

Node tests they make pass: test_adagrad, test_adagrad_multiple, test_adam, test_adam_multiple (with
its model erratum, see node_test_errata), test_momentum, test_momentum_multiple, test_nesterov_momentum."""
import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from relay_backend.errors import RelayError

from .conftest import assert_close, raises_relay_error, run_relay

DOMAIN = "ai.onnx.preview.training"
EXECUTORS = ("debug", "graph")


def _model(op, groups, n, shape=(3,), **attrs):
    """R, T, then groups (letters: X tensors, G gradients, V velocities, H squared-gradient sums) of n
    float32 tensors of `shape`; the outputs are the updated groups (all but G)."""
    names = [f"{g}{i}" for g in groups for i in range(n)]
    outs = [f"{g}{i}_new" for g in groups if g != "G" for i in range(n)]
    f32 = lambda name: helper.make_tensor_value_info(name, 1, list(shape))  # noqa: E731
    graph = helper.make_graph(
        [helper.make_node(op, ["R", "T", *names], outs, domain=DOMAIN, **attrs)], "g",
        [helper.make_tensor_value_info("R", 1, []), helper.make_tensor_value_info("T", 7, [])] + [f32(x) for x in names],
        [f32(x) for x in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(DOMAIN, 1)])
    model.ir_version = 8
    return model, names


def _check(model, names, executor, t):
    rng = np.random.default_rng(t)
    feeds = {"R": np.array(0.1, np.float32), "T": np.array(t, np.int64)}
    for name in names:   # accumulators of squares stay positive
        feeds[name] = rng.uniform(0.1 if name[0] == "H" else -1, 1, (3,)).astype(np.float32)
    expected = ReferenceEvaluator(model).run(None, feeds)
    assert_close(run_relay(model, feeds, executor), [np.asarray(e, np.float32) for e in expected])


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("t", [0, 3])
@pytest.mark.parametrize("n", [1, 2])
def test_adagrad(executor, t, n):
    model, names = _model("Adagrad", "XGH", n, decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.01)
    _check(model, names, executor, t)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("t", [0, 3])
@pytest.mark.parametrize("mode", ["standard", "nesterov"])
def test_momentum(executor, t, mode):
    model, names = _model("Momentum", "XGV", 2, alpha=0.9, beta=0.5, mode=mode, norm_coefficient=0.02)
    _check(model, names, executor, t)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("t", [0, 1, 4])
def test_adam(executor, t):
    model, names = _model("Adam", "XGVH", 2, alpha=0.8, beta=0.7, epsilon=1e-3, norm_coefficient=0.01,
                          norm_coefficient_post=0.05)
    _check(model, names, executor, t)


def test_momentum_rejects_an_unknown_mode():
    model, _ = _model("Momentum", "XGV", 1, alpha=0.9, beta=0.5, mode="heavy", norm_coefficient=0.0)
    raises_relay_error(model, "mode must be 'standard' or 'nesterov'", RelayError)


def test_adam_multiple_erratum_adds_the_generators_epsilon():
    """onnx 1.17's test_adam_multiple data follow epsilon=1e-2, which its model lacks (onnx#7749):
    onnx's own evaluator disagrees with the data on the shipped model and agrees on the corrected one."""
    from relay_backend.frontend.onnx.node_test_errata import corrected_model
    from relay_backend.frontend.onnx.node_tests import list_node_tests, load_node_test, run_node_test
    if "test_adam_multiple" not in list_node_tests():
        pytest.skip("no test_adam_multiple in this onnx wheel")
    model, ((ins, outs),) = load_node_test("test_adam_multiple")
    feeds = dict(zip([i.name for i in model.graph.input], ins))
    shipped = ReferenceEvaluator(model).run(None, feeds)
    assert not np.allclose(shipped[0], outs[0], rtol=1e-3), "the shipped model was fixed: drop this erratum"
    fixed = ReferenceEvaluator(corrected_model("test_adam_multiple", model)).run(None, feeds)
    for got, want in zip(fixed, outs):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    assert run_node_test("test_adam_multiple", "debug") == ("Adam", None)
