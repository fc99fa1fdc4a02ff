"""FuseOps: before/expected programs in the style of TVM's test_pass_fuse_ops.py.

Each test builds `before()` and the hand-written `expected()` and compares them structurally
after InferType (bound variables match by position, so p0/p1 names do not matter). Random
programs (test_fuse_ops_random.py) check the interpreter gives the same answer before and after.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.errors import RelayError
from relay_backend.ir.expr import Op
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.ir.structural import assert_structural_equal

F32 = "float32"


def run_opt_pass(expr, opt_pass):
    mod = relay.IRModule.from_expr(expr)
    mod = transform.InferType()(mod)
    mod = opt_pass(mod)
    mod = transform.InferType()(mod)
    return mod["main"]


def fuse(expr, fuse_opt_level=-1):
    return run_opt_pass(expr, transform.FuseOps(fuse_opt_level))


def expect(expr):
    return run_opt_pass(expr, transform.InferType())


def prim(params, body):
    """A fused function as FuseOps writes it: Primitive=1 and the body's type as ret_type."""
    ret = transform.InferTypeLocal(relay.Function(params, body)).ret_type
    return relay.Function(params, body, ret_type=ret, attrs={"Primitive": 1})


def primitives(func):
    return [n for n in all_nodes_post_order(func) if isinstance(n, relay.Function) and n.is_primitive]


def ops_in(fn):
    return [n.op.name for n in all_nodes_post_order(fn.body)
            if isinstance(n, relay.Call) and isinstance(n.op, Op)]


def test_fuse_simple():
    def before():
        x = relay.var("x", shape=(10, 20))
        y = relay.squeeze(relay.exp(relay.add(x, relay.const(1, F32))))
        return relay.Function([x], y)

    def expected():
        p0 = relay.var("p0", shape=(10, 20))
        f = prim([p0], relay.squeeze(relay.exp(relay.add(p0, relay.const(1, F32)))))
        x = relay.var("x", shape=(10, 20))
        return relay.Function([x], relay.Call(f, [x]))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_conv2d_bias_relu_is_one_function():
    shape, wshape = (1, 4, 8, 8), (8, 4, 3, 3)

    def body(x, w, b):
        return relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w, padding=(1, 1)), b))

    def before():
        x, w, b = relay.var("x", shape=shape), relay.var("w", shape=wshape), relay.var("b", shape=(8,))
        return relay.Function([x, w, b], body(x, w, b))

    def expected():
        p0, p1, p2 = relay.var("p0", shape=shape), relay.var("p1", shape=wshape), relay.var("p2", shape=(8,))
        f = prim([p0, p1, p2], body(p0, p1, p2))
        x, w, b = relay.var("x", shape=shape), relay.var("w", shape=wshape), relay.var("b", shape=(8,))
        return relay.Function([x, w, b], relay.Call(f, [x, w, b]))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_conv2d_fuse_first_visited_anchor_wins():
    """TVM's test_conv2d_fuse: of two conv2d feeding one add, only the first visited fuses."""
    dshape = (1, 16, 8, 8)
    w_shapes = {"w1": (16, 16, 3, 3), "w2": (16, 16, 1, 1), "w3": (16, 16, 3, 3)}

    def before():
        x = relay.var("x", shape=dshape)
        w1, w2, w3 = (relay.var(k, shape=s) for k, s in w_shapes.items())
        x1 = relay.add(x, relay.const(1, F32))
        y = relay.nn.conv2d(x1, w1, kernel_size=(3, 3), padding=(1, 1), channels=16)
        y1 = relay.add(relay.const(1, F32), y)
        y = relay.add(y, y1)
        z2 = relay.nn.conv2d(y, w2, kernel_size=(1, 1), padding=(0, 0), channels=16)
        z3 = relay.nn.conv2d(y, w3, kernel_size=(3, 3), padding=(1, 1), channels=16)
        return relay.Function([x, w1, w2, w3], relay.add(z2, z3))

    def expected():
        p0 = relay.var("p0", shape=dshape)
        f0 = prim([p0], relay.add(p0, relay.const(1, F32)))
        p0, p1 = relay.var("p0", shape=dshape), relay.var("p1", shape=w_shapes["w1"])
        y = relay.nn.conv2d(p0, p1, kernel_size=(3, 3), padding=(1, 1), channels=16)
        f1 = prim([p0, p1], relay.add(y, relay.add(relay.const(1, F32), y)))
        p0, p1 = relay.var("p0", shape=dshape), relay.var("p1", shape=w_shapes["w3"])
        f2 = prim([p0, p1], relay.nn.conv2d(p0, p1, kernel_size=(3, 3), padding=(1, 1), channels=16))
        p0, p1, p2 = (relay.var("p0", shape=dshape), relay.var("p1", shape=w_shapes["w2"]),
                      relay.var("p2", shape=dshape))
        z = relay.nn.conv2d(p0, p1, kernel_size=(1, 1), padding=(0, 0), channels=16)
        f3 = prim([p0, p1, p2], relay.add(z, p2))
        x = relay.var("x", shape=dshape)
        w1, w2, w3 = (relay.var(k, shape=s) for k, s in w_shapes.items())
        y = relay.Call(f1, [relay.Call(f0, [x]), w1])
        return relay.Function([x, w1, w2, w3], relay.Call(f3, [y, w2, relay.Call(f2, [y, w3])]))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_elementwise_chain_with_diamond():
    def before():
        x = relay.var("x", shape=(4, 5))
        y = relay.exp(x)
        return relay.Function([x], relay.add(relay.nn.relu(y), relay.negative(y)))

    def expected():
        p0 = relay.var("p0", shape=(4, 5))
        y = relay.exp(p0)
        f = prim([p0], relay.add(relay.nn.relu(y), relay.negative(y)))
        x = relay.var("x", shape=(4, 5))
        return relay.Function([x], relay.Call(f, [x]))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_diamond_through_an_opaque_call_does_not_fuse_across_it():
    """exp's two consumers meet at add, but one path goes through a call to another function."""
    shape = (4, 5)
    helper = relay.GlobalVar("helper")

    def build():
        mod = relay.IRModule()
        a = relay.var("a", shape=shape)
        mod[helper] = relay.Function([a], relay.negative(a))
        return mod

    x = relay.var("x", shape=shape)
    y = relay.exp(x)
    mod = build()
    mod["main"] = relay.Function([x], relay.add(relay.Call(helper, [y]), relay.nn.relu(y)))
    out = transform.InferType()(transform.FuseOps()(transform.InferType()(mod)))

    p0 = relay.var("p0", shape=shape)
    f_exp = prim([p0], relay.exp(p0))
    p0, p1 = relay.var("p0", shape=shape), relay.var("p1", shape=shape)
    f_tail = prim([p0, p1], relay.add(p0, relay.nn.relu(p1)))
    x = relay.var("x", shape=shape)
    ey = relay.Call(f_exp, [x])
    exp_mod = build()
    exp_mod["main"] = relay.Function([x], relay.Call(f_tail, [relay.Call(helper, [ey]), ey]))
    exp_mod = transform.InferType()(exp_mod)
    assert_structural_equal(out["main"], exp_mod["main"])
    # the helper was fused on its own, as a global function of the module
    assert len(primitives(out["helper"])) == 1


