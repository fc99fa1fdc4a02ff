"""The registry rejects duplicate names and incomplete declarations with messages naming the op."""
import dataclasses

import numpy as np
import pytest

from relay_backend.errors import OpDefinitionError, TypeInferenceError
from relay_backend.ir.attrs import Attrs
from relay_backend.op import OpPattern, registry
from relay_backend.op.relations import identity_rel

_KW = dict(inputs=("data",), rel=identity_rel, pattern=OpPattern.ELEMWISE,
           ref=lambda x, a: x, samples=lambda rng: [])


def test_duplicate_registration_is_rejected():
    with pytest.raises(OpDefinitionError, match="'add' is registered twice"):
        registry.defop("add", **_KW)


@pytest.mark.parametrize("missing", ["rel", "ref", "samples"])
def test_missing_piece_is_named(missing):
    kw = dict(_KW, **{missing: None})
    with pytest.raises(OpDefinitionError, match=f"test.incomplete: missing {missing}"):
        registry.register(registry.OpDef("test.incomplete", **kw))
    assert "test.incomplete" not in [op.name for op in registry.list_ops()]


def test_attrs_must_be_frozen_with_defaults():
    @dataclasses.dataclass
    class Mutable:  # (a mutable subclass of the frozen Attrs cannot even be declared)
        x: int = 1

    @dataclasses.dataclass(frozen=True)
    class NoDefault(Attrs):
        x: int

    with pytest.raises(OpDefinitionError, match="must be a dataclass deriving from Attrs"):
        registry.register(registry.OpDef("test.mutable", attrs=Mutable, **_KW))
    with pytest.raises(OpDefinitionError, match="attribute 'x' of NoDefault has no default"):
        registry.register(registry.OpDef("test.nodefault", attrs=NoDefault, **_KW))


def test_unknown_op_lookup():
    with pytest.raises(OpDefinitionError, match="'no.such.op' is not registered"):
        registry.get("no.such.op")


def test_every_registered_op_is_complete():
    registry.check()
    ops = registry.list_ops()
    assert len(ops) >= 40
    for op in ops:
        assert op.pattern in set(OpPattern), op.name
        samples = op.samples(np.random.default_rng(0))
        assert samples, f"{op.name} has no samples"


def test_wrong_arity_and_attrs_type():
    add = registry.get("add")
    from relay_backend.ir import var
    x = var("x", shape=(2,))
    with pytest.raises(TypeInferenceError, match=r"add takes 2 argument\(s\)"):
        add(x)
    with pytest.raises(TypeInferenceError, match="add takes no attributes"):
        add(x, x, attrs=object())


def test_ops_are_singletons_under_copy():
    import copy
    op = registry.get("exp")
    assert copy.deepcopy(op) is op
