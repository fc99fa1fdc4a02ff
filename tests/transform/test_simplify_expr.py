"""SimplifyExpr: before/expected programs from TVM's test_pass_simplify_expr.py (reshape and
transpose chains, identities, fills, casts and clips, constant re-association, x + x, rsqrt,
binomials), plus the cases that must be left alone."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform

from .normal_form_helpers import run_opt_pass

F32 = "float32"


def simplify(expr):
    return run_opt_pass(expr, transform.SimplifyExpr())


def typed(expr):
    return run_opt_pass(expr, transform.InferType())


def check(before, expected):
    relay.assert_structural_equal(simplify(before), typed(expected))


def test_reshape_chain_becomes_one_reshape():
    def build(final):
        x = relay.var("x", shape=(1, 16, 16, 16))
        w = relay.var("w", shape=(32, 16, 3, 3))
        y = relay.nn.conv2d(x, w, padding=(1, 1))
        if final:
            y = relay.reshape(y, newshape=(32, 16, 16))
        else:
            y = relay.reshape(relay.reshape(relay.reshape(y, (1, 16, -1)), (4, 8, -1, 16)), (32, 16, 16))
        return relay.Function([x, w], y)
    check(build(False), build(True))


@pytest.mark.parametrize("axes_chain, expected_axes", [
    ([[0, 2, 3, 1], [1, 2, 3, 0], [3, 2, 0, 1]], None),        # all cancel
    ([None, None, [0, 2, -1, 1], None, None], [0, 2, 3, 1]),    # reverse pairs and a negative axis
    ([[0, 2, 3, 1], [0, 3, 1, 2]], None),                        # NHWC and back
])
def test_transpose_chains_compose_or_cancel(axes_chain, expected_axes):
    x = relay.var("x", shape=(1, 3, 5, 7))
    y = relay.nn.relu(x)
    for axes in axes_chain:
        y = relay.transpose(y, axes)
    want = relay.nn.relu(x)
    if expected_axes is not None:
        want = relay.transpose(want, expected_axes)
    check(relay.Function([x], y), relay.Function([x], want))


def test_eliminate_identity():
    shape = [2, 3, 4]
    x = relay.var("x", shape=shape)
    for make, make_like, id_op, c in [(relay.zeros, relay.zeros_like, relay.add, relay.const(0.0)),
                                      (relay.ones, relay.ones_like, relay.multiply, relay.const(1.0))]:
        for expr in (id_op(make_like(x), x), id_op(make(shape, F32), x), id_op(c, x),
                     id_op(make(shape[1:], F32), x), id_op(x, make_like(x)), id_op(x, c),
                     id_op(x, make(shape[1:], F32))):
            relay.assert_structural_equal(simplify(expr), typed(x))
        bigger = id_op(x, make([2] + shape, F32))
        relay.assert_structural_equal(simplify(bigger), typed(bigger))   # broadcasting: kept
    for make, make_like, id_op, c in [(relay.zeros, relay.zeros_like, relay.subtract, relay.const(0.0)),
                                      (relay.ones, relay.ones_like, relay.divide, relay.const(1.0))]:
        for expr in (id_op(x, make_like(x)), id_op(x, c), id_op(x, make(shape, F32))):
            relay.assert_structural_equal(simplify(expr), typed(x))
        # not commutative: the fill becomes a scalar constant instead
        check(id_op(make(shape, F32), x), id_op(c, x))
        check(id_op(make_like(x), x), id_op(c, x))


def test_full_elementwise_becomes_scalar():
    x = relay.var("x", shape=(2, 3))
    check(relay.maximum(relay.full(relay.const(2.0), (2, 3), F32), x), relay.maximum(relay.const(2.0), x))
    check(relay.minimum(x, relay.ones_like(x)), relay.minimum(x, relay.const(1.0)))
    # the result type differs from x's (bool): Relay leaves comparisons alone
    cmp = relay.less(x, relay.ones((2, 3), F32))
    check(cmp, cmp)


def test_same_and_consecutive_casts():
    data = relay.var("data", shape=(3, 4, 5), dtype="int32")
    relay.assert_structural_equal(simplify(relay.cast(data, "int32")), typed(data))
    x = relay.var("x", shape=(3, 4, 5), dtype="int8")
    check(relay.cast(relay.cast(x, "int16"), "int32"), relay.cast(x, "int32"))
    check(relay.cast(relay.cast(relay.cast(x, "int16"), "int64"), "float32"), relay.cast(x, "float32"))
    # a narrowing cast is kept
    f = relay.var("f", shape=(3, 4), dtype="float32")
    narrowing = relay.cast(relay.cast(f, "int32"), "float32")
    check(narrowing, narrowing)
    i = relay.var("i", shape=(3, 4), dtype="int64")
    to_bool = relay.cast(relay.cast(i, "bool"), "int32")
    check(to_bool, to_bool)


def test_clip_and_casts():
    x = relay.var("x", shape=(4, 8), dtype="int32")
    clip = relay.clip(x, a_min=0.0, a_max=255.0)
    check(relay.cast(relay.cast(clip, "uint8"), "int32"), clip)
    check(relay.cast(relay.cast(relay.cast(clip, "uint8"), "int16"), "int32"), clip)
    # a cast that cannot hold the clip range stays
    narrow = relay.cast(relay.cast(clip, "int8"), "int32")
    check(narrow, narrow)
    # float -> int casts truncate fractions, so they are kept (Relay would drop them)
    f = relay.var("f", shape=(4, 8), dtype="float32")
    float_chain = relay.cast(relay.cast(relay.clip(f, 0.0, 255.0), "uint8"), "int32")
    check(float_chain, float_chain)
    # clip over the whole dtype range is a no-op
    u = relay.var("u", shape=(4, 8), dtype="uint8")
    relay.assert_structural_equal(simplify(relay.clip(u, 0.0, 255.0)), typed(u))
    check(relay.clip(relay.cast(x, "uint8"), 0.0, 255.0), relay.cast(x, "uint8"))


def test_constants_reassociate_in_either_order():
    n = 8
    rng = np.random.default_rng(0)
    c1v, c2v, c3v = (rng.uniform(size=n).astype(F32) for _ in range(3))
    x = relay.var("x", shape=(n,))
    c1, c2, c3 = relay.const(c1v), relay.const(c2v), relay.const(c3v)
    for expr in (x + c1 + c2, c1 + x + c2):
        check(expr, x + relay.const(c1v + c2v))
    for expr in (x * c1 * c2, c1 * x * c2):
        check(expr, x * relay.const(c1v * c2v))
    for expr in ((x + c1) * c2, (c1 + x) * c2, c2 * (x + c1), c2 * (c1 + x)):
        check(expr, x * c2 + relay.const(c1v * c2v))
    for expr in ((x + c1) * c2 + c3, c3 + c2 * (c1 + x)):
        check(expr, x * c2 + relay.const(c1v * c2v + c3v))
    for expr in ((x * c1 + c2) * c3, c3 * (c2 + c1 * x)):
        check(expr, x * relay.const(c1v * c3v) + relay.const(c2v * c3v))


def test_add_self_and_rsqrt():
    x = relay.var("x", shape=(1, 3, 10, 10))
    check(relay.add(x, x), relay.multiply(x, relay.const(2.0)))
    c = relay.const(np.full((1, 3, 10, 10), 3.0, F32))
    check(c / relay.sqrt(x), c * relay.rsqrt(x))


def test_binomial_square_and_two_roots():
    x = relay.var("x", shape=(4,))
    y = relay.var("y", shape=(4,))
    square = x * x + relay.const(2.0) * (x * y) + y * y              # (x + y)^2
    out = simplify(square)
    xy = x + y
    relay.assert_structural_equal(out, typed(xy * xy))
    two_roots = x * x + relay.const(3.0) * (x * y) + relay.const(2.0) * (y * y)   # (x + 2y)(x + y)
    out2 = simplify(two_roots)
    relay.assert_structural_equal(out2, typed((x + y * relay.const(2.0)) * (x + y)))
    # no real roots: unchanged
    none = x * x + x * y + y * y
    relay.assert_structural_equal(simplify(none), typed(none))
    data = np.arange(4, dtype=F32)
    np.testing.assert_allclose(
        relay.create_executor().evaluate(relay.Function([x, y], out2))(data, data + 1).numpy(),
        data * data + 3 * data * (data + 1) + 2 * (data + 1) ** 2, rtol=1e-5)


def test_concretize_zeros_and_ones_like():
    x = relay.var("x", shape=(2, 3), dtype="int32")
    check(relay.zeros_like(x), relay.zeros((2, 3), "int32"))
    check(relay.ones_like(x), relay.ones((2, 3), "int32"))


def test_post_alter_op_subset_keeps_other_rewrites_out():
    x = relay.var("x", shape=(4,))
    expr = relay.add(relay.multiply(x, relay.const(1.0)), x)
    out = run_opt_pass(expr, transform.SimplifyExprPostAlterOp())
    relay.assert_structural_equal(out, typed(relay.add(x, x)))     # x + x is not rewritten here


def test_constants_take_the_program_dtype():
    """The scalars rules create (x + x -> x * 2, fills, binomial roots) have the operands' dtype,
    so float64 and float16 programs still type-check."""
    for dtype in ("float64", "float16"):
        x = relay.var("x", shape=(3,), dtype=dtype)
        out = simplify(relay.Function([x], relay.add(x, x)))
        assert out.body.args[1].data.dtype == dtype
        y = relay.var("y", shape=(3,), dtype=dtype)
        out2 = simplify(relay.Function([y], relay.maximum(relay.ones((3,), dtype), y)))
        assert out2.body.args[0].data.dtype == dtype
