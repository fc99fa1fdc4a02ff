"""InferType fills in what Relay's relations assign: the types of unannotated weights and
per-channel parameters from the op that consumes them, a size variable bound by a call site,
and the return type of a recursive function from its recursive uses."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te
from relay_backend.errors import TypeInferenceError


def _typed(fn):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(fn))
    return mod["main"]


def _param_types(fn):
    return {p.name_hint: str(p.checked_type) for p in fn.params}


def test_conv2d_weight_from_channels_and_kernel_size():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w")
    fn = _typed(relay.Function([x, w], relay.nn.conv2d(x, w, channels=16, kernel_size=(3, 5), padding=1)))
    assert _param_types(fn)["w"] == "Tensor[(16, 3, 3, 5), float32]"
    assert str(fn.ret_type) == "Tensor[(1, 16, 8, 6), float32]"


def test_conv2d_weight_from_channels_follows_the_data_and_kernel_layouts():
    """NHWC data with an HWIO kernel: the filled weight is (KH, KW, C, channels), not the NCHW/OIHW
    shape (which read W as the input channels), and the program runs as a numpy convolution."""
    x, w = relay.var("x", shape=(1, 6, 5, 3)), relay.var("w")
    fn = _typed(relay.Function([x, w], relay.nn.conv2d(x, w, channels=4, kernel_size=(3, 2),
                                                       data_layout="NHWC", kernel_layout="HWIO")))
    assert _param_types(fn)["w"] == "Tensor[(3, 2, 3, 4), float32]"
    assert str(fn.ret_type) == "Tensor[(1, 4, 4, 4), float32]"
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((1, 6, 5, 3)).astype("float32"), rng.standard_normal((3, 2, 3, 4)).astype("float32")
    windows = np.lib.stride_tricks.sliding_window_view(xv, (3, 2), axis=(1, 2))    # (1, 4, 4, 3, 3, 2)
    want = np.einsum("nyxcpq,pqco->nyxo", windows, wv)
    out = relay.create_executor("debug", mod=relay.IRModule.from_expr(fn)).evaluate()(xv, wv)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


def test_grouped_conv2d_needs_an_annotated_weight_as_in_relay():
    x, w = relay.var("x", shape=(1, 4, 8, 8)), relay.var("w")
    fn = relay.Function([x, w], relay.nn.conv2d(x, w, channels=4, kernel_size=(3, 3), groups=2))
    with pytest.raises(TypeInferenceError, match=r"cannot infer the type of .*%w"):
        _typed(fn)


def test_dense_and_matmul_weights_from_units():
    n = te.size_var("n")
    x, w = relay.var("x", shape=(n, 12)), relay.var("w")
    fn = _typed(relay.Function([x, w], relay.nn.dense(x, w, units=5)))
    assert _param_types(fn)["w"] == "Tensor[(5, 12), float32]" and str(fn.ret_type) == "Tensor[(n, 5), float32]"
    a, b = relay.var("a", shape=(7, 3), dtype="float64"), relay.var("b")
    fn = _typed(relay.Function([a, b], relay.nn.matmul(a, b, units=2, transpose_a=True)))
    assert _param_types(fn)["b"] == "Tensor[(7, 2), float64]"


def test_an_annotated_weight_must_agree_with_units():
    x, w = relay.var("x", shape=(2, 12)), relay.var("w", shape=(6, 12))
    with pytest.raises(TypeInferenceError, match=r"units=5 but weight has 6 rows"):
        _typed(relay.Function([x, w], relay.nn.dense(x, w, units=5)))


def test_per_channel_parameters_from_the_data_axis():
    h = te.size_var("h")
    x = relay.var("x", shape=(2, 6, h))
    b, g, be, mm, mv, a, lg, lb = (relay.var(name) for name in ("b", "g", "be", "mm", "mv", "a", "lg", "lb"))
    y = relay.nn.bias_add(x, b)
    y = relay.nn.batch_norm(y, g, be, mm, mv)[0]
    y = relay.nn.prelu(y, a)
    y = relay.nn.layer_norm(y, lg, lb, axis=-1)
    fn = _typed(relay.Function([x, b, g, be, mm, mv, a, lg, lb], y))
    types = _param_types(fn)
    assert [types[k] for k in ("b", "g", "be", "mm", "mv", "a")] == ["Tensor[(6), float32]"] * 6
    assert types["lg"] == types["lb"] == "Tensor[(h), float32]"


def test_filled_weights_run_and_match_numpy():
    x, w, b = relay.var("x", shape=(3, 4)), relay.var("w"), relay.var("b")
    fn = relay.Function([x, w, b], relay.nn.bias_add(relay.nn.dense(x, w, units=2), b))
    rng = np.random.default_rng(0)
    xv, wv, bv = (rng.standard_normal(s).astype("float32") for s in ((3, 4), (2, 4), (2,)))
    for kind in ("debug", "vm"):
        out = relay.create_executor(kind, mod=relay.IRModule.from_expr(fn)).evaluate()(xv, wv, bv)
        np.testing.assert_allclose(out.numpy(), xv @ wv.T + bv, rtol=1e-5, atol=1e-5)


def test_a_call_site_binds_a_size_variable_of_the_callee():
    """Calling @f(x: Tensor[(k)]) with a (3,) tensor binds k = 3 at that call (TVM's UnifyDim),
    so the caller's type says 3, while @f itself stays generic over k."""
    mod = relay.IRModule()
    f, k = relay.GlobalVar("f"), te.size_var("k")
    acc = relay.var("acc", shape=(k,))
    mod[f] = relay.Function([acc], relay.multiply(acc, relay.const(2.0)))
    x = relay.var("x", shape=(3,))
    mod["main"] = relay.Function([x], f(x))
    mod = relay.transform.InferType()(mod)
    assert str(mod["main"].ret_type) == "Tensor[(3), float32]"
    assert str(mod[f].ret_type) == "Tensor[(k), float32]"


def test_recursive_function_return_type_is_solved_from_its_recursive_uses():
    mod = relay.IRModule()
    f, k = relay.GlobalVar("f"), te.size_var("k")
    n, acc = relay.var("n", shape=(), dtype="int32"), relay.var("acc", shape=(k,))
    body = relay.If(relay.equal(n, relay.const(0)), acc,
                    f(relay.subtract(n, relay.const(1)), relay.multiply(acc, relay.const(2.0))))
    mod[f] = relay.Function([n, acc], body)          # no return annotation
    mod = relay.transform.InferType()(mod)
    assert str(mod[f].ret_type) == "Tensor[(k), float32]"
    assert str(mod[f].body.false_branch.checked_type) == "Tensor[(k), float32]"
