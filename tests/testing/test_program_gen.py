"""The random-program generator itself: programs type-check, cover every op family and IR
construct, have finite outputs on their inputs, and are reproducible."""
import numpy as np
from hypothesis import HealthCheck, given, settings

from relay_backend import ir
from relay_backend.ir.expr import Call, Let, Tuple, TupleGetItem
from relay_backend.ir.functor import ExprVisitor
from relay_backend.testing import executors
from relay_backend.testing.program_gen import dataflow_programs, programs

FIXED = settings(max_examples=120, derandomize=True, database=None, deadline=None,
                 suppress_health_check=list(HealthCheck))


class _Census(ExprVisitor):
    def __init__(self):
        super().__init__()
        self.ops, self.kinds = set(), set()

    def visit_call(self, call):
        if hasattr(call.op, "name"):
            self.ops.add(call.op.name)
        super().visit_call(call)

    def visit_let(self, let):
        self.kinds.add("Let")
        super().visit_let(let)

    def visit_if(self, e):
        self.kinds.add("If")
        super().visit_if(e)

    def visit_tuple(self, t):
        self.kinds.add("Tuple")
        super().visit_tuple(t)

    def visit_tuple_getitem(self, t):
        self.kinds.add("TupleGetItem")
        super().visit_tuple_getitem(t)


class _Uses(ExprVisitor):
    """Call nodes and variables a body actually contains (each node once)."""

    def __init__(self):
        super().__init__()
        self.calls, self.vars = 0, set()

    def visit_call(self, call):
        self.calls += 1
        super().visit_call(call)

    def visit_var(self, var):
        self.vars.add(var.name_hint)
        super().visit_var(var)


def _collect(strategy, n=120):
    seen = []

    @settings(FIXED, max_examples=n)
    @given(strategy)
    def grab(program):
        seen.append(program)
    grab()
    return seen


def test_programs_cover_every_family_and_construct():
    found = _collect(programs(max_calls=30))
    census = _Census()
    for p in found:
        census.visit(p.mod["main"])
    families = {"elementwise": {"tanh", "exp", "log", "sigmoid", "negative"}, "broadcast": {"add", "multiply"},
                "reduce": {"sum", "mean", "max", "min"}, "reshape": {"reshape", "transpose"},
                "concatenate": {"concatenate"}, "split": {"split"}, "take": {"take"},
                "strided_slice": {"strided_slice"}, "dense": {"nn.dense"}, "conv2d": {"nn.conv2d"},
                "pool": {"nn.max_pool2d", "nn.avg_pool2d"}, "softmax": {"nn.softmax", "nn.log_softmax"},
                "batch_norm": {"nn.batch_norm"}}
    missing = [f for f, names in families.items() if not names & census.ops]
    assert not missing, f"op families never generated: {missing} (seen {sorted(census.ops)})"
    assert {"Let", "If", "Tuple", "TupleGetItem"} <= census.kinds, census.kinds
    assert any(isinstance(p.mod["main"].body, Tuple) or _ends_in_tuple(p) for p in found), "no multi-output"
    # num_calls counts the Call nodes in the final body (calls the outputs do not reach are gone)
    assert max(p.num_calls for p in found) >= 15 and min(p.num_calls for p in found) <= 3
    for p in found[:20]:
        counter = _Uses()
        counter.visit(p.mod["main"].body)
        assert p.num_calls == counter.calls
        assert {v.name_hint for v in p.mod["main"].params} <= counter.vars, "unused parameter kept"


def _ends_in_tuple(p):
    body = p.mod["main"].body
    while isinstance(body, Let):
        body = body.body
    return isinstance(body, Tuple)


def test_dataflow_programs_have_no_if():
    for p in _collect(dataflow_programs(max_calls=15), n=40):
        assert not p.has_control_flow
        assert "if (" not in p.mod.astext()


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(programs(max_calls=30))
def test_programs_are_typed_and_give_finite_outputs(program):
    main = program.mod["main"]
    assert main.checked_type is not None
    assert [p.name_hint for p in main.params] == list(program.inputs)
    for param in main.params:
        arr = program.inputs[param.name_hint]
        assert arr.shape == tuple(param.type_annotation.shape) and str(arr.dtype) == param.type_annotation.dtype
    for out in executors.run("debug", program.mod, program.inputs):
        assert np.all(np.isfinite(out)), f"non-finite output:\n{program.describe()}"


def test_generation_is_reproducible():
    a = _collect(programs(max_calls=10), n=20)
    b = _collect(programs(max_calls=10), n=20)
    assert [p.mod.astext() for p in a] == [p.mod.astext() for p in b]
    assert all(np.array_equal(x, y) for p, q in zip(a, b) for x, y in zip(p.inputs.values(), q.inputs.values()))
