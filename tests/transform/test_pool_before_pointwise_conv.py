"""PoolBeforePointwiseConv: avg_pool2d(conv2d 1x1) becomes conv2d 1x1(avg_pool2d) (before /
expected, structurally), the result matches numpy (rtol 1e-5, atol 1e-5 in float32) at odd
channel counts, grouped and channel-last, and the convolutions it must not move stay put."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.ir import IRModule
from relay_backend.ir.structural import assert_structural_equal
from relay_backend.transform import InferType, PoolBeforePointwiseConv

RTOL = ATOL = 1e-5


def _run_pass(func):
    mod = InferType()(IRModule.from_expr(func))
    with relay.transform.PassContext(opt_level=3):
        return InferType()(PoolBeforePointwiseConv()(mod))["main"]


def _numpy_conv1x1_pool(x, w, groups, pool):
    n, c, h, wd = x.shape
    o = w.shape[0]
    xs = x.reshape(n, groups, c // groups, h, wd)
    ws = w.reshape(groups, o // groups, c // groups)
    y = np.einsum("ngchw,goc->ngohw", xs, ws).reshape(n, o, h, wd)
    k, s = pool
    oh, ow = (h - k) // s + 1, (wd - k) // s + 1
    return np.stack([[y[:, :, i * s:i * s + k, j * s:j * s + k].mean(axis=(2, 3)) for j in range(ow)]
                     for i in range(oh)]).transpose(2, 3, 0, 1)


@pytest.mark.parametrize("channels,out_channels,groups,pool", [(5, 3, 1, (2, 2)), (6, 9, 3, (3, 2))])
def test_pool_moves_before_the_1x1_convolution_and_matches_numpy(channels, out_channels, groups, pool):
    x = relay.var("x", shape=(1, channels, 7, 9))
    w = relay.var("w", shape=(out_channels, channels // groups, 1, 1))
    conv = relay.nn.conv2d(x, w, kernel_size=(1, 1), channels=out_channels, groups=groups)
    before = relay.Function([x, w], relay.nn.avg_pool2d(conv, pool_size=(pool[0], pool[0]), strides=(pool[1], pool[1])))
    expected = relay.Function([x, w], relay.nn.conv2d(
        relay.nn.avg_pool2d(x, pool_size=(pool[0], pool[0]), strides=(pool[1], pool[1])), w,
        kernel_size=(1, 1), channels=out_channels, groups=groups))
    after = _run_pass(before)
    assert_structural_equal(after, InferType()(IRModule.from_expr(expected))["main"], map_free_vars=True)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((1, channels, 7, 9)).astype("float32")
    ws = rng.standard_normal((out_channels, channels // groups, 1, 1)).astype("float32")
    got = relay.create_executor("debug", mod=IRModule.from_expr(after)).evaluate()(xs, ws).numpy()
    np.testing.assert_allclose(got, _numpy_conv1x1_pool(xs, ws[:, :, 0, 0], groups, pool), rtol=RTOL, atol=ATOL)


def test_channel_last_layouts_move_too():
    x = relay.var("x", shape=(1, 6, 6, 5))
    w = relay.var("w", shape=(1, 1, 5, 3))
    conv = relay.nn.conv2d(x, w, kernel_size=(1, 1), channels=3, data_layout="NHWC", kernel_layout="HWIO")
    after = _run_pass(relay.Function([x, w], relay.nn.avg_pool2d(conv, (2, 2), (2, 2), layout="NHWC")))
    assert after.body.op.name == "nn.conv2d" and after.body.args[0].op.name == "nn.avg_pool2d"


def _pool_of(conv, **kw):
    return relay.nn.avg_pool2d(conv, pool_size=(2, 2), strides=(2, 2), **kw)


@pytest.mark.parametrize("case", ["3x3", "strided", "padded pool", "used twice", "ceil mode", "other layout"])
def test_convolutions_it_must_not_move_stay(case):
    x = relay.var("x", shape=(1, 4, 8, 8))
    k = 3 if case == "3x3" else 1
    w = relay.var("w", shape=(2, 4, k, k))
    conv = relay.nn.conv2d(x, w, kernel_size=(k, k), channels=2, padding=(1, 1) if k == 3 else (0, 0),
                           strides=(2, 2) if case == "strided" else (1, 1))
    if case == "padded pool":
        body = _pool_of(conv, padding=(1, 1))
    elif case == "ceil mode":
        body = _pool_of(conv, ceil_mode=True)
    elif case == "other layout":
        body = relay.nn.avg_pool2d(relay.layout_transform(conv, "NCHW", "NHWC"), (2, 2), (2, 2), layout="NHWC")
    elif case == "used twice":
        body = relay.Tuple([_pool_of(conv), conv])
    else:
        body = _pool_of(conv)
    before = relay.Function([x, w], body)
    typed = InferType()(IRModule.from_expr(before))["main"]
    assert_structural_equal(_run_pass(before), typed, map_free_vars=True)
