"""ScopeBuilder builds the same Let/If trees as writing them by hand (checked structurally)."""
import pytest

from relay_backend.errors import RelayError
from relay_backend.ir import (Call, If, Let, Op, ScopeBuilder, TensorType, Var,
                              assert_structural_equal, var)

ADD, NEG = Op("add"), Op("negative")


def test_let_chain():
    x = var("x", shape=(2,))
    sb = ScopeBuilder()
    a = sb.let("a", Call(ADD, [x, x]))
    b = sb.let(("b", TensorType((2,))), Call(NEG, [a]))
    sb.ret(b)
    got = sb.get()
    assert isinstance(a, Var) and a.name_hint == "a" and b.type_annotation == TensorType((2,))
    a2, b2 = Var("a"), Var("b", TensorType((2,)))
    expected = Let(a2, Call(ADD, [x, x]), Let(b2, Call(NEG, [a2]), b2))
    assert_structural_equal(got, expected)


def test_if_else_with_lets_in_branches():
    c, x = var("c", "bool"), var("x", shape=(2,))
    sb = ScopeBuilder()
    t = sb.let("t", Call(ADD, [x, x]))
    with sb.if_scope(c):
        u = sb.let("u", Call(NEG, [t]))
        sb.ret(u)
    with sb.else_scope():
        sb.ret(t)
    got = sb.get()
    t2, u2 = Var("t"), Var("u")
    expected = Let(t2, Call(ADD, [x, x]), If(c, Let(u2, Call(NEG, [t2]), u2), t2))
    assert_structural_equal(got, expected)


def test_misuse_raises_relay_errors():
    c = var("c", "bool")
    sb = ScopeBuilder()
    with pytest.raises(RelayError, match="ret"):
        sb.get()
    sb.ret(c)
    with pytest.raises(RelayError, match="already"):
        sb.ret(c)
    sb = ScopeBuilder()
    with sb.if_scope(c):
        sb.ret(c)
    with pytest.raises(RelayError, match="else_scope"):
        sb.get()
    sb = ScopeBuilder()
    with pytest.raises(RuntimeError):  # tvm-compatible: ScopeError is also a RuntimeError
        with sb.else_scope():
            sb.ret(c)
    with pytest.raises(RelayError):
        sb.let("x", 3)
