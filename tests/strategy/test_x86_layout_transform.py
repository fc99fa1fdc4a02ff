"""layout_transform.x86 (strategy/x86_layout_transform.py): into and out of channel-blocked
layouts at odd sizes against numpy reshapes/transposes written here, with a fused elementwise
consumer, and selected above the generic schedule."""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.op.registry import get as get_op
from relay_backend.te_compiler.select import select_implementation

from .test_x86 import _run_impl, _types

pytestmark = pytest.mark.compile


def _blocked(x, block):
    """NCHW -> NCHW{block}c by numpy."""
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2))


def _add_one(out):
    return [te.compute(out.shape, lambda *i: out[i] + tir.const(1.0, out.dtype), name="plus_one")], []


@pytest.mark.parametrize("shape,src,dst,block", [
    ((1, 16, 7, 9), "NCHW", "NCHW8c", 8),
    ((2, 12, 5, 13), "NCHW", "NCHW4c", 4),
    ((1, 24, 11, 6), "NCHW", "NCHW8c", 8),
])
def test_blocking_and_unblocking(shape, src, dst, block):
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    attrs = get_op("layout_transform").attrs_type(src, dst)
    got = _run_impl("layout_transform", "layout_transform.x86", [x], attrs)
    np.testing.assert_array_equal(got, _blocked(x, block))
    back = get_op("layout_transform").attrs_type(dst, src)
    np.testing.assert_array_equal(_run_impl("layout_transform", "layout_transform.x86", [got], back, _add_one), x + 1)


def test_selected_above_generic():
    op = get_op("layout_transform")
    attrs = op.attrs_type("NCHW", "NCHW8c")
    x = np.zeros((1, 16, 4, 4), "float32")
    impl, _ = select_implementation(op, attrs, [te.placeholder(x.shape, "float32")], op.rel(_types([x]), attrs),
                                    "llvm", use_autotvm=False)
    assert impl.name == "layout_transform.x86"
