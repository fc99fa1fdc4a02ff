"""Winograd convolution (nn.contrib_conv2d_winograd_weight_transform,
nn.contrib_conv2d_winograd_without_weight_transform): the transform matrices against a 1-D
correlation and TVM's published F(2x2, 3x3) / F(4x4, 3x3) values, the references and the
compiled kernels (x86 schedule, fused bias + relu) against a direct convolution written here
(a loop over the kernel taps) at odd channel counts, padding 1 / 0 / asymmetric, batch 2 and
F(2x2) / F(4x4) / F(6x6), also on channel-blocked data (NCHW{b}c, odd blocks that differ in
and out); FoldConstant computes the weight transform at compile time; bad attrs and shapes are
RelayErrors naming the problem."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import RelayError
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.op.nn.winograd import (WEIGHT_TRANSFORM, WINOGRAD_CONV, Conv2DWinogradAttrs,
                                          ConvWinogradWeightTransformAttrs)
from relay_backend.op.nn.winograd_matrices import winograd_matrices

from .blocked_refs import nchw_to_blocked

TOL = dict(rtol=1e-4, atol=1e-4)


def direct_conv(x, k, pads):
    """Stride-1 NCHW cross-correlation, float64: a sum over the kernel taps of shifted inputs."""
    top, left, bottom, right = pads
    x = np.pad(x.astype("float64"), ((0, 0), (0, 0), (top, bottom), (left, right)))
    _, _, h, w = x.shape
    r = k.shape[2]
    out = 0.0
    for p in range(r):
        for q in range(r):
            out = out + np.einsum("nchw,oc->nohw", x[:, :, p:p + h - r + 1, q:q + w - r + 1], k[:, :, p, q])
    return out


@pytest.mark.parametrize("m,r", [(m, r) for m in range(2, 9) for r in range(3, 8)])
def test_matrices_compute_a_1d_correlation(m, r):
    a_mat, b_mat, g_mat = winograd_matrices(m, r)
    rng = np.random.default_rng(m * 10 + r)
    d, g = rng.standard_normal(m + r - 1), rng.standard_normal(r)
    got = a_mat.T @ ((g_mat @ g) * (b_mat.T @ d))
    np.testing.assert_allclose(got, np.correlate(d, g, "valid"), rtol=1e-9, atol=1e-9 * 10 ** m)


def test_matrices_are_tvms():
    """TVM's topi values (points 0, -1, 1 and 0, -1, 1, 1/2, -2), so its transformed weights fit."""
    a2, b2, g2 = winograd_matrices(2, 3)
    np.testing.assert_array_equal(a2, [[1, 0], [1, -1], [1, 1], [0, 1]])
    np.testing.assert_allclose(b2, [[1, 0, 0, 0], [0, -1, 1, -1], [-1, 1, 1, 0], [0, 0, 0, 1]], atol=1e-12)
    np.testing.assert_array_equal(g2, [[1, 0, 0], [0.5, -0.5, 0.5], [0.5, 0.5, 0.5], [0, 0, 1]])
    g4 = winograd_matrices(4, 3)[2]
    np.testing.assert_allclose(g4[3], np.array([1, 0.5, 0.25]) / -0.9375)
    np.testing.assert_allclose(g4[4], np.array([1, -2, 4]) / 15)


CASES = [
    # (N, C, H, W, O, r, m, padding)
    pytest.param(1, 5, 9, 10, 6, 3, 4, (1, 1, 1, 1), id="F4-odd-channels-pad1"),
    pytest.param(2, 3, 7, 6, 4, 3, 2, (0, 0, 0, 0), id="F2-batch2-pad0"),
    pytest.param(1, 7, 11, 8, 9, 3, 4, (1, 0, 2, 1), id="F4-asymmetric-pad"),
    pytest.param(2, 4, 12, 12, 8, 3, 6, (1, 1, 1, 1), id="F6-batch2"),
    pytest.param(1, 3, 8, 9, 5, 5, 2, (2, 2, 2, 2), id="F2-5x5"),
]


def _inputs(n, c, h, w, o, r, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, c, h, w)).astype("float32"), rng.standard_normal((o, c, r, r)).astype("float32"))


