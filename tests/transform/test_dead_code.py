"""DeadCodeElimination and RemoveUnusedFunctions: before/expected structural checks, effects kept,
10,000-binding chains, module reachability."""
import numpy as np
import pytest

from relay_backend import op
from relay_backend.ir import (Call, Function, GlobalVar, IRModule, If, Let, RefCreate, RefRead, Tuple,
                              Var, const, var)
from relay_backend.ir.expr import RefWrite
from relay_backend.ir.functor import post_order
from relay_backend.ir.structural import assert_structural_equal
from relay_backend.transform.dead_code import (DeadCodeElimination, RemoveUnusedFunctions, count_uses,
                                               dead_code_elimination)
from relay_backend.transform.pass_infra import PassContext, Sequential


def _x():
    return var("x", shape=(2, 3))


def test_unused_binding_is_removed():
    x, a = _x(), Var("a")
    before = Function([x], Let(a, op.exp(x), op.add(x, x)))
    expected = Function([x], op.add(x, x))
    assert_structural_equal(dead_code_elimination(before), expected)


def test_used_binding_is_kept_unchanged():
    x, a = _x(), Var("a")
    before = Function([x], Let(a, op.exp(x), op.add(a, x)))
    assert dead_code_elimination(before) is before


def test_dead_chain_disappears_in_one_run():
    x, a, b, c = _x(), Var("a"), Var("b"), Var("c")
    # c is used; b uses a but b itself is dead, so a is dead too.
    before = Function([x], Let(a, op.exp(x), Let(b, op.add(a, x), Let(c, op.negative(x), op.add(c, c)))))
    expected_c = Var("c")
    expected = Function([x], Let(expected_c, op.negative(x), op.add(expected_c, expected_c)))
    assert_structural_equal(dead_code_elimination(before), expected)


def test_inline_once_inlines_single_uses_only():
    x, a, b = _x(), Var("a"), Var("b")
    before = Function([x], Let(a, op.exp(x), Let(b, op.negative(a), op.add(b, b))))
    b2 = Var("b")
    expected = Function([x], Let(b2, op.negative(op.exp(x)), op.add(b2, b2)))
    assert_structural_equal(dead_code_elimination(before, inline_once=True), expected)


def test_reference_writes_are_kept_unless_impurity_is_ignored():
    x, r, w = _x(), Var("r"), Var("w")
    before = Function([x], Let(r, RefCreate(x), Let(w, RefWrite(r, op.exp(x)), RefRead(r))))
    assert dead_code_elimination(before) is before
    r2 = Var("r")
    expected = Function([x], Let(r2, RefCreate(x), RefRead(r2)))
    assert_structural_equal(dead_code_elimination(before, ignore_impurity=True), expected)


def test_bindings_inside_branches_and_nested_functions():
    x, c, a, b = _x(), var("c", shape=(), dtype="bool"), Var("a"), Var("b")
    inner = Function([], Let(b, op.exp(x), x))
    before = Function([x, c], If(c, Let(a, op.exp(x), x), Call(inner, [])))
    expected = Function([x, c], If(c, x, Call(Function([], x), [])))
    assert_structural_equal(dead_code_elimination(before), expected, map_free_vars=True)


def test_use_counts_count_each_edge():
    x, a = _x(), Var("a")
    body = Let(a, op.exp(x), Tuple([op.add(a, a), a]))
    assert count_uses(body)[a] == 3


def _chain(n, used: bool):
    """let v1 = x + 1; let v2 = v1 + 1; ...; body (v_n if used, else x)."""
    x = var("x", shape=(3,))
    vs = [Var(f"v{i}") for i in range(n)]
    body = vs[-1] if used else x
    for i in reversed(range(n)):
        prev = vs[i - 1] if i else x
        body = Let(vs[i], op.add(prev, const(1.0)), body)
    return x, Function([x], body)


def test_10000_dead_bindings_are_removed():
    x, before = _chain(10000, used=False)
    out = DeadCodeElimination()(IRModule.from_expr(before))["main"]
    assert out.body is x


