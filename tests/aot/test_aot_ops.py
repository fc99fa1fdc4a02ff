"""Every registered op and sample through the AOT executor (LLVM kernels; C kernels under -m slow),
checked against the op's numpy reference.

Compiling one C program per sample would take minutes, so samples are batched: one Relay main per
chunk of ops takes every sample's inputs and returns a tuple of every sample's result; each
result is compared with the reference, the message naming the op and sample. A chunk that fails
to build is retried op by op so the failure names the op. Ops whose output shapes depend on
their input values (dyn.*) are left out: AOT plans memory for static shapes only.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.op import list_ops
from relay_backend.runtime.container import ADT

pytestmark = pytest.mark.compile
TOLERANCE = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-10}
CHUNKS = 6


def _flatten(value):
    if isinstance(value, (list, tuple, ADT)):
        return [x for v in value for x in _flatten(v)]
    return [value.numpy() if hasattr(value, "numpy") else np.asarray(value)]


def _var(name, value):
    value = np.asarray(value)
    return relay.var(name, shape=value.shape, dtype=str(value.dtype))


def _program(cases):
    """(IRModule, flat input arrays, [(label, expected outputs)]) for (op, i, sample) cases."""
    params, inputs, results, expected = [], [], [], []
    for op, i, sample in cases:
        args = []
        for k, value in enumerate(sample.inputs):
            if isinstance(value, (list, tuple)):    # a tuple-typed argument: one var per field
                fields = []
                for j, v in enumerate(value):
                    fields.append(_var(f"{op.name}_{i}_{k}_{j}", v))
                    inputs.append(np.asarray(v))
                params += fields
                args.append(relay.Tuple(fields))
            else:
                params.append(_var(f"{op.name}_{i}_{k}", value))
                inputs.append(np.asarray(value))
                args.append(params[-1])
        results.append(op(*args, attrs=sample.attrs))
        expected.append((f"{op.name} sample {i}", _flatten(op.ref(*sample.inputs, sample.attrs))))
    mod = relay.IRModule.from_expr(relay.Function(params, relay.Tuple(results)))
    return mod, inputs, expected


def _check(cases, target):
    mod, inputs, expected = _program(cases)
    build_target = relay.aot.c_target_like("llvm") if target == "c-like-llvm" else target
    out = relay.create_executor("aot", mod=mod, target=build_target).evaluate()(*inputs)
    actual = _flatten(out)
    assert len(actual) == sum(len(e) for _, e in expected)
    pos = 0
    for label, outs in expected:
        for k, e in enumerate(outs):
            a, e = actual[pos], np.asarray(e)
            pos += 1
            what = f"{label} output {k} on aot ({target} kernels)"
            assert a.shape == e.shape and a.dtype == e.dtype, f"{what}: {a.shape} {a.dtype} != {e.shape} {e.dtype}"
            if e.dtype.kind == "f":
                tol = TOLERANCE[str(e.dtype)]
                np.testing.assert_allclose(a, e, rtol=tol, atol=tol, err_msg=what)
            else:
                np.testing.assert_array_equal(a, e, err_msg=what)


def _chunks():
    # AOT needs static shapes: an op whose output shape depends on input values (a shape_func,
    # e.g. dyn.arange) is rejected, which tests/op/test_conformance.py checks
    ops = [op for op in list_ops() if op.shape_func is None and not op.user_defined]
    size = -(-len(ops) // CHUNKS)
    for c in range(CHUNKS):
        chunk = ops[c * size:(c + 1) * size]
        if chunk:
            yield pytest.param(chunk, id=f"{chunk[0].name}..{chunk[-1].name}")


# target "llvm" links the graph executor's LLVM kernels; C kernels of the same schedules
# (aot.c_target_like, what export-c builds; codegen/c.py is also checked kernel by kernel in
# tests/codegen/test_codegen_c.py) run under -m slow to keep the default suite short; so does the
# llvm sweep over every sample (the default suite runs each op's first sample on AOT in
# tests/op/test_conformance.py)
@pytest.mark.slow
@pytest.mark.parametrize("target", ["llvm", "c-like-llvm"])
@pytest.mark.parametrize("ops", list(_chunks()))
def test_op_samples_match_reference(ops, target):
    cases = [(op, i, s) for op in ops for i, s in enumerate(op.samples(np.random.default_rng(0)))]
    try:
        _check(cases, target)
    except Exception:
        for op in ops:      # name the failing op(s)
            _check([(o, i, s) for o, i, s in cases if o is op], target)
        raise
