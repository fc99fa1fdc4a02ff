"""The pass library on programs whose batch is a size variable `n`: SimplifyExpr, FoldScaleAxis,
ConvertLayout and the gradient passes keep the program's meaning (debug interpreter against the
unoptimized program for two batch sizes), still do their rewrite where the symbolic dim is not
involved, and a gradient that must compute with the symbolic shape says so (OpNotImplemented)."""
import warnings

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te, transform
from relay_backend.errors import OpNotImplemented
from relay_backend.ir.functor import all_nodes_post_order

F32 = "float32"
RNG = np.random.default_rng(3)
SIZES = (1, 3)


def _typed_mod(func):
    return transform.InferType()(relay.IRModule.from_expr(func))


def _op_names(mod):
    return [n.op.name for n in all_nodes_post_order(mod["main"]) if isinstance(n, relay.Call)
            and hasattr(n.op, "name")]


def _run(mod, *args):
    out = relay.create_executor("debug", mod=mod).evaluate()(*args)
    return out.numpy()


def _same_values(before, after, make_args):
    for size in SIZES:
        args = make_args(size)
        np.testing.assert_allclose(_run(after, *args), _run(before, *args), rtol=1e-4, atol=1e-5)


def _conv_program():
    """NCHW conv (weight a constant) -> relu -> times a per-channel positive constant, batch n."""
    n = te.size_var("n")
    x = relay.var("x", shape=(n, 3, 6, 6))
    weight = relay.const(RNG.standard_normal((4, 3, 3, 3)).astype(F32))
    scale = relay.const(RNG.uniform(0.5, 1.5, (4, 1, 1)).astype(F32))
    y = relay.nn.conv2d(x, weight, channels=4, kernel_size=(3, 3), padding=(1, 1))
    return _typed_mod(relay.Function([x], relay.multiply(relay.nn.relu(y), scale)))


def _conv_args(size):
    return [RNG.standard_normal((size, 3, 6, 6)).astype(F32)]


def test_simplify_expr_on_a_symbolic_program():
    n = te.size_var("n")
    x = relay.var("x", shape=(n, 4))
    y = relay.transpose(relay.transpose(relay.reshape(relay.reshape(x, (-1, 2, 2)), (-1, 4)), (1, 0)), (1, 0))
    before = _typed_mod(relay.Function([x], relay.add(y, relay.const(0.0))))
    after = transform.InferType()(transform.SimplifyExpr()(before))
    assert after["main"].ret_type == before["main"].ret_type
    assert "transpose" not in _op_names(after), "the two transposes cancel whatever n is"
    _same_values(before, after, lambda size: [RNG.standard_normal((size, 4)).astype(F32)])


def test_fold_scale_axis_folds_into_the_weight_with_a_symbolic_batch():
    before = _conv_program()
    with transform.PassContext(opt_level=3):
        after = transform.InferType()(transform.FoldConstant()(transform.FoldScaleAxis()(before)))
    assert "multiply" not in _op_names(after), "the channel scale moves into the constant weight"
    _same_values(before, after, _conv_args)


def test_convert_layout_with_a_symbolic_batch():
    before = _conv_program()
    after = transform.InferType()(transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]})(before))
    convs = [n for n in all_nodes_post_order(after["main"]) if isinstance(n, relay.Call)
             and getattr(n.op, "name", "") == "nn.conv2d"]
    assert [c.attrs.data_layout for c in convs] == ["NHWC"]
    assert str(after["main"].ret_type) == "Tensor[(n, 4, 6, 6), float32]"
    _same_values(before, after, _conv_args)


def test_layout_transform_relation_keeps_symbolic_dims():
    n, c = te.size_var("n"), te.size_var("c")
    x = relay.var("x", shape=(n, c * 4, 5, 5))
    mod = _typed_mod(relay.Function([x], relay.layout_transform(x, "NCHW", "NCHW4c")))
    assert str(mod["main"].ret_type) == "Tensor[(n, c, 5, 5, 4), float32]"
    data = RNG.standard_normal((2, 8, 5, 5)).astype(F32)
    expected = data.reshape(2, 2, 4, 5, 5).transpose(0, 1, 3, 4, 2)
    np.testing.assert_allclose(_run(mod, data), expected)


@pytest.mark.parametrize("mode", ["higher_order", "first_order"])
def test_gradient_of_elementwise_ops_on_a_symbolic_shape(mode):
    n = te.size_var("n")
    x, y = relay.var("x", shape=(n, 3)), relay.var("y", shape=(n, 3))
    func = _typed_mod(relay.Function([x, y], relay.nn.relu(x) * y + relay.exp(x)))["main"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        back = transform.gradient(func, mode=mode)
    mod = _typed_mod(back)
    for size in SIZES:
        xv, yv = (RNG.standard_normal((size, 3)).astype(F32) for _ in range(2))
        value, (gx, gy) = relay.create_executor("debug", mod=mod).evaluate()(xv, yv)
        np.testing.assert_allclose(value.numpy(), np.maximum(xv, 0) * yv + np.exp(xv), rtol=1e-5)
        np.testing.assert_allclose(gx.numpy(), (xv > 0) * yv + np.exp(xv), rtol=1e-5)
        np.testing.assert_allclose(gy.numpy(), np.maximum(xv, 0), rtol=1e-5)


def test_gradient_that_needs_the_symbolic_shape_is_a_clear_error():
    n = te.size_var("n")
    x = relay.var("x", shape=(n, 3))
    func = _typed_mod(relay.Function([x], relay.sum(x, axis=1)))["main"]
    with pytest.raises(OpNotImplemented, match=r"needs static shapes, got \(n, 3\)"):
        transform.FirstOrderGradient()(relay.IRModule.from_expr(func))
