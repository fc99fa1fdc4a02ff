"""The reference interpreter's evaluation rules, each checked against numpy."""
import numpy as np
import pytest

from relay_backend.errors import ExecutionError, RelayError
from relay_backend.interpreter import ConstructorValue, Interpreter, Machine
from relay_backend.ir import (Call, Clause, Function, GlobalVar, If, IRModule, Let, Match,
                              PatternConstructor, PatternWildcard, RefCreate, RefRead, RefWrite,
                              TensorType, Tuple, TupleGetItem, TupleType, TypeCall, Var, const,
                              var)
from relay_backend.ir.expr import bind_type
from relay_backend.op import tensor as T
from relay_backend.op.pattern import OpPattern
from relay_backend.op.registry import OpDef
from relay_backend.op.relations import identity_rel
from relay_backend.runtime import cpu

I32 = TensorType((), "int32")


def run(expr, *args, mod=None):
    """Evaluate a Function (called with args) or a closed expression with the interpreter."""
    intrp = Interpreter(mod or IRModule())
    if isinstance(expr, Function):
        return intrp.evaluate(expr)(*args)
    return intrp.evaluate(expr)


def test_closure_captures_tensor(rng):
    x = var("x", shape=(3,))
    y = var("y", shape=(3,))
    captured = rng.standard_normal(3).astype("float32")
    c = Var("c", TensorType((3,), "float32"))
    # let c = captured; let f = fn(y) { y * c }; f(x)
    f = Var("f")
    body = Let(c, const(captured), Let(f, Function([y], T.multiply(y, c)), Call(f, [x])))
    a = rng.standard_normal(3).astype("float32")
    out = run(Function([x], body), a)
    np.testing.assert_allclose(out.numpy(), a * captured, rtol=1e-6)


def test_returned_closure_is_callable(rng):
    x, y = var("x", shape=(2,)), var("y", shape=(2,))
    adder = Function([x], Function([y], T.add(x, y)))
    a, b = np.float32([1, 2]), np.float32([10, 20])
    add_a = run(adder, a)
    np.testing.assert_array_equal(add_a(b).numpy(), a + b)


@pytest.mark.parametrize("flag", [True, False])
def test_if_on_scalar_tensor(flag):
    c = var("c", shape=(), dtype="bool")
    x = var("x", shape=(2,))
    fn = Function([c, x], If(c, T.add(x, x), T.negative(x)))
    a = np.float32([1.5, -2.0])
    out = run(fn, np.bool_(flag), a)
    np.testing.assert_array_equal(out.numpy(), a + a if flag else -a)


def test_if_condition_must_be_bool():
    x = var("x", shape=(), dtype="int32")
    with pytest.raises(RelayError, match="bool"):  # InferType rejects it first
        run(Function([x], If(x, x, x)), np.int32(1))
    # Untyped, the machine itself refuses a non-bool condition.
    machine = Machine(IRModule(), cpu(0))
    with pytest.raises(ExecutionError, match="condition of If must be a bool"):
        machine.eval_closed(If(const(1), const(2), const(3)))


def test_factorial_through_global_var():
    mod = IRModule()
    fact = GlobalVar("fact")
    n = var("n", shape=(), dtype="int32")
    body = If(T.equal(n, const(0)), const(1),
              T.multiply(n, Call(fact, [T.subtract(n, const(1))])))
    mod[fact] = Function([n], body, I32)
    m = var("m", shape=(), dtype="int32")
    mod["main"] = Function([m], Call(fact, [m]))
    intrp = Interpreter(mod)
    out = intrp.evaluate()(np.int32(5))
    assert out.dtype == "int32" and int(out.numpy()) == 120
    assert int(intrp.evaluate(fact)(np.int32(10)).numpy()) == 3628800


def test_let_bound_recursion_is_rec_closure():
    # let sum_to = fn(n) { if n == 0 then 0 else n + sum_to(n - 1) }; sum_to(100)
    f = Var("sum_to")
    n = var("n", shape=(), dtype="int32")
    fn = Function([n], If(T.equal(n, const(0)), const(0),
                          T.add(n, Call(f, [T.subtract(n, const(1))]))), I32)
    out = run(Let(f, fn, Call(f, [const(100)])))
    assert int(out.numpy()) == 5050


def test_tail_recursive_loop_runs_in_constant_stack():
    # A loop of 20,000 iterations through tail calls must not exhaust the Python stack.
    f = Var("loop")
    i, acc = var("i", shape=(), dtype="int32"), var("acc", shape=(), dtype="int32")
    fn = Function([i, acc], If(T.equal(i, const(0)), acc,
                               Call(f, [T.subtract(i, const(1)), T.add(acc, const(2))])), I32)
    out = run(Let(f, fn, Call(f, [const(20000), const(0)])))
    assert int(out.numpy()) == 40000