def test_reduce_absorbs_elementwise_producers_but_not_its_consumers():
    def before():
        x = relay.var("x", shape=(4, 6))
        s = relay.sum(relay.exp(relay.add(x, relay.const(1, F32))), axis=1)
        return relay.Function([x], relay.sqrt(relay.nn.relu(s)))

    def expected():
        p0 = relay.var("p0", shape=(4, 6))
        f0 = prim([p0], relay.sum(relay.exp(relay.add(p0, relay.const(1, F32))), axis=1))
        p0 = relay.var("p0", shape=(4,))
        f1 = prim([p0], relay.sqrt(relay.nn.relu(p0)))
        x = relay.var("x", shape=(4, 6))
        return relay.Function([x], relay.Call(f1, [relay.Call(f0, [x])]))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_injective_does_not_fuse_into_a_reduce():
    """transpose -> sum stays two kernels (the sink must be <= INJECTIVE for an injective op);
    an elementwise op after the transpose still joins the reduce."""
    def before():
        x = relay.var("x", shape=(4, 6))
        return relay.Function([x], relay.sum(relay.exp(relay.transpose(x, (1, 0))), axis=0))

    def expected():
        p0 = relay.var("p0", shape=(4, 6))
        f0 = prim([p0], relay.transpose(p0, (1, 0)))
        p0 = relay.var("p0", shape=(6, 4))
        f1 = prim([p0], relay.sum(relay.exp(p0), axis=0))
        x = relay.var("x", shape=(4, 6))
        return relay.Function([x], relay.Call(f1, [relay.Call(f0, [x])]))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_injective_chain_fuses_with_elementwise():
    def before():
        x = relay.var("x", shape=(4, 6))
        y = relay.reshape(relay.transpose(relay.exp(x), (1, 0)), (24,))
        return relay.Function([x], relay.add(y, relay.const(2, F32)))

    def expected():
        p0 = relay.var("p0", shape=(4, 6))
        y = relay.reshape(relay.transpose(relay.exp(p0), (1, 0)), (24,))
        f = prim([p0], relay.add(y, relay.const(2, F32)))
        x = relay.var("x", shape=(4, 6))
        return relay.Function([x], relay.Call(f, [x]))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_concatenate_of_injective_producers():
    """TVM's test_concatenate (tile stands in for upsampling): the tuple fuses into concatenate
    in phase 1, then its injective field joins in phase 2; the pool stays apart."""
    dshape = (1, 4, 8, 8)

    def before():
        x = relay.var("x", shape=dshape)
        pooled = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2))
        up = relay.tile(pooled, (1, 1, 2, 2))
        concat = relay.concatenate((up, x), axis=1)
        return relay.Function([x], relay.add(concat, relay.const(1, F32)))

    def expected():
        p0 = relay.var("p0", shape=dshape)
        f0 = prim([p0], relay.nn.max_pool2d(p0, pool_size=(2, 2), strides=(2, 2)))
        p0, p1 = relay.var("p0", shape=(1, 4, 4, 4)), relay.var("p1", shape=dshape)
        concat = relay.concatenate((relay.tile(p0, (1, 1, 2, 2)), p1), axis=1)
        f1 = prim([p0, p1], relay.add(concat, relay.const(1, F32)))
        x = relay.var("x", shape=dshape)
        return relay.Function([x], relay.Call(f1, [relay.Call(f0, [x]), x]))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_tuple_root_stays_a_plain_tuple():
    dshape = (1, 4, 8, 8)

    def before():
        x = relay.var("x", shape=dshape)
        pooled = relay.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2))
        return relay.Function([x], relay.Tuple([relay.tile(pooled, (1, 1, 2, 2)), x]))

    def expected():
        p0 = relay.var("p0", shape=dshape)
        f0 = prim([p0], relay.nn.max_pool2d(p0, pool_size=(2, 2), strides=(2, 2)))
        p0 = relay.var("p0", shape=(1, 4, 4, 4))
        f1 = prim([p0], relay.tile(p0, (1, 1, 2, 2)))
        x = relay.var("x", shape=dshape)
        return relay.Function([x], relay.Tuple([relay.Call(f1, [relay.Call(f0, [x])]), x]))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_split_getitems_fuse_into_their_consumer():
    def before():
        x = relay.var("x", shape=(4, 3))
        parts = relay.split(relay.exp(x), 2, axis=0)
        return relay.Function([x], relay.add(parts[0], parts[1]))

    def expected():
        p0 = relay.var("p0", shape=(4, 3))
        parts = relay.split(relay.exp(p0), 2, axis=0)
        f = prim([p0], relay.add(parts[0], parts[1]))
        x = relay.var("x", shape=(4, 3))
        return relay.Function([x], relay.Call(f, [x]))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_fuse_opt_level_zero_gives_one_op_per_function():
    x = relay.var("x", shape=(10, 20))
    y = relay.squeeze(relay.exp(relay.add(x, relay.const(1, F32))))
    before = relay.Function([x], y)

    p0, p1 = relay.var("p0", shape=(10, 20)), relay.var("p1", shape=())
    f_add = prim([p0, p1], relay.add(p0, p1))   # unfused, the scalar constant is a parameter
    p0 = relay.var("p0", shape=(10, 20))
    f_exp = prim([p0], relay.exp(p0))
    p0 = relay.var("p0", shape=(10, 20))
    f_sq = prim([p0], relay.squeeze(p0)).with_attr("relay.reshape_only", 1)   # only a shape change
    x = relay.var("x", shape=(10, 20))
    expected = relay.Function([x], relay.Call(f_sq, [relay.Call(f_exp, [relay.Call(f_add, [x, relay.const(1, F32)])])]))
    assert_structural_equal(fuse(before, fuse_opt_level=0), expect(expected))
    with transform.PassContext(opt_level=0):   # -1 reads the context's opt_level
        assert_structural_equal(fuse(before), expect(expected))


