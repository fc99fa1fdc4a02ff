"""Selects whose branches read memory (concatenate, padding, where) in both backends.

Only the taken branch may run: the other one can read out of range (the index tests below
make every untaken load point outside its buffer). Such Selects nest as deep as a
concatenate has inputs, so both emitters must handle chains hundreds deep without Python
recursion, and the C backend must keep the nesting of its output flat (clang stops at 256
nested brackets). Results are compared with numpy exactly (only loads and selects).
"""
import sys

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import tir
from relay_backend.codegen import build, codegen_c
from relay_backend.codegen.c_expr import MAX_DEPTH
from relay_backend.runtime import nd

pytestmark = pytest.mark.compile

DEPTH = 400            # selects in one chain: more than a low recursion limit allows frames


@pytest.fixture
def low_recursion_limit():
    """Make any recursion per nesting level fail, whatever the interpreter's default limit."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(350)
    yield
    sys.setrecursionlimit(old)


def _chain(side: str, n: int):
    """out[i] = A[i - k] with k = i, so A[0]: a chain of n Selects over one buffer,
    nested in the false branches ("else": like concatenate) or the true branches ("then": like
    a chain of where). Every load is out of range except in its own branch."""
    A, B = tir.Buffer("A", (n,), "float32"), tir.Buffer("B", (n,), "float32")
    i = tir.Var("i")
    if side == "else":
        expr = A[i - (n - 1)]
        for k in reversed(range(n - 1)):
            expr = tir.Select(i < k + 1, A[i - k], expr)
    else:
        expr = A[i]
        for k in range(1, n):
            expr = tir.Select(i < k, expr, A[i - k])
    body = tir.For(i, 0, n, "serial", tir.BufferStore(B, expr, (i,)))
    return tir.PrimFunc([A, B], body, f"chain_{side}")


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("side", ["else", "then"])
def test_deep_select_chain_runs_only_the_taken_branch(low_recursion_limit, side, target):
    func = _chain(side, DEPTH)
    a = np.arange(DEPTH, dtype="float32") * 3
    out = nd.empty((DEPTH,), "float32")
    build(func, target=target)[func.name](nd.array(a), out)
    np.testing.assert_array_equal(out.numpy(), np.full(DEPTH, a[0]))   # the taken load is A[i - i]


@pytest.mark.parametrize("side", ["else", "then"])
def test_c_select_chains_stay_flat(side):
    lines = codegen_c(_chain(side, DEPTH)).split("\n")
    deepest = max(len(line) - len(line.lstrip()) for line in lines)
    assert deepest < 40, f"the C of a {DEPTH}-deep select chain nests {deepest // 2} levels"


def test_c_temporaries_of_a_branch_stay_in_the_branch():
    """A deep expression in the branch not taken is hoisted into a temporary (MAX_DEPTH), but
    inside that branch: before, `const float t = ((A[i - 4] + 1) + ...)` ran for every i."""
    n = 8
    A, B = tir.Buffer("A", (4,), "float32"), tir.Buffer("B", (n,), "float32")
    i = tir.Var("i")
    deep = A[i - 4]
    for _ in range(MAX_DEPTH + 6):
        deep = deep + 1.0
    body = tir.For(i, 0, n, "serial", tir.BufferStore(B, tir.Select(i < 4, A[i], deep), (i,)))
    func = tir.PrimFunc([A, B], body, "guarded")
    lines = codegen_c(func).split("\n")
    store = next(line for line in lines if line.lstrip().startswith("B["))
    loads = [line for line in lines if "A[i - 4]" in line.replace("(", "").replace(")", "")
             or "A[(i - 4)]" in line]
    assert loads, "\n".join(lines)
    for line in loads:
        assert len(line) - len(line.lstrip()) > len(store) - len(store.lstrip()), \
            f"the load of the untaken branch runs unconditionally:\n{line}"
    a = np.arange(4, dtype="float32")
    out = nd.empty((n,), "float32")
    build(func, target="c")["guarded"](nd.array(a), out)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([a, a + MAX_DEPTH + 6]))


@pytest.mark.parametrize("kind", ["graph", "vm", "aot"])
def test_concatenate_of_many_inputs(low_recursion_limit, kind):
    n = 300
    xs = [relay.var(f"x{k}", shape=(1, 2)) for k in range(n)]
    mod = relay.IRModule.from_expr(relay.Function(xs, relay.concatenate(xs, axis=0)))
    arrays = [np.full((1, 2), k, "float32") for k in range(n)]
    run = relay.create_executor(kind, mod=mod).evaluate()
    np.testing.assert_array_equal(run(*arrays).numpy(), np.concatenate(arrays))