def test_refs_create_write_read():
    x = var("x", shape=(2,))
    r = Var("r")
    unit = Var("u")
    body = Let(r, RefCreate(x),
               Let(unit, RefWrite(r, T.add(RefRead(r), x)),
                   Tuple([RefRead(r), unit])))
    a = np.float32([1, 2])
    out = run(Function([x], body), a)
    np.testing.assert_array_equal(out[0].numpy(), 2 * a)
    assert len(out[1]) == 0  # RefWrite returns the empty tuple


def test_tuples_in_and_out(rng):
    t = Var("t", TupleType([TensorType((2, 2), "float32"), TensorType((2,), "float32")]))
    body = Tuple([T.add(TupleGetItem(t, 0), TupleGetItem(t, 1)), TupleGetItem(t, 1)])
    a = rng.standard_normal((2, 2)).astype("float32")
    b = rng.standard_normal(2).astype("float32")
    out = run(Function([t], body), (a, b))
    assert len(out) == 2
    np.testing.assert_allclose(out[0].numpy(), a + b, rtol=1e-6)
    np.testing.assert_array_equal(out[1].numpy(), b)


def test_deep_dataflow_chain_of_10000_adds():
    x = var("x", shape=(4,))
    y = x
    for _ in range(10000):
        y = T.add(y, const(np.float32(1.0)))
    a = np.arange(4, dtype="float32")
    out = run(Function([x], y), a)
    np.testing.assert_array_equal(out.numpy(), a + 10000)


def test_deep_let_chain_of_10000():
    x = var("x", shape=(), dtype="int32")
    vs = [Var(f"v{i}") for i in range(10000)]
    body = vs[-1]
    for i in reversed(range(10000)):
        prev = x if i == 0 else vs[i - 1]
        body = Let(vs[i], T.add(prev, const(1)), body)
    out = run(Function([x], body), np.int32(7))
    assert int(out.numpy()) == 10007


def test_shared_node_is_evaluated_once():
    # (r := r + 1) is shared by both tuple fields: like ToANormalForm, it runs once.
    r = Var("r")
    write = RefWrite(r, T.add(RefRead(r), const(1)))
    body = Let(r, RefCreate(const(0)), Let(Var("_"), Tuple([write, write]), RefRead(r)))
    assert int(run(body).numpy()) == 1


def test_match_without_matching_clause():
    from relay_backend.prelude import Prelude
    p = Prelude()
    xs = Var("xs", TypeCall(p.l, [I32]))
    p.mod["main"] = Function([xs], Match(xs, [
        Clause(PatternConstructor(p.cons, [PatternWildcard(), PatternWildcard()]), const(1))],
        complete=False))
    nil = ConstructorValue(p.nil.tag, [], p.nil)
    with pytest.raises(ExecutionError, match="did not find any match for an ADT value built by Nil"):
        Interpreter(p.mod).evaluate()(nil)


def test_unbound_variable_is_reported():
    x = var("x", shape=())
    with pytest.raises(ExecutionError, match="%x"):
        Interpreter(IRModule())._make_executor(Function([], T.add(x, x)))()


def test_reference_disagreeing_with_relation_names_the_op():
    bad = OpDef("test.bad_ref", inputs=("data",), rel=identity_rel, pattern=OpPattern.ELEMWISE,
                ref=lambda x, attrs: x.astype("float64"), samples=lambda rng: [])
    x = var("x", shape=(2,))
    call = bad(x)
    bind_type(call, TensorType((2,), "float32"))  # what InferType derives from identity_rel
    with pytest.raises(ExecutionError, match=r"test\.bad_ref.*float64"):
        run(Function([x], call), np.float32([1, 2]))


def test_op_arguments_are_read_only():
    def mutating(x, attrs):
        x += 1
        return x
    op = OpDef("test.mutating", inputs=("data",), rel=identity_rel, pattern=OpPattern.ELEMWISE,
               ref=mutating, samples=lambda rng: [])
    x = var("x", shape=(2,))
    with pytest.raises(ExecutionError, match="test.mutating"):
        run(Function([x], op(x)), np.float32([1, 2]))


def test_too_deep_recursion_is_an_execution_error():
    # Non-tail recursion 100,000 deep exceeds what the Python stack allows: a clear error.
    f = Var("count")
    n = var("n", shape=(), dtype="int32")
    fn = Function([n], If(T.equal(n, const(0)), const(0),
                          T.add(const(1), Call(f, [T.subtract(n, const(1))]))), I32)
    with pytest.raises(ExecutionError, match="recursed too deeply"):
        run(Let(f, fn, Call(f, [const(100000)])))