@pytest.mark.parametrize("n,c,h,w,o,r,m,pads", CASES)
def test_references_match_direct_conv(n, c, h, w, o, r, m, pads):
    x, k = _inputs(n, c, h, w, o, r)
    u = WEIGHT_TRANSFORM.ref(k, ConvWinogradWeightTransformAttrs(m))
    assert u.shape == (m + r - 1, m + r - 1, o, c)
    got = WINOGRAD_CONV.ref(x, u, Conv2DWinogradAttrs(padding=pads, tile_size=m))
    np.testing.assert_allclose(got, direct_conv(x, k, pads), **TOL)


def _graph(fn, inputs: dict):
    params = [relay.var(name, shape=v.shape, dtype=str(v.dtype)) for name, v in inputs.items()]
    mod = relay.IRModule.from_expr(relay.Function(params, fn(*params)))
    gmod = relay.build(mod, target="llvm")["default"](relay.cpu())
    gmod.set_input(**inputs)
    gmod.run()
    return gmod.get_output(0).numpy()


@pytest.mark.compile
@pytest.mark.parametrize("n,c,h,w,o,r,m,pads", [
    pytest.param(*CASES[0].values, id=CASES[0].id, marks=pytest.mark.slow),   # F(4x4): ~8 s of LLVM
    CASES[1], pytest.param(1, 7, 11, 8, 9, 3, 2, (1, 0, 2, 1), id="F2-asymmetric-pad")])
def test_compiled_with_fused_epilogue_matches_direct_conv(n, c, h, w, o, r, m, pads):
    """Both ops compiled (x86 schedule), with bias + relu fused after the convolution."""
    x, k = _inputs(n, c, h, w, o, r, seed=1)
    bias = np.random.default_rng(2).standard_normal((1, o, 1, 1)).astype("float32")

    def net(xv, kv, bv):
        weight = relay.nn.contrib_conv2d_winograd_weight_transform(kv, m)
        conv = relay.nn.contrib_conv2d_winograd_without_weight_transform(xv, weight, m, padding=pads)
        return relay.nn.relu(relay.add(conv, bv))
    got = _graph(net, {"x": x, "k": k, "b": bias})
    np.testing.assert_allclose(got, np.maximum(direct_conv(x, k, pads) + bias, 0), **TOL)


@pytest.mark.compile
@pytest.mark.parametrize("n,c,h,w,o,r,m,pads,bi,bo", [
    pytest.param(1, 6, 9, 10, 10, 3, 2, (1, 1, 1, 1), 3, 5, id="F2-NCHW3c-to-NCHW5c"),
    pytest.param(2, 16, 12, 13, 16, 3, 4, (1, 0, 2, 1), 8, 16, id="F4-batch2-asymmetric-pad",
                 marks=pytest.mark.slow),
    pytest.param(1, 32, 14, 14, 48, 3, 4, (1, 1, 1, 1), 16, 16, id="F4-16-lane-blocks-parallel")])