def exp_chain(n, shape=(2, 3)):
    x = relay.var("x", shape=shape)
    y = x
    for _ in range(n):
        y = relay.exp(y)
    return relay.Function([x], y)


@pytest.mark.parametrize("n, max_depth", [(20, 10), (10, 4), (300, None)])
def test_max_depth_splits_a_chain(n, max_depth):
    """TVM's test_fuse_max: a chain splits into groups of exactly max_depth ops (default 256)."""
    config = {} if max_depth is None else {"relay.FuseOps.max_depth": max_depth}
    with transform.PassContext(config=config):
        out = fuse(exp_chain(n))
    depth = max_depth or 256
    sizes = [len(ops_in(f)) for f in primitives(out)]
    assert sorted(sizes, reverse=True) == [depth] * (n // depth) + ([n % depth] if n % depth else [])
    if n == 20:
        p = relay.var("p", shape=(2, 3))
        f1 = prim([p], _exps(p, 10))
        q = relay.var("q", shape=(2, 3))
        f2 = prim([q], _exps(q, 10))
        x = relay.var("x", shape=(2, 3))
        assert_structural_equal(out, expect(relay.Function([x], relay.Call(f2, [relay.Call(f1, [x])]))))


def _exps(x, n):
    for _ in range(n):
        x = relay.exp(x)
    return x


def test_max_depth_one_disables_fusion_and_bad_values_are_rejected():
    with transform.PassContext(config={"relay.FuseOps.max_depth": 1}):
        out = fuse(exp_chain(5))
    assert [len(ops_in(f)) for f in primitives(out)] == [1] * 5
    with transform.PassContext(config={"relay.FuseOps.max_depth": 0}):
        with pytest.raises(RelayError, match="max_depth"):
            fuse(exp_chain(2))
    with pytest.raises(RelayError, match="fuse_opt_level"):
        transform.FuseOps("2")


def test_ten_thousand_op_chain():
    n = 10_000
    x = relay.var("x", shape=(2, 2))
    y = x
    for _ in range(n):
        y = relay.negative(y)
    out = fuse(relay.Function([x], y))
    sizes = [len(ops_in(f)) for f in primitives(out)]
    assert sum(sizes) == n and max(sizes) == 256 and len(sizes) == -(-n // 256)
    data = np.arange(4, dtype=F32).reshape(2, 2)
    result = relay.create_executor("debug", mod=relay.IRModule.from_expr(out)).evaluate()(data)
    np.testing.assert_array_equal(result.numpy(), data)   # an even number of negations


def test_untyped_module_is_typed_first_and_primitives_are_skipped():
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(relay.negative(x))))
    once = transform.FuseOps()(mod)               # no InferType before: the pass runs it
    twice = transform.FuseOps()(once)
    assert_structural_equal(twice["main"], once["main"])
    assert len(primitives(once["main"])) == 1


