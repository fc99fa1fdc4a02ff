"""AlterOpLayout on x86 picks Winograd for the 3x3 stride-1 convolutions listed in
x86_alter_layout.WINOGRAD_LAYERS (the shapes where it measured faster than the NCHWc kernel):
before/expected programs, the Winograd call on channel-blocked data between NCHWc convolutions
with no layout transform between them, its weight transformed and packed along the output
channels (HWOI{b}o), FoldConstant computing both at compile time, and the same values as
before on the interpreter and the graph executor (also with input and output blocks that
differ). The table is pinned here so the expected
programs do not depend on the host's measurements."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.strategy import x86_alter_layout

from .normal_form_helpers import run_opt_pass
from .test_alter_op_layout import alter, check_altered, lt, nchwc, ops, same_values

RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def pinned_tables(monkeypatch):
    monkeypatch.setattr(x86_alter_layout, "channel_block_limit", lambda dtype="float32": 8)
    monkeypatch.setattr(x86_alter_layout, "WINOGRAD_LAYERS", {(8, 8, 12, 12): 2, (16, 16, 6, 6): 2})


def winograd(x, w, tile, ib, ob, **kw):
    """The blocked Winograd call AlterOpLayout makes: NCHW{ib}c data, NCHW{ob}c result."""
    packed = lt(relay.nn.contrib_conv2d_winograd_weight_transform(w, tile), "HWOI", f"HWOI{ob}o")
    return relay.nn.contrib_conv2d_winograd_without_weight_transform(
        x, packed, tile, data_layout=f"NCHW{ib}c", out_layout=f"NCHW{ob}c", **kw)


def test_listed_conv_becomes_winograd():
    x = relay.var("x", shape=(1, 8, 12, 12))
    w = relay.var("w", shape=(8, 8, 3, 3))
    before = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))))
    y = relay.nn.relu(winograd(lt(x, "NCHW", "NCHW8c"), w, 2, 8, 8, padding=(1, 1), channels=8, kernel_size=(3, 3)))
    check_altered(before, relay.Function([x, w], lt(y, "NCHW8c", "NCHW")))


def test_odd_channels_get_their_own_blocks():
    """12 input channels (block 6) to 10 output channels (block 5)."""
    x = relay.var("x", shape=(1, 12, 6, 6))
    w = relay.var("w", shape=(10, 12, 3, 3))
    before = relay.Function([x, w], relay.nn.conv2d(x, w, padding=(1, 1)))
    layers = {(12, 10, 6, 6): 2}
    x86_alter_layout.WINOGRAD_LAYERS.update(layers)
    y = winograd(lt(x, "NCHW", "NCHW6c"), w, 2, 6, 5, padding=(1, 1), channels=10, kernel_size=(3, 3))
    check_altered(before, relay.Function([x, w], lt(y, "NCHW5c", "NCHW")))


def test_strided_and_unlisted_convs_stay_nchwc():
    x = relay.var("x", shape=(1, 8, 12, 12))
    w = relay.var("w", shape=(8, 8, 3, 3))
    before = relay.Function([x, w], relay.nn.conv2d(x, w, strides=(2, 2), padding=(1, 1)))
    y = nchwc(lt(x, "NCHW", "NCHW8c"), lt(w, "OIHW", "OIHW8i8o"), 8, 8, strides=(2, 2), padding=(1, 1))
    check_altered(before, relay.Function([x, w], lt(y, "NCHW8c", "NCHW")))
    x2 = relay.var("x", shape=(1, 8, 10, 10))       # (8, 8, 10, 10) is not listed
    assert "nn.contrib_conv2d_NCHWc" in ops(alter(relay.Function([x2, w], relay.nn.conv2d(x2, w, padding=(1, 1)))))


def test_winograd_between_nchwc_convs_stays_blocked():
    """1x1 (NCHWc) -> 3x3 listed (Winograd) -> 1x1 (NCHWc): the data stays in NCHW8c from the
    first convolution to the last; the only data transforms are the program's input and output."""
    x = relay.var("x", shape=(1, 8, 6, 6))
    w1 = relay.var("w1", shape=(16, 8, 1, 1))
    w2 = relay.var("w2", shape=(16, 16, 3, 3))
    w3 = relay.var("w3", shape=(8, 16, 1, 1))
    y = relay.nn.relu(relay.nn.conv2d(x, w1))
    y = relay.nn.relu(relay.nn.conv2d(y, w2, padding=(1, 1)))
    before = relay.Function([x, w1, w2, w3], relay.nn.conv2d(y, w3))
    after = alter(before)
    names = ops(after)
    assert names.count("nn.contrib_conv2d_NCHWc") == 2 and names.count(
        "nn.contrib_conv2d_winograd_without_weight_transform") == 1 and "nn.conv2d" not in names, names
    data_transforms = sorted((n.attrs.src_layout, n.attrs.dst_layout) for n in all_nodes_post_order(after)
                             if isinstance(n, relay.Call) and getattr(n.op, "name", "") == "layout_transform"
                             and n.attrs.src_layout.startswith("NCHW"))
    assert data_transforms == [("NCHW", "NCHW8c"), ("NCHW8c", "NCHW")]
    same_values(before, after)


