"""ConvertLayout: before/expected programs from TVM's test_pass_convert_op_layout.py (a conv
converted either way, a conv -> bias -> relu -> pool -> conv chain transformed once at each end,
ops without a rule getting their original layout back) and layout_transform itself."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.errors import RelayError
from relay_backend.testing.executors import flatten

from .normal_form_helpers import run_opt_pass

RNG = np.random.default_rng(0)


def convert(func, layouts):
    return run_opt_pass(func, [transform.ConvertLayout(layouts), transform.InferType()])


def typed(func):
    return run_opt_pass(func, transform.InferType())


def same_values(before, after):
    args = [RNG.normal(size=[int(d) for d in p.type_annotation.shape]).astype("float32") for p in before.params]
    want = flatten(relay.create_executor().evaluate(before)(*args))
    for kind in ("debug", "graph"):
        got = flatten(relay.create_executor(kind, mod=relay.IRModule.from_expr(after)).evaluate()(*args))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_no_convert_when_already_in_the_layout():
    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.var("weight", shape=(8, 8, 3, 3))
    before = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, channels=8, kernel_size=(3, 3),
                                                                  padding=(1, 1))))
    relay.assert_structural_equal(convert(before, {"nn.conv2d": ["NCHW", "default"]}), typed(before))


def test_conv_nhwc_to_nchw():
    x = relay.var("x", shape=(1, 6, 6, 8))
    w = relay.var("weight", shape=(3, 3, 8, 8))
    before = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(
        x, w, channels=8, kernel_size=(3, 3), padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO")))
    y = relay.nn.conv2d(relay.layout_transform(x, "NHWC", "NCHW"), relay.layout_transform(w, "HWIO", "OIHW"),
                        channels=8, kernel_size=(3, 3), padding=(1, 1))
    expected = relay.Function([x, w], relay.layout_transform(relay.nn.relu(y), "NCHW", "NHWC"))
    after = convert(before, {"nn.conv2d": ["NCHW", "default"]})
    relay.assert_structural_equal(after, typed(expected))
    same_values(before, after)


def test_conv_chain_nchw_to_nhwc():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w1 = relay.var("w1", shape=(4, 3, 3, 3))
    b = relay.var("b", shape=(4,))
    w2 = relay.var("w2", shape=(5, 4, 3, 3))

    def body(x, w1, w2, b, layout):
        nhwc = layout == "NHWC"
        kw = dict(data_layout="NHWC", kernel_layout="HWIO") if nhwc else {}
        y = relay.nn.conv2d(x, w1, padding=(1, 1), **kw)
        y = relay.nn.relu(relay.nn.bias_add(y, b, axis=3 if nhwc else 1))
        y = relay.nn.max_pool2d(y, (2, 2), (2, 2), layout=layout)
        return relay.nn.conv2d(y, w2, padding=(1, 1), **kw)

    before = relay.Function([x, w1, b, w2], body(x, w1, w2, b, "NCHW"))
    after = convert(before, {"nn.conv2d": ["NHWC", "default"]})
    expected = relay.Function([x, w1, b, w2], relay.layout_transform(body(
        relay.layout_transform(x, "NCHW", "NHWC"), relay.layout_transform(w1, "OIHW", "HWIO"),
        relay.layout_transform(w2, "OIHW", "HWIO"), b, "NHWC"), "NHWC", "NCHW"))
    # bias_add is canonicalized to add before conversion (ConvertLayout requires CanonicalizeOps)
    ops = [n.op.name for n in relay.ir.functor.all_nodes_post_order(after) if isinstance(n, relay.Call)]
    assert ops.count("layout_transform") == 5 and ops.count("nn.conv2d") == 2
    pool = next(n for n in relay.ir.functor.all_nodes_post_order(after)
                if isinstance(n, relay.Call) and n.op.name == "nn.max_pool2d")
    assert pool.attrs.layout == "NHWC"
    same_values(before, after)
    same_values(before, typed(expected))


def test_ops_without_a_rule_get_the_original_layout():
    x = relay.var("x", shape=(1, 3, 4, 4))
    w = relay.var("w", shape=(2, 3, 1, 1))
    y = relay.nn.conv2d(x, w)
    before = relay.Function([x, w], relay.nn.batch_flatten(relay.exp(y)))
    after = convert(before, {"nn.conv2d": ["NHWC", "default"]})
    flatten = after.body
    assert flatten.op.name == "nn.batch_flatten"
    assert flatten.args[0].op.name == "layout_transform" and flatten.args[0].attrs.dst_layout == "NCHW"
    same_values(before, after)


def test_reduction_softmax_and_depthwise_kernel():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(4, 1, 3, 3))
    y = relay.nn.conv2d(x, w, groups=4, padding=(1, 1))
    before = relay.Function([x, w], relay.nn.softmax(relay.sum(y, axis=[2, 3], keepdims=True), axis=1))
    after = convert(before, {"nn.conv2d": ["NHWC", "default"]})
    conv = next(n for n in relay.ir.functor.all_nodes_post_order(after)
                if isinstance(n, relay.Call) and n.op.name == "nn.conv2d")
    assert conv.attrs.kernel_layout == "HWOI"
    same_values(before, after)


def test_layout_transform_round_trip_and_errors():
    data = RNG.normal(size=(1, 8, 3, 2)).astype("float32")
    x = relay.var("x", shape=data.shape)
    there = relay.layout_transform(x, "NCHW", "NHWC4c")
    func = relay.Function([x], relay.layout_transform(there, "NHWC4c", "NCHW"))
    np.testing.assert_array_equal(relay.create_executor().evaluate(func)(data).numpy(), data)
    with pytest.raises(RelayError, match="different primal axes"):
        relay.layout_transform(x, "NCHW", "NCHWD")
    with pytest.raises(RelayError, match="does not split into blocks"):
        transform.InferType()(relay.IRModule.from_expr(
            relay.Function([x], relay.layout_transform(x, "NCHW", "NCHW3c"))))
    with pytest.raises(RelayError, match="ConvertLayout expects"):
        transform.ConvertLayout(["NHWC"])


def _nhwc_conv(x, w):
    return relay.nn.conv2d(x, w, padding=(1, 1), data_layout="NHWC", kernel_layout="HWIO")


def test_concatenate_of_converted_convs():
    """TVM's test_conv_concat_convert_layout: both branches of the concatenate stay in NCHW,
    the axis moves from 3 to 1, and one transform brings the result back."""
    x = relay.var("x", shape=(1, 4, 4, 3))
    w1, w2 = relay.var("w1", shape=(3, 3, 3, 3)), relay.var("w2", shape=(3, 3, 3, 3))
    y = _nhwc_conv(x, w1)
    before = relay.Function([x, w1, w2], relay.concatenate([y, _nhwc_conv(y, w2)], axis=3))
    after = convert(before, {"nn.conv2d": ["NCHW", "default"]})

    def conv(d, w):
        return relay.nn.conv2d(d, relay.layout_transform(w, "HWIO", "OIHW"), padding=(1, 1))
    ye = conv(relay.layout_transform(x, "NHWC", "NCHW"), w1)
    expected = relay.Function([x, w1, w2], relay.layout_transform(
        relay.concatenate([ye, conv(ye, w2)], axis=1), "NCHW", "NHWC"))
    relay.assert_structural_equal(after, typed(expected))
    same_values(before, after)


def test_concatenate_with_an_unconverted_branch():
    """A branch still in the original layout is transformed to the converted one."""
    x = relay.var("x", shape=(1, 4, 4, 3))
    w = relay.var("w", shape=(3, 3, 3, 3))
    before = relay.Function([x, w], relay.concatenate([_nhwc_conv(x, w), relay.nn.relu(x)], axis=-1))
    after = convert(before, {"nn.conv2d": ["NCHW", "default"]})
    concat = after.body.args[0]
    assert concat.op.name == "concatenate" and concat.attrs.axis == 1
    assert concat.args[0].fields[1].op.name == "layout_transform"
    same_values(before, after)


def test_split_and_transpose_follow_the_layout():
    """split's axis is remapped and its parts stay converted; a transpose absorbs the change,
    so its output needs no transform back."""
    x = relay.var("x", shape=(1, 4, 4, 3))
    w = relay.var("w", shape=(3, 3, 3, 4))
    parts = relay.split(_nhwc_conv(x, w), 2, axis=3)
    summed = relay.add(parts[0], parts[1])
    before = relay.Function([x, w], relay.Tuple([summed, relay.transpose(relay.nn.relu(summed), (0, 3, 1, 2))]))
    after = convert(before, {"nn.conv2d": ["NCHW", "default"]})
    calls = [n for n in relay.ir.functor.all_nodes_post_order(after) if isinstance(n, relay.Call)]
    split = next(c for c in calls if c.op.name == "split")
    transpose = next(c for c in calls if c.op.name == "transpose")
    assert split.attrs.axis == 1 and tuple(transpose.attrs.axes) == (0, 1, 2, 3)
    assert [c.op.name for c in calls].count("layout_transform") == 3    # x, w and summed back
    assert transpose.args[0].op.name == "nn.relu"
    same_values(before, after)
