"""A 10,000-op chain goes through every IR utility without RecursionError (and quickly)."""
import sys

import pytest

import relay_backend.op  # noqa: F401  (registers the ops)
from relay_backend.ir import (ExprMutator, ExprVisitor, Function, assert_structural_equal,
                              free_vars, structural_equal, structural_hash, var, well_formed)
from relay_backend.ir.expr import Call

N = 10000


def chain(name="x", n=N):
    x = var(name, shape=(2,))
    y = x
    for _ in range(n):
        y = relay_backend.op.add(y, x)
    return x, y


@pytest.fixture(autouse=True)
def low_recursion_limit():
    """Make any hidden recursion fail loudly, whatever the interpreter's default limit."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(old)


def test_structural_hash_and_equal():
    x1, y1 = chain("x")
    x2, y2 = chain("z")
    f1, f2 = Function([x1], y1), Function([x2], y2)
    assert structural_hash(f1) == structural_hash(f2)
    assert structural_equal(f1, f2)
    assert_structural_equal(f1, f2)
    _, y3 = chain("x", N - 1)
    assert not structural_equal(y1, y3, map_free_vars=True)


def test_astext():
    x, y = chain()
    text = Function([x], y).astext()
    lines = text.split("\n")
    assert lines[2] == "  %0 = add(%x, %x);"
    assert lines[-2] == f"  add(%{N - 2}, %x)"
    assert len(lines) == N + 3  # header, fn line, N-1 temporaries, result, closing brace


def test_mutator_visitor_free_vars_well_formed():
    x, y = chain()

    class Count(ExprVisitor):
        calls = 0

        def visit_call(self, call):
            Count.calls += 1
            super().visit_call(call)

    Count().visit(y)
    assert Count.calls == N

    z = var("z", shape=(2,))

    class Rename(ExprMutator):
        def visit_var(self, v):
            return z if v is x else v

    out = Rename().visit(y)
    assert isinstance(out, Call) and free_vars(out) == [z]
    assert free_vars(y) == [x]
    assert well_formed(Function([x], y))
