"""The ONNX random generators (no ONNX node test can check random values): shapes and dtypes,
the same numbers on every run and executor, the seed selecting the stream, and the draws
following the requested distribution."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import relay_backend as relay  # noqa: E402


def _model(node, inputs, output, out_type, out_shape):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(output, out_type, out_shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model, kind, *args):
    mod, params = relay.frontend.from_onnx(model)
    return relay.create_executor(kind, mod=mod, params=params).evaluate()(*args).numpy()


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_random_uniform_and_normal(kind):
    uni = _model(helper.make_node("RandomUniform", [], ["y"], shape=[4000], low=-2.0, high=3.0, seed=1.0),
                 [], "y", TensorProto.FLOAT, [4000])
    y = _run(uni, kind)
    assert y.dtype == np.float32 and y.min() >= -2 and y.max() < 3 and abs(y.mean() - 0.5) < 0.1
    np.testing.assert_allclose(y, _run(uni, "debug"), rtol=1e-6, atol=1e-6)
    norm = _model(helper.make_node("RandomNormal", [], ["y"], shape=[50, 80], mean=1.0, scale=2.0,
                                   dtype=TensorProto.DOUBLE), [], "y", TensorProto.DOUBLE, [50, 80])
    z = _run(norm, kind)
    assert z.dtype == np.float64 and abs(z.mean() - 1.0) < 0.1 and abs(z.std() - 2.0) < 0.1


def test_seed_selects_the_stream_and_like_ops_take_the_input_shape():
    def uniform_like(seed):
        node = helper.make_node("RandomUniformLike", ["x"], ["y"], seed=seed)
        return _model(node, [("x", TensorProto.FLOAT16, [3, 4])], "y", TensorProto.FLOAT16, [3, 4])
    x = np.zeros((3, 4), "float16")
    a, b, c = _run(uniform_like(1.0), "graph", x), _run(uniform_like(1.0), "graph", x), _run(uniform_like(2.0), "graph", x)
    assert a.dtype == np.float16 and a.shape == (3, 4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_multinomial_draws_from_log_probabilities(kind):
    node = helper.make_node("Multinomial", ["x"], ["y"], sample_size=3000, seed=3.0, dtype=TensorProto.INT64)
    model = _model(node, [("x", TensorProto.FLOAT, [2, 3])], "y", TensorProto.INT64, [2, 3000])
    with np.errstate(divide="ignore"):          # log(0): a class that is never drawn
        logits = np.log(np.array([[0.2, 0.0, 0.8], [1.0, 1.0, 2.0]], "float32"))
    y = _run(model, kind, logits)
    assert y.dtype == np.int64 and y.shape == (2, 3000)
    np.testing.assert_allclose(np.bincount(y[0], minlength=3) / 3000, [0.2, 0.0, 0.8], atol=0.03)
    np.testing.assert_allclose(np.bincount(y[1], minlength=3) / 3000, [0.25, 0.25, 0.5], atol=0.03)


def test_node_tests_of_random_draws_are_reported_unsupported_not_failed():
    """ONNX's Bernoulli tests (expanded into RandomUniformLike) compare with numpy's draws: now
    that the ops convert, the runner classifies them instead of reporting a mismatch."""
    from relay_backend.frontend.onnx.node_tests import list_node_tests, run_node_test
    name = "test_bernoulli_expanded"
    if name not in list_node_tests():
        pytest.skip(f"{name} is not in this onnx wheel")
    op, err = run_node_test(name, "debug")
    assert err.startswith("unsupported:") and "RandomUniformLike" in err
