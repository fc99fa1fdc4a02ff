"""The printer treats a program as a DAG: a sub-expression used from several scopes (both branches
of an If, two Match clauses, a closure and its caller) prints once, as a `%N = ...` binding in
the innermost scope that holds all its uses, so text grows linearly with nesting depth.

`assert_temporaries_in_scope` checks every printed text here: each `%N` is used only inside the
block that binds it (or a block nested in it), after its binding.
"""
import re

import pytest

from relay_backend.ir import (Call, Clause, Constructor, Function, GlobalTypeVar, If, Let, Match,
                              Op, PatternConstructor, PatternVar, const, var)
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.ir.sharing import plan_sharing
from relay_backend.testing.shared_dag import shared_dag_program

_TEMP_DEF = re.compile(r"(%\d+) = (.*)")
_TEMP_USE = re.compile(r"%\d+\b")


def assert_temporaries_in_scope(text: str) -> None:
    """Every %N use sits in the block that binds %N, or in one nested inside it, after the binding."""
    scopes = [set()]
    for number, line in enumerate(text.split("\n"), 1):
        rest = line.strip()
        while rest.startswith("}"):
            scopes.pop()
            rest = rest[1:].lstrip(" ;,")
        match = _TEMP_DEF.match(rest)
        defined, uses = (match.group(1), match.group(2)) if match else (None, rest)
        for name in _TEMP_USE.findall(uses):
            assert any(name in s for s in scopes), f"line {number}: {name} used out of scope\n{text}"
        if defined:
            scopes[-1].add(defined)
        if rest.endswith("{"):
            scopes.append(set())


def nested_ifs(depth: int):
    """e = x; e = If(c, e + 1, e) `depth` times: each level uses the one below from both branches."""
    x, c = var("x", shape=(2,)), var("c", shape=(), dtype="bool")
    e = x
    for _ in range(depth):
        e = If(c, Call(Op("add"), [e, const(1.0)]), e)
    return Function([x, c], e)


def test_if_chain_text_grows_linearly_with_depth():
    short, long = nested_ifs(10).astext(), nested_ifs(20).astext()
    assert_temporaries_in_scope(long)
    assert long.count("if (%c)") == 20
    assert long.count("add(") == 20
    assert len(long) < 2.5 * len(short), (len(short), len(long))


def test_if_chain_18_deep_prints_each_level_once():
    text = nested_ifs(18).astext()
    assert text.count("add(") == 18 and len(text) < 10_000


def test_node_used_by_both_branches_is_bound_before_the_if():
    x, c = var("x", shape=(2,)), var("c", shape=(), dtype="bool")
    shared = Call(Op("multiply"), [x, x])
    body = If(c, Call(Op("add"), [shared, x]), Call(Op("subtract"), [shared, x]))
    lines = Function([x, c], body).astext().split("\n")[1:]
    assert lines == [
        "fn (%x: Tensor[(2), float32], %c: bool) {",
        "  %0 = multiply(%x, %x);",
        "  if (%c) {",
        "    add(%0, %x)",
        "  } else {",
        "    subtract(%0, %x)",
        "  }",
        "}",
    ]


def test_node_shared_inside_one_branch_stays_in_that_branch():
    x, c = var("x", shape=(2,)), var("c", shape=(), dtype="bool")
    shared = Call(Op("exp"), [x])
    inner = If(c, Call(Op("add"), [shared, x]), shared)
    text = Function([x, c], If(c, inner, x)).astext()
    assert_temporaries_in_scope(text)
    assert "    %0 = exp(%x);" in text.split("\n")   # bound in the outer then-branch (4 spaces)
    assert text.count("exp(") == 1


