"""Registry conformance: every op, every sample.

For each sample the op's type relation (through InferType) must agree with the shape and dtype of
its numpy reference, and every available executor must reproduce the reference. A new op is
tested with no new test code; a new executor is tested on every op by adding it to EXECUTORS.
An op whose output shape depends on its input values (a shape_func, e.g. the dyn.* ops) has Any
dims where the reference has sizes; the graph and AOT executors refuse it (they plan memory for
static shapes) and must say so.

The interpreter runs every sample in the default suite; the graph executor and the VM run each
op's first sample_cases.COMPILED_BY_DEFAULT sample(s) there, and every other sample, AOT's and the JIT's runs
under `-m slow`, which CI also runs, so the default suite stays within its time budget as the op
set grows.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import CompileError
from relay_backend.op import list_ops
from relay_backend.runtime.container import ADT

from .sample_cases import sample_params

EXECUTORS = ["debug", "graph", "aot", "vm"]
STATIC_SHAPE_EXECUTORS = ("graph", "aot")   # reject an op whose output shape depends on data
TOLERANCE = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-10}


# AOT (target llvm) links the graph executor's kernels and the JIT compiles them the same way:
# outside `-m slow` the graph executor and the VM stand for the compiled paths
ALL_SAMPLES_SLOW = ("aot", "jit")


def _cases(compiled=False, kind=None):
    ops = [op for op in list_ops() if not op.user_defined]   # a test fixture's op has no samples
    return sample_params(ops, compiled=compiled, slow_all=kind in ALL_SAMPLES_SLOW)


def _executor_cases():
    for kind in EXECUTORS:
        for case in _cases(compiled=kind != "debug", kind=kind):
            yield pytest.param(kind, *case.values, id=f"{case.id}-{kind}", marks=case.marks)


def _type_of(value):
    if isinstance(value, (list, tuple)):
        return relay.TupleType([_type_of(v) for v in value])
    value = np.asarray(value)
    return relay.TensorType(value.shape, str(value.dtype))


def _flatten(value):
    if isinstance(value, (list, tuple, ADT)):
        return [x for v in value for x in _flatten(v)]
    return [value.numpy() if hasattr(value, "numpy") else np.asarray(value)]


def _build(op, sample):
    params = [relay.var(f"in{i}", _type_of(v)) for i, v in enumerate(sample.inputs)]
    call = op(*params, attrs=sample.attrs)
    return relay.IRModule.from_expr(relay.Function(params, call))


def _assert_close(actual, expected, what):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    if expected.dtype.kind == "f":
        tol = TOLERANCE[str(expected.dtype)]
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_relation_matches_reference(op, sample):
    mod = relay.transform.InferType()(_build(op, sample))
    ref = op.ref(*sample.inputs, sample.attrs)
    ref_type = _type_of(ref)
    inferred = mod["main"].body.checked_type
    if op.shape_func is not None:
        # a data-dependent output shape: the relation leaves Any dims, the shape function gives
        # the run-time type from the input values
        assert _fits(inferred, ref_type), f"{op.name}: relation says {inferred}, reference gives {ref_type}"
        inferred = op.shape_func(sample.attrs, [np.asarray(v) for v in sample.inputs])
        assert inferred == ref_type, f"{op.name}: shape func says {inferred}, reference gives {ref_type}"
    assert inferred == ref_type, f"{op.name}: relation says {inferred}, reference gives {ref_type}"


def _fits(static, concrete) -> bool:
    """`concrete` is an instance of `static` (an Any dim of static matches every size)."""
    if isinstance(static, relay.TupleType):
        return (isinstance(concrete, relay.TupleType) and len(static.fields) == len(concrete.fields)
                and all(_fits(s, c) for s, c in zip(static.fields, concrete.fields)))
    return (static.dtype == concrete.dtype and len(static.shape) == len(concrete.shape)
            and all(relay.ir.types.is_any(s) or s == c for s, c in zip(static.shape, concrete.shape)))


@pytest.mark.parametrize("kind,op,sample", list(_executor_cases()))
def test_executor_matches_reference(kind, op, sample):
    mod = _build(op, sample)
    # A tuple-typed input is given as a list in the sample; executors take tuples for tuples.
    args = [tuple(v) if isinstance(v, list) else v for v in sample.inputs]
    if op.shape_func is not None and kind in STATIC_SHAPE_EXECUTORS:
        with pytest.raises(CompileError, match="needs static shapes"):
            relay.create_executor(kind, mod=mod).evaluate()(*args)
        return
    out = relay.create_executor(kind, mod=mod).evaluate()(*args)
    expected = _flatten(op.ref(*sample.inputs, sample.attrs))
    actual = _flatten(out)
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        _assert_close(a, np.asarray(e), f"{op.name} output {i} on {kind}")


def _flat_types(ty):
    if isinstance(ty, relay.TupleType):
        return [t for f in ty.fields for t in _flat_types(f)]
    return [ty]


def _compiled_cases():
    """The cases of ops with a compute of their own: a qnn op has none (as in TVM), the
    default pipeline rewrites it to basic ops first (relay.qnn.transform.CanonicalizeOps)."""
    return [c for c in _cases(compiled=True, kind="jit")
            if c.values[0].compute is not None or c.values[0].fstrategy is not None]


@pytest.mark.compile
@pytest.mark.parametrize("op,sample", _compiled_cases())
def test_jit_matches_reference(op, sample):
    """The op compiled alone (TECompiler.jit: compute -> schedule -> tir -> LLVM) matches its ref."""
    from relay_backend.backend import te_compiler
    mod = relay.transform.InferType()(_build(op, sample))
    func = mod["main"].with_attr("Primitive", 1)
    relay.transform.InferTypeLocal(func)
    kernel = te_compiler.get().jit(func, "llvm")
    inputs = [relay.nd.array(v) for v in _flatten(list(sample.inputs))]
    out_type = func.body.checked_type
    if op.shape_func is not None:   # Any dims: the run-time shape comes from the input values
        out_type = op.shape_func(sample.attrs, [np.asarray(v) for v in sample.inputs])
    outputs = [relay.nd.empty(t.shape, t.dtype) for t in _flat_types(out_type)]
    kernel(*inputs, *outputs)
    expected = _flatten(op.ref(*sample.inputs, sample.attrs))
    # a data-dependent output is allocated with the reference's shape (the VM's shape function)
    outputs = [relay.nd.empty(np.shape(e) if t.is_dynamic else t.shape, t.dtype)
               for t, e in zip(_flat_types(func.body.checked_type), expected)]
    kernel(*inputs, *outputs)
    for i, (a, e) in enumerate(zip(outputs, expected)):
        _assert_close(a.numpy(), np.asarray(e), f"{op.name} output {i} compiled with llvm")
