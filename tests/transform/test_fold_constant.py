"""FoldConstant: constant sub-expressions become Constants whose values match numpy formulas
(exact for integer/elementwise chains, rtol 1e-6 for float32 transcendentals)."""
import numpy as np
import pytest

from relay_backend import op
from relay_backend.ir import (Call, Constant, Function, IRModule, Let, Tuple, TupleGetItem, Var, const,
                              var)
from relay_backend.ir.functor import post_order
from relay_backend.ir.structural import assert_structural_equal
from relay_backend.transform import fold_constant as fc_module
from relay_backend.transform.fold_constant import FoldConstant, fold_constant
from relay_backend.transform.pass_infra import PassContext, Sequential


def _run_pass(expr_or_func):
    func = expr_or_func if isinstance(expr_or_func, Function) else Function([], expr_or_func)
    return FoldConstant()(IRModule.from_expr(func))["main"]


def test_binary_of_constants_folds_to_numpy_value():
    a = np.arange(6, dtype="float32").reshape(2, 3)
    b = np.array([1.5, -2.0, 4.0], dtype="float32")
    out = fold_constant(op.multiply(op.add(const(a), const(b)), const(b)))
    assert isinstance(out, Constant)
    np.testing.assert_array_equal(out.data.numpy(), (a + b) * b)
    assert out.data.dtype == "float32"


def test_partial_folding_keeps_the_variable_part():
    x = var("x", shape=(3,))
    c1, c2 = np.array([1, 2, 3], "float32"), np.array([4, 5, 6], "float32")
    before = Function([x], op.add(x, op.multiply(const(c1), const(c2))))
    expected = Function([x], op.add(x, const(c1 * c2)))
    assert_structural_equal(_run_pass(before), expected)


def test_dtype_is_kept_for_int_and_half():
    out = fold_constant(op.divide(const(np.array([7, -7], "int32")), const(np.array([2, 2], "int32"))))
    assert out.data.dtype == "int32"
    np.testing.assert_array_equal(out.data.numpy(), [3, -3])  # relay divide truncates toward zero
    half = fold_constant(op.exp(const(np.array([0.0, 1.0], "float16"))))
    assert half.data.dtype == "float16"
    np.testing.assert_allclose(half.data.numpy(), np.exp(np.array([0.0, 1.0], "float16")), rtol=1e-3)


def test_deep_chain_of_10000_ops_folds_without_recursion():
    e = const(np.ones((2, 3), "float32"))
    for i in range(10000):
        e = op.add(e, const(1.0)) if i % 2 == 0 else op.multiply(e, const(1.0))
    out = _run_pass(e)
    assert isinstance(out.body, Constant)
    np.testing.assert_array_equal(out.body.data.numpy(), np.full((2, 3), 5001.0, "float32"))


