"""tir/partition_branches.py: a loop marked `partition` is split where its variable changes which
buffer a Select reads, so each piece is a plain loop over one buffer (before/expected through
the printer, the same results as the unpartitioned loop in the tir interpreter); the cut points
of each comparison kind, through a fused loop's floor division, and loops left alone."""
import numpy as np
import pytest

from relay_backend import tir
from relay_backend.tir import expr as E
from relay_backend.tir.partition_branches import PARTITION, cut_points, partition_branching_loops


def _concat_func(sizes=(3, 6), cols=5, fused=False, mark=True):
    """out[c, j] = a[c, j] if c < sizes[0] else b[c - sizes[0], j], the c loop marked
    `partition` (or, fused=True, one loop over f = c * cols + j)."""
    first, second = sizes
    a = tir.decl_buffer((first, cols), name="a")
    b = tir.decl_buffer((second, cols), name="b")
    out = tir.decl_buffer((first + second, cols), name="out")
    notes = {PARTITION: True} if mark else None
    if fused:
        f = tir.Var("f")
        c, j = f // cols, f % cols
    else:
        c, j = tir.Var("c"), tir.Var("j")
    value = tir.Select(c < first, tir.BufferLoad(a, [tir.min(c, first - 1), j]),
                       tir.BufferLoad(b, [tir.max(c - first, 0), j]))
    store = tir.BufferStore(out, value, [c, j])
    if fused:
        loop = tir.For(f, 0, (first + second) * cols, "serial", store, None, notes)
    else:
        loop = tir.For(c, 0, first + second, "serial", tir.For(j, 0, cols, "serial", store), None, notes)
    return tir.PrimFunc([a, b, out], loop, "concat")


def _run(func, sizes, cols=5):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((sizes[0], cols)).astype("float32")
    b = rng.standard_normal((sizes[1], cols)).astype("float32")
    out = np.zeros((sum(sizes), cols), "float32")
    tir.interp.run(func, a, b, out)
    return out, np.concatenate([a, b])


def test_marked_loop_becomes_one_plain_loop_per_buffer():
    func = _concat_func()
    text = tir.func_to_str(tir.simplify(partition_branching_loops(func)))
    assert "select" not in text and "min(" not in text and "max(" not in text, text
    expected = "\n".join([
        "  for c in range(0, 3):",
        "    for j in range(0, 5):",
        "      out[c, j] = a[c, j]",
        "  for c in range(3, 6):",
        "    for j in range(0, 5):",
        "      out[c, j] = b[(c - 3), j]"])
    assert expected in text, text
    got, want = _run(tir.simplify(partition_branching_loops(func)), (3, 6))
    np.testing.assert_array_equal(got, want)


def test_fused_loop_is_cut_through_its_floor_division():
    func = _concat_func(sizes=(2, 3), cols=4, fused=True)
    partitioned = tir.simplify(partition_branching_loops(func))
    text = tir.func_to_str(partitioned)
    assert "select" not in text, text
    assert "for f in range(0, 8):" in text and "for f in range(8, 12):" in text, text
    got, want = _run(partitioned, (2, 3), cols=4)
    np.testing.assert_array_equal(got, want)


def test_unmarked_loops_and_loops_without_branches_are_left_alone():
    plain = _concat_func(mark=False)
    assert partition_branching_loops(plain) is plain
    out = tir.decl_buffer((4,), name="out")
    k = tir.Var("k")
    loop = tir.For(k, 0, 4, "serial", tir.BufferStore(out, tir.Select(k < 2, tir.const(1.0), tir.const(2.0)), [k]),
                   None, {PARTITION: True})
    result = partition_branching_loops(loop)        # constants in both branches: no cut, mark dropped
    assert isinstance(result, tir.For) and result.extent.value == 4 and PARTITION not in result.annotations


@pytest.mark.parametrize("make,want", [
    (lambda k: k < 3, {3}),
    (lambda k: k <= 3, {4}),
    (lambda k: k > 3, {4}),
    (lambda k: k >= 3, {3}),
    (lambda k: E.EQ(k, tir.const(3)), {3, 4}),
    (lambda k: E.NE(k, tir.const(3)), {3, 4}),
    (lambda k: k * 2 < 7, {4}),
    (lambda k: 10 - k < 4, {7}),
    (lambda k: (k * 3 + 1) // 4 < 2, {3}),        # (3k + 1) // 4 < 2  <=>  3k + 1 < 8  <=>  k < 3
    (lambda k: tir.all(k >= 2, k < 5), {2, 5}),
])
def test_cut_points_are_where_each_comparison_changes(make, want):
    k = tir.Var("k")
    buf = tir.decl_buffer((16,), name="x")
    body = tir.Evaluate(tir.Select(make(k), tir.BufferLoad(buf, [k]), tir.const(0.0)))
    points = cut_points(body, k)
    assert want <= points, points
    # and the condition is constant between consecutive cut points (checked by evaluation)
    cond = make(k)
    bounds = sorted(p for p in points if 0 < p < 16)
    for lo, hi in zip([0] + bounds, bounds + [16]):
        values = {bool(tir.simplify(cond, {id(k): (v, v)}).value) for v in range(lo, hi)}
        assert len(values) == 1, (lo, hi, values)


def test_a_piece_whose_condition_depends_on_an_inner_loop_keeps_its_select_and_stays_exact():
    # the chooser compares c * 2 + ci (ci in [0, 2)) with 3: rows 2 and 3 of c = 1 straddle it
    a = tir.decl_buffer((3, 5), name="a")
    b = tir.decl_buffer((5, 5), name="b")
    out = tir.decl_buffer((8, 5), name="out")
    c, ci, j = tir.Var("c"), tir.Var("ci"), tir.Var("j")
    row = c * 2 + ci
    value = tir.Select(row < 3, tir.BufferLoad(a, [tir.min(row, 2), j]), tir.BufferLoad(b, [tir.max(row - 3, 0), j]))
    body = tir.For(ci, 0, 2, "serial", tir.For(j, 0, 5, "serial", tir.BufferStore(out, value, [row, j])))
    func = tir.PrimFunc([a, b, out], tir.For(c, 0, 4, "serial", body, None, {PARTITION: True}), "straddle")
    partitioned = tir.simplify(partition_branching_loops(func))
    text = tir.func_to_str(partitioned)
    assert "for c in range(0, 1):" not in text            # extent-1 pieces are inlined
    assert text.count("select") == 1, text                 # only the straddling piece chooses
    got, want = _run(partitioned, (3, 5))
    np.testing.assert_array_equal(got, want)
