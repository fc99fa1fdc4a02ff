"""Helpers for the VM tests: the debug interpreter as the oracle, and value converters."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.interpreter import ConstructorValue
from relay_backend.runtime.container import ADT
from relay_backend.runtime.ndarray import NDArray


def to_python(value):
    """NDArray -> numpy; ADT / ConstructorValue -> (tag, [fields]) recursively (tuples: tag 0)."""
    if isinstance(value, NDArray):
        return value.numpy()
    if isinstance(value, (ADT, ConstructorValue)):
        return (value.tag, [to_python(f) for f in value.fields])
    raise AssertionError(f"unexpected value {value!r}")


def assert_same(actual, expected, rtol=1e-5, atol=1e-6):
    """Tensors equal within rtol/atol (exact for ints), ADTs equal tag by tag."""
    a, e = to_python(actual), to_python(expected)

    def check(x, y, path):
        if isinstance(y, tuple):
            assert isinstance(x, tuple) and x[0] == y[0] and len(x[1]) == len(y[1]), f"{path}: {x} != {y}"
            for i, (xf, yf) in enumerate(zip(x[1], y[1])):
                check(xf, yf, f"{path}.{i}")
        else:
            assert x.shape == y.shape and x.dtype == y.dtype, f"{path}: {x.shape} {x.dtype} != {y.shape} {y.dtype}"
            if y.dtype.kind == "f":
                np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=path)
            else:
                np.testing.assert_array_equal(x, y, err_msg=path)
    check(a, e, "result")


def run_both(mod, *args, params=None):
    """(vm result, debug-interpreter result) of main on args."""
    vm_out = relay.create_executor("vm", mod=mod, params=params).evaluate()(*args)
    ref = relay.create_executor("debug", mod=mod, params=params).evaluate()(*args)
    return vm_out, ref


@pytest.fixture
def rng():
    return np.random.default_rng(0)