def test_node_using_a_branch_local_let_is_not_hoisted_out():
    x, c = var("x", shape=(2,)), var("c", shape=(), dtype="bool")
    v = var("v", shape=(2,))
    shared = Call(Op("exp"), [v])
    branch = Let(v, Call(Op("negative"), [x]), If(c, shared, Call(Op("add"), [shared, v])))
    text = Function([x, c], If(c, branch, x)).astext()
    assert_temporaries_in_scope(text)
    lines = text.split("\n")
    let_line = next(i for i, ln in enumerate(lines) if ln.startswith("    let %v"))
    assert lines.index("    %0 = exp(%v);") > let_line


def test_lets_nested_in_arguments_grow_linearly():
    # e = add(let %v = e; %v, e): each level uses the level below inside a nested let block and
    # outside it; printing it per use would double the text per level
    x = var("x", shape=(2,))

    def build(depth):
        e = x
        for i in range(depth):
            v = var(f"v{i}", shape=(2,))
            e = Call(Op("add"), [Let(v, e, v), e])
        return Function([x], e).astext()

    short, long = build(8), build(16)
    assert_temporaries_in_scope(long)
    assert len(long) < 2.5 * len(short), (len(short), len(long))


def test_match_clauses_share_a_node():
    x = var("x", shape=(2,))
    gtv = GlobalTypeVar("Opt")
    none, some = Constructor("None", [], gtv), Constructor("Some", [], gtv)
    d = var("d")
    e = x
    for _ in range(12):   # each level's match uses the level below in both clauses
        e = Match(d, [Clause(PatternConstructor(none), Call(Op("negative"), [e])),
                      Clause(PatternConstructor(some), e)])
    text = Function([x, d], e).astext()
    assert_temporaries_in_scope(text)
    assert text.count("negative(") == 12


def test_closure_and_caller_share_a_node():
    x, y = var("x", shape=(2,)), var("y", shape=(2,))
    shared = Call(Op("exp"), [x])
    inner = Function([y], Call(Op("add"), [y, shared]))
    text = Function([x], Call(Op("add"), [Call(inner, [x]), shared])).astext()
    assert_temporaries_in_scope(text)
    assert text.count("exp(%x)") == 1
    lines = text.split("\n")
    assert lines.index("  %0 = exp(%x);") < next(i for i, ln in enumerate(lines) if "fn (%y" in ln)


def test_pattern_variable_use_stays_in_its_clause():
    gtv = GlobalTypeVar("Box")
    box = Constructor("Box", [], gtv)
    h = var("h", shape=(2,))
    shared = Call(Op("exp"), [h])
    d = var("d")
    m = Match(d, [Clause(PatternConstructor(box, [PatternVar(h)]),
                         If(var("c", shape=(), dtype="bool"), shared, Call(Op("add"), [shared, h])))])
    text = Function([d], m).astext()
    assert_temporaries_in_scope(text)
    assert text.count("exp(%h)") == 1


@pytest.mark.parametrize("seed", range(12))
def test_random_shared_programs_print_each_node_once_in_scope(seed):
    func = shared_dag_program(seed, size=40)
    text = func.astext()
    assert_temporaries_in_scope(text)
    nodes = list(all_nodes_post_order(func))
    for name in ("add", "negative", "multiply"):
        calls = sum(isinstance(n, Call) and getattr(n.op, "name", None) == name for n in nodes)
        assert text.count(f"{name}(") == calls, (name, text)
    assert text.count("if (") == sum(isinstance(n, If) for n in nodes)


def test_node_used_at_every_depth_of_3000_nested_ifs_is_bound_once():
    # every use lies in the outermost then-branch, so that is where it is bound: just before
    # the next If (placement by binary lifting, so this costs O(n log n), not O(n**2))
    x, c = var("x", shape=(2,)), var("c", shape=(), dtype="bool")
    shared = Call(Op("exp"), [x])
    e = x
    for _ in range(3000):
        e = If(c, Call(Op("add"), [shared, e]), x)
    plan = plan_sharing(Function([x, c], e))
    (opener, nodes), = plan.before.items()       # compared by identity: no 3000-deep reprs
    assert opener is e.true_branch.args[1] and len(nodes) == 1 and nodes[0] is shared
