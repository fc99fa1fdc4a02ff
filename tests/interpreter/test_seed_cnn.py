"""The seed CNN (README's example plus a dense head) through the debug executor, against a
numpy implementation written here independently of the op references."""
import numpy as np

from relay_backend.build_module import create_executor
from relay_backend.ir import Function, IRModule, var
from relay_backend.op import nn
from relay_backend.op import tensor as T


def _conv2d_nchw(x, w, pad):
    """Direct convolution by summing shifted slices (stride 1, no dilation), in float64."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out_h, out_w = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    out = np.zeros((n, o, out_h, out_w))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + out_h, j:j + out_w]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype("float64"))
    return out


def test_seed_cnn_matches_numpy():
    rng = np.random.default_rng(0)
    x = var("x", shape=(2, 3, 8, 8))
    w = var("w", shape=(16, 3, 3, 3))
    d = var("d", shape=(10, 16))
    b = var("b", shape=(10,))
    y = nn.relu(nn.conv2d(x, w, padding=(1, 1), kernel_size=(3, 3), channels=16))
    y = nn.batch_flatten(nn.global_avg_pool2d(y))
    y = T.add(nn.dense(y, d, units=10), b)
    mod = IRModule.from_expr(Function([x, w, d, b], y))

    params = {"w": rng.standard_normal((16, 3, 3, 3)).astype("float32"),
              "d": rng.standard_normal((10, 16)).astype("float32"),
              "b": rng.standard_normal(10).astype("float32")}
    data = rng.standard_normal((2, 3, 8, 8)).astype("float32")
    out = create_executor("debug", mod=mod, params=params).evaluate()(data)

    ref = np.maximum(_conv2d_nchw(data, params["w"], 1), 0).mean(axis=(2, 3))
    ref = ref @ params["d"].T.astype("float64") + params["b"]
    assert out.shape == (2, 10) and out.dtype == "float32"
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)