def test_blocked_compiled_with_fused_epilogue_matches_direct_conv(n, c, h, w, o, r, m, pads, bi, bo):
    """conv2d_winograd_nchwc.x86 on NCHW{bi}c data and a transformed kernel packed along its
    output channels (layout_transform HWOI -> HWOI{bo}o), bias + relu fused, result NCHW{bo}c."""
    x, k = _inputs(n, c, h, w, o, r, seed=3)
    bias = np.random.default_rng(4).standard_normal((1, o // bo, 1, 1, bo)).astype("float32")

    def net(xv, kv, bv):
        weight = relay.layout_transform(relay.nn.contrib_conv2d_winograd_weight_transform(kv, m), "HWOI", f"HWOI{bo}o")
        conv = relay.nn.contrib_conv2d_winograd_without_weight_transform(
            xv, weight, m, padding=pads, data_layout=f"NCHW{bi}c", out_layout=f"NCHW{bo}c")
        return relay.nn.relu(relay.add(conv, bv))
    got = _graph(net, {"x": nchw_to_blocked(x, bi), "k": k, "b": bias})
    want = np.maximum(nchw_to_blocked(direct_conv(x, k, pads), bo) + bias, 0)
    np.testing.assert_allclose(got, want, **TOL)


def test_fold_constant_transforms_the_weight_at_compile_time():
    x, k = _inputs(1, 3, 6, 6, 4, 3)
    xv = relay.var("x", shape=x.shape)
    weight = relay.nn.contrib_conv2d_winograd_weight_transform(relay.const(k), 2)
    func = relay.Function([xv], relay.nn.contrib_conv2d_winograd_without_weight_transform(xv, weight, 2, padding=1))
    mod = relay.transform.FoldConstant()(relay.transform.InferType()(relay.IRModule.from_expr(func)))
    names = [n.op.name for n in all_nodes_post_order(mod["main"]) if isinstance(n, relay.Call)]
    assert names == ["nn.contrib_conv2d_winograd_without_weight_transform"]
    folded = next(n for n in all_nodes_post_order(mod["main"]) if isinstance(n, relay.Constant))
    np.testing.assert_allclose(folded.data.numpy(), WEIGHT_TRANSFORM.ref(k, ConvWinogradWeightTransformAttrs(2)),
                               **TOL)
    got = relay.create_executor("graph", mod=mod).evaluate()(x).numpy()
    np.testing.assert_allclose(got, direct_conv(x, k, (1, 1, 1, 1)), **TOL)


@pytest.mark.parametrize("make,message", [
    (lambda: relay.nn.contrib_conv2d_winograd_without_weight_transform(
        relay.var("x", shape=(1, 3, 8, 8)), relay.var("u", shape=(6, 6, 4, 3)), 4, strides=2), "stride-1"),
    (lambda: relay.nn.contrib_conv2d_winograd_weight_transform(relay.var("k", shape=(4, 3, 3, 3)), 9), "tile_size=9"),
    (lambda: relay.nn.contrib_conv2d_winograd_without_weight_transform(
        relay.var("x", shape=(1, 8, 8, 3)), relay.var("u", shape=(6, 6, 4, 3)), 4, data_layout="NHWC"), "NHWC"),
])
def test_bad_attrs_are_attrs_errors(make, message):
    with pytest.raises(RelayError, match=message):
        make()


@pytest.mark.parametrize("data,weight,layouts,message", [
    ((1, 2, 8, 8, 4), (6, 6, 4, 8), ("NCHW4c", "NCHW4c"), "rank 5"),
    ((1, 2, 8, 8, 4), (6, 6, 1, 8, 8), ("NCHW4c", "NCHW4c"), "last weight dim of 4"),
    ((1, 2, 8, 8, 3), (6, 6, 2, 8, 4), ("NCHW4c", "NCHW4c"), "last data dim of 4"),
    ((1, 2, 8, 8, 4), (6, 6, 2, 6, 4), ("NCHW4c", "NCHW4c"), "data has 8 channels but the weight expects 6"),
])
def test_blocked_relation_errors(data, weight, layouts, message):
    call = relay.nn.contrib_conv2d_winograd_without_weight_transform(
        relay.var("x", shape=data), relay.var("u", shape=weight), 4, data_layout=layouts[0], out_layout=layouts[1])
    with pytest.raises(RelayError, match=message):
        relay.transform.InferTypeLocal(call)


def test_blocked_data_needs_a_blocked_result():
    with pytest.raises(RelayError, match="out_layout='NCHW'"):
        relay.nn.contrib_conv2d_winograd_without_weight_transform(
            relay.var("x", shape=(1, 2, 8, 8, 4)), relay.var("u", shape=(6, 6, 2, 8, 4)), 4,
            data_layout="NCHW4c", out_layout="NCHW")


@pytest.mark.parametrize("data,weight,message", [
    ((1, 3, 8, 8), (6, 6, 4, 5), "data has 3 channels but the weight expects 5"),
    ((1, 3, 8, 8), (5, 5, 4, 3), "tile_size"),
    ((1, 3, 2, 2), (6, 6, 4, 3), "larger than the padded input"),
])
def test_conv_relation_errors(data, weight, message):
    call = relay.nn.contrib_conv2d_winograd_without_weight_transform(relay.var("x", shape=data),
                                                                     relay.var("u", shape=weight), 4)
    with pytest.raises(RelayError, match=message):
        relay.transform.InferTypeLocal(call)


def test_weight_transform_relation_rejects_non_square_kernels():
    call = relay.nn.contrib_conv2d_winograd_weight_transform(relay.var("k", shape=(4, 3, 3, 5)), 2)
    with pytest.raises(RelayError, match="square"):
        relay.transform.InferTypeLocal(call)