def test_tuple_output_folds_to_tuple_of_constants_and_getitem_folds():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4)).astype("float32")
    gamma, beta = rng.normal(size=3).astype("float32"), rng.normal(size=3).astype("float32")
    mean, variance = rng.normal(size=3).astype("float32"), rng.uniform(0.5, 2, size=3).astype("float32")
    bn = op.nn.batch_norm(*(const(v) for v in (x, gamma, beta, mean, variance)), axis=1, epsilon=1e-3)
    whole = fold_constant(bn.astuple())
    assert isinstance(whole, Tuple) and all(isinstance(f, Constant) for f in whole.fields)
    first = fold_constant(bn[0])
    assert isinstance(first, Constant)
    s = (slice(None), None)
    expected = (x - mean[s]) / np.sqrt(variance[s] + 1e-3) * gamma[s] + beta[s]
    np.testing.assert_allclose(first.data.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_getitem_of_tuple_literal_folds():
    x = var("x", shape=(2,))
    c = const(np.array([1.0, 2.0], "float32"))
    assert fold_constant(TupleGetItem(Tuple([x, c]), 1)) is c
    assert fold_constant(TupleGetItem(Tuple([x, c]), 0)) is x


def test_let_bound_constant_is_substituted_and_folded():
    v = Var("v")
    body = Let(v, op.add(const(2.0), const(3.0)), op.multiply(v, const(4.0)))
    out = fold_constant(body)
    assert isinstance(out, Constant)
    assert float(out.data.numpy()) == 20.0


def test_long_let_chain_folds():
    v0 = Var("v0")
    vars_ = [v0]
    for i in range(1, 10000):
        vars_.append(Var(f"v{i}"))
    body = vars_[-1]
    for i in reversed(range(1, 10000)):
        body = Let(vars_[i], op.add(vars_[i - 1], const(1.0)), body)
    body = Let(v0, const(0.0), body)
    out = fold_constant(body)
    assert isinstance(out, Constant) and float(out.data.numpy()) == 9999.0


def test_calls_to_functions_and_variables_are_not_folded():
    p = var("p", shape=())
    f = Function([p], op.add(p, const(1.0)))
    call = Call(f, [const(2.0)])
    out = fold_constant(call)
    assert isinstance(out, Call) and isinstance(out.op, Function)
    x = var("x", shape=())
    assert fold_constant(op.add(x, x)).op.name == "add"


def test_nested_function_bodies_fold_but_primitive_ones_do_not():
    p = var("p", shape=())
    inner = Function([p], op.add(p, op.add(const(1.0), const(2.0))))
    out = fold_constant(inner)
    assert isinstance(out.body.args[1], Constant) and float(out.body.args[1].data.numpy()) == 3.0
    prim = inner.with_attr("Primitive", 1)
    assert fold_constant(prim) is prim


def test_stateful_ops_are_left_alone(monkeypatch):
    monkeypatch.setattr(fc_module, "NEVER_FOLD", {"add"})
    out = fold_constant(op.add(const(1.0), const(2.0)))
    assert isinstance(out, Call) and out.op.name == "add"


def test_ill_typed_constant_call_is_left_for_infer_type():
    bad = op.add(const(np.zeros(3, "float32")), const(np.zeros(4, "float32")))
    assert fold_constant(bad) is bad


def test_opt_level_gates_the_pass_in_sequential():
    mod = IRModule.from_expr(Function([], op.add(const(1.0), const(2.0))))
    with PassContext(opt_level=1):
        assert isinstance(Sequential([FoldConstant()])(mod)["main"].body, Call)
    with PassContext(opt_level=2):
        assert isinstance(Sequential([FoldConstant()])(mod)["main"].body, Constant)
    with PassContext(opt_level=3, disabled_pass=["FoldConstant"]):
        assert isinstance(FoldConstant()(mod)["main"].body, Call)


def _random_program(seed):
    """A seeded random dataflow graph over x (3, 4) and constants (3, 4) / (4,), many of whose
    nodes depend only on constants."""
    rng = np.random.default_rng(seed)
    x = var("x", shape=(3, 4))
    pool = [x] + [const(rng.normal(size=s).astype("float32")) for s in ((3, 4), (4,), (4,))]
    unary = [op.negative, op.tanh, op.sigmoid, op.abs]
    binary = [op.add, op.subtract, op.multiply, op.maximum]
    for _ in range(40):
        pick = lambda: pool[int(rng.integers(len(pool)))]  # noqa: E731
        if rng.random() < 0.3:
            pool.append(unary[int(rng.integers(len(unary)))](pick()))
        else:
            pool.append(binary[int(rng.integers(len(binary)))](pick(), pick()))
    return x, Function([x], Tuple(pool[-4:]))


@pytest.mark.parametrize("seed", range(4))
def test_interpreter_agrees_before_and_after(seed):
    from relay_backend.build_module import create_executor
    x, func = _random_program(seed)
    mod = IRModule.from_expr(func)
    folded = FoldConstant()(mod)
    assert sum(isinstance(n, Call) for n in post_order(folded["main"].body)) < \
        sum(isinstance(n, Call) for n in post_order(func.body))
    xs = np.random.default_rng(seed).normal(size=(3, 4)).astype("float32")
    before = create_executor("debug", mod).evaluate()(xs)
    after = create_executor("debug", folded).evaluate()(xs)
    for b, a in zip(before, after):  # same ops, same references: equal to float32 rounding
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)
