"""transform.gradient (higher_order and first_order) and FirstOrderGradient: the result types
and values of Relay's test_pass_gradient.py cases, closures, control flow, references and
recursion (higher order), second-order gradients, and the errors for what a mode cannot do."""
import warnings

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.errors import RelayError
from relay_backend.op.registry import get as get_op
from relay_backend.testing import check_grad
from relay_backend.transform import gradient
from relay_backend.transform.first_order_gradient import first_order_gradient

F32 = "float32"
T = relay.TensorType((10, 10), F32)
MODES = ["higher_order", "first_order"]


def typed(func, mod=None):
    mod = mod if mod is not None else relay.IRModule()
    mod["main"] = func
    return transform.InferType()(mod)["main"]


def grad_of(func, mode, mod=None):
    func = typed(func, mod)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        back = gradient(func, mod=mod if mode == "higher_order" else None, mode=mode)
    return typed(back, mod.copy() if mod is not None else None)


def run(func, *args, mod=None):
    m = mod.copy() if mod is not None else relay.IRModule()
    m["main"] = func
    value, grads = relay.create_executor("debug", mod=m).evaluate()(*args)
    return value.numpy() if hasattr(value, "numpy") else value, [g.numpy() for g in grads]


def rand(*shape):
    return np.random.default_rng(0).uniform(-1, 1, size=shape).astype(F32)


@pytest.mark.parametrize("mode", MODES)
def test_identity(mode):
    x = relay.var("x", T)
    back = grad_of(relay.Function([x], x), mode)
    assert back.checked_type == relay.FuncType([T], relay.TupleType([T, relay.TupleType([T])]))
    data = rand(10, 10)
    value, (g,) = run(back, data)
    np.testing.assert_allclose(value, data)
    np.testing.assert_allclose(g, np.ones_like(data))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("build, value_of, grad_value", [
    (lambda x: x + x, lambda d: 2 * d, 2.0),
    (lambda x: x - x, lambda d: 0 * d, 0.0),
    (lambda x: relay.Let(relay.var("y"), x + x, None), None, None),
])
def test_add_sub_and_let(mode, build, value_of, grad_value):
    x = relay.var("x", T)
    if value_of is None:   # let y = x + x; y + y
        y = relay.var("y")
        body, value_of, grad_value = relay.Let(y, x + x, y + y), (lambda d: 4 * d), 4.0
    else:
        body = build(x)
    back = grad_of(relay.Function([x], body), mode)
    assert back.checked_type == relay.FuncType([T], relay.TupleType([T, relay.TupleType([T])]))
    data = rand(10, 10)
    value, (g,) = run(back, data)
    np.testing.assert_allclose(value, value_of(data), rtol=1e-6)
    np.testing.assert_allclose(g, np.full_like(data, grad_value))


@pytest.mark.parametrize("mode", MODES)
def test_broadcast_add_and_subtract(mode):
    x = relay.var("x", shape=(3, 4, 1))
    y = relay.var("y", shape=(1, 5))
    for op, sign in ((relay.add, 1.0), (relay.subtract, -1.0)):
        back = grad_of(relay.Function([x, y], op(x, y)), mode)
        xd, yd = rand(3, 4, 1), rand(1, 5)
        value, (gx, gy) = run(back, xd, yd)
        np.testing.assert_allclose(value, xd + sign * yd, rtol=1e-6)
        np.testing.assert_allclose(gx, np.full((3, 4, 1), 5.0))
        np.testing.assert_allclose(gy, np.full((1, 5), sign * 12.0))


@pytest.mark.parametrize("mode", MODES)
def test_tuple_fields(mode):
    x, y, z = (relay.var(n, shape=(10, 4)) for n in "xyz")
    tup = relay.Tuple([x, y, z])
    back = grad_of(relay.Function([x, y, z], relay.TupleGetItem(tup, 0) + relay.TupleGetItem(tup, 1)
                                  - relay.TupleGetItem(tup, 2)), mode)
    data = [rand(10, 4) for _ in range(3)]
    value, grads = run(back, *data)
    np.testing.assert_allclose(value, data[0] + data[1] - data[2], rtol=1e-6)
    for g, want in zip(grads, (1.0, 1.0, -1.0)):
        np.testing.assert_allclose(g, np.full((10, 4), want))


@pytest.mark.parametrize("mode", MODES)
def test_tuple_output_sums_every_field(mode):
    x = relay.var("x", shape=(3,))
    back = grad_of(relay.Function([x], relay.Tuple([x * x, relay.exp(x)])), mode)
    data = rand(3)
    value, (g,) = run(back, data)
    np.testing.assert_allclose(g, 2 * data + np.exp(data), rtol=1e-6)


def test_higher_order_closures_and_if():
    x = relay.var("x", shape=(2,))
    f, y = relay.Var("f"), relay.var("y", shape=(2,))
    body = relay.Let(f, relay.Function([y], relay.multiply(y, y)),
                     relay.If(relay.less(relay.sum(x), relay.const(0.0)), relay.Call(f, [x]), relay.exp(x)))
    back = grad_of(relay.Function([x], body), "higher_order")
    neg, pos = np.array([-1.0, -2.0], F32), np.array([1.0, 0.5], F32)
    np.testing.assert_allclose(run(back, neg)[1][0], 2 * neg)
    np.testing.assert_allclose(run(back, pos)[1][0], np.exp(pos), rtol=1e-6)


