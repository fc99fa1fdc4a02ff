"""Control flow on the VM: If, recursion through a GlobalVar, closures, ADTs and Match, tuples.

Every result is compared with the debug interpreter (the numpy oracle) or with plain Python.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.errors import CompileError, ExecutionError
from relay_backend.ir import (Call, Clause, Function, GlobalVar, IRModule, Match, PatternConstructor,
                              PatternVar, PatternWildcard, TensorType, TypeCall, Var, const)
from relay_backend.prelude import Prelude
from relay_backend.runtime.container import ADT

from .conftest import assert_same, run_both
from .programs import count_to

pytestmark = pytest.mark.compile
I32 = TensorType((), "int32")


@pytest.mark.parametrize("flag", [True, False])
def test_if_selects_a_branch(flag, rng):
    c = relay.var("c", shape=(), dtype="bool")
    x = relay.var("x", shape=(3, 4))
    body = relay.If(c, relay.exp(x), relay.negative(relay.add(x, x)))
    mod = IRModule.from_expr(Function([c, x], body))
    data = rng.standard_normal((3, 4)).astype("float32")
    out, ref = run_both(mod, np.array(flag), data)
    assert_same(out, ref)
    np.testing.assert_allclose(out.numpy(), np.exp(data) if flag else -2 * data, rtol=1e-5)


def test_node_shared_by_both_branches_and_after_the_if(rng):
    x = relay.var("x", shape=(4,))
    c = relay.var("c", shape=(), dtype="bool")
    shared = relay.multiply(x, x)
    ite = relay.If(c, relay.add(shared, x), relay.subtract(shared, x))
    mod = IRModule.from_expr(Function([c, x], relay.add(ite, shared)))
    data = rng.standard_normal(4).astype("float32")
    for flag in (True, False):
        out, ref = run_both(mod, np.array(flag), data)
        assert_same(out, ref)


def test_recursive_loop_counts_to_n_through_a_global_var():
    mod = count_to()
    out, ref = run_both(mod, np.int32(25))
    assert int(out.numpy()) == 25
    assert_same(out, ref)


def test_deep_recursion_needs_no_python_stack():
    exe = rvm.compile(count_to())
    assert "invoke $" in exe.bytecode          # the recursive call is an Invoke
    out = rvm.VirtualMachine(exe, relay.cpu()).run(np.int32(5000))
    assert int(out.numpy()) == 5000


def test_closure_captures_a_tensor(rng):
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    f = relay.var("f")
    add_x = Function([y], relay.multiply(relay.add(x, y), y))
    body = relay.Let(f, add_x, Call(f, [Call(f, [x])]))
    mod = IRModule.from_expr(Function([x], body))
    exe = rvm.compile(mod)
    assert "alloc_closure" in exe.bytecode and "invoke_closure" in exe.bytecode
    data = rng.standard_normal(3).astype("float32")
    out, ref = run_both(mod, data)
    assert_same(out, ref)


def test_let_bound_recursive_closure(rng):
    # let %loop = fn (%i) { if (%i < %n) { %loop(%i + 1) } else { %i * %k } }; %loop(0)
    n = relay.var("n", shape=(), dtype="int32")
    k = relay.var("k", shape=(), dtype="int32")
    i = relay.var("i", shape=(), dtype="int32")
    loop = relay.var("loop")
    fn = Function([i], relay.If(relay.less(i, n), Call(loop, [relay.add(i, const(1, "int32"))]),
                                relay.multiply(i, k)), I32)
    mod = IRModule.from_expr(Function([n, k], relay.Let(loop, fn, Call(loop, [const(0, "int32")]))))
    out, ref = run_both(mod, np.int32(7), np.int32(3))
    assert int(out.numpy()) == 21
    assert_same(out, ref)


def test_returned_closure_can_be_called_again():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    mod = IRModule.from_expr(Function([x], Function([y], relay.add(x, y))))
    exe = rvm.compile(mod)
    machine = rvm.VirtualMachine(exe, relay.cpu())
    clo = machine.run(np.ones(2, "float32"))
    assert isinstance(clo, rvm.VMClosure)
    lifted = exe.functions[clo.func_index].name
    out = machine.invoke(lifted, np.ones(2, "float32"), np.full(2, 2.0, "float32"))
    np.testing.assert_array_equal(out.numpy(), [3.0, 3.0])


def _list(p, items):
    value = ADT(p.nil.tag, [])
    for item in reversed(items):
        value = ADT(p.cons.tag, [relay.nd.array(np.asarray(item)), value])
    return value


def _read(value):
    out = []
    while len(value.fields) == 2:
        out.append(value.fields[0].numpy())
        value = value.fields[1]
    return out


def test_prelude_map_and_sum_over_a_list():
    mod = IRModule()
    p = Prelude(mod)
    xs = Var("xs", TypeCall(p.l, [I32]))
    v = relay.var("v", shape=(), dtype="int32")
    double = Function([v], relay.multiply(v, const(2, "int32")), I32)
    mapped = Call(p.map, [double, xs])
    mod["main"] = Function([xs], relay.Tuple([Call(p.sum, [mapped]), mapped]))
    values = [3, 1, 4, 1, 5, 9, 2, 6]
    arg = _list(p, [np.int32(x) for x in values])
    out = relay.create_executor("vm", mod=mod).evaluate()(arg)
    assert int(out[0].numpy()) == 2 * sum(values)
    assert [int(a) for a in _read(out[1])] == [2 * x for x in values]
    # the interpreter agrees (its ADT values carry the same tags and fields)
    from relay_backend.interpreter import ConstructorValue

    def to_cv(value):
        if isinstance(value, ADT):
            ctor = p.cons if value.tag == p.cons.tag else p.nil
            return ConstructorValue(value.tag, [to_cv(f) for f in value.fields], ctor)
        return value
    ref = relay.create_executor("debug", mod=mod).evaluate()(to_cv(arg))
    assert_same(out, ref)


def test_match_on_user_list_sums_tensors(rng):
    mod = IRModule()
    p = Prelude(mod)
    tf = TensorType((3,), "float32")
    s = GlobalVar("fsum")
    xs = Var("xs", TypeCall(p.l, [tf]))
    h, t = Var("h", tf), Var("t", TypeCall(p.l, [tf]))
    mod[s] = Function([xs], Match(xs, [
        Clause(PatternConstructor(p.cons, [PatternVar(h), PatternVar(t)]), relay.add(h, Call(s, [t]))),
        Clause(PatternConstructor(p.nil), const(np.zeros(3, "float32")))]), tf)
    ys = Var("ys", TypeCall(p.l, [tf]))
    mod["main"] = Function([ys], Call(s, [ys]))
    exe = rvm.compile(mod)
    assert "get_tag" in exe.bytecode and "fatal" in exe.bytecode
    items = rng.standard_normal((6, 3)).astype("float32")
    out = rvm.VirtualMachine(exe, relay.cpu()).run(_list(p, list(items)))
    np.testing.assert_allclose(out.numpy(), items.sum(axis=0), rtol=1e-5, atol=1e-6)


def test_incomplete_match_raises_fatal_as_execution_error():
    mod = IRModule()
    p = Prelude(mod)
    xs = Var("xs", TypeCall(p.l, [I32]))
    h = Var("h", I32)
    mod["main"] = Function([xs], Match(xs, [Clause(PatternConstructor(p.cons, [PatternVar(h), PatternWildcard()]), h)],
                                       complete=False), I32)
    machine = rvm.VirtualMachine(rvm.compile(mod), relay.cpu())
    assert int(machine.run(_list(p, [np.int32(4)])).numpy()) == 4
    with pytest.raises(ExecutionError, match="fatal"):
        machine.run(_list(p, []))


def test_tuple_outputs_and_tuple_inputs(rng):
    t = relay.var("t", relay.TupleType([relay.TensorType((2, 3)), relay.TensorType((3,))]))
    a, b = relay.TupleGetItem(t, 0), relay.TupleGetItem(t, 1)
    body = relay.Tuple([relay.add(a, b), relay.Tuple([relay.sum(a), b])])
    mod = IRModule.from_expr(Function([t], body))
    arg = (rng.standard_normal((2, 3)).astype("float32"), rng.standard_normal(3).astype("float32"))
    out, ref = run_both(mod, arg)
    assert isinstance(out, ADT) and len(out) == 2 and isinstance(out[1], ADT)
    assert_same(out, ref)


def test_references_are_rejected_at_compile_time():
    x = relay.var("x", shape=(2,))
    mod = IRModule.from_expr(Function([x], relay.RefRead(relay.RefCreate(x))))
    with pytest.raises(CompileError, match="references"):
        rvm.compile(mod)
