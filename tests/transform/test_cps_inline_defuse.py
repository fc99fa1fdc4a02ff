"""ToCPS/UnCPS, Inline, DefuseOps, EtaExpand and LambdaLift: before/expected programs modelled
on TVM's tests (test_pass_inline.py, test_pass_defuse_ops.py, test_pass_eta_expand.py,
test_pass_to_cps.py) and evaluation before == after on the interpreter."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.errors import RelayError
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.transform import to_cps, un_cps

from .normal_form_helpers import evaluate, run_opt_pass

F32 = "float32"


# --- CPS -----------------------------------------------------------------------------------------
def _typed(func, mod=None):
    mod = mod or relay.IRModule()
    mod["main"] = func
    return transform.InferType()(mod)["main"], mod


def test_cps_round_trip_with_closures_and_branches():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    f = relay.Var("f")
    body = relay.Let(f, relay.Function([y], relay.exp(y)),
                     relay.If(relay.less(relay.sum(x), relay.const(0.0)),
                              relay.Call(f, [relay.add(x, x)]), relay.negative(x)))
    func, mod = _typed(relay.Function([x], body))
    cps = to_cps(func, mod)
    answer = cps.type_params[-1]
    assert cps.ret_type is answer and cps.params[-1].name_hint == "k"
    direct, _ = _typed(un_cps(_typed(cps)[0]))
    assert direct.checked_type == func.checked_type
    for data in (np.array([1.0, 2.0], F32), np.array([-1.0, 0.5], F32)):
        np.testing.assert_allclose(evaluate(direct, None, data), evaluate(func, None, data), rtol=1e-6)


def _double_twice_module():
    """main(x) = @double(@double(x)) with @double(a) = a + a."""
    mod = relay.IRModule()
    g = relay.GlobalVar("double")
    a = relay.var("a", shape=(), dtype=F32)
    mod[g] = relay.Function([a], relay.add(a, a))
    x = relay.var("x", shape=(), dtype=F32)
    mod["main"] = relay.Function([x], relay.Call(g, [relay.Call(g, [x])]))
    return mod


def _cps_round_trip(mod):
    with transform.PassContext(opt_level=3):
        return transform.Sequential([transform.InferType(), transform.ToCPS(), transform.InferType(),
                                     transform.UnCPS(), transform.InferType()])(mod)


def test_cps_adds_cps_copies_of_called_globals():
    mod = transform.InferType()(_double_twice_module())
    cps = to_cps(mod["main"], mod)
    assert "double_cps" in mod
    mod["main"] = un_cps(_typed(cps, mod)[0])
    mod = transform.InferType()(mod)
    assert evaluate(mod["main"], mod, np.float32(1.5)) == pytest.approx(6.0)


def test_cps_passes_on_a_module():
    x = relay.var("x", shape=(2,))
    out = _cps_round_trip(relay.IRModule.from_expr(relay.Function([x], relay.exp(relay.negative(x)))))
    data = np.array([0.5, 1.0], F32)
    np.testing.assert_allclose(evaluate(out["main"], out, data), np.exp(-data), rtol=1e-6)


def test_cps_passes_on_a_module_with_called_globals():
    """ToCPS then UnCPS on a whole module: main and @double are wrapped back into direct style,
    while @double_cps, which the CPS code calls, stays in CPS (wrapping it too, as Relay's
    UnCPS does, would leave main calling it with one argument too many)."""
    mod = _double_twice_module()
    out = _cps_round_trip(mod)
    assert sorted(gv.name_hint for gv in out.functions) == ["double", "double_cps", "main"]
    assert len(out["double_cps"].params) == 2 and len(out["double"].params) == 1
    assert out["main"].checked_type == transform.InferType()(mod)["main"].checked_type
    assert evaluate(out["main"], out, np.float32(1.5)) == pytest.approx(6.0)
    assert evaluate(out["double"], out, np.float32(1.5)) == pytest.approx(3.0)


def test_cps_rejects_primitive_functions():
    x = relay.var("x", shape=(2,))
    mod = transform.FuseOps()(transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x], relay.exp(x)))))
    mod = transform.InferType()(mod)
    with pytest.raises(RelayError, match="primitive"):
        to_cps(mod["main"], mod)


# --- Inline ---------------------------------------------------------------------------------------
def _inline_attr(fn):
    return fn.with_attr("Inline", 1)


def test_inline_leaf_call_chain():
    """main -> g1 -> g11 (inline): g11's body replaces its call in g1 and g11 disappears."""
    def module(inline):
        mod = relay.IRModule()
        x11 = relay.var("x11", shape=(3, 5))
        g11 = relay.GlobalVar("g11")
        x1, y1 = relay.var("x1", shape=(3, 5)), relay.var("y1", shape=(3, 5))
        g1 = relay.GlobalVar("g1")
        if inline:
            mod[g11] = _inline_attr(relay.Function([x11], x11))
            mod[g1] = relay.Function([x1, y1], x1 + y1 + relay.Call(g11, [x1]))
        else:
            mod[g1] = relay.Function([x1, y1], x1 + y1 + x1)
        p0, p1 = relay.var("p0", shape=(3, 5)), relay.var("p1", shape=(3, 5))
        mod["main"] = relay.Function([p0, p1], relay.Call(g1, [p0, p1]))
        return mod

    out = transform.Inline()(module(True))
    expected = module(False)
    assert sorted(gv.name_hint for gv in out.functions) == ["g1", "main"]
    relay.assert_structural_equal(out["g1"], expected["g1"])


