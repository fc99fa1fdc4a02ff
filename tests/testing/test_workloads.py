"""Built-in workloads: types infer, params are deterministic, and the debug interpreter matches
the independent float64 numpy forward passes (testing.numpy_nn) within float32 tolerances."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import RelayError
from relay_backend.testing import mlp, numpy_nn, resnet, seed_cnn


def _run(mod, params, data):
    return relay.create_executor("debug", mod=mod, params=params).evaluate()(data).numpy()


def _data(shape, seed=1):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype("float32")


@pytest.mark.parametrize("hidden,expected", [(mlp.DEFAULT_HIDDEN, 128 * 784), ((512, 512), 512 * 784)])
def test_mlp_types_and_params(hidden, expected):
    mod, params = mlp.get_workload(batch_size=2, num_hidden=hidden)
    main = mod["main"]
    assert main.checked_type.ret_type == relay.TensorType((2, 10), "float32")
    assert [p.name_hint for p in main.params][0] == "data"
    assert params["fc1_weight"].size == expected and params["fc1_weight"].dtype == np.float32
    assert set(params) == {p.name_hint for p in main.params[1:]}
    _, again = mlp.get_workload(batch_size=2, num_hidden=hidden)
    assert all(np.array_equal(params[k], again[k]) for k in params), "params must be seeded"


def test_mlp_matches_numpy():
    mod, params = mlp.get_workload(batch_size=3, num_hidden=(512, 512))
    x = _data((3, 1, 28, 28))
    out = _run(mod, params, x)
    np.testing.assert_allclose(out, mlp.numpy_forward(x, params), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)


def test_resnet_block_matches_numpy():
    mod, params = resnet.get_block_workload(channels=8, image_size=12)
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 8, 12, 12), "float32")
    x = _data((1, 8, 12, 12))
    out = _run(mod, params, x)
    ref = resnet.block_numpy_forward(x, params)
    assert (ref > 0).mean() > 0.2, "the block should not be dead (relu of everything)"
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)


def test_resnet_block_default_is_benchmark_shape():
    mod, params = resnet.get_block_workload()
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 64, 56, 56), "float32")
    assert params["block_conv1_weight"].shape == (64, 64, 3, 3)


@pytest.mark.slow  # model-level
def test_resnet18_small_image_runs_and_matches_numpy():
    mod, params = resnet.get_workload(batch_size=1, num_classes=10, num_layers=18, image_shape=(3, 32, 32))
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 10), "float32")
    assert len(params) == 1 + 4 + 8 * 10 + 3 * 5 + 2  # conv0, bn0, 8 units, 3 projections, fc
    x = _data((1, 3, 32, 32))
    out = _run(mod, params, x)
    np.testing.assert_allclose(out, resnet.numpy_forward(x, params, num_layers=18), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("layers,ret", [(18, 512), (34, 512), (50, 2048)])
def test_resnet_imagenet_types(layers, ret):
    mod, params = resnet.get_workload(num_layers=layers)
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 1000), "float32")
    assert params["fc1_weight"].shape == (1000, ret)
    assert params["conv0_weight"].shape == (64, 3, 7, 7)


def test_resnet_rejects_unknown_depth():
    with pytest.raises(RelayError, match="num_layers=20"):
        resnet.get_workload(num_layers=20)


def test_seed_cnn_still_matches_numpy():
    mod, params = seed_cnn.get_workload()
    x = _data((1, 3, 32, 32))
    np.testing.assert_allclose(_run(mod, params, x), seed_cnn.numpy_forward(x, params), rtol=1e-4, atol=1e-5)


def test_numpy_conv_is_independent_of_registry():
    """The numpy conv2d against a naive loop, so the workloads' oracle is itself checked."""
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))
    got = numpy_nn.conv2d(x, w, stride=2, pad=1)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 3, 3, 3))
    for o in range(3):
        for i in range(3):
            for j in range(3):
                want[0, o, i, j] = np.sum(xp[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] * w[o])
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("kind", ["graph", "vm", "aot"])
def test_workloads_on_compiled_executors(kind):
    """Each compiled executor against the numpy forward passes."""
    mod, params = mlp.get_workload(batch_size=2)
    x = _data((2, 1, 28, 28))
    out = relay.create_executor(kind, mod=mod, params=params).evaluate()(x).numpy()
    np.testing.assert_allclose(out, mlp.numpy_forward(x, params), rtol=1e-4, atol=1e-6)
    mod, params = resnet.get_block_workload(channels=8, image_size=10)
    x = _data((1, 8, 10, 10))
    out = relay.create_executor(kind, mod=mod, params=params).evaluate()(x).numpy()
    np.testing.assert_allclose(out, resnet.block_numpy_forward(x, params), rtol=1e-4, atol=1e-5)


@pytest.mark.slow  # model-level
def test_resnet50_small_image_matches_numpy():
    mod, params = resnet.get_workload(batch_size=1, num_classes=10, num_layers=50, image_shape=(3, 32, 32))
    assert mod["main"].checked_type.ret_type == relay.TensorType((1, 10), "float32")
    x = _data((1, 3, 32, 32))
    out = _run(mod, params, x)
    np.testing.assert_allclose(out, resnet.numpy_forward(x, params, num_layers=50), rtol=1e-4, atol=1e-6)


@pytest.mark.slow  # model-level
@pytest.mark.parametrize("kind", ["debug", "graph"])
def test_resnet18_maxpool_stem_matches_numpy(kind):
    """image side 64 > 32 takes the 7x7/stride-2 conv + max-pool stem."""
    mod, params = resnet.get_workload(batch_size=1, num_classes=10, num_layers=18, image_shape=(3, 64, 64))
    x = _data((1, 3, 64, 64))
    out = relay.create_executor(kind, mod=mod, params=params).evaluate()(x).numpy()
    np.testing.assert_allclose(out, resnet.numpy_forward(x, params, num_layers=18), rtol=1e-4, atol=1e-6)
