"""te_compiler.lower_main: the walk over a fused main shared by the graph and AOT executors.

Checks the flattened nodes/entries/outputs on hand-fused programs, runs the lowered kernel calls
in order over numpy buffers against a numpy reference, and checks the static-graph errors.
"""
import time

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import nd
from relay_backend.backend import te_compiler
from relay_backend.te_compiler.lower_main import GraphCodegenError, LoweredMain, lower_main
from relay_backend.transform import InferType


def _prim(params, body, **attrs):
    fn = relay.Function(params, body).with_attr("Primitive", 1)
    for key, value in attrs.items():
        fn = fn.with_attr(key, value)
    return fn


def _typed_main(params, body) -> relay.Function:
    return InferType()(relay.IRModule.from_expr(relay.Function(params, body)))["main"]


def _program():
    """main(x, t: (a, b)) = (exp(x + t.0 * 3), reshape_only(that), t.1, x) with a constant."""
    x = relay.var("x", shape=(2, 3))
    t = relay.var("t", relay.TupleType([relay.TensorType((2, 3)), relay.TensorType((3,))]))
    p, q = relay.var("p", shape=(2, 3)), relay.var("q", shape=(2, 3))
    c = relay.var("c", shape=(2, 3))
    mad = relay.Call(_prim([p, q, c], relay.exp(relay.add(p, relay.multiply(q, c)))),
                     [x, relay.TupleGetItem(t, 0), relay.const(np.full((2, 3), 3.0, "float32"))])
    r = relay.var("r", shape=(2, 3))
    flat = relay.Call(_prim([r], relay.reshape(r, newshape=(6,)), **{"relay.reshape_only": 1}), [mad])
    return _typed_main([x, t], relay.Tuple([mad, flat, relay.TupleGetItem(t, 1), x]))


def test_nodes_entries_and_outputs():
    lowered = _program()
    lm = lower_main(lowered)
    assert isinstance(lm, LoweredMain)
    assert [n.op for n in lm.nodes] == ["input", "input", "input", "const", "call", "call"]
    assert lm.inputs == [("x", 0), ("t_0", 1), ("t_1", 2)]
    (name, data, eid), = lm.constants
    assert name == "p0" and eid == 3 and np.array_equal(data.numpy(), np.full((2, 3), 3.0))
    mad, flat = lm.calls
    assert mad.inputs == (0, 1, 3) and mad.outputs == (4,) and mad.alias_of is None
    assert flat.inputs == (4,) and flat.outputs == (5,) and flat.alias_of == 4
    assert mad.func_name.startswith("tvmgen_default_fused_") and set(lm.cached) == {mad.func_name, flat.func_name}
    assert lm.outputs == [4, 5, 2, 0]
    assert [e.kind for e in lm.entries] == ["input", "input", "input", "param", "output", "output"]
    assert [e.shape for e in lm.entries] == [(2, 3), (2, 3), (3,), (2, 3), (2, 3), (6,)]
    assert [(e.node, e.index) for e in lm.entries] == [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0)]
    steps = lm.steps()
    assert [(s.inputs, s.outputs, s.alias_of) for s in steps] == [((0, 1, 3), (4,), None), ((4,), (5,), 4)]
    planner = lm.planner_entries()
    assert [e.nbytes for e in planner] == [24, 24, 12, 24, 24, 24] and planner[4].name == mad.name


def test_running_the_calls_in_order_matches_numpy():
    lm = lower_main(_program())
    lib = te_compiler.get().build(list(lm.cached.values()), "llvm")
    rng = np.random.default_rng(0)
    x, a = rng.standard_normal((2, 3)).astype("float32"), rng.standard_normal((2, 3)).astype("float32")
    b = rng.standard_normal(3).astype("float32")
    bufs = [nd.array(v) for v in (x, a, b)] + [lm.constants[0][1]]
    bufs += [nd.empty(e.shape, e.dtype) for e in lm.entries[len(bufs):]]
    for call in lm.calls:
        lib[call.func_name](*[bufs[i] for i in call.inputs + call.outputs])
    want = np.exp(x.astype("float64") + a * 3.0)
    got = [bufs[i].numpy() for i in lm.outputs]
    np.testing.assert_allclose(got[0], want, rtol=1e-5)
    np.testing.assert_allclose(got[1], want.reshape(6), rtol=1e-5)
    np.testing.assert_array_equal(got[2], b)
    np.testing.assert_array_equal(got[3], x)


def test_shared_subexpressions_are_lowered_once_and_named_uniquely():
    x = relay.var("x", shape=(4,))
    p = relay.var("p", shape=(4,))
    first = relay.Call(_prim([p], relay.negative(p)), [x])
    q = relay.var("q", shape=(4,))
    second = relay.Call(_prim([q], relay.negative(q)), [first])
    lm = lower_main(_typed_main([x], relay.Tuple([second, first])))
    names = [c.name for c in lm.calls]
    assert len(names) == 2 and names[1] == f"{names[0]}_1"
    assert len(lm.cached) == 1 and lm.calls[0].func_name == lm.calls[1].func_name


def test_ten_thousand_call_chain():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(10_000):
        p = relay.var("p", shape=(2,))
        y = relay.Call(_prim([p], relay.negative(p)), [y])
    func = relay.Function([x], y)
    func = InferType()(relay.IRModule.from_expr(func))["main"]
    start = time.perf_counter()
    lm = lower_main(func)
    assert len(lm.calls) == 10_000 and lm.outputs == [10_000]
    assert time.perf_counter() - start < 60


def test_not_a_static_graph():
    x = relay.var("x", shape=(2,))
    with pytest.raises(GraphCodegenError, match=r"control flow \(If\).*kind=\"vm\""):
        lower_main(_typed_main([x], relay.If(relay.const(True), x, x)))
    with pytest.raises(GraphCodegenError, match="run transform.FuseOps first"):
        lower_main(_typed_main([x], relay.exp(x)))
    with pytest.raises(GraphCodegenError, match="run InferType first"):
        fresh = relay.var("fresh", shape=(2,))
        lower_main(relay.Function([fresh], relay.negative(fresh)))
    d = relay.var("d", shape=(relay.Any(), 2))
    with pytest.raises(GraphCodegenError, match="static shapes"):
        lower_main(_typed_main([d], d))


@pytest.mark.parametrize("kind", ["graph", "aot"])
def test_tuple_result_nested_900_deep(kind):
    """Flattening main's result type and regrouping the outputs walk the tuple type without
    recursion (a RecursionError before)."""
    depth = 900
    x = relay.var("x", shape=(2,))
    out = relay.add(x, relay.const(1.0))
    for _ in range(depth):
        out = relay.Tuple([out])
    mod = relay.IRModule.from_expr(relay.Function([x], out))
    value = relay.create_executor(kind, mod=mod).evaluate()(np.array([1, 2], "float32"))
    for _ in range(depth):
        assert len(value) == 1
        value = value[0]
    np.testing.assert_array_equal(value.numpy(), [2, 3])