def test_inline_chain_collapses_and_copies_are_fresh():
    mod = relay.IRModule()
    a = relay.var("a", shape=(2,))
    t = relay.Var("t")
    inner = relay.GlobalVar("inner")
    mod[inner] = _inline_attr(relay.Function([a], relay.Let(t, relay.exp(a), relay.add(t, t))))
    b = relay.var("b", shape=(2,))
    outer = relay.GlobalVar("outer")
    mod[outer] = _inline_attr(relay.Function([b], relay.Call(inner, [relay.Call(inner, [b])])))
    x = relay.var("x", shape=(2,))
    mod["main"] = relay.Function([x], relay.Call(outer, [x]))
    out = transform.Inline()(mod)
    assert [gv.name_hint for gv in out.functions] == ["main"]
    relay.ir.check_well_formed(out["main"])      # the two copies of inner bind different vars
    data = np.array([0.5, -1.0], F32)
    once = 2 * np.exp(data)
    np.testing.assert_allclose(evaluate(out["main"], out, data), 2 * np.exp(once), rtol=1e-6)


def test_inline_leaves_recursive_functions():
    mod = relay.IRModule()
    sum_up = relay.GlobalVar("sum_up")
    i = relay.var("i", shape=(), dtype="int32")
    body = relay.If(relay.equal(i, relay.const(0)), i,
                    relay.add(relay.Call(sum_up, [relay.subtract(i, relay.const(1))]), i))
    mod[sum_up] = _inline_attr(relay.Function([i], body, relay.TensorType((), "int32")))
    j = relay.var("j", shape=(), dtype="int32")
    mod["main"] = relay.Function([j], relay.Call(sum_up, [j]))
    out = transform.Inline()(mod)
    assert "sum_up" in out
    relay.assert_structural_equal(out["main"], mod["main"])
    assert transform.Inline().info.name == "InlineGlobals" and transform.Inline().info.opt_level == 1


# --- DefuseOps ------------------------------------------------------------------------------------
@pytest.mark.parametrize("level", [0, 2, 3])
def test_defuse_ops_undoes_fuse_ops(level):
    x = relay.var("x", shape=(1, 2, 6, 6))
    w = relay.var("w", shape=(3, 2, 3, 3))
    y = relay.nn.relu(relay.add(relay.nn.conv2d(x, w, padding=(1, 1)), relay.const(1.0)))
    z = relay.nn.softmax(relay.exp(y))
    func = relay.Function([x, w], relay.Tuple([z, relay.sum(y)]))
    fused = run_opt_pass(func, [transform.InferType(), transform.FuseOps(level), transform.InferType()])
    assert any(isinstance(n, relay.Function) and n.is_primitive for n in all_nodes_post_order(fused))
    defused = run_opt_pass(fused, [transform.DefuseOps(), transform.InferType()])
    relay.assert_structural_equal(defused, run_opt_pass(func, transform.InferType()))


