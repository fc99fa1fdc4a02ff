"""The Prelude's List/Option ADTs and list functions, run by the interpreter against Python."""
import numpy as np
import pytest

from relay_backend.interpreter import Interpreter
from relay_backend.ir import (Call, Clause, Function, GlobalVar, IRModule, Match,
                              PatternConstructor, PatternVar, TensorType, TypeCall, Var, const,
                              var)
from relay_backend.op import tensor as T
from relay_backend.prelude import Prelude

I32 = TensorType((), "int32")


@pytest.fixture
def p():
    return Prelude(IRModule())


@pytest.fixture(autouse=True)
def _list_helpers(make_list, read_list):
    """Expose conftest's list converters as module globals for brevity."""
    globals().update(make_list=make_list, read_list=read_list)


def _call(p, name, *args):
    return Interpreter(p.mod).evaluate(getattr(p, name))(*args)


def _ints(values):
    return [int(v.numpy()) for v in read_list(values)]


def test_get_type_and_constructors(p):
    lst, cons, nil = p.mod.get_type("List")
    assert (lst, cons, nil) == p.get_type("List") and lst.name_hint == "List"
    assert (cons.name_hint, nil.name_hint) == ("Cons", "Nil") and cons.tag == 0 and nil.tag == 1
    assert [c.name_hint for c in p.get_type("Option")[1:]] == ["Some", "None"]
    assert p.get_global_var("map") is p.map
    Prelude(p.mod)  # adding the prelude twice keeps the same definitions
    assert p.mod.get_type("List")[0] is lst


def test_list_sum_through_match(p, rng):
    # A user-written float sum by recursion over the Prelude List.
    tf = TensorType((3,), "float32")
    s = GlobalVar("fsum")
    xs = Var("xs", TypeCall(p.l, [tf]))
    h, t = Var("h", tf), Var("t", TypeCall(p.l, [tf]))
    p.mod[s] = Function([xs], Match(xs, [
        Clause(PatternConstructor(p.cons, [PatternVar(h), PatternVar(t)]), T.add(h, Call(s, [t]))),
        Clause(PatternConstructor(p.nil), const(np.zeros(3, "float32")))]), tf)
    items = rng.standard_normal((5, 3)).astype("float32")
    out = Interpreter(p.mod).evaluate(s)(make_list(p, items))
    np.testing.assert_allclose(out.numpy(), items.sum(axis=0), rtol=1e-5)


def test_prelude_sum_length_nth(p):
    vals = [3, 1, 4, 1, 5, 9]
    lst = make_list(p, np.int32(vals))
    assert int(_call(p, "sum", lst).numpy()) == sum(vals)
    assert int(_call(p, "length", lst).numpy()) == len(vals)
    assert int(_call(p, "nth", lst, np.int32(4)).numpy()) == vals[4]
    assert int(_call(p, "hd", lst).numpy()) == vals[0]
    assert _ints(_call(p, "tl", lst)) == vals[1:]
    assert _ints(_call(p, "update", lst, np.int32(2), np.int32(7))) == [3, 1, 7, 1, 5, 9]


def test_map_with_closure(p):
    # main(xs, k) = map(fn(x) { x * k }, xs): the mapped function captures k.
    x, k = var("x", shape=(), dtype="int32"), var("k", shape=(), dtype="int32")
    xs = Var("xs", TypeCall(p.l, [I32]))
    p.mod["main"] = Function([xs, k], Call(p.map, [Function([x], T.multiply(x, k)), xs]))
    vals = np.int32([2, -3, 5])
    out = Interpreter(p.mod).evaluate()(make_list(p, vals), np.int32(10))
    assert _ints(out) == list(vals * 10)


def test_folds_rev_concat_filter_zip(p):
    a, b = np.int32([1, 2, 3]), np.int32([7, 8])
    la, lb = make_list(p, a), make_list(p, b)
    assert _ints(_call(p, "rev", la)) == [3, 2, 1]
    assert _ints(_call(p, "concat", la, lb)) == [1, 2, 3, 7, 8]
    acc, x = var("acc", shape=(), dtype="int32"), var("x", shape=(), dtype="int32")
    # foldl(acc*10 + x) reads digits left to right; foldr(x + acc*10) right to left.
    p.mod["digits_l"] = Function([], Call(p.foldl, [
        Function([acc, x], T.add(T.multiply(acc, const(10)), x)), const(0), make_list_expr(p, a)]))
    p.mod["digits_r"] = Function([], Call(p.foldr, [
        Function([x, acc], T.add(x, T.multiply(acc, const(10)))), const(0), make_list_expr(p, a)]))
    intrp = Interpreter(p.mod)
    assert int(intrp.evaluate(p.mod.get_global_var("digits_l"))().numpy()) == 123
    assert int(intrp.evaluate(p.mod.get_global_var("digits_r"))().numpy()) == 321
    odd = Function([x], T.equal(T.floor_mod(x, const(2)), const(1)))
    p.mod["odds"] = Function([], Call(p.filter, [odd, make_list_expr(p, a)]))
    assert _ints(intrp.evaluate(p.mod.get_global_var("odds"))()) == [1, 3]
    pairs = read_list(_call(p, "zip", la, lb))
    assert [(int(t[0].numpy()), int(t[1].numpy())) for t in pairs] == [(1, 7), (2, 8)]


def test_long_lists(p):
    # foldl is tail-recursive (constant stack); map recurses once per element.
    vals = np.arange(3000, dtype="int32")
    assert int(_call(p, "sum", make_list(p, vals)).numpy()) == int(vals.sum())
    x = var("x", shape=(), dtype="int32")
    xs = Var("xs", TypeCall(p.l, [I32]))
    p.mod["main"] = Function([xs], Call(p.map, [Function([x], T.add(x, const(1))), xs]))
    assert _ints(Interpreter(p.mod).evaluate()(make_list(p, vals[:1000]))) == list(vals[:1000] + 1)


def make_list_expr(p, values):
    """A List literal as an expression: Cons(c0, Cons(c1, ... Nil()))."""
    expr = p.nil()
    for v in reversed(list(values)):
        expr = p.cons(const(v), expr)
    return expr


def test_global_var_calls_port_tvm_prelude_code(p):
    # tvm.relay code calls the Prelude's GlobalVars directly: p.sum(xs), p.foldl(f, init, xs).
    xs = Var("xs", TypeCall(p.l, [I32]))
    p.mod["main"] = Function([xs], p.sum(xs))
    vals = np.int32([4, 8, 15, 16, 23, 42])
    assert int(Interpreter(p.mod).evaluate()(make_list(p, vals)).numpy()) == int(vals.sum())
    acc, x = var("acc", shape=(), dtype="int32"), var("x", shape=(), dtype="int32")
    digits = Function([acc, x], T.add(T.multiply(acc, const(10)), x))
    p.mod["digits"] = Function([], p.foldl(digits, const(0), make_list_expr(p, [1, 2, 3])))
    assert int(Interpreter(p.mod).evaluate(p.mod.get_global_var("digits"))().numpy()) == 123
    call = p.length(xs)
    assert isinstance(call, Call) and call.op is p.length and call.args == (xs,)
