"""The float16 accumulation guard: every op whose te compute reduces over float data has a
float16 sample with a reduction of at least S.FLOAT16_REDUCTION_TERMS values, so the
conformance test (every sample on every executor, against the float64 numpy reference) fails
for an op that adds up in float16. A new reducing op without such a sample fails here, naming it.
"""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.ir.types import TensorType, TupleType
from relay_backend.op import list_ops
from relay_backend.op import samples as S


def _flat(inputs):
    return [x for v in inputs for x in (_flat(v) if isinstance(v, (list, tuple)) else [np.asarray(v)])]


def _type_of(value):
    if isinstance(value, (list, tuple)):
        return TupleType([_type_of(v) for v in value])
    return TensorType(np.shape(value), str(np.asarray(value).dtype))


def _longest_reduction(op, sample) -> int:
    """The largest reduction extent (product of a stage's reduce axes) in the op's compute."""
    inputs = _flat(sample.inputs)
    out_type = op.rel([_type_of(v) for v in sample.inputs], sample.attrs)
    holders = [te.placeholder(x.shape, str(x.dtype), name=f"in{k}") for k, x in enumerate(inputs)]
    longest = 0
    for stage in te.create_schedule(op.compute(sample.attrs, holders, out_type)).stages:
        axes = getattr(stage.op, "reduce_axis", None)
        if axes:
            longest = max(longest, int(np.prod([tir.simplify(iv.dom.extent).value for iv in axes])))
    return longest


def _reducing_float_ops():
    ops = []
    for op in list_ops():
        if op.compute is None:
            continue
        samples = op.samples(np.random.default_rng(0))
        floats = [s for s in samples if any(x.dtype.kind == "f" for x in _flat(s.inputs))]
        if any(_longest_reduction(op, s) > 0 for s in floats):
            ops.append(pytest.param(op, samples, id=op.name))
    return ops


REDUCING = _reducing_float_ops()


def test_the_guard_sees_the_reducing_ops():
    names = {p.id for p in REDUCING}
    assert {"sum", "mean", "variance", "nn.dense", "nn.conv2d", "nn.softmax", "nn.avg_pool2d"} <= names


@pytest.mark.parametrize("op,samples", REDUCING)
def test_reducing_op_has_a_long_float16_sample(op, samples):
    long16 = [s for s in samples
              if all(x.dtype != np.float32 and x.dtype != np.float64 for x in _flat(s.inputs))
              and any(x.dtype == np.float16 for x in _flat(s.inputs))
              and _longest_reduction(op, s) >= S.FLOAT16_REDUCTION_TERMS]
    assert long16, (f"{op.name} reduces over float data but has no float16 sample reducing over "
                    f">= {S.FLOAT16_REDUCTION_TERMS} values; add one (see op/samples.py)")
