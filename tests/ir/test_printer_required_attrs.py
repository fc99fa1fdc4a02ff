"""Attributes Relay declares without a default are always printed, whatever their value: TVM's
printer skips only fields equal to a declared default, so `reshape(%x, newshape=[])` (to a
scalar) keeps its newshape although () is also our dataclass's placeholder. The table below is
read from TVM v0.18's attrs headers (fields with no set_default); a new op's required fields get
the same treatment by using `ir.attrs.always_printed`."""
import dataclasses

import pytest

import relay_backend as relay
from relay_backend.ir.attrs import ALWAYS_PRINTED
from relay_backend.op.registry import get

TVM_FIELDS_WITHOUT_DEFAULT = {
    "reshape": {"newshape"},
    "cast": {"dtype"},
    "expand_dims": {"axis"},
    "transpose": {"axes"},
    "broadcast_to": {"shape"},
    "full": {"shape"},
    "tile": {"reps"},
    "split": {"indices_or_sections"},
    "strided_slice": {"begin", "end", "strides", "axes"},
    "clip": {"a_min", "a_max"},
    "nn.pad": {"pad_width"},
    "repeat": {"repeats"},
    "arange": {"start", "stop", "step", "dtype"},
    "nn.dense": {"units"},
    "nn.matmul": {"units"},
}


def test_reshape_to_a_scalar_prints_its_newshape():
    x = relay.var("x", shape=(1, 1))
    assert "reshape(%x, newshape=[])" in relay.reshape(x, ()).astext()
    assert "reshape(%x, newshape=[1, -1])" in relay.reshape(x, (1, -1)).astext()


def test_fields_at_their_placeholder_values_are_printed():
    x = relay.var("x", shape=(2, 3))
    assert "cast(%x, dtype=\"float32\")" in relay.cast(x, "float32").astext()
    assert "expand_dims(%x, axis=0)" in relay.expand_dims(x, 0).astext()
    assert "clip(%x, a_min=0f, a_max=0f)" in relay.clip(x, 0.0, 0.0).astext()
    assert "transpose(%x, axes=None)" in relay.transpose(x).astext()


@pytest.mark.parametrize("op_name", sorted(TVM_FIELDS_WITHOUT_DEFAULT))
def test_fields_relay_declares_without_default_are_marked(op_name):
    attrs_type = get(op_name).attrs_type
    marked = {f.name for f in dataclasses.fields(attrs_type) if f.metadata.get(ALWAYS_PRINTED)}
    assert TVM_FIELDS_WITHOUT_DEFAULT[op_name] <= marked, op_name
