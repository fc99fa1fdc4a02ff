"""bind_params_by_name / BindParams: named parameters become Constants; errors name the param."""
import numpy as np
import pytest

from relay_backend import op
from relay_backend.errors import InputError, RelayError
from relay_backend.ir import Call, Constant, Function, IRModule, Var, const, var
from relay_backend.ir.functor import post_order
from relay_backend.ir.structural import assert_structural_equal
from relay_backend.runtime import ndarray as nd
from relay_backend.transform.bind_params import BindParams, bind_params_by_name


def _dense_like():
    x, w, b = var("x", shape=(2, 3)), var("w", shape=(3,)), var("b", shape=(3,))
    return x, w, b, Function([x, w, b], op.add(op.multiply(x, w), b))


def test_binds_named_params_and_drops_them():
    x, w, b, func = _dense_like()
    wv, bv = np.arange(3, dtype="float32"), np.ones(3, "float32")
    out = bind_params_by_name(func, {"w": wv, "b": nd.array(bv)})
    expected = Function([x], op.add(op.multiply(x, const(wv)), const(bv)))
    assert_structural_equal(out, expected)
    # Numerically: the bound body computes x * w + b.
    xs = np.random.default_rng(0).normal(size=(2, 3)).astype("float32")
    mul = out.body.args[0]
    np.testing.assert_allclose(xs * mul.args[1].data.numpy() + out.body.args[1].data.numpy(), xs * wv + bv)


def test_unknown_keys_are_ignored_and_nothing_to_bind_returns_func():
    _, _, _, func = _dense_like()
    assert bind_params_by_name(func, {"nope": np.zeros(1)}) is func
    assert bind_params_by_name(func, {}) is func


def test_int64_and_float64_values_keep_their_dtype():
    n = var("n", shape=(2,), dtype="int64")
    func = Function([n], op.add(n, n))
    out = bind_params_by_name(func, {"n": np.array([1, 2], "int64")})
    assert out.body.args[0].data.dtype == "int64"


def test_duplicate_targeted_names_raise():
    a1, a2 = var("a", shape=(1,)), var("a", shape=(1,))
    func = Function([a1, a2], op.add(a1, a2))
    with pytest.raises(RelayError, match="Multiple args in the function have name a"):
        bind_params_by_name(func, {"a": np.zeros(1, "float32")})
    # Not targeted: no error.
    assert bind_params_by_name(func, {"b": np.zeros(1, "float32")}) is func


def test_shape_mismatch_names_param_expected_and_given():
    _, _, _, func = _dense_like()
    with pytest.raises(InputError, match=r"'w' expects shape Tensor\[\(3\), float32\].*Tensor\[\(4\), float32\]"):
        bind_params_by_name(func, {"w": np.zeros(4, "float32")})


def test_dtype_mismatch_names_param_expected_and_given():
    _, _, _, func = _dense_like()
    with pytest.raises(InputError, match="'b' expects dtype float32.*float64"):
        bind_params_by_name(func, {"b": np.zeros(3, "float64")})


def test_unannotated_param_accepts_any_value_and_nested_uses_are_bound():
    x, s = var("x", shape=(2,)), Var("s")
    inner = Function([], op.multiply(x, s))
    func = Function([x, s], Call(inner, []))
    out = bind_params_by_name(func, {"s": np.array(2.0, "float32")})
    assert out.params == (x,)
    consts = [n for n in post_order(out.body.op.body) if isinstance(n, Constant)]
    assert len(consts) == 1 and float(consts[0].data.numpy()) == 2.0


def test_deep_body_binds_without_recursion():
    x, w = var("x", shape=(2,)), var("w", shape=(2,))
    body = x
    for _ in range(10000):
        body = op.add(body, w)
    out = bind_params_by_name(Function([x, w], body), {"w": np.ones(2, "float32")})
    assert out.params == (x,)
    assert sum(isinstance(n, Constant) for n in post_order(out.body)) == 1


def test_bind_params_pass_binds_main_only():
    _, _, _, func = _dense_like()
    mod = IRModule.from_expr(func)
    p = var("w", shape=(3,))
    mod["other"] = Function([p], p)
    out = BindParams({"w": np.zeros(3, "float32"), "b": np.zeros(3, "float32")})(mod)
    assert [v.name_hint for v in out["main"].params] == ["x"]
    assert out["other"] is mod["other"]
    assert [v.name_hint for v in mod["main"].params] == ["x", "w", "b"]  # input module untouched
