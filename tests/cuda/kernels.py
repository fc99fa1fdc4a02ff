"""The CUDA kernels of the registry's ops: every op sample lowered for target "cuda" as the
executors lower a one-op primitive function (its selected implementation and schedule), with
its inputs and numpy reference outputs, for the emulation and PTX tests."""
from dataclasses import dataclass

import numpy as np

import relay_backend as relay
from relay_backend.op import list_ops
from relay_backend.te_compiler.lower import lower_to_primfunc

# float tolerances of the conformance test; exact for integers and bools
TOLERANCE = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-10}


@dataclass
class OpKernel:
    """One op sample's PrimFunc for CUDA, its flat inputs and reference outputs."""

    name: str
    func: object
    inputs: list
    expected: list


def _type_of(value):
    if isinstance(value, (list, tuple)):
        return relay.TupleType([_type_of(v) for v in value])
    value = np.asarray(value)
    return relay.TensorType(value.shape, str(value.dtype))


def _flat(value) -> list:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flat(v)]
    return [np.ascontiguousarray(np.asarray(value))]


def op_kernels(samples_per_op=None, target="cuda") -> list:
    """An OpKernel per op sample (the first `samples_per_op` of each op, or all)."""
    out = []
    for op in list_ops():
        if op.compute is None and op.fstrategy is None:
            continue    # a qnn op: no kernel of its own, the pipeline rewrites it to basic ops first
        samples = op.samples(np.random.default_rng(0))
        for i, sample in enumerate(samples[:samples_per_op] if samples_per_op else samples):
            name = f"{op.name.replace('.', '_')}_{i}"
            params = [relay.var(f"in{k}", _type_of(v)) for k, v in enumerate(sample.inputs)]
            func = relay.Function(params, op(*params, attrs=sample.attrs)).with_attr("Primitive", 1)
            out.append(OpKernel(name, lower_to_primfunc(func, target, name), _flat(sample.inputs),
                                _flat(op.ref(*sample.inputs, sample.attrs))))
    return out


def check_outputs(name: str, got: list, expected: list) -> None:
    """Each output against its reference with the conformance tolerances."""
    for k, (g, e) in enumerate(zip(got, expected)):
        tol = TOLERANCE.get(str(e.dtype))
        what = f"{name} output {k}"
        assert g.shape == e.shape and g.dtype == e.dtype, what
        if tol is None:
            np.testing.assert_array_equal(g, e, err_msg=what)
        else:
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=what)