def test_control_flow_regions_fuse_independently():
    """Let values, If branches and nested function bodies are fused on their own; a value defined
    before the `if` and used in a branch stays one kernel's output."""
    shape = (3,)

    def before():
        x = relay.var("x", shape=shape)
        y = relay.exp(relay.negative(x))
        v = relay.var("v", shape=shape)
        cond = relay.greater(relay.sum(x), relay.const(0.0))
        ite = relay.If(cond, relay.nn.relu(relay.add(v, y)), relay.tanh(relay.abs(v)))
        let = relay.Let(v, relay.multiply(y, relay.const(2.0)), relay.sqrt(ite))
        return relay.Function([x], let)

    def expected():
        x = relay.var("x", shape=shape)
        p = relay.var("p0", shape=shape)
        ey = relay.Call(prim([p], relay.exp(relay.negative(p))), [x])   # computed once, reused
        p = relay.var("p0", shape=shape)
        value = relay.Call(prim([p], relay.multiply(p, relay.const(2.0))), [ey])
        p = relay.var("p0", shape=shape)
        total = relay.Call(prim([p], relay.sum(p)), [x])     # a reduce never absorbs consumers
        p = relay.var("p0", shape=())
        cond = relay.Call(prim([p], relay.greater(p, relay.const(0.0))), [total])
        v = relay.var("v", shape=shape)
        p0, p1 = relay.var("p0", shape=shape), relay.var("p1", shape=shape)
        then = relay.Call(prim([p0, p1], relay.nn.relu(relay.add(p0, p1))), [v, ey])
        p = relay.var("p0", shape=shape)
        other = relay.Call(prim([p], relay.tanh(relay.abs(p))), [v])
        p = relay.var("p0", shape=shape)
        body = relay.Call(prim([p], relay.sqrt(p)), [relay.If(cond, then, other)])
        return relay.Function([x], relay.Let(v, value, body))

    assert_structural_equal(fuse(before()), expect(expected()))


def test_nested_closure_body_is_fused():
    x = relay.var("x", shape=(3,))
    a = relay.var("a", shape=(3,))
    inner = relay.Function([a], relay.exp(relay.add(a, x)))
    out = fuse(relay.Function([x], relay.Call(inner, [relay.negative(x)])))
    fused = primitives(out)
    assert sorted(ops_in(f) for f in fused) == [["add", "exp"], ["negative"]]


def test_ten_thousand_binding_let_chain():
    """Each let value is a region of its own; the chain is walked with a loop, not recursion."""
    n = 10_000
    x = relay.var("x", shape=(2,))
    binds, cur = [], x
    for i in range(n):
        v = relay.var(f"v{i}", shape=(2,))
        binds.append((v, relay.negative(relay.exp(cur) if i == 0 else cur)))
        cur = v
    body = cur
    for v, value in reversed(binds):
        body = relay.Let(v, value, body)
    out = fuse(relay.Function([x], body))
    fused = primitives(out)
    assert len(fused) == n and sorted(ops_in(fused[0]) + ops_in(fused[-1])) == ["exp", "negative", "negative"]
