"""ToANormalForm, ToBasicBlockNormalForm and ToGraphNormalForm: before/expected programs from
TVM's test_pass_to_a_normal_form.py / test_pass_to_basic_block_normal_form.py, the defining
property of each form, idempotence, and 10,000-deep chains."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.analysis import Feature, detect_feature
from relay_backend.analysis.scope_tree import check_basic_block_normal_form
from relay_backend.errors import RelayError
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.transform.to_a_normal_form import to_a_normal_form
from relay_backend.transform.to_basic_block_normal_form import to_basic_block_normal_form
from relay_backend.transform.to_graph_normal_form import to_graph_normal_form

from .normal_form_helpers import check_eval, run_opt_pass

F32 = "float32"
ATOMS = (relay.Var, relay.GlobalVar, relay.ir.Op, relay.Constructor)


def assert_anf(expr):
    """Every operand of every call, tuple, projection, If and ref is atomic."""
    for node in all_nodes_post_order(expr):
        if isinstance(node, relay.Call):
            operands = list(node.args) + ([] if isinstance(node.op, relay.ir.Op) else [node.op])
        elif isinstance(node, relay.Tuple):
            operands = node.fields
        elif isinstance(node, relay.TupleGetItem):
            operands = [node.tuple_value]
        elif isinstance(node, relay.If):
            operands = [node.cond]
        else:
            continue
        for o in operands:
            assert isinstance(o, ATOMS), f"non-atomic operand {o} in {node}"


# --- A-normal form -------------------------------------------------------------------------------
def test_anf_binds_shared_graph_once():
    x = relay.const(1)
    y = relay.add(x, x)
    z = relay.add(y, y)
    f = relay.Function([], relay.add(z, z))
    assert Feature.fLet not in detect_feature(f)
    anf = run_opt_pass(f, transform.ToANormalForm())
    assert Feature.fLet in detect_feature(anf) and Feature.fGraph not in detect_feature(anf)
    assert_anf(anf)
    check_eval(relay.Call(f, []), 8)
    check_eval(relay.Call(anf, []), 8)


def test_anf_order_follows_post_order():
    z, y, x = relay.const(3), relay.const(2), relay.const(1)
    anf = run_opt_pass(x + y * z, [transform.ToANormalForm(), transform.InferType()])
    a, b, c, d, e = (relay.Var(n) for n in "abcde")
    expected = relay.Let(a, x, relay.Let(b, y, relay.Let(c, z, relay.Let(
        d, b * c, relay.Let(e, a + d, e)))))
    expected = run_opt_pass(expected, transform.InferType())
    relay.assert_structural_equal(anf, expected)


def test_anf_if_binds_inside_branches():
    cond = relay.const(True)
    anf = run_opt_pass(relay.If(cond, relay.const(2), relay.const(3)),
                       [transform.ToANormalForm(), transform.InferType()])
    a, b, c, d = (relay.Var(n) for n in "abcd")
    expected = relay.Let(c, cond, relay.Let(
        d, relay.If(c, relay.Let(a, relay.const(2), a), relay.Let(b, relay.const(3), b)), d))
    relay.assert_structural_equal(anf, run_opt_pass(expected, transform.InferType()))


def test_anf_value_shared_by_branches_is_hoisted():
    x = relay.var("x", shape=(), dtype=F32)
    shared = relay.add(x, relay.const(1.0))
    body = relay.If(relay.less(x, relay.const(0.0)), relay.exp(shared), relay.negative(shared))
    anf = run_opt_pass(relay.Function([x], body), transform.ToANormalForm())
    assert_anf(anf)
    # the add is bound once, above the If
    lets = [n for n in all_nodes_post_order(anf) if isinstance(n, relay.Let)]
    adds = [n for n in lets if isinstance(n.value, relay.Call) and n.value.op.name == "add"]
    assert len(adds) == 1 and isinstance(adds[0].body, relay.Let)
    for v in (-2.0, 3.0):
        arg = np.float32(v)
        check_eval(relay.Call(anf, [relay.const(arg)]),
                   np.exp(arg + 1) if v < 0 else -(arg + 1), rtol=1e-6)


def test_anf_keeps_let_variables_and_flattens_nested_lets():
    x = relay.Var("x")
    c = relay.const(1.0)
    inner = relay.Let(x, relay.add(c, c), x)
    anf = run_opt_pass(relay.multiply(inner, inner), [transform.ToANormalForm(), transform.InferType()])
    v0, v2 = relay.Var("v0"), relay.Var("v2")
    expected = relay.Let(v0, c, relay.Let(x, relay.add(v0, v0), relay.Let(
        v2, relay.multiply(x, x), v2)))
    relay.assert_structural_equal(anf, run_opt_pass(expected, transform.InferType()))


def test_anf_recursive_global_and_idempotence():
    mod = relay.IRModule()
    f = relay.GlobalVar("f")
    n = relay.var("n", shape=(), dtype="int64")
    m = n * relay.const(2, "int64")
    body = relay.If(relay.equal(n, relay.const(0, "int64")), m,
                    m + relay.Call(f, [n - relay.const(1, "int64")]))
    mod[f] = relay.Function([n], body, relay.TensorType((), "int64"))
    mod["main"] = relay.Function([], relay.Call(f, [relay.const(5, "int64")]))
    once = transform.ToANormalForm()(mod)
    twice = transform.ToANormalForm()(once)
    relay.assert_structural_equal(once[f], twice[f])
    assert_anf(once[f])
    assert relay.create_executor("debug", mod=once).evaluate()().numpy() == 30


def test_anf_leaves_primitive_functions_alone():
    x = relay.var("x", shape=(2,))
    mod = transform.FuseOps()(transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x], relay.exp(relay.add(x, x))))))
    anf = transform.ToANormalForm()(mod)
    prims = [n for n in all_nodes_post_order(anf["main"]) if isinstance(n, relay.Function) and n.is_primitive]
    assert len(prims) == 1 and not isinstance(prims[0].body, relay.Let)


# --- basic block normal form --------------------------------------------------------------------
def test_bbnf_graph_without_scopes_is_unchanged():
    x = relay.const(1)
    y = relay.add(x, x)
    z = relay.add(y, y)
    f = relay.Function([], relay.add(z, z))
    bb = run_opt_pass(f, transform.ToBasicBlockNormalForm())
    assert Feature.fLet not in detect_feature(bb)
    assert check_basic_block_normal_form(bb)
    check_eval(relay.Call(bb, []), 8)


def _if_expr(x, v1=None):
    one, two = relay.const(1, dtype=F32), relay.const(2, dtype=F32)
    v1 = relay.add(x, one) if v1 is None else v1
    return relay.If(relay.equal(x, two), relay.multiply(v1, two), relay.multiply(v1, one))


def test_bbnf_binds_value_shared_by_branches():
    x = relay.var("x", shape=(), dtype=F32)
    for wrap in (lambda e: e, lambda e: relay.Function([x], e)):
        bb = run_opt_pass(wrap(_if_expr(x)), [transform.ToBasicBlockNormalForm(), transform.InferType()])
        v1 = relay.var("v1")
        expected = relay.Let(v1, relay.add(x, relay.const(1, dtype=F32)), _if_expr(x, v1))
        expected = run_opt_pass(wrap(expected), transform.InferType())
        relay.assert_structural_equal(bb, expected, map_free_vars=True)
        assert check_basic_block_normal_form(bb)


def test_bbnf_nested_if_binds_in_innermost_common_scope():
    x = relay.var("x", shape=(), dtype="bool")
    y = relay.var("y", shape=(), dtype=F32)
    z = relay.var("z", shape=(), dtype=F32)
    t, f = relay.const(True), relay.const(False)
    one, three = relay.const(1, dtype=F32), relay.const(3, dtype=F32)

    def build(y2, z2):
        true_branch = relay.If(t, relay.add(z2, y2), relay.add(three, y2))
        return true_branch, relay.If(f, z2, one)

    tb, fb = build(relay.add(y, y), relay.add(z, z))
    bb = run_opt_pass(relay.If(x, tb, fb), [transform.ToBasicBlockNormalForm(), transform.InferType()])
    y2, z2 = relay.var("y2"), relay.var("z2")
    tb2, fb2 = build(y2, z2)
    expected = relay.Let(z2, relay.add(z, z), relay.If(x, relay.Let(y2, relay.add(y, y), tb2), fb2))
    relay.assert_structural_equal(bb, run_opt_pass(expected, transform.InferType()), map_free_vars=True)


def test_bbnf_keeps_lets_and_is_idempotent():
    x, y, z = relay.Var("x"), relay.Var("y"), relay.Var("z")
    body = relay.Let(y, relay.const(3.0), relay.Let(x, relay.const(4.0), relay.Let(z, x + y, x + z)))
    body = run_opt_pass(body, transform.InferType())
    bb = run_opt_pass(body, transform.ToBasicBlockNormalForm())
    relay.assert_structural_equal(bb, body)
    xv = relay.var("xv", shape=(), dtype=F32)
    once = to_basic_block_normal_form(relay.Function([xv], _if_expr(xv)))
    relay.assert_structural_equal(to_basic_block_normal_form(once), once)


def test_check_basic_block_normal_form_rejects_shared_branch_values():
    x = relay.var("x", shape=(), dtype=F32)
    with pytest.raises(RelayError, match="basic block normal form"):
        check_basic_block_normal_form(relay.Function([x], _if_expr(x)))


def test_bbnf_higher_order_closures_sharing_a_value():
    x = relay.var("x", dtype=F32, shape=(1,))
    s = relay.var("s", dtype=F32, shape=(1,))
    shared = relay.add(s, s)
    f = relay.Var("f", relay.FuncType([], relay.scalar_type("bool")))
    zv = relay.Var("z")
    body = relay.If(relay.Call(f, []), relay.Function([x], relay.add(x, shared)),
                    relay.Function([zv], relay.add(zv, shared)))
    bb = run_opt_pass(relay.Function([f, s], body), transform.ToBasicBlockNormalForm())
    assert check_basic_block_normal_form(bb)


# --- graph normal form ---------------------------------------------------------------------------
def test_gnf_shares_let_values():
    x = relay.var("x", shape=(2,))
    a, b = relay.Var("a"), relay.Var("b")
    body = relay.Let(a, relay.exp(x), relay.Let(b, relay.add(a, a), relay.multiply(b, a)))
    gnf = run_opt_pass(relay.Function([x], body), transform.ToGraphNormalForm())
    assert Feature.fLet not in detect_feature(gnf) and Feature.fGraph in detect_feature(gnf)
    e = relay.exp(x)
    expected = relay.Function([x], relay.multiply(relay.add(e, e), e))
    relay.assert_structural_equal(gnf, expected)


def test_gnf_keeps_recursive_lets():
    f = relay.Var("f")
    n = relay.var("n", shape=(), dtype="int32")
    rec = relay.Function([n], relay.If(relay.equal(n, relay.const(0)), n,
                                       relay.Call(f, [relay.subtract(n, relay.const(1))])))
    body = relay.Let(f, rec, relay.Call(f, [relay.const(3)]))
    gnf = to_graph_normal_form(body)
    assert Feature.fLetRec in detect_feature(gnf)
    check_eval(gnf, 0)


def test_anf_then_gnf_round_trip():
    x = relay.var("x", shape=(3,))
    e = relay.exp(x)
    func = relay.Function([x], relay.add(relay.multiply(e, e), e))
    relay.assert_structural_equal(to_graph_normal_form(to_a_normal_form(func)), func)


# --- deep programs -------------------------------------------------------------------------------
def test_normal_forms_on_a_10000_op_chain():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(10000):
        y = relay.negative(y)
    func = relay.Function([x], y)
    anf = to_a_normal_form(func)
    bb = to_basic_block_normal_form(anf)
    gnf = to_graph_normal_form(anf)
    relay.assert_structural_equal(gnf, func)
    relay.assert_structural_equal(bb, anf)   # a chain has no scopes to lift between
