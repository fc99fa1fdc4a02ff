"""PadConvChannels: a conv2d whose output channels fill no whole SIMD register runs on
zero-padded channels (x86: a multiple of the register's lanes), and the slice moves below
bias_add / relu / global pools (before / expected, structurally); built programs match numpy
(rtol 1e-4, atol 1e-4 in float32) with channel-wise and other consumers; calls it must leave
stay put; the x86 rule pads 1000 channels on AVX-512 and not on AVX2."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.ir import IRModule
from relay_backend.ir.structural import assert_structural_equal
from relay_backend.strategy.x86_alter_layout import padded_out_channels
from relay_backend.strategy.x86_blocks import channel_block_limit
from relay_backend.transform import InferType, PadConvChannels

RTOL = ATOL = 1e-4
LANES = channel_block_limit()
OUT = 50                                  # pads on 4, 8 and 16 lanes (blocks of 2, 5, 10)
PADDED = -(-OUT // LANES) * LANES


def _typed(func):
    return InferType()(IRModule.from_expr(func))


def _run_pass(func, target="llvm"):
    with relay.transform.PassContext(opt_level=3):
        return InferType()(PadConvChannels(target)(_typed(func)))["main"]


def _consts(channels=12, out=OUT, k=1, seed=0):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((out, channels, k, k)) * 0.2).astype("float32")
    b = rng.standard_normal(out).astype("float32")
    return w, b


def _pad(a, total):
    return np.concatenate([a, np.zeros((total - a.shape[0],) + a.shape[1:], a.dtype)])


def test_conv_bias_relu_pool_runs_padded_and_slices_the_pooled_vector():
    w, b = _consts()
    x = relay.var("x", shape=(1, 12, 9, 11))
    y = relay.nn.conv2d(x, relay.const(w), channels=OUT, kernel_size=(1, 1))
    y = relay.nn.global_avg_pool2d(relay.nn.relu(relay.nn.bias_add(y, relay.const(b))))
    before = relay.Function([x], relay.reshape(y, (1, -1)))
    z = relay.nn.conv2d(x, relay.const(_pad(w, PADDED)), channels=PADDED, kernel_size=(1, 1))
    z = relay.nn.global_avg_pool2d(relay.nn.relu(relay.nn.bias_add(z, relay.const(_pad(b, PADDED)))))
    z = relay.strided_slice(z, begin=[0], end=[OUT], axes=[1])
    expected = relay.Function([x], relay.reshape(z, (1, -1)))
    assert_structural_equal(_run_pass(before), _typed(expected)["main"], map_free_vars=True)


def _numpy_conv(x, w, b, pad=0):
    xp = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    k = w.shape[-1]
    h, wd = xp.shape[2] - k + 1, xp.shape[3] - k + 1
    out = np.zeros((1, w.shape[0], h, wd))
    for i in range(k):
        for j in range(k):
            out += np.einsum("oc,nchw->nohw", w[:, :, i, j].astype("float64"), xp[:, :, i:i + h, j:j + wd])
    return out + b[None, :, None, None]


@pytest.mark.parametrize("tail", ["pool", "softmax", "two_consumers"])
def test_built_program_matches_numpy(tail):
    """Padded 3x3 conv + bias + relu then: a global pool (sliced after it), a softmax over the
    channels (not channel-wise: the slice stays before it), or both the relu and the raw conv."""
    w, b = _consts(channels=13, k=3, seed=1)
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((1, 13, 10, 7)).astype("float32")
    x = relay.var("x", shape=xs.shape)
    conv = relay.nn.conv2d(x, relay.const(w), channels=OUT, kernel_size=(3, 3), padding=(1, 1))
    act = relay.nn.relu(relay.nn.bias_add(conv, relay.const(b)))
    ref_conv = _numpy_conv(xs, w, np.zeros_like(b), pad=1)
    ref_act = np.maximum(ref_conv + b[None, :, None, None], 0)
    if tail == "pool":
        out, want = relay.nn.global_max_pool2d(act), ref_act.max(axis=(2, 3), keepdims=True)
    elif tail == "softmax":
        e = np.exp(ref_act - ref_act.max(axis=1, keepdims=True))
        out, want = relay.nn.softmax(act, axis=1), e / e.sum(axis=1, keepdims=True)
    else:
        out, want = relay.add(act, conv), ref_act + ref_conv
    mod = IRModule.from_expr(relay.Function([x], out))
    for disabled in ([], ["PadConvChannels"]):
        with relay.transform.PassContext(opt_level=3, disabled_pass=disabled):
            graph = relay.build(mod, target="llvm")["default"](relay.cpu(0))
        graph.set_input("x", xs)
        graph.run()
        np.testing.assert_allclose(graph.get_output(0).numpy(), want, rtol=RTOL, atol=ATOL)


def test_calls_it_must_leave_stay_put():
    """A weight that is not a constant, a grouped conv, channels that are a multiple of the
    lanes, and no target: nothing changes."""
    w, _ = _consts()
    x = relay.var("x", shape=(1, 12, 5, 5))
    wv = relay.var("w", shape=w.shape)
    cases = [relay.Function([x, wv], relay.nn.conv2d(x, wv, channels=OUT, kernel_size=(1, 1))),
             relay.Function([x], relay.nn.conv2d(x, relay.const(_consts(out=2 * OUT)[0][:, :6]), channels=2 * OUT,
                                                 kernel_size=(1, 1), groups=2)),
             relay.Function([x], relay.nn.conv2d(x, relay.const(_consts(out=4 * LANES)[0]), channels=4 * LANES,
                                                 kernel_size=(1, 1)))]
    for func in cases:
        assert_structural_equal(_run_pass(func), _typed(func)["main"], map_free_vars=True)
    assert_structural_equal(_run_pass(cases[0], target=None), _typed(cases[0])["main"], map_free_vars=True)


def test_x86_rule_pads_when_fewer_lanes_are_wasted():
    """1000 channels: 1008 on 16 lanes (blocks of 10 use 62% of a register), none on 8 (blocks
    of 8 fill it); 24 channels on 16 lanes: blocks of 12 and padding to 32 both use 75%, none."""
    def call(out):
        x = relay.var("x", shape=(1, 16, 4, 4))
        conv = relay.nn.conv2d(x, relay.const(np.zeros((out, 16, 1, 1), "float32")), channels=out,
                               kernel_size=(1, 1))
        return _typed(relay.Function([x], conv))["main"].body
    assert padded_out_channels(call(1000), lanes=16) == 1008
    assert padded_out_channels(call(1000), lanes=8) is None
    assert padded_out_channels(call(24), lanes=16) is None
    assert padded_out_channels(call(40), lanes=16) == 48
