"""Text round trip: for random programs, fused programs and every op's samples,
`parse(mod.astext(show_meta_data=True))` is structurally equal to `mod`, and printing the parsed
module gives the same text again (the printer and the parser agree on every construct)."""
import numpy as np
import pytest
from hypothesis import given, note

import relay_backend as relay
from relay_backend import transform
from relay_backend.op import list_ops
from relay_backend.testing.program_gen import programs

from .fused import fused_module
from .profiles import profile


def _round_trip(mod, show=lambda text: None):
    text = mod.astext(show_meta_data=True)
    show(text)
    back = relay.parse(text)
    relay.assert_structural_equal(back, mod)
    assert back.astext(show_meta_data=True) == text
    return back


def test_random_programs_round_trip():
    @profile(ci_examples=40, soak_examples=2000)
    @given(program=programs(max_calls=25))
    def check(program):
        _round_trip(program.mod, note)
    check()


def test_fused_programs_round_trip():
    @profile(ci_examples=15, soak_examples=500)
    @given(program=programs(max_calls=20))
    def check(program):
        fused = fused_module(program.mod)
        back = _round_trip(fused, note)
        prims = [n for n in relay.ir.functor.all_nodes_post_order(back["main"])
                 if isinstance(n, relay.Function) and n.is_primitive]
        assert all(p.attrs["Primitive"] == 1 for p in prims)
    check()


def _type_of(value):
    if isinstance(value, (list, tuple)):
        return relay.TupleType([_type_of(v) for v in value])
    value = np.asarray(value)
    return relay.TensorType(value.shape, str(value.dtype))


def _sample_cases():
    for op in list_ops():
        for i, sample in enumerate(op.samples(np.random.default_rng(0))):
            yield pytest.param(op, sample, id=f"{op.name}-{i}")


@pytest.mark.parametrize("op,sample", list(_sample_cases()))
def test_every_op_sample_round_trips(op, sample):
    params = [relay.var(f"in{i}", _type_of(v)) for i, v in enumerate(sample.inputs)]
    mod = transform.InferType()(relay.IRModule.from_expr(
        relay.Function(params, op(*params, attrs=sample.attrs))))
    _round_trip(mod)
