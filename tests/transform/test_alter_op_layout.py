"""AlterOpLayout on x86: before/expected programs (conv2d -> nn.contrib_conv2d_NCHWc with
layout transforms around it, depthwise / grouped convolutions, dense -> nn.contrib_dense_pack),
transforms cancelling between consecutive blocked convolutions with elementwise, broadcast,
pool and concatenate ops between them, FoldConstant packing constant weights, and the same
values as before on the interpreter and the graph executor. The channel block limit is pinned
to 8 (AVX2's float32 lanes) so the expected programs do not depend on the host."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.strategy import x86_alter_layout

from .normal_form_helpers import run_opt_pass

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def block_limit_8(monkeypatch):
    monkeypatch.setattr(x86_alter_layout, "channel_block_limit", lambda dtype="float32": 8)


def alter(func, target="llvm"):
    return run_opt_pass(func, [transform.CanonicalizeOps(), transform.AlterOpLayout(target),
                               transform.InferType()])


def typed(func):
    return run_opt_pass(func, transform.InferType())


def ops(expr):
    return [n.op.name for n in all_nodes_post_order(expr) if isinstance(n, relay.Call) and hasattr(n.op, "name")]


def same_values(before, after, kinds=("debug", "graph")):
    args = [RNG.normal(size=[int(d) for d in p.type_annotation.shape]).astype("float32") for p in before.params]
    want = relay.create_executor().evaluate(before)(*args).numpy()
    for kind in kinds:
        got = relay.create_executor(kind, mod=relay.IRModule.from_expr(after)).evaluate()(*args).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def check_altered(before, expected):
    """AlterOpLayout turns `before` into `expected` and computes the same values."""
    after = alter(before)
    relay.assert_structural_equal(after, typed(expected))
    same_values(before, after)


def nchwc(x, w, ib, ob, **kw):
    return relay.nn.contrib_conv2d_nchwc(x, w, data_layout=f"NCHW{ib}c", kernel_layout=f"OIHW{ib}i{ob}o",
                                         out_layout=f"NCHW{ob}c", **kw)


def lt(x, src, dst):
    return relay.layout_transform(x, src, dst)


def test_conv2d_becomes_nchwc():
    x = relay.var("x", shape=(1, 16, 7, 7))
    w = relay.var("w", shape=(24, 16, 3, 3))
    before = relay.Function([x, w], relay.nn.conv2d(x, w, padding=(1, 1), channels=24, kernel_size=(3, 3)))
    y = nchwc(lt(x, "NCHW", "NCHW8c"), lt(w, "OIHW", "OIHW8i8o"), 8, 8, padding=(1, 1), channels=24,
              kernel_size=(3, 3))
    expected = relay.Function([x, w], lt(y, "NCHW8c", "NCHW"))
    check_altered(before, expected)


def test_odd_channels_use_the_largest_dividing_block():
    """3 input channels -> block 3; 10 output channels -> block 5 (the largest divisor <= 8)."""
    x = relay.var("x", shape=(1, 3, 9, 9))
    w = relay.var("w", shape=(10, 3, 3, 3))
    before = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, strides=(2, 2))))
    y = nchwc(lt(x, "NCHW", "NCHW3c"), lt(w, "OIHW", "OIHW3i5o"), 3, 5, strides=(2, 2))
    expected = relay.Function([x, w], lt(relay.nn.relu(y), "NCHW5c", "NCHW"))
    check_altered(before, expected)


def test_transforms_cancel_between_blocked_convs():
    """conv -> bias -> relu -> max_pool -> conv -> add(residual-like) -> concat -> conv: one
    transform in, one out; the bias vector is expanded and transformed once (a constant after
    FoldConstant), the pool and the concatenation run on NCHW8c data."""
    x = relay.var("x", shape=(1, 8, 8, 8))
    w1 = relay.var("w1", shape=(16, 8, 3, 3))
    b1 = relay.const(RNG.normal(size=(16,)).astype("float32"))
    w2 = relay.var("w2", shape=(16, 16, 1, 1))
    w3 = relay.var("w3", shape=(8, 32, 3, 3))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w1, padding=(1, 1)), b1))
    y = relay.nn.max_pool2d(y, (2, 2), (2, 2))
    z = relay.nn.relu(relay.add(relay.nn.conv2d(y, w2), y))
    out = relay.nn.conv2d(relay.concatenate([y, z], axis=1), w3, padding=(1, 1))
    before = relay.Function([x, w1, w2, w3], out)
    after = alter(before)
    names = ops(after)
    assert names.count("nn.contrib_conv2d_NCHWc") == 3 and "nn.conv2d" not in names
    transforms = [n for n in all_nodes_post_order(after) if isinstance(n, relay.Call)
                  and getattr(n.op, "name", "") == "layout_transform"]
    data_transforms = [(t.attrs.src_layout, t.attrs.dst_layout) for t in transforms
                       if t.attrs.src_layout.startswith("NCHW") and t.attrs.dst_layout.startswith("NCHW")]
    assert sorted(data_transforms) == [("NCHW", "NCHW8c"), ("NCHW", "NCHW8c"), ("NCHW8c", "NCHW")], data_transforms
    pool = next(n for n in all_nodes_post_order(after) if isinstance(n, relay.Call)
                and getattr(n.op, "name", "") == "nn.max_pool2d")
    concat = next(n for n in all_nodes_post_order(after) if isinstance(n, relay.Call)
                  and getattr(n.op, "name", "") == "concatenate")
    assert pool.attrs.layout == "NCHW8c" and concat.attrs.axis == 1
    assert concat.checked_type.shape == (1, 4, 4, 4, 8)
    same_values(before, after)


def test_fold_constant_packs_the_weights():
    """With constant weights, FoldConstant leaves no layout_transform on them: the kernels
    read pre-packed weights; only the data is transformed (in and out)."""
    x = relay.var("x", shape=(1, 8, 6, 6))
    w1 = relay.const(RNG.normal(size=(8, 8, 3, 3)).astype("float32"))
    w2 = relay.const(RNG.normal(size=(16, 8, 1, 1)).astype("float32"))
    before = relay.Function([x], relay.nn.conv2d(relay.nn.relu(relay.nn.conv2d(x, w1, padding=(1, 1))), w2))
    after = run_opt_pass(before, [transform.CanonicalizeOps(), transform.AlterOpLayout("llvm"),
                                  transform.FoldConstant(), transform.InferType()])
    transforms = [n for n in all_nodes_post_order(after) if isinstance(n, relay.Call)
                  and getattr(n.op, "name", "") == "layout_transform"]
    assert len(transforms) == 2 and all(not isinstance(t.args[0], relay.Constant) for t in transforms)
    convs = [n for n in all_nodes_post_order(after) if isinstance(n, relay.Call)
             and getattr(n.op, "name", "") == "nn.contrib_conv2d_NCHWc"]
    assert [tuple(c.args[1].data.shape) for c in convs] == [(1, 1, 3, 3, 8, 8), (2, 1, 1, 1, 8, 8)]
    same_values(before, after)


def test_depthwise_becomes_depthwise_nchwc():
    x = relay.var("x", shape=(1, 16, 8, 8))
    w = relay.var("w", shape=(16, 1, 3, 3))
    before = relay.Function([x, w], relay.nn.conv2d(x, w, padding=(1, 1), groups=16))
    y = relay.nn.contrib_depthwise_conv2d_nchwc(lt(x, "NCHW", "NCHW8c"), lt(w, "OIHW", "OIHW1i8o"),
                                                padding=(1, 1), groups=16, data_layout="NCHW8c",
                                                kernel_layout="OIHW1i8o", out_layout="NCHW8c")
    expected = relay.Function([x, w], lt(y, "NCHW8c", "NCHW"))
    check_altered(before, expected)


def test_grouped_conv_with_full_blocks_is_blocked_and_narrow_groups_stay():
    x = relay.var("x", shape=(1, 32, 6, 6))
    wide = relay.var("wide", shape=(32, 16, 3, 3))       # 2 groups of 16 channels: blocks of 8
    narrow = relay.var("narrow", shape=(32, 2, 3, 3))    # 16 groups of 2: left as nn.conv2d
    before = relay.Function([x, wide, narrow], relay.add(relay.nn.conv2d(x, wide, padding=(1, 1), groups=2),
                                                         relay.nn.conv2d(x, narrow, padding=(1, 1), groups=16)))
    after = alter(before)
    names = ops(after)
    assert names.count("nn.contrib_conv2d_NCHWc") == 1 and names.count("nn.conv2d") == 1
    same_values(before, after)


def test_dense_becomes_dense_pack_and_one_row_stays():
    x = relay.var("x", shape=(4, 12))
    x1 = relay.var("x1", shape=(1, 12))
    w = relay.var("w", shape=(20, 12))
    before = relay.Function([x, x1, w], relay.add(relay.sum(relay.nn.dense(x, w), axis=0, keepdims=True),
                                                  relay.nn.dense(x1, w)))
    expected_packed = relay.nn.contrib_dense_pack(x, lt(w, "NC", "NC5n"), "NC5n")
    expected = relay.Function([x, x1, w], relay.add(relay.sum(expected_packed, axis=0, keepdims=True),
                                                    relay.nn.dense(x1, w)))
    check_altered(before, expected)


@pytest.mark.parametrize("target", [None, "c"])
def test_no_alteration_without_an_x86_target(target):
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.var("w", shape=(8, 8, 3, 3))
    before = relay.Function([x, w], relay.nn.conv2d(x, w, padding=(1, 1)))
    relay.assert_structural_equal(alter(before, target), typed(before))


def test_non_float32_and_nhwc_convs_stay():
    x = relay.var("x", shape=(1, 8, 6, 6), dtype="float64")
    w = relay.var("w", shape=(8, 8, 3, 3), dtype="float64")
    xh = relay.var("xh", shape=(1, 6, 6, 8))
    wh = relay.var("wh", shape=(3, 3, 8, 8))
    before = relay.Function([x, w, xh, wh], relay.Tuple([
        relay.nn.conv2d(x, w, padding=(1, 1)),
        relay.nn.conv2d(xh, wh, padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO")]))
    relay.assert_structural_equal(alter(before), typed(before))


def test_pipeline_alters_at_opt_level_3_only():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.const(RNG.normal(size=(8, 8, 3, 3)).astype("float32"))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.conv2d(x, w, padding=(1, 1))))
    for level, expect in ((2, False), (3, True)):
        with transform.PassContext(opt_level=level):
            opt, _ = relay.build_module.optimize(mod, target="llvm")
        text = opt.astext()
        assert ("nn.contrib_conv2d_NCHWc" in text) == expect, text


@pytest.mark.parametrize("name,image", [pytest.param("squeezenet", 64, marks=pytest.mark.slow, id="squeezenet"),
                                        pytest.param("resnet50", 64, marks=pytest.mark.slow, id="resnet50"),
                                        pytest.param("densenet121", 64, marks=pytest.mark.slow, id="densenet121")])
@pytest.mark.parametrize("kind", ["graph", pytest.param("vm", marks=pytest.mark.slow)])
def test_zoo_network_altered_matches_onnxruntime(name, image, kind):
    """The model zoo networks built at opt_level 3 (NCHWc convolutions, blocked pools and
    concatenations) against onnxruntime; tolerance 1e-4 x max|ref| as in the frontend tests."""
    ort = pytest.importorskip("onnxruntime")
    from relay_backend.testing import onnx_models
    model, shape = getattr(onnx_models, name)(image=image)
    x = np.random.default_rng(7).standard_normal(shape).astype("float32")
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"data": x})[0]
    mod, params = relay.frontend.from_onnx(model)
    with transform.PassContext(opt_level=3):
        opt, _ = relay.build_module.optimize(relay.transform.bind_params_to_main(mod, params, "test"), target="llvm")
        out = relay.create_executor(kind, mod=mod, params=params).evaluate()(x).numpy()
    assert "nn.contrib_conv2d_NCHWc" in opt.astext() and "nn.conv2d(" not in opt.astext()
    err = np.abs(out - ref).max()
    assert err <= 1e-4 * np.abs(ref).max(), f"{name} on {kind}: max error {err} vs max|ref| {np.abs(ref).max()}"


def test_symbolic_shapes_stay_and_run_on_the_vm():
    """Calls with a size variable in their shapes keep their layout (the blocked kernels are
    chosen for static shapes); the static calls around them are still altered, and the VM at
    opt_level 3 computes the numpy-checked interpreter's values for two batch sizes."""
    n = relay.te.size_var("n")
    x = relay.var("x", shape=(n, 8, 6, 6))
    xs = relay.var("xs", shape=(1, 8, 6, 6))
    w = relay.const(RNG.normal(size=(8, 8, 3, 3)).astype("float32"))
    wd = relay.const(RNG.normal(size=(16, 8)).astype("float32"))
    sym = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))
    rows = relay.nn.dense(relay.reshape(relay.nn.global_avg_pool2d(sym), (-1, 8)), wd)
    static = relay.nn.conv2d(xs, w, padding=(1, 1))
    before = relay.Function([x, xs], relay.Tuple([rows, static]))
    after = alter(before)
    names = ops(after)
    assert names.count("nn.conv2d") == 1 and "nn.dense" in names, names
    assert names.count("nn.contrib_conv2d_NCHWc") == 1, names
    mod = relay.IRModule.from_expr(before)
    with transform.PassContext(opt_level=3):
        run = relay.create_executor("vm", mod=mod).evaluate()
    for batch in (1, 3):
        args = [RNG.normal(size=(batch, 8, 6, 6)).astype("float32"), RNG.normal(size=(1, 8, 6, 6)).astype("float32")]
        want = relay.create_executor().evaluate(before)(*args)
        got = run(*args)
        for g, e in zip(got, want):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-4, atol=1e-4)
