"""The channel-blocked ops (nn.contrib_conv2d_NCHWc, nn.contrib_depthwise_conv2d_NCHWc,
nn.contrib_dense_pack) against references written here straight on the blocked arrays (loops
over output channels and window taps, no unpacking), at odd channel counts and 1x1 / strided /
dilated / grouped convolutions; then the compiled kernels (graph executor, x86 schedules)
against the same references. The conformance test runs every sample on every executor too."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import RelayError
from relay_backend.op.nn.conv_nchwc import pack_oihw
from relay_backend.op.nn.layout_view import pack_nchw
from relay_backend.op.nn.dense_pack import pack_weight
from relay_backend.op.registry import get as get_op

from .blocked_refs import direct_conv_nchwc, direct_dense_pack, direct_depthwise_nchwc


CONV_CASES = [
    # (N, C, H, W, O, KH, KW, ib, ob, strides, pads, dilation, groups)
    pytest.param(1, 6, 7, 9, 10, 3, 3, 3, 5, (1, 1), (1, 1, 1, 1), (1, 1), 1, id="3x3-odd-blocks"),
    pytest.param(1, 12, 5, 6, 20, 1, 1, 4, 10, (1, 1), (0, 0, 0, 0), (1, 1), 1, id="1x1"),
    pytest.param(2, 8, 9, 7, 16, 1, 1, 8, 8, (2, 2), (0, 0, 0, 0), (1, 1), 1, id="1x1-strided"),
    pytest.param(1, 5, 11, 10, 7, 3, 3, 5, 7, (2, 2), (1, 0, 2, 1), (1, 1), 1, id="strided-asym-pad"),
    pytest.param(1, 8, 10, 9, 8, 3, 3, 8, 8, (1, 1), (2, 2, 2, 2), (2, 2), 1, id="dilated"),
    pytest.param(1, 12, 6, 6, 18, 3, 3, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 2, id="grouped"),
    pytest.param(1, 16, 6, 5, 16, 3, 3, 2, 4, (1, 2), (1, 1, 1, 1), (1, 1), 4, id="grouped-strided"),
    pytest.param(1, 3, 13, 13, 8, 7, 7, 3, 8, (2, 2), (3, 3, 3, 3), (1, 1), 1, id="stem-7x7"),
]


def _conv_inputs(n, c, h, w, o, kh, kw, ib, ob, groups, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w)).astype("float32")
    k = rng.standard_normal((o, c // groups, kh, kw)).astype("float32")
    return pack_nchw(x, ib), pack_oihw(k, ib, ob)


@pytest.mark.parametrize("n,c,h,w,o,kh,kw,ib,ob,strides,pads,dilation,groups", CONV_CASES)
def test_conv2d_nchwc_reference(n, c, h, w, o, kh, kw, ib, ob, strides, pads, dilation, groups):
    x, k = _conv_inputs(n, c, h, w, o, kh, kw, ib, ob, groups)
    call = relay.nn.contrib_conv2d_nchwc(relay.const(x), relay.const(k), strides, pads, dilation, groups,
                                         data_layout=f"NCHW{ib}c", kernel_layout=f"OIHW{ib}i{ob}o",
                                         out_layout=f"NCHW{ob}c")
    got = get_op("nn.contrib_conv2d_NCHWc").ref(x, k, call.attrs)
    np.testing.assert_allclose(got, direct_conv_nchwc(x, k, strides, pads, dilation, groups), rtol=1e-4, atol=1e-4)


def _run_graph(expr, inputs: dict):
    params = [relay.var(name, shape=v.shape, dtype=str(v.dtype)) for name, v in inputs.items()]
    body = expr(*params)
    mod = relay.IRModule.from_expr(relay.Function(params, body))
    lib = relay.build(mod, target="llvm")
    gmod = lib["default"](relay.cpu())
    gmod.set_input(**inputs)
    gmod.run()
    return gmod.get_output(0).numpy()


@pytest.mark.parametrize("n,c,h,w,o,kh,kw,ib,ob,strides,pads,dilation,groups", CONV_CASES)
def test_conv2d_nchwc_compiled(n, c, h, w, o, kh, kw, ib, ob, strides, pads, dilation, groups):
    """The compiled kernel (x86 schedule with a fused bias + relu epilogue) on the same cases."""
    x, k = _conv_inputs(n, c, h, w, o, kh, kw, ib, ob, groups, seed=1)
    bias = np.random.default_rng(2).standard_normal((1, o // ob, 1, 1, ob)).astype("float32")

    def net(xv, kv, bv):
        conv = relay.nn.contrib_conv2d_nchwc(xv, kv, strides, pads, dilation, groups,
                                             data_layout=f"NCHW{ib}c", kernel_layout=f"OIHW{ib}i{ob}o",
                                             out_layout=f"NCHW{ob}c")
        return relay.nn.relu(relay.add(conv, bv))
    got = _run_graph(net, {"x": x, "k": k, "b": bias})
    want = np.maximum(direct_conv_nchwc(x, k, strides, pads, dilation, groups) + bias, 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


DEPTHWISE_CASES = [
    # (C, H, W, multiplier, K, ib, ob, strides, pads, dilation)
    pytest.param(8, 9, 10, 1, 3, 8, 8, (1, 1), (1, 1, 1, 1), (1, 1), id="3x3"),
    pytest.param(6, 8, 7, 1, 3, 3, 2, (2, 2), (1, 1, 1, 1), (1, 1), id="odd-blocks-strided"),
    pytest.param(5, 6, 6, 3, 3, 5, 3, (1, 1), (0, 1, 2, 1), (1, 1), id="multiplier-3"),
    pytest.param(4, 10, 10, 1, 3, 4, 4, (1, 1), (2, 2, 2, 2), (2, 2), id="dilated"),
]


def _depthwise_inputs(c, h, w, multiplier, k, ib, ob, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, c, h, w)).astype("float32")
    kern = rng.standard_normal((c * multiplier, 1, k, k)).astype("float32")
    return pack_nchw(x, ib), pack_oihw(kern, 1, ob)


def _depthwise(xv, kv, c, ib, ob, strides, pads, dilation):
    return relay.nn.contrib_depthwise_conv2d_nchwc(xv, kv, strides, pads, dilation, groups=c,
                                                   data_layout=f"NCHW{ib}c", kernel_layout=f"OIHW1i{ob}o",
                                                   out_layout=f"NCHW{ob}c")


@pytest.mark.parametrize("c,h,w,multiplier,k,ib,ob,strides,pads,dilation", DEPTHWISE_CASES)
def test_depthwise_nchwc_reference_and_compiled(c, h, w, multiplier, k, ib, ob, strides, pads, dilation):
    x, kern = _depthwise_inputs(c, h, w, multiplier, k, ib, ob)
    want = direct_depthwise_nchwc(x, kern, strides, pads, dilation)
    call = _depthwise(relay.const(x), relay.const(kern), c, ib, ob, strides, pads, dilation)
    np.testing.assert_allclose(get_op("nn.contrib_depthwise_conv2d_NCHWc").ref(x, kern, call.attrs), want,
                               rtol=1e-4, atol=1e-4)
    got = _run_graph(lambda xv, kv: _depthwise(xv, kv, c, ib, ob, strides, pads, dilation), {"x": x, "k": kern})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows,k,units,block", [((64,), 48, 40, 8), ((3,), 7, 15, 5), ((2, 5), 33, 24, 8),
                                                ((1,), 64, 32, 16), ((8,), 16, 9, 9)])
def test_dense_pack_reference_and_compiled(rows, k, units, block):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(rows + (k,)).astype("float32")
    w = rng.standard_normal((units, k)).astype("float32")
    packed = pack_weight(w, block)
    want = direct_dense_pack(x, packed)
    layout = f"NC{block}n"
    call = relay.nn.contrib_dense_pack(relay.const(x), relay.const(packed), layout)
    np.testing.assert_allclose(get_op("nn.contrib_dense_pack").ref(x, packed, call.attrs), want, rtol=1e-4,
                               atol=1e-4)
    got = _run_graph(lambda xv, wv: relay.nn.relu(relay.nn.contrib_dense_pack(xv, wv, layout)),
                     {"x": x, "w": packed})
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("make,message", [
    (lambda: relay.nn.contrib_conv2d_nchwc(relay.var("x", shape=(1, 2, 4, 4, 4)), relay.var("k", shape=(1, 2, 3, 3, 4, 8)),
                                           data_layout="NCHW4c", kernel_layout="OIHW4i8o", out_layout="NCHW4c"),
     "output block"),
    (lambda: relay.nn.contrib_conv2d_nchwc(relay.var("x", shape=(1, 2, 4, 4, 4)), relay.var("k", shape=(1, 2, 3, 3, 4, 8)),
                                           data_layout="NCHW", kernel_layout="OIHW4i8o"),
     "channel-blocked"),
    (lambda: relay.nn.contrib_dense_pack(relay.var("x", shape=(2, 4)), relay.var("w", shape=(2, 4, 8)), "NC"),
     "packed dense layout"),
])
def test_bad_layouts_are_attrs_errors(make, message):
    with pytest.raises(RelayError, match=message):
        make()


@pytest.mark.parametrize("data,kernel,message", [
    ((1, 2, 4, 4, 4), (2, 1, 3, 3, 4, 8), "input channels"),          # kernel expects 4, data has 8
    ((1, 2, 4, 4, 8), (2, 2, 3, 3, 4, 8), "channel block"),            # data block 8 vs layout 4
    ((1, 2, 2, 2, 4), (2, 2, 3, 3, 4, 8), "larger than"),              # 3x3 kernel on a 2x2 input
])
def test_conv2d_nchwc_relation_errors(data, kernel, message):
    call = relay.nn.contrib_conv2d_nchwc(relay.var("x", shape=data), relay.var("k", shape=kernel),
                                         data_layout="NCHW4c", kernel_layout="OIHW4i8o", out_layout="NCHW8c")
    mod = relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(call), call))
    with pytest.raises(RelayError, match=message):
        relay.transform.InferType()(mod)