def test_fold_constant_transforms_the_winograd_weight():
    x = relay.var("x", shape=(1, 8, 12, 12))
    w = relay.const(RNG.normal(size=(8, 8, 3, 3)).astype("float32"))
    before = relay.Function([x], relay.nn.conv2d(x, w, padding=(1, 1)))
    after = run_opt_pass(before, [transform.CanonicalizeOps(), transform.AlterOpLayout("llvm"),
                                  transform.FoldConstant(), transform.InferType()])
    assert ops(after) == ["layout_transform", "nn.contrib_conv2d_winograd_without_weight_transform",
                          "layout_transform"]                           # the data's, in and out
    assert tuple(after.body.args[0].args[1].data.shape) == (4, 4, 1, 8, 8)       # (alpha, alpha, O/8, I, 8)
    same_values(before, after)


@pytest.mark.parametrize("vector_bytes,shape,out_channels,tile", [
    (32, (1, 64, 56, 56), 64, 4), (32, (1, 128, 28, 28), 128, 2), (32, (1, 256, 14, 14), 256, 4),
    (32, (1, 512, 7, 7), 512, 2), (32, (1, 128, 28, 28), 32, 2), (32, (1, 128, 14, 14), 32, 4),
    (64, (1, 64, 56, 56), 64, 4), (64, (1, 128, 28, 28), 128, 4), (64, (1, 256, 14, 14), 256, 4),
    (64, (1, 512, 7, 7), 512, 2), (64, (1, 128, 56, 56), 32, 4), (64, (1, 128, 7, 7), 32, 2),
    (64, (1, 128, 56, 56), 64, None),        # a shape no table lists
    (16, (1, 128, 28, 28), 128, None)])
def test_host_table_follows_the_vector_width(monkeypatch, vector_bytes, shape, out_channels, tile):
    """Without a pinned table the host's vector width picks the measured one (AVX2 and AVX-512:
    ResNet's four stages and DenseNet's 128 -> 32 layers, F(2x2) where it won: AVX2's 28x28
    and 7x7, AVX-512's 7x7); a width with no measurements keeps every convolution direct."""
    monkeypatch.setattr(x86_alter_layout, "WINOGRAD_LAYERS", None)
    monkeypatch.setattr(x86_alter_layout, "vector_bytes", lambda: vector_bytes)
    x = relay.var("x", shape=shape)
    w = relay.var("w", shape=(out_channels, shape[1], 3, 3))
    call = relay.nn.conv2d(x, w, padding=(1, 1))
    relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w], call)))
    chosen = x86_alter_layout.winograd_attrs(call)
    assert (chosen[1].tile_size if chosen else None) == tile
