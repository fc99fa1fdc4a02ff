"""well_formed / check_well_formed: double binding, out-of-scope use, free vars in functions."""
import pytest

from relay_backend.errors import RelayError
from relay_backend.ir import (Call, Clause, Constructor, Function, GlobalTypeVar, IRModule, Let,
                              TensorType,
                              Match, Op, PatternConstructor, PatternVar, TypeData, Var,
                              check_well_formed, well_formed, var)

ADD = Op("add")


def test_good_programs():
    x, y = var("x", shape=(2,)), var("y", shape=(2,))
    t = var("t")
    assert well_formed(Call(ADD, [x, y]))  # free vars at top level are inputs
    assert well_formed(Function([x, y], Let(t, Call(ADD, [x, y]), Call(ADD, [t, x]))))
    f = var("f")
    rec = Let(f, Function([y], Call(f, [y])), Call(f, [x]))  # a let var is in scope in its value
    assert well_formed(rec)
    shared = Function([y], y)  # one Function object used twice binds its param once
    assert well_formed(Call(ADD, [Call(shared, [x]), Call(shared, [x])]))


def test_var_bound_twice():
    x = var("x", shape=(2,))
    assert not well_formed(Function([x], Function([x], x)))
    assert not well_formed(Function([x, x], x))
    t = var("t")
    twice = Let(t, x, Let(t, x, t))
    with pytest.raises(RelayError, match=r"%t is bound twice"):
        check_well_formed(twice)


def test_unbound_var_inside_function():
    x, y = var("x", shape=(2,)), var("y", shape=(2,))
    with pytest.raises(RelayError, match=r"%y is used inside a function but bound nowhere"):
        check_well_formed(Function([x], Call(ADD, [x, y])))


def test_use_outside_scope():
    x, t = var("x", shape=(2,)), var("t")
    inner = Let(t, x, t)
    assert not well_formed(Call(ADD, [inner, t]))
    assert not well_formed(Call(ADD, [Function([x], x), x]))


def test_match_binds_pattern_vars_and_modules_are_checked():
    lst = GlobalTypeVar("L")
    cons = Constructor("C", [TensorType((2,))], lst)
    TypeData(lst, [], [cons])
    h, xs = Var("h"), Var("xs")
    good = Function([xs], Match(xs, [Clause(PatternConstructor(cons, [PatternVar(h)]), h)]))
    assert well_formed(good)
    mod = IRModule()
    mod["main"] = Function([xs], Call(ADD, [xs, h]))
    with pytest.raises(RelayError, match=r"@main.*%h"):
        check_well_formed(mod)


def test_deep_let_chain():
    x = var("x", shape=(2,))
    body, vs = x, []
    for i in range(10000):
        vs.append(Var(f"v{i}"))
    body = vs[-1]
    for i in reversed(range(10000)):
        body = Let(vs[i], x if i == 0 else vs[i - 1], body)
    assert well_formed(Function([x], body))
