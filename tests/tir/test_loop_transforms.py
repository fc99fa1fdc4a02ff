"""Loop unswitching (tir/unswitch.py) and the loop-independence check (tir/loop_deps.py): a Select whose condition only involves outer loop
variables becomes an IfThenElse around specialized copies of the inner loop; conditions on
the inner loop, on buffer values or on shape variables alone stay; results are unchanged
(the tir interpreter against numpy)."""
import numpy as np

from relay_backend import te, tir
from relay_backend.tir.unswitch import unswitch_loops


def _kinds(func):
    return [type(n).__name__ for n in tir.functor.walk(func.body)]


def _concat_func(sizes, width=5):
    """out = concatenate(inputs, axis=0) as one Select chain (concatenate's compute)."""
    ins = [te.placeholder((s, width), name=f"a{k}") for k, s in enumerate(sizes)]

    def body(i, j):
        value, offset = ins[-1][i - sum(sizes[:-1]), j], sum(sizes[:-1])
        for k in reversed(range(len(sizes) - 1)):
            offset -= sizes[k]
            value = tir.Select(i < offset + sizes[k], ins[k][tir.min(tir.max(i - offset, 0), sizes[k] - 1), j],
                               value)
        return value
    out = te.compute((sum(sizes), width), body, name="out")
    s = te.create_schedule(out)
    s[out].vectorize(out.op.axis[1])
    return te.lower(s, ins + [out], name="concat"), ins


def test_concat_select_chain_is_unswitched_and_exact():
    func, ins = _concat_func([2, 3, 1])
    assert "Select" not in _kinds(func) and _kinds(func).count("IfThenElse") == 2
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((s, 5)).astype("float32") for s in (2, 3, 1)]
    out = np.zeros((6, 5), "float32")
    tir.interp.run(func, *arrays, out)
    np.testing.assert_array_equal(out, np.concatenate(arrays, axis=0))


def _loop_with_select(cond_of):
    n = tir.Var("n")
    A = tir.Buffer("A", (4, 8), "float32")
    B = tir.Buffer("B", (4, 8), "float32")
    i, j = tir.Var("i"), tir.Var("j")
    value = tir.Select(cond_of(i, j, A, n), A[i, j], tir.const(0.0))
    body = tir.For(i, 0, 4, "serial", tir.For(j, 0, 8, "vectorized", tir.BufferStore(B, value, (i, j))))
    return tir.PrimFunc([A, B], body, attrs={"n_is": n})


def test_inner_varying_buffer_and_shape_only_conditions_stay():
    for cond in (lambda i, j, A, n: j < 3,                  # varies in the inner loop
                 lambda i, j, A, n: A[i, 0] > 0.0,          # reads a buffer
                 lambda i, j, A, n: n > 2):                 # no loop variable
        func = unswitch_loops(_loop_with_select(cond))
        assert "Select" in _kinds(func) and "IfThenElse" not in _kinds(func)


def test_outer_condition_moves_out_of_the_inner_loop():
    func = unswitch_loops(_loop_with_select(lambda i, j, A, n: i > 1))
    assert "Select" not in _kinds(func)
    outer = func.body
    assert isinstance(outer, tir.For) and isinstance(outer.body, tir.IfThenElse)
    a = np.arange(32, dtype="float32").reshape(4, 8)
    b = np.full((4, 8), -1.0, "float32")
    tir.interp.run(func, a, b)
    np.testing.assert_array_equal(b, np.where(np.arange(4)[:, None] > 1, a, 0))


def test_branch_budget_bounds_the_copies():
    A = tir.Buffer("A", (6, 4), "float32")
    B = tir.Buffer("B", (6, 4), "float32")
    i, j = tir.Var("i"), tir.Var("j")
    value = A[5, j]
    for k in reversed(range(5)):
        value = tir.Select(i < k + 1, A[k, j], value)
    func = tir.PrimFunc([A, B], tir.For(i, 0, 6, "serial", tir.For(j, 0, 4, "serial",
                                                                     tir.BufferStore(B, value, (i, j)))))
    assert _kinds(unswitch_loops(func)).count("IfThenElse") == 5
    limited = unswitch_loops(func, max_branches=2)
    assert _kinds(limited).count("IfThenElse") == 2 and "Select" in _kinds(limited)
    a = np.arange(24, dtype="float32").reshape(6, 4)
    for f in (unswitch_loops(func), limited):
        b = np.zeros((6, 4), "float32")
        tir.interp.run(f, a, b)
        np.testing.assert_array_equal(b, a)


def test_iterations_independent_proves_only_what_holds():
    """tir.loop_deps (the C backend's `omp simd` licence): a store per iteration, read back at
    the same index, is independent; a store to one element, a read of another iteration's
    element or a non-injective index is not."""
    from relay_backend.tir.loop_deps import iterations_independent
    A = tir.Buffer("A", (8,), "float32")
    acc = tir.Buffer("acc", (2, 8), "float32")
    i = tir.Var("i")

    def loop(store):
        return tir.For(i, 0, 8, "vectorized", store)
    assert iterations_independent(loop(tir.BufferStore(acc, acc[1, i] + A[i] * 2.0, (1, i))))
    assert not iterations_independent(loop(tir.BufferStore(acc, acc[1, 0] + A[i], (1, 0))))     # one element
    assert not iterations_independent(loop(tir.BufferStore(acc, acc[1, i - 1] + A[i], (1, i))))  # neighbour
    assert not iterations_independent(loop(tir.BufferStore(acc, A[i], (1, i // 2))))            # i // 2 collides
    assert not iterations_independent(loop(tir.BufferStore(acc, A[i], (i, i))))                  # two dims move