def test_10000_single_use_bindings_inline_into_a_call_chain():
    x, before = _chain(10000, used=True)
    out = DeadCodeElimination(inline_once=True)(IRModule.from_expr(before))["main"]
    nodes = list(post_order(out.body))
    assert not any(isinstance(n, Let) for n in nodes)
    assert sum(isinstance(n, Call) for n in nodes) == 10000
    # The inlined chain still computes x + 10000: evaluate it with numpy over the call chain.
    xs = np.arange(3, dtype="float32")
    values = {x: xs}
    for n in nodes:
        if isinstance(n, Call):
            lhs, rhs = (values[a] if a in values else a.data.numpy() for a in n.args)
            values[n] = lhs + rhs
    np.testing.assert_array_equal(values[out.body], xs + 10000)


def test_dce_is_opt_level_1():
    _, before = _chain(3, used=False)
    mod = IRModule.from_expr(before)
    with PassContext(opt_level=0):
        assert isinstance(Sequential([DeadCodeElimination()])(mod)["main"].body, Let)
    with PassContext(opt_level=1):
        assert not isinstance(Sequential([DeadCodeElimination()])(mod)["main"].body, Let)


def _module_with_helpers():
    p = var("p", shape=())
    mod = IRModule()
    g, f, h, k = GlobalVar("g"), GlobalVar("f"), GlobalVar("h"), GlobalVar("k")
    mod[g] = Function([p], op.negative(p))
    q = var("q", shape=())
    mod[f] = Function([q], Call(g, [q]))
    r = var("r", shape=())
    mod[h] = Function([r], Call(h, [r]))  # recursive but unreachable
    s = var("s", shape=())
    mod[k] = Function([s], s)
    x = var("x", shape=())
    mod["main"] = Function([x], Call(f, [x]))
    return mod


def test_remove_unused_functions_keeps_what_main_reaches():
    out = RemoveUnusedFunctions()(_module_with_helpers())
    assert sorted(gv.name_hint for gv in out.get_global_vars()) == ["f", "g", "main"]


def test_remove_unused_functions_with_explicit_entries():
    out = RemoveUnusedFunctions(["main", "k"])(_module_with_helpers())
    assert sorted(gv.name_hint for gv in out.get_global_vars()) == ["f", "g", "k", "main"]
    mod = _module_with_helpers()
    assert RemoveUnusedFunctions(["main", "f", "g", "h", "k"])(mod) is mod




def _random_let_program(seed):
    """A seeded random let chain over x where roughly half the bindings are never used."""
    rng = np.random.default_rng(seed)
    x = var("x", shape=(4,))
    live, bindings = [x], []
    for i in range(30):
        a, b = (live[int(rng.integers(len(live)))] for _ in range(2))
        v = Var(f"v{i}")
        bindings.append((v, [op.add, op.multiply, op.subtract][int(rng.integers(3))](a, op.tanh(b))))
        if rng.random() < 0.5:
            live.append(v)  # later bindings may use it; the others stay dead
    body = op.add(live[-1], live[len(live) // 2])
    for v, value in reversed(bindings):
        body = Let(v, value, body)
    return Function([x], body)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("inline_once", [False, True])
def test_interpreter_agrees_before_and_after(seed, inline_once):
    from relay_backend.analysis import free_vars, well_formed
    from relay_backend.build_module import create_executor
    mod = IRModule.from_expr(_random_let_program(seed))
    out = DeadCodeElimination(inline_once=inline_once)(mod)
    lets = lambda f: sum(isinstance(n, Let) for n in post_order(f.body))  # noqa: E731
    assert lets(out["main"]) < lets(mod["main"])
    assert well_formed(out["main"]) and free_vars(out["main"]) == []
    xs = np.random.default_rng(seed).normal(size=4).astype("float32")
    before = create_executor("debug", mod).evaluate()(xs).numpy()
    after = create_executor("debug", out).evaluate()(xs).numpy()
    np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-6)
