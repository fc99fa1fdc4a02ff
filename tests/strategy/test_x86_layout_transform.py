"""layout_transform.x86 (strategy/x86_layout_transform.py): into and out of channel-blocked
layouts at odd sizes against numpy reshapes/transposes written here, with a fused elementwise
consumer, and selected above the generic schedule; out of a blocked layout, the loop nest that
keeps the rows reading one input row in one task (parallel over planes, or over rows when
there are few planes), checked in the tir and against numpy at sizes large enough to run in
parallel."""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.op.registry import get as get_op
from relay_backend.strategy.x86_layout_transform import MIN_PLANE_TASKS, schedule_layout_transform, unblocked_axis
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


@pytest.mark.parametrize("shape,block", [((1, 3, 32, 32), 3), ((1, 3, 224, 224), 3), ((2, 12, 9, 10), 6)])
def test_an_odd_block_is_unrolled_with_the_rows_serial(shape, block):
    """Into NCHW3c / NCHW6c (no vector width divides the block): the block loop is unrolled and
    the pixel loop left to LLVM, rows parallel when large; values as numpy's, also with a
    fused consumer."""
    x = np.random.default_rng(2).standard_normal(shape).astype("float32")
    op = get_op("layout_transform")
    attrs = op.attrs_type("NCHW", f"NCHW{block}c")
    ph = te.placeholder(shape, "float32")
    outs = op.compute(attrs, [ph], op.rel(_types([x]), attrs))
    text = str(te.lower(schedule_layout_transform(attrs, outs, "llvm"), [ph] + outs, "k"))
    assert f"in unrolled(0, {block}):" in text and "vectorized" not in text, text
    assert ("parallel" in text) == (x.size >= (1 << 16)), text
    np.testing.assert_array_equal(_run_impl("layout_transform", "layout_transform.x86", [x], attrs),
                                  _blocked(x, block))
    np.testing.assert_array_equal(_run_impl("layout_transform", "layout_transform.x86", [x], attrs, _add_one),
                                  _blocked(x, block) + 1)


def test_selected_above_generic():
    op = get_op("layout_transform")
    attrs = op.attrs_type("NCHW", "NCHW8c")
    x = np.zeros((1, 16, 4, 4), "float32")
    impl, _ = select_implementation(op, attrs, [te.placeholder(x.shape, "float32")], op.rel(_types([x]), attrs),
                                    "llvm", use_autotvm=False)
    assert impl.name == "layout_transform.x86"


@pytest.mark.parametrize("shape,block", [
    ((1, 64, 56, 56), 16),       # 4 planes: parallel over planes, 16-lane rows
    ((1, 32, 112, 112), 16),     # 2 planes: parallel over rows
    ((2, 2048, 7, 7), 16),       # a width of 7 stays scalar
    ((1, 48, 30, 36), 8),        # 36 = 4 x 9: 4-lane vectors
])
def test_unblocking_at_parallel_sizes(shape, block):
    x = np.random.default_rng(1).standard_normal(shape).astype("float32")
    op = get_op("layout_transform")
    blocked = _blocked(x, block)
    back = op.attrs_type(f"NCHW{block}c", "NCHW")
    np.testing.assert_array_equal(_run_impl("layout_transform", "layout_transform.x86", [blocked], back), x)
    np.testing.assert_array_equal(
        _run_impl("layout_transform", "layout_transform.x86", [blocked], back, _add_one), x + 1)


def _unblocking_tir(shape, block):
    op = get_op("layout_transform")
    attrs = op.attrs_type(f"NCHW{block}c", "NCHW")
    n, c, h, w = shape
    data = te.placeholder((n, c // block, h, w, block), "float32", name="data")
    out_type = op.rel(_types([np.zeros(data.shape, "float32")]), attrs)
    (out,) = op.compute(attrs, [data], out_type)
    return str(te.lower(schedule_layout_transform(attrs, [out], "llvm"), [data, out], "unblock"))


def test_unblocking_loop_nest():
    assert unblocked_axis(get_op("layout_transform").attrs_type("NCHW16c", "NCHW")) == (1, 16)
    assert unblocked_axis(get_op("layout_transform").attrs_type("NCHW", "NCHW16c")) is None
    planes = _unblocking_tir((1, 16 * MIN_PLANE_TASKS, 56, 56), 16).splitlines()
    loops = [line.strip() for line in planes if line.strip().startswith("for ")]
    assert "parallel(0, 4)" in loops[0] and "range(0, 56)" in loops[1]      # planes, then rows
    assert ".inner in range(0, 16)" in loops[2] and "range(0, 16)" in loops[2]             # 16 rows per input row
    assert "vectorized(0, 8)" in loops[-1]
    rows = [line.strip() for line in _unblocking_tir((1, 32, 112, 112), 16).splitlines()
            if line.strip().startswith("for ")]
    assert "parallel(0, 224)" in rows[0] and ".inner in range(0, 16)" in rows[1]          # 2 planes x 112 rows
