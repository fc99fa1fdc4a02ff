"""CombineParallelConv2D / Dense / BatchMatmul: before/expected programs in the style of TVM's
test_pass_combine_parallel_{conv2d,dense,batch_matmul}.py, and the combined program computes the
same values (interpreter)."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.op.indexing import strided_slice

from .normal_form_helpers import run_opt_pass

F32 = "float32"
RNG = np.random.default_rng(0)


def combine(func, pass_):
    """Run the (opt_level 4) pass directly, as a request, between type inference."""
    mod = pass_(transform.InferType()(relay.IRModule.from_expr(func)))
    return transform.InferType()(mod)["main"]


def typed(func):
    return run_opt_pass(func, transform.InferType())


def same_values(before, after):
    args = [RNG.uniform(-1, 1, size=[int(d) for d in p.type_annotation.shape]).astype(F32)
            for p in before.params]
    want = relay.create_executor().evaluate(before)(*args)
    got = relay.create_executor().evaluate(after)(*args)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)


def size_slice(data, axis, begin, size):
    return strided_slice(data, [0] * axis + [begin], [-1] * axis + [size], [1] * (axis + 1),
                         slice_mode="size")


def test_conv2d_branches_with_following_ops():
    x = relay.var("x", shape=(1, 4, 6, 6))
    chans = (2, 3, 4)
    ws = [relay.var(f"w{i}", shape=(c, 4, 3, 3)) for i, c in enumerate(chans)]
    bs = [relay.var(f"b{i}", shape=(c, 1, 1)) for i, c in enumerate(chans)]
    outs = [relay.nn.relu(relay.add(relay.nn.conv2d(x, w, padding=(1, 1)), b)) for w, b in zip(ws, bs)]
    before = relay.Function([x] + ws + bs, relay.Tuple(outs))
    after = combine(before, transform.CombineParallelConv2D(min_num_branches=3))
    y = relay.nn.conv2d(x, relay.concatenate(ws, axis=0), padding=(1, 1), channels=9)
    y = relay.nn.relu(relay.add(y, relay.concatenate(bs, axis=0)))
    expected = relay.Function([x] + ws + bs, relay.Tuple([size_slice(y, 1, 0, 2), size_slice(y, 1, 2, 3),
                                                          size_slice(y, 1, 5, 4)]))
    relay.assert_structural_equal(after, typed(expected))
    same_values(before, after)


def test_conv2d_needs_enough_compatible_branches():
    x = relay.var("x", shape=(1, 4, 6, 6))
    w1, w2 = relay.var("w1", shape=(2, 4, 3, 3)), relay.var("w2", shape=(2, 4, 3, 3))
    w3 = relay.var("w3", shape=(2, 4, 1, 1))                  # another kernel size: its own group
    before = relay.Function([x, w1, w2, w3], relay.Tuple([relay.nn.conv2d(x, w1), relay.nn.conv2d(x, w2),
                                                          relay.nn.conv2d(x, w3, padding=(1, 1))]))
    relay.assert_structural_equal(combine(before, transform.CombineParallelConv2D(3)), typed(before))
    two = combine(before, transform.CombineParallelConv2D(2))
    convs = [n for n in relay.ir.functor.all_nodes_post_order(two) if isinstance(n, relay.Call)
             and n.op.name == "nn.conv2d"]
    assert len(convs) == 2
    same_values(before, two)
    assert transform.CombineParallelConv2D().info.name == "CombineParallelConv2d"


def test_dense_to_batch_matmul():
    x = relay.var("x", shape=(3, 5))
    ws = [relay.var(f"w{i}", shape=(4, 5)) for i in range(3)]
    before = relay.Function([x] + ws, relay.Tuple([relay.nn.relu(relay.nn.dense(x, w)) for w in ws]))
    after = combine(before, transform.CombineParallelDense(min_num_branches=3))
    y = relay.nn.batch_matmul(relay.stack([x, x, x], axis=0), relay.stack(ws, axis=0))
    parts = relay.split(relay.nn.relu(y), 3, axis=0)
    expected = relay.Function([x] + ws, relay.Tuple([relay.squeeze(parts[i], axis=[0]) for i in range(3)]))
    relay.assert_structural_equal(after, typed(expected))
    same_values(before, after)


def test_dense_to_dense_and_bias_add_stays_per_branch():
    x = relay.var("x", shape=(3, 5))
    units = (2, 4, 3)
    ws = [relay.var(f"w{i}", shape=(u, 5)) for i, u in enumerate(units)]
    bs = [relay.var(f"b{i}", shape=(u,)) for i, u in enumerate(units)]
    before = relay.Function([x] + ws + bs, relay.Tuple(
        [relay.add(relay.nn.dense(x, w), b) for w, b in zip(ws, bs)]))
    after = combine(before, transform.CombineParallelDense(3, to_batch=False))
    y = relay.add(relay.nn.dense(x, relay.concatenate(ws, axis=0), units=9), relay.concatenate(bs, axis=0))
    expected = relay.Function([x] + ws + bs, relay.Tuple([size_slice(y, 1, 0, 2), size_slice(y, 1, 2, 4),
                                                          size_slice(y, 1, 6, 3)]))
    relay.assert_structural_equal(after, typed(expected))
    same_values(before, after)
    # batched: bias_add's axis counts unbatched dims, so it is not merged into the batch
    before2 = relay.Function([x] + ws[:1] * 3 + bs[:1], relay.Tuple(
        [relay.nn.bias_add(relay.nn.dense(x, w), bs[0]) for w in ws[:1] * 3]))
    same_values(before2, combine(before2, transform.CombineParallelDense(3)))


def test_batch_matmul_branches():
    x = relay.var("x", shape=(2, 3, 4))
    ys = [relay.var(f"y{i}", shape=(2, n, 4)) for i, n in enumerate((5, 2, 3))]
    before = relay.Function([x] + ys, relay.Tuple([relay.nn.batch_matmul(x, y) for y in ys]))
    after = combine(before, transform.CombineParallelBatchMatmul(3))
    z = relay.nn.batch_matmul(x, relay.concatenate(ys, axis=1))
    expected = relay.Function([x] + ys, relay.Tuple([size_slice(z, 2, 0, 5), size_slice(z, 2, 5, 2),
                                                     size_slice(z, 2, 7, 3)]))
    relay.assert_structural_equal(after, typed(expected))
    same_values(before, after)


@pytest.mark.parametrize("make", [lambda: transform.CombineParallelConv2D(),
                                  lambda: transform.CombineParallelDense(),
                                  lambda: transform.CombineParallelBatchMatmul()])
def test_combine_passes_are_opt_level_4(make):
    assert make().info.opt_level == 4