# --- EtaExpand -----------------------------------------------------------------------------------
def test_eta_expand_global_var():
    mod = relay.IRModule()
    aux = relay.GlobalVar("aux")
    x = relay.var("x", shape=(), dtype="int32")
    mod[aux] = relay.Function([x], x, relay.TensorType((), "int32"))
    mod["main"] = relay.Function([], aux)
    with transform.PassContext(opt_level=3):
        out = transform.Sequential([transform.EtaExpand(expand_global_var=True)])(mod)
    y = relay.var("y", shape=(), dtype="int32")
    expected = relay.Function([], relay.Function([y], relay.Call(aux, [y]), relay.TensorType((), "int32")))
    relay.assert_structural_equal(out["main"], expected)


def test_eta_expand_constructor():
    mod = relay.IRModule()
    relay.Prelude(mod)
    lst, cons, nil = mod.get_type("List")
    mod["main"] = relay.Function([], cons)
    out = transform.Sequential([transform.EtaExpand(expand_constructor=True), transform.InferType()])(mod)
    fn = out["main"].body
    assert isinstance(fn, relay.Function) and len(fn.params) == 2 and len(fn.type_params) == 1
    a = fn.type_params[0]
    assert fn.ret_type == relay.TypeCall(lst, [a])
    assert isinstance(fn.body, relay.Call) and fn.body.op is cons
    with pytest.raises(RelayError, match="at least one"):
        transform.EtaExpand()


# --- LambdaLift -----------------------------------------------------------------------------------
def _closure_module():
    """main(x) = let f = fn (y) { x + y }; f(x): a closure capturing x."""
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    f = relay.Var("f")
    body = relay.Let(f, relay.Function([y], relay.add(x, y)), relay.Call(f, [x]))
    return transform.InferType()(relay.IRModule.from_expr(relay.Function([x], body)))


def test_lambda_lift_closure_becomes_global():
    mod = _closure_module()
    lifted = transform.LambdaLift()(mod)
    assert transform.LambdaLift().info.opt_level == 1
    names = sorted(gv.name_hint for gv in lifted.functions)
    assert len(names) == 2 and names[1] == "main" and names[0].startswith("lifted_name")
    assert not [n for n in all_nodes_post_order(lifted["main"]) if isinstance(n, relay.Function)
                and n is not lifted["main"]]
    data = np.array([1.0, 2.0], F32)
    np.testing.assert_allclose(evaluate(lifted["main"], lifted, data), 2 * data)


def test_lambda_lift_is_idempotent_on_lifted_closures():
    """A lifted closure's global holds the closure's function literal as its body; a second
    LambdaLift (the VM compiler runs one after a user's pipeline) leaves it alone instead of
    lifting it once more, and still lifts lambdas nested inside it."""
    once = transform.LambdaLift()(_closure_module())
    twice = transform.LambdaLift()(once)
    assert sorted(gv.name_hint for gv in twice.functions) == sorted(gv.name_hint for gv in once.functions)
    for gv in once.functions:
        relay.assert_structural_equal(twice[gv.name_hint], once[gv])

    # a lambda put inside the lifted closure's body afterwards is still lifted
    closure_gv = next(gv for gv in once.functions if gv.name_hint != "main")
    holder = once[closure_gv]
    z = relay.var("z", shape=(2,))
    g = relay.Var("g")
    inner = holder.body
    nested_body = relay.Let(g, relay.Function([z], relay.negative(z)), relay.Call(g, [inner.body]))
    once[closure_gv] = relay.Function(holder.params, relay.Function(inner.params, nested_body),
                                      None, holder.type_params, holder.attrs)
    once = transform.InferType()(once)
    again = transform.LambdaLift()(once)
    assert len(again.functions) == 3
    data = np.array([1.0, 2.0], F32)
    np.testing.assert_allclose(evaluate(again["main"], again, data), -2 * data)
