"""tir/functor.rewrite: bottom-up rebuild with shared subtrees rewritten once, and the
top-down `replace_by_child` option (a node replaced by one of its children; the children it
drops are never visited), checked against hand-built expected trees through the printer."""
from relay_backend import tir
from relay_backend.tir import expr as E
from relay_backend.tir.functor import rewrite


def _double_consts(n):
    if isinstance(n, E.IntImm):
        return E.const(n.value * 2, n.dtype)
    return None


def test_rewrite_rebuilds_bottom_up_and_shares_subtrees():
    x = tir.Var("x")
    shared = x + 3
    out = rewrite(shared * shared, _double_consts)
    assert str(out) == str((x + 6) * (x + 6))
    assert out.a is out.b, "a shared subtree must be rewritten once and stay shared"


def test_replace_by_child_skips_dropped_branches():
    x, y = tir.Var("x"), tir.Var("y")
    dropped = y * 7
    expr = tir.Select(x < 0, dropped, x + 1) + 2
    seen = []

    def take_false_branch(n):
        seen.append(n)
        return n.false_value if isinstance(n, E.Select) else None

    out = rewrite(expr, _double_consts, replace_by_child=take_false_branch)
    assert str(out) == str((x + 2) + 4)
    assert not any(n is dropped for n in seen), "the branch not taken must not be visited"


def test_replace_by_child_none_is_plain_rewrite():
    x = tir.Var("x")
    expr = tir.Select(x < 1, x + 1, x - 1)
    assert str(rewrite(expr, _double_consts, replace_by_child=lambda n: None)) == \
        str(rewrite(expr, _double_consts))


def test_var_dependence_marks_what_varies_and_visits_each_node_once():
    """var_dependence: the nodes that depend on the variable (the variable, and everything above
    it), each node visited once in post-order even when shared."""
    from relay_backend.tir.functor import var_dependence
    x, y = tir.Var("x"), tir.Var("y")
    shared = y * 7
    with_x = x + shared
    root = with_x * shared
    varying, order = var_dependence([root], x)
    assert {id(x), id(with_x), id(root)} == varying
    assert len(order) == len({id(n) for n in order}), "a shared subtree is visited once"
    position = {id(n): i for i, n in enumerate(order)}
    assert position[id(shared)] < position[id(with_x)] < position[id(root)]
    assert var_dependence([shared], x)[0] == set()
