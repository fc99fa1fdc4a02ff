"""BatchNormalization (training_mode=1) and Dropout (training_mode true) in converters/training_mode.py.

BatchNormalization is compared with a numpy computation of the spec's formulas (rtol 1e-5, atol
1e-5 scaled to |ref|). Dropout's draws are relay's own (threefry), so its tests check the spec's
properties exactly: kept values are x / (1 - ratio), dropped ones 0, the mask says which, ratio 0
keeps everything, training_mode false (also at run time) is the identity, and every executor
gives the same draws.

Node tests they make pass: test_batchnorm_example_training_mode, test_batchnorm_epsilon_training_mode,
test_training_dropout_zero_ratio, test_training_dropout_zero_ratio_mask (the four other
test_training_dropout* expect numpy's random draws and are reported as such)."""
import numpy as np
import pytest
from onnx import helper

from .conftest import assert_close, make_model, run_relay


@pytest.mark.parametrize("executor", ["debug", "graph"])
@pytest.mark.parametrize("shape,momentum,eps", [((2, 3, 4, 5), 0.9, 1e-5), ((4, 2), 0.5, 1e-2), ((3, 4, 6), 0.0, 1e-3)])
def test_batch_norm_training_mode(executor, shape, momentum, eps):
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape).astype("float32") * 3 + 1
    c = shape[1]
    s, b, mean = (rng.normal(size=c).astype("float32") for _ in range(3))
    var = rng.uniform(0.5, 2, size=c).astype("float32")
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], training_mode=1,
                            momentum=momentum, epsilon=eps)
    model = make_model([node], [("x", "float32", list(shape))] + [(n, "float32", [c]) for n in "sbmv"],
                       [("y", "float32", list(shape)), ("rm", "float32", [c]), ("rv", "float32", [c])], opset=15)
    axes = tuple(d for d in range(len(shape)) if d != 1)
    bmean, bvar = x.mean(axis=axes), x.var(axis=axes)
    bshape = (1, c) + (1,) * (len(shape) - 2)
    want = [(x - bmean.reshape(bshape)) / np.sqrt(bvar.reshape(bshape) + eps) * s.reshape(bshape) + b.reshape(bshape),
            mean * momentum + bmean * (1 - momentum), var * momentum + bvar * (1 - momentum)]
    got = run_relay(model, {"x": x, "s": s, "b": b, "m": mean, "v": var}, executor)
    assert_close(got, [w.astype("float32") for w in want])


def _dropout_model(shape, training_input=True, seed=None):
    attrs = {} if seed is None else {"seed": seed}
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"], **attrs)
    return make_model([node], [("x", "float32", list(shape)), ("r", "float32", []), ("t", "bool", [])],
                      [("y", "float32", list(shape)), ("mask", "bool", list(shape))], opset=13)


@pytest.mark.parametrize("ratio", [0.0, 0.3, 0.75, 1.0])
def test_dropout_training_keeps_scaled_values_and_reports_them_in_the_mask(ratio):
    shape = (40, 50)
    x = np.random.default_rng(1).uniform(1, 2, shape).astype("float32")
    feeds = {"x": x, "r": np.array(ratio, np.float32), "t": np.array(True)}
    results = {kind: run_relay(_dropout_model(shape, seed=3), feeds, kind) for kind in ("debug", "graph", "vm")}
    y, mask = results["debug"]
    for other in ("graph", "vm"):       # the same draws everywhere
        np.testing.assert_array_equal(results[other][1], mask)
        np.testing.assert_allclose(results[other][0], y, rtol=1e-6)
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(y[~mask], 0)
    if ratio < 1:
        np.testing.assert_allclose(y[mask], x[mask] / np.float32(1 - ratio), rtol=1e-6)
    dropped = 1 - mask.mean()
    assert abs(dropped - ratio) < 0.05, (dropped, ratio)   # 2000 draws: 5 standard deviations at most
    if ratio == 0:
        np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("executor", ["debug", "vm"])
def test_dropout_training_mode_false_at_run_time_is_the_identity(executor):
    x = np.arange(12, dtype="float32").reshape(3, 4)
    y, mask = run_relay(_dropout_model(x.shape), {"x": x, "r": np.array(0.5, np.float32), "t": np.array(False)},
                        executor)
    np.testing.assert_array_equal(y, x)
    assert mask.all()


def test_node_tests_with_random_training_dropout_are_reported_as_draws():
    from relay_backend.frontend.onnx.node_tests import list_node_tests, run_node_test
    if "test_training_dropout" not in list_node_tests():
        pytest.skip("no test_training_dropout in this onnx wheel")
    op, err = run_node_test("test_training_dropout", "debug")
    assert err.startswith("unsupported: the expected outputs are values ONNX's reference drew") and \
        "Dropout in training mode" in err
    assert run_node_test("test_training_dropout_zero_ratio_mask", "debug") == ("Dropout", None)