def test_higher_order_references_in_the_program():
    x = relay.var("x", shape=(3,))
    r = relay.Var("r")
    body = relay.Let(r, relay.RefCreate(x), relay.Let(
        relay.Var("u"), relay.RefWrite(r, relay.RefRead(r) * relay.const(3.0)), relay.RefRead(r)))
    back = grad_of(relay.Function([x], body), "higher_order")
    data = rand(3)
    value, (g,) = run(back, data)
    np.testing.assert_allclose(value, 3 * data, rtol=1e-6)
    np.testing.assert_allclose(g, np.full(3, 3.0))


def test_higher_order_recursive_global_function():
    mod = relay.IRModule()
    power = relay.GlobalVar("power")
    x = relay.var("x", shape=(), dtype=F32)
    n = relay.var("n", shape=(), dtype=F32)
    body = relay.If(relay.less(n, relay.const(0.5)), relay.ones_like(x),
                    x * relay.Call(power, [x, n - relay.const(1.0)]))
    mod[power] = relay.Function([x, n], body, relay.TensorType((), F32))
    a = relay.var("a", shape=(), dtype=F32)
    mod["main"] = relay.Function([a], relay.Call(power, [a, relay.const(3.0)]))
    mod = transform.InferType()(mod)
    back = gradient(mod["main"], mod=mod)
    assert "power_grad" in mod
    value, (g,) = run(typed(back, mod.copy()), np.float32(1.5), mod=mod)
    assert value == pytest.approx(1.5 ** 3) and g == pytest.approx(3 * 1.5 ** 2, rel=1e-6)


@pytest.mark.parametrize("second_mode", MODES)
def test_second_order_gradient_of_a_smooth_op(second_mode):
    """d/dx of (d/dx sin(x) * x) = d/dx (cos x * x) ... checked against central differences."""
    x = relay.var("x", shape=(4,), dtype="float64")
    f = typed(relay.Function([x], relay.sum(relay.sin(x) * x)))
    first = first_order_gradient(f)
    df = relay.Function(first.params, relay.TupleGetItem(relay.TupleGetItem(first.body, 1), 0))
    data = np.linspace(-1, 1, 4)
    second = typed(first_order_gradient(typed(df))) if second_mode == "first_order" else \
        typed(gradient(typed(df)))
    _, (g2,) = run(second, data)
    np.testing.assert_allclose(g2, 2 * np.cos(data) - data * np.sin(data), rtol=1e-9)
    check_grad(df, inputs=[data.copy()], mode=second_mode, atol=1e-6, rtol=1e-5)


def test_first_order_rejects_control_flow_and_closures():
    x = relay.var("x", shape=(2,))
    with pytest.raises(RelayError, match="higher_order"):
        first_order_gradient(typed(relay.Function([x], relay.If(relay.const(True), x, x))))
    f = relay.Var("f")
    closure = relay.Let(f, relay.Function([relay.var("y", shape=(2,))], x), relay.Call(f, [x]))
    with pytest.raises(RelayError, match="higher_order"):
        first_order_gradient(typed(relay.Function([x], closure)))


def test_missing_gradient_is_named():
    x = relay.var("x", shape=(2,))
    body = relay.where(relay.logical_not(relay.less(x, relay.const(0.0))), x, relay.zeros_like(x))
    with pytest.raises(RelayError, match="logical_not"):
        gradient(typed(relay.Function([x], body)))


def test_mode_errors_and_first_order_pass():
    x = relay.var("x", shape=(2,))
    f = typed(relay.Function([x], relay.exp(x)))
    with pytest.raises(RelayError, match="unknown mode"):
        gradient(f, mode="sideways")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradient(f, mode="first_order")
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    with pytest.raises(RelayError, match="FirstOrderGradient"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        gradient(f, mod=relay.IRModule(), mode="first_order")
    mod = transform.FirstOrderGradient()(relay.IRModule.from_expr(f))
    mod = transform.InferType()(mod)
    assert mod["main"].checked_type.ret_type == relay.TupleType(
        [relay.TensorType((2,), F32), relay.TupleType([relay.TensorType((2,), F32)])])


def test_check_grad_catches_a_wrong_gradient():
    exp = get_op("exp")
    right = exp.get_attr("FPrimalGradient")
    exp.set_attr("FPrimalGradient", lambda orig, grad: [grad], 11)    # d/dx exp(x) is not 1
    try:
        x = relay.var("x", shape=(3,), dtype="float64")
        func = relay.Function([x], relay.exp(x))
        with pytest.raises(AssertionError):
            check_grad(func, inputs=[np.array([1.0, 2.0, -1.0])])
        # the default inputs sit near 0 (scale 10 * eps), where exp' happens to be 1
        check_grad(func)
    finally:
        exp.reset_attr("FPrimalGradient")
        exp.set_attr("FPrimalGradient", right, 10)
