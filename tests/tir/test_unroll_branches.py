"""tir/unroll_branches.py: an unrolled loop whose variable picks the buffer a Select reads is
expanded into copies whose Selects fold (before/expected through the printer, and the same
results as the original in the tir interpreter); other loops are left alone."""
import numpy as np

from relay_backend import tir
from relay_backend.tir.unroll_branches import MAX_COPIES, expand_branching_unrolled


def _concat_func(kind="unrolled", sizes=(3, 6), group=3):
    """out[c, j] = a[c, j] if c < 3 else b[c - 3, j], with c = g * group + ci and the g loop
    of kind `kind` (a concatenation of a (3, 5) and a (6, 5) buffer split into groups)."""
    first, second = sizes
    a = tir.decl_buffer((first, 5), name="a")
    b = tir.decl_buffer((second, 5), name="b")
    out = tir.decl_buffer((first + second, 5), name="out")
    g, ci, j = tir.Var("g"), tir.Var("ci"), tir.Var("j")
    c = g * group + ci
    value = tir.Select(c < first, tir.BufferLoad(a, [tir.min(c, first - 1), j]),
                       tir.BufferLoad(b, [tir.max(c - first, 0), j]))
    body = tir.For(ci, 0, group, "serial", tir.For(j, 0, 5, "serial", tir.BufferStore(out, value, [c, j])))
    loop = tir.For(g, 0, (first + second) // group, kind, body)
    return tir.PrimFunc([a, b, out], loop, "concat"), (first, second)


def _run(func, sizes):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((sizes[0], 5)).astype("float32")
    b = rng.standard_normal((sizes[1], 5)).astype("float32")
    out = np.zeros((sum(sizes), 5), "float32")
    tir.interp.run(func, a, b, out)
    return out, np.concatenate([a, b])


def test_unrolled_group_loop_becomes_one_plain_nest_per_group():
    func, sizes = _concat_func()
    expanded = tir.simplify(expand_branching_unrolled(func))
    text = tir.func_to_str(expanded)
    assert "select" not in text and "unrolled" not in text
    expected = "\n".join([
        "  for ci in range(0, 3):",
        "    for j in range(0, 5):",
        "      out[ci, j] = a[ci, j]",
        "  for ci in range(0, 3):",
        "    for j in range(0, 5):",
        "      out[(ci + 3), j] = b[ci, j]",
        "  for ci in range(0, 3):",
        "    for j in range(0, 5):",
        "      out[(ci + 6), j] = b[(ci + 3), j]"])
    assert expected in text, text
    got, want = _run(expanded, sizes)
    np.testing.assert_array_equal(got, want)


def test_loops_that_do_not_qualify_are_left_alone():
    serial, _ = _concat_func(kind="serial")
    assert expand_branching_unrolled(serial) is serial
    too_many, _ = _concat_func(sizes=(MAX_COPIES, MAX_COPIES + 2), group=1)   # 130 copies
    assert expand_branching_unrolled(too_many) is too_many
    # a Select over constants (no buffer read in a branch) does not make a loop expand
    out = tir.decl_buffer((4,), name="out")
    k = tir.Var("k")
    loop = tir.For(k, 0, 4, "unrolled", tir.BufferStore(out, tir.Select(k < 2, tir.const(1.0), tir.const(2.0)), [k]))
    assert expand_branching_unrolled(loop) is loop


def test_expanded_copies_agree_with_the_original_when_groups_straddle_inputs():
    # group 2 over extents (3, 6): one group crosses the boundary, so its Select stays, per copy
    func, sizes = _concat_func(sizes=(4, 6), group=2)
    expanded = tir.simplify(expand_branching_unrolled(func))
    got, want = _run(expanded, sizes)
    np.testing.assert_array_equal(got, want)
    crossing, sizes = _concat_func(sizes=(3, 6), group=2)
    func = tir.PrimFunc(crossing.params, tir.For(crossing.body.loop_var, 0, 4, "unrolled", crossing.body.body),
                        "partial")   # 4 groups of 2 cover 8 of the 9 rows
    expanded = tir.simplify(expand_branching_unrolled(func))
    assert "select" in tir.func_to_str(expanded)     # the group holding rows 2 and 3 still chooses
    got, want = _run(expanded, sizes)
    np.testing.assert_array_equal(got[:8], want[:8])
