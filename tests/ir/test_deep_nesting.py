"""Nesting (not chaining) 5,000 deep: Ifs inside branches, Tuples inside tuples, functions inside
functions print and compare without RecursionError, at a low recursion limit."""
import sys

import pytest

from relay_backend.ir import (Function, If, Let, TensorType, Tuple, TupleType, astext, var)
from relay_backend.ir.types import type_to_str

N = 5000


@pytest.fixture(autouse=True)
def low_recursion_limit():
    """Make any hidden recursion fail loudly, whatever the interpreter's default limit."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(old)


def test_small_nested_if_text_is_unchanged():
    c, x = var("c", shape=(), dtype="bool"), var("x", shape=(2,))
    e = If(c, If(c, x, x), x)
    assert Function([c, x], e).astext().split("\n")[1:] == [
        "fn (%c: bool, %x: Tensor[(2), float32]) {",
        "  if (%c) {",
        "    if (%c) {",
        "      %x",
        "    } else {",
        "      %x",
        "    }",
        "  } else {",
        "    %x",
        "  }",
        "}",
    ]


def test_ifs_nested_in_branches():
    c, x = var("c", shape=(), dtype="bool"), var("x", shape=(2,))
    e = x
    for i in range(N):   # alternately in the then- and the else-branch
        e = If(c, e, x) if i % 2 else If(c, x, e)
    text = Function([c, x], e).astext()
    assert text.count("if (%c) {") == N
    lines = text.split("\n")
    innermost = max(lines, key=lambda line: len(line) - len(line.lstrip(" ")))
    assert innermost == "  " * (N + 1) + "%x"
    assert lines[-1] == "}" and lines[-2] == "  }"


def test_ifs_nested_in_conditions():
    c = var("c", shape=(), dtype="bool")
    e = c
    for _ in range(N):
        e = If(e, c, c)
    lines = Function([c], e).astext().split("\n")
    assert lines[2] == "  %0 = if (%c) {"
    assert sum(line.startswith("  %") for line in lines) == N - 1


def test_tuples_nested_in_tuples():
    x = var("x", shape=(2,))
    e = x
    for _ in range(N):
        e = Tuple([e, x])
    lines = Function([x], e).astext().split("\n")
    assert lines[2] == "  %0 = (%x, %x);"
    assert lines[-2] == f"  (%{N - 2}, %x)"


def test_functions_and_lets_nested_in_bodies():
    x = var("x", shape=(2,))
    e = x
    for i in range(2000):
        e = Function([], e) if i % 2 else Let(var(f"v{i}"), x, e)
    text = astext(e)
    assert text.count("fn () {") == 1000 and text.count("let %v") == 1000


def test_deep_tuple_types_compare_hash_and_print():
    def nest(n):
        t = TensorType((2,))
        for _ in range(n):
            t = TupleType([t, TensorType((), "int32")])
        return t
    a, b = nest(N), nest(N)
    assert a == b and hash(a) == hash(b) and a != nest(N - 1)
    text = type_to_str(a)
    assert text.startswith("(" * N + "Tensor[(2), float32], int32)") and text.endswith("int32)")


def test_typed_tuples_nested_print_with_type_comments():
    # Each %k carries its (k-deep) type, so the text grows as depth**2: 1,500 levels here.
    from relay_backend.ir import IRModule
    from relay_backend.transform import InferType
    n, x = 1500, var("x", shape=(2,))
    e = x
    for _ in range(n):
        e = Tuple([e, x])
    lines = InferType()(IRModule.from_expr(Function([x], e)))["main"].astext().split("\n")
    assert lines[2] == "  %0 = (%x, %x) /* ty=(Tensor[(2), float32], Tensor[(2), float32]) */;"
    assert lines[-2].startswith(f"  (%{n - 2}, %x) /* ty=" + "(" * n + "Tensor[(2), float32], ")
