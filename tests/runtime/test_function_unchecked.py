"""runtime.Function.unchecked(): the public zero-check call path executors use for
static-shape kernels (the VM used to reach into Function._native / .info for it).
Results are compared with numpy exactly (integer and exactly representable float math)."""
import numpy as np
import pytest

from relay_backend.errors import InputError
from relay_backend.runtime import nd

from .kernels import add3_and_scale as _module

pytestmark = pytest.mark.compile


def test_unchecked_call_matches_numpy_on_fresh_arrays_each_call():
    fn = _module()["add3"]
    assert fn.is_static
    run = fn.unchecked()
    rng = np.random.default_rng(0)
    for _ in range(3):                       # unlike prepare(), the arrays change per call
        a, b = rng.integers(-50, 50, (2, 3, 4)).astype("float32")
        out = nd.empty((3, 4), "float32")
        run(nd.array(a), nd.array(b), out)
        np.testing.assert_array_equal(out.numpy(), a + b)


def test_unchecked_with_a_wrong_argument_count_still_raises():
    run = _module()["add3"].unchecked()
    with pytest.raises(InputError, match="expected 3 arguments"):
        run(nd.array(np.zeros((3, 4), "float32")))


def test_symbolic_functions_have_no_unchecked_path():
    fn = _module()["scale"]
    assert not fn.is_static
    with pytest.raises(InputError, match="symbolic shape variables"):
        fn.unchecked()


def test_c_functions_keep_their_checked_workspace_call():
    """A subclass with its own calling protocol (C kernels with a workspace) is not bypassed."""
    fn = _module("c")["add3"]
    run = fn.unchecked()
    a = np.arange(12, dtype="float32").reshape(3, 4)
    out = nd.empty((3, 4), "float32")
    run(nd.array(a), nd.array(a), out)
    np.testing.assert_array_equal(out.numpy(), 2 * a)
    with pytest.raises(InputError):
        run(nd.array(a), nd.array(a), nd.empty((4, 3), "float32"))
