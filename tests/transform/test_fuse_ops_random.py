"""FuseOps on random small programs: the debug interpreter (numpy references, primitive functions
evaluated like ordinary ones) gives the same output before and after fusion, at fusion levels 0
and 2; the result re-type-checks, is well formed, leaves no op call outside a primitive
function, and fusing again changes nothing.

Programs mix elementwise, broadcast, injective, reduce, tuple (concatenate/split), conv2d/dense,
calls to a global function, closures capturing outer values, `if` and `let`, with shared
sub-expressions. Tolerance: the same numpy references run on the same values, so results should
be identical; rtol=atol=1e-6 is only a safety margin.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.ir import well_formed
from relay_backend.ir.expr import Op
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.ir.structural import assert_structural_equal

S = (2, 4, 4)


def _const(rng, shape):
    return relay.const(rng.standard_normal(shape).astype("float32"))


class ProgramGen:
    """Builds a random well-typed main over x, y: Tensor[S] (plus a @helper global)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.helper = relay.GlobalVar("helper")

    def pick(self, pool):
        # favour recent values so chains form, but reuse old ones too (sharing, diamonds)
        i = len(pool) - 1 - min(int(self.rng.geometric(0.4)) - 1, len(pool) - 1)
        return pool[i]

    def step(self, pool):
        rng, a, b = self.rng, self.pick(pool), self.pick(pool)
        kind = rng.choice(["unary", "unary", "binary", "binary", "bias", "scalar", "transpose",
                           "reshape", "reduce", "concat_split", "dense", "conv", "call",
                           "closure", "if", "let"])
        if kind == "unary":
            fns = [relay.negative, relay.nn.relu, relay.tanh, relay.sigmoid, relay.abs,
                   lambda v: relay.exp(relay.tanh(v))]
            return fns[rng.integers(len(fns))](a)
        if kind == "binary":
            fns = [relay.add, relay.multiply, relay.subtract, relay.maximum]
            return relay.tanh(fns[rng.integers(len(fns))](a, b))
        if kind == "bias":
            return relay.add(a, _const(rng, (4,)))
        if kind == "scalar":
            return relay.multiply(a, relay.const(0.5))
        if kind == "transpose":
            return relay.transpose(a, (0, 2, 1))
        if kind == "reshape":
            return relay.reshape(relay.reshape(a, (8, 4)), S)
        if kind == "reduce":
            red = relay.sum if rng.random() < 0.5 else relay.max
            return relay.add(a, red(b, axis=2, keepdims=True))
        if kind == "concat_split":
            parts = relay.split(relay.concatenate((a, b), axis=0), 2, axis=0)
            return parts[int(rng.integers(2))]
        if kind == "dense":
            return relay.reshape(relay.nn.dense(relay.reshape(a, (8, 4)), _const(rng, (4, 4))), S)
        if kind == "conv":
            out = relay.nn.conv2d(relay.reshape(a, (1, 2, 4, 4)), _const(rng, (2, 2, 3, 3)), padding=(1, 1))
            return relay.reshape(out, S)
        if kind == "call":
            return relay.Call(self.helper, [a])
        if kind == "closure":
            p = relay.var("p", shape=S)
            return relay.Call(relay.Function([p], relay.add(relay.exp(relay.tanh(p)), a)), [b])
        if kind == "if":
            cond = relay.greater(relay.sum(a), relay.const(0.0))
            return relay.If(cond, relay.nn.relu(relay.add(b, a)), relay.negative(a))
        v = relay.var("v", shape=S)
        return relay.Let(v, relay.multiply(a, b), relay.add(v, a))

    def module(self):
        x, y = relay.var("x", shape=S), relay.var("y", shape=S)
        pool = [x, y]
        for _ in range(int(self.rng.integers(4, 14))):
            pool.append(self.step(pool))
        out = pool[-1]
        if self.rng.random() < 0.3:
            out = relay.Tuple([out, self.pick(pool[:-1])])
        mod = relay.IRModule()
        h = relay.var("h", shape=S)
        mod[self.helper] = relay.Function([h], relay.tanh(relay.multiply(h, relay.const(2.0))))
        mod["main"] = relay.Function([x, y], out)
        return transform.InferType()(mod)


def run(mod, inputs):
    result = relay.create_executor("debug", mod=mod).evaluate()(*inputs)
    values = result if isinstance(result, (list, tuple)) or hasattr(result, "fields") else [result]
    fields = getattr(values, "fields", values)
    return [np.asarray(v.numpy()) for v in fields]


def op_calls_outside_primitives(func):
    """Op calls reachable from func without entering a primitive function."""
    found, stack, seen = [], [func.body], set()
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if isinstance(e, relay.Function):
            if e.is_primitive:
                continue
            stack.append(e.body)
            continue
        if isinstance(e, relay.Call) and isinstance(e.op, Op):
            found.append(e.op.name)
        stack.extend(c for c in all_children(e))
    return found


def all_children(e):
    if isinstance(e, relay.Call):
        return (e.op, *e.args)
    if isinstance(e, relay.Tuple):
        return e.fields
    if isinstance(e, relay.TupleGetItem):
        return (e.tuple_value,)
    if isinstance(e, relay.Let):
        return (e.value, e.body)
    if isinstance(e, relay.If):
        return (e.cond, e.true_branch, e.false_branch)
    return ()


@pytest.mark.parametrize("seed", range(40))
def test_fusion_preserves_results(seed):
    gen = ProgramGen(seed)
    mod = gen.module()
    rng = np.random.default_rng(1000 + seed)
    inputs = [rng.standard_normal(S).astype("float32") for _ in range(2)]
    expected = run(mod, inputs)
    for level in (2, 0):
        fused = transform.InferType()(transform.FuseOps(level)(mod))
        main = fused["main"]
        assert well_formed(main), main.astext()
        assert op_calls_outside_primitives(main) == [], main.astext()
        got = run(fused, inputs)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6, err_msg=main.astext())
        again = transform.FuseOps(level)(fused)
        assert_structural_equal(again["main"], main)


def test_generator_covers_the_interesting_cases():
    """The generated programs do exercise fusion of several ops, control flow and closures."""
    kinds, biggest = set(), 0
    for seed in range(40):
        mod = ProgramGen(seed).module()
        fused = transform.FuseOps(2)(mod)
        for node in all_nodes_post_order(mod["main"]):
            kinds.add(type(node).__name__)
        for node in all_nodes_post_order(fused["main"]):
            if isinstance(node, relay.Function) and node.is_primitive:
                biggest = max(biggest, sum(1 for n in all_nodes_post_order(node.body)
                                           if isinstance(n, relay.Call)))
    assert {"If", "Let", "Function", "Tuple", "TupleGetItem"} <= kinds
    assert biggest >= 4
