"""free_vars / bound_vars / all_vars: contents and order (first use, left to right)."""
from relay_backend.ir import (Call, Function, Let, Op, Tuple, all_vars, bound_vars, free_vars, var)

ADD = Op("add")


def test_free_vars_in_order_of_first_use():
    a, b, c = var("a"), var("b"), var("c")
    e = Tuple([Call(ADD, [c, a]), Call(ADD, [b, c]), a])
    assert free_vars(e) == [c, a, b]


def test_bound_and_all_vars():
    x, y, t, z = var("x"), var("y"), var("t"), var("z")
    f = Function([x, y], Let(t, Call(ADD, [x, z]), Call(ADD, [t, y])))
    assert bound_vars(f) == [x, y, t]
    assert free_vars(f) == [z]
    assert all_vars(f) == [x, y, t, z]
    # A function's params are not free in it, but are free in its body alone.
    assert free_vars(f.body) == [x, z, y]
