"""Peano naturals for tests (tvm.relay.testing.nat): converting between Python ints and values
of std/nat.rly's `nat` ADT (zero | succ(nat)), which the Prelude's module must have imported:
`p.mod.import_from_std("nat.rly")`.

count(p, value) reads a nat result of the debug interpreter or the VM; make_nat_value(p, n)
builds an argument value; make_nat_expr(p, n) builds the expression succ(...succ(zero())).
All are iterative, so large numbers do not hit Python's recursion limit.
"""
from ..errors import InputError
from ..runtime.values import ConstructorValue


def get_type(prelude, name: str) -> tuple:
    """(GlobalTypeVar, *constructors) of the ADT `name` in the Prelude's module."""
    return prelude.mod.get_type(name)


def _constructors(prelude):
    _, zero, succ = prelude.mod.get_type("nat")
    return zero, succ


def count(prelude, value) -> int:
    """The Python int a nat value stands for (a ConstructorValue or a VM ADT)."""
    zero, succ = _constructors(prelude)
    total = 0
    while value.tag == succ.tag:
        total, value = total + 1, value.fields[0]
    if value.tag != zero.tag:
        raise InputError(f"count: a nat value has tag {zero.tag} or {succ.tag}, got {value.tag}")
    return total


def make_nat_value(prelude, n: int) -> ConstructorValue:
    """The nat value of a non-negative int n, as an argument for an executor."""
    if int(n) < 0:
        raise InputError(f"make_nat_value: a nat is non-negative, got {n}")
    zero, succ = _constructors(prelude)
    value = ConstructorValue(zero.tag, [], zero)
    for _ in range(int(n)):
        value = ConstructorValue(succ.tag, [value], succ)
    return value


def make_nat_expr(prelude, n: int):
    """The expression succ(...succ(zero())) with n succs."""
    if int(n) < 0:
        raise InputError(f"make_nat_expr: a nat is non-negative, got {n}")
    zero, succ = _constructors(prelude)
    expr = zero()
    for _ in range(int(n)):
        expr = succ(expr)
    return expr


__all__ = ["count", "make_nat_value", "make_nat_expr", "get_type"]
