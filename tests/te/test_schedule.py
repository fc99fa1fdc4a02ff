"""Schedule primitives: every schedule must keep the numbers (tir interpreter vs numpy,
float32 within 1e-5) and shape the loop nest as asked (checked on the printed PrimFunc)."""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.errors import CompileError
from .te_helpers import rand, run_lowered

TOL = dict(rtol=1e-5, atol=1e-5)


def _matmul(n=10, m=7, K=9):
    A = te.placeholder((n, K), name="A")
    B = te.placeholder((K, m), name="B")
    k = te.reduce_axis((0, K), "k")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C, rand(n, K), rand(K, m, seed=1)


def _loops(func):
    return [line.strip() for line in func.script().splitlines() if line.strip().startswith("for")]


@pytest.mark.parametrize("factor", [2, 3, 4, 10, 16])
def test_split_any_factor(factor):
    A = te.placeholder((10,), name="A")
    B = te.compute((10,), lambda i: A[i] * 3.0, name="B")
    s = te.create_schedule(B)
    s[B].split(B.op.axis[0], factor=factor)
    a = rand(10)
    (b,), func = run_lowered(s, [A, B], [a])
    np.testing.assert_allclose(b, a * 3, **TOL)
    assert ("if" in func.script()) == (10 % factor != 0)    # guard only when not dividing


def test_split_nparts_and_nested_split_of_reduction():
    A, B, C, a, b = _matmul()
    s = te.create_schedule(C)
    i, j = C.op.axis
    (k,) = C.op.reduce_axis
    io, ii = s[C].split(i, nparts=3)
    ko, ki = s[C].split(k, factor=4)
    kio, kii = s[C].split(ki, factor=3)    # 4 is not a multiple of 3: nested guard
    s[C].reorder(io, ko, j, ii, kio, kii)
    (c,), func = run_lowered(s, [A, B, C], [a, b])
    np.testing.assert_allclose(c, a @ b, **TOL)


def test_reorder_reduce_outer_keeps_init_before_update():
    A, B, C, a, b = _matmul()
    s = te.create_schedule(C)
    i, j = C.op.axis
    (k,) = C.op.reduce_axis
    s[C].reorder(k, i, j)
    (c,), func = run_lowered(s, [A, B, C], [a, b])
    np.testing.assert_allclose(c, a @ b, **TOL)
    assert _loops(func)[:3] == ["for i in range(0, 10):", "for j in range(0, 7):",
                                "for k in range(0, 9):"]


def test_tile_with_non_dividing_factors():
    A, B, C, a, b = _matmul(n=10, m=7)
    s = te.create_schedule(C)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 3)
    (c,), func = run_lowered(s, [A, B, C], [a, b])
    np.testing.assert_allclose(c, a @ b, **TOL)
    assert _loops(func)[:4] == ["for i.outer in range(0, 3):", "for j.outer in range(0, 3):",
                                "for i.inner in range(0, 4):", "for j.inner in range(0, 3):"]


def test_fuse_then_split_and_annotations():
    A = te.placeholder((6, 5), name="A")
    B = te.compute((6, 5), lambda i, j: A[i, j] + 1.0, name="B")
    s = te.create_schedule(B)
    fused = s[B].fuse(*B.op.axis)
    fo, fi = s[B].split(fused, factor=8)
    s[B].parallel(fo)
    s[B].vectorize(fi)
    a = rand(6, 5)
    (b,), func = run_lowered(s, [A, B], [a])
    np.testing.assert_allclose(b, a + 1, **TOL)
    assert _loops(func) == ["for i.j.fused.outer in parallel(0, 4):",
                            "for i.j.fused.inner in vectorized(0, 8):"]


def test_unroll_and_bind():
    A = te.placeholder((12,), name="A")
    B = te.compute((12,), lambda i: A[i] - 1.0, name="B")
    s = te.create_schedule(B)
    bx, tx = s[B].split(B.op.axis[0], factor=4)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, te.thread_axis("threadIdx.x"))
    a = rand(12)
    (b,), func = run_lowered(s, [A, B], [a])
    np.testing.assert_allclose(b, a - 1, **TOL)
    text = func.script()
    assert "thread('blockIdx.x', 0, 3)" in text and "thread('threadIdx.x', 0, 4)" in text
    s2 = te.create_schedule(B)
    s2[B].unroll(s2[B].split(B.op.axis[0], factor=3)[1])
    assert "unrolled(0, 3)" in te.lower(s2, [A, B]).script()


def test_compute_inline_chain():
    A = te.placeholder((4, 6), name="A")
    B = te.compute((4, 6), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((4, 6), lambda i, j: te.exp(B[i, j]) + 1.0, name="C")
    D = te.compute((6, 4), lambda i, j: C[j, i] - B[j, i], name="D")
    s = te.create_schedule(D)
    s[B].compute_inline()
    s[C].compute_inline()
    a = rand(4, 6)
    (d,), func = run_lowered(s, [A, D], [a])
    np.testing.assert_allclose(d, (np.exp(2 * a) + 1 - 2 * a).T, **TOL)
    text = func.script()
    assert "allocate" not in text and len(_loops(func)) == 2


def test_root_intermediate_is_allocated():
    A = te.placeholder((5,), name="A")
    B = te.compute((5,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((5,), lambda i: B[i] + B[4 - i], name="C")
    a = rand(5)
    (c,), func = run_lowered(te.create_schedule(C), [A, C], [a])
    np.testing.assert_allclose(c, 2 * a + 2 * a[::-1], **TOL)
    assert "B = allocate((5), 'float32', scope='global')" in func.script()


def test_compute_at_computes_only_the_needed_region():
    A = te.placeholder((10, 8), name="A")
    B = te.compute((10, 8), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((10, 8), lambda i, j: B[i, j] * B[i, j], name="C")
    s = te.create_schedule(C)
    io, ii = s[C].split(C.op.axis[0], factor=4)     # 10 = 4 + 4 + 2: the last block is partial
    s[B].compute_at(s[C], io)
    a = rand(10, 8)
    (c,), func = run_lowered(s, [A, C], [a])
    np.testing.assert_allclose(c, (a + 1) ** 2, **TOL)
    text = func.script()
    assert "B = allocate((4, 8), 'float32', scope='global')" in text
    assert text.index("for i.outer") < text.index("allocate") < text.index("for i.inner")


def test_compute_at_stencil_region():
    A = te.placeholder((12,), name="A")
    B = te.compute((12,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((10,), lambda i: B[i] + B[i + 2], name="C")
    s = te.create_schedule(C)
    xo, xi = s[C].split(C.op.axis[0], factor=5)
    s[B].compute_at(s[C], xo)
    a = rand(12)
    (c,), func = run_lowered(s, [A, C], [a])
    np.testing.assert_allclose(c, 2 * a[:10] + 2 * a[2:], **TOL)
    assert "allocate((7)" in func.script()      # 5 outputs need 7 inputs


def test_cache_write_accumulates_locally():
    A, B, C, a, b = _matmul(n=8, m=6, K=5)
    s = te.create_schedule(C)
    CL = s.cache_write(C, "local")
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 4, 3)
    s[CL].compute_at(s[C], yo)
    (k,) = s[CL].op.reduce_axis
    s[CL].reorder(k, *CL.op.axis)
    (c,), func = run_lowered(s, [A, B, C], [a, b])
    np.testing.assert_allclose(c, a @ b, **TOL)
    assert "C.local = allocate((4, 3), 'float32', scope='local')" in func.script()


def test_schedule_errors():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    k = te.reduce_axis((0, 8), "k")
    R = te.compute((1,), lambda i: te.sum(A[k], axis=k), name="R")
    s = te.create_schedule([B, R])
    i = B.op.axis[0]
    s[B].split(i, factor=2)
    with pytest.raises(CompileError, match="not a current leaf axis"):
        s[B].split(i, factor=2)
    with pytest.raises(CompileError, match="reduction or has several outputs"):
        s[R].compute_inline()
    with pytest.raises(CompileError, match="placeholder"):
        s[A].split(A.op.shape and i, factor=2)
    with pytest.raises(CompileError, match="exactly one of factor= or nparts="):
        s[R].split(k, factor=2, nparts=2)
    with pytest.raises(CompileError, match="output of the schedule"):
        s[B].compute_inline()


def test_long_inline_chain_has_no_recursion_limit():
    A = te.placeholder((3,), name="A")
    t, chain = A, []
    for k in range(400):
        t = te.compute((3,), lambda i, t=t: t[i] + 1.0, name=f"T{k}")
        chain.append(t)
    s = te.create_schedule(t)
    for c in chain[:-1]:
        s[c].compute_inline()
    a = rand(3)
    (out,), _ = run_lowered(s, [A, t], [a])
    np.testing.assert_allclose(out, a + 400, rtol=1e-5)


def _split_kernel(n, factor=None, nparts=None):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 3.0 + 1.0, name="B")
    s = te.create_schedule(B)
    s[B].split(B.op.axis[0], factor=factor, nparts=nparts)
    return s, A, B


def test_split_nparts_whose_factor_divides_but_overshoots_is_guarded():
    # extent 6, nparts=4: inner extent ceil(6/4) = 2 divides 6, but 4 x 2 = 8 > 6
    s, A, B = _split_kernel(6, nparts=4)
    a = rand(6)
    (b,), func = run_lowered(s, [A, B], [a])          # the tir interpreter checks bounds
    np.testing.assert_allclose(b, a * 3 + 1, **TOL)
    assert "if" in func.script()
    s, A, B = _split_kernel(6, nparts=3)               # 3 x 2 == 6: exact, no guard
    assert "if" not in te.lower(s, [A, B]).script()


@pytest.mark.compile
def test_split_nparts_overshoot_compiled_writes_nothing_past_the_output():
    from relay_backend.codegen import build
    from relay_backend.runtime import nd
    from relay_backend.runtime.ndarray import NDArray, aligned_empty
    s, A, B = _split_kernel(6, nparts=4)
    mod = build(te.lower(s, [A, B], name="split_np"))
    a = rand(6)
    backing = aligned_empty((16,), "float32")
    backing[:] = -7.0
    out = NDArray(backing[:6], nd.array(a).device)     # the output, followed by sentinels
    mod["split_np"](nd.array(a), out)
    np.testing.assert_allclose(backing[:6], a * 3 + 1, **TOL)
    np.testing.assert_array_equal(backing[6:], -7.0)


def test_split_random_schedules_match_numpy():
    """Property: split by factor or nparts (and a nested split of the inner axis) on random
    extents keeps the numbers exactly and never touches memory out of bounds."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import given, settings, strategies as hs

    @settings(max_examples=60, deadline=None)
    @given(n=hs.integers(1, 20), by=hs.sampled_from(["factor", "nparts"]),
           amount=hs.integers(1, 24), inner=hs.one_of(hs.none(), hs.integers(1, 6)))
    def check(n, by, amount, inner):
        A = te.placeholder((n, 3), name="A")
        B = te.compute((n, 3), lambda i, j: A[i, j] * 2.0 - 1.0, name="B")
        s = te.create_schedule(B)
        outer, inn = s[B].split(B.op.axis[0], **{by: amount})
        if inner is not None:
            s[B].split(inn, factor=inner)
        a = rand(n, 3)
        (b,), _ = run_lowered(s, [A, B], [a])
        np.testing.assert_array_equal(b, a * 2 - 1)

    check()


def test_reduction_axis_bound_to_a_thread_is_a_cross_thread_reduction():
    """k split by 4, k.inner bound to threadIdx.x: each thread accumulates a partial sum in a
    local buffer and a ThreadAllReduce combines them (serially: one thread, same sums)."""
    A, B, C, a, b = _matmul()
    s = te.create_schedule(C)
    (k,) = C.op.reduce_axis
    ko, ki = s[C].split(k, factor=4)
    s[C].reorder(*C.op.axis, ki, ko)
    s[C].bind(ki, te.thread_axis("threadIdx.x"))
    func = te.lower(s, [A, B, C], "mm")
    reduces = [n for n in tir.walk(func.body) if isinstance(n, tir.ThreadAllReduce)]
    assert len(reduces) == 1 and reduces[0].thread_tag == "threadIdx.x"
    assert "allreduce_sum" in func.script()
    (c,), _ = run_lowered(s, [A, B, C], [a, b])
    np.testing.assert_allclose(c, a @ b, **TOL)
    s2 = te.create_schedule(C)
    ko, ki = s2[C].split(C.op.reduce_axis[0], factor=4)
    s2[C].bind(ki, te.thread_axis("threadIdx.x"))
    s2[C].reorder(C.op.axis[0], ko, ki, C.op.axis[1])
    with pytest.raises(CompileError, match="data axes .* inside its reduction loops"):
        te.lower(s2, [A, B, C], "mm")


@pytest.mark.parametrize("how", ["parallel", "bind", "fused"])
def test_parallel_or_bind_on_a_reduction_axis_is_rejected(how):
    A, B, C, a, b = _matmul()
    s = te.create_schedule(C)
    (k,) = C.op.reduce_axis
    ko, ki = s[C].split(k, factor=3)
    if how == "parallel":
        with pytest.raises(CompileError, match=r"parallel on stage C: axis 'k.outer' is a "
                                               r"reduction axis.*race"):
            s[C].parallel(ko)
    elif how == "bind":     # across blocks (no cross-block reduction); threadIdx is allowed
        with pytest.raises(CompileError, match=r"bind on stage C: axis 'k.outer' is a "
                                               r"reduction axis"):
            s[C].bind(ko, te.thread_axis("blockIdx.x"))
    else:
        fused = s[C].fuse(ko, ki)
        with pytest.raises(CompileError, match=r"stage C: axis 'k.outer.k.inner.fused' is a "
                                               r"reduction axis"):
            s[C].parallel(fused)
    s[C].parallel(C.op.axis[0])                         # a data axis is fine
    (c,), _ = run_lowered(s, [A, B, C], [a, b])
    np.testing.assert_allclose(c, a @ b, **TOL)


def test_cache_read_shared_covers_the_whole_block():
    """A "shared" cache_read attached inside thread-bound loops covers what every thread of the
    block reads (the threadIdx loops are relaxed), not one thread's slice."""
    A, B, C, a, b = _matmul()
    s = te.create_schedule(C)
    i, j = C.op.axis
    io, ii = s[C].split(i, factor=2)
    s[C].bind(io, te.thread_axis("blockIdx.x"))
    s[C].bind(ii, te.thread_axis("threadIdx.x"))
    AA = s.cache_read(A, "shared", [C])
    s[AA].compute_at(s[C], ii)
    func = te.lower(s, [A, B, C], "mm")
    allocs = [n for n in tir.walk(func.body) if isinstance(n, tir.Allocate) and n.scope == "shared"]
    assert [tuple(int(d.value) for d in n.buffer.shape) for n in allocs] == [(2, int(A.shape[1]))]
    (c,), _ = run_lowered(s, [A, B, C], [a, b])
    np.testing.assert_allclose(c, a @ b, **TOL)
    with pytest.raises(CompileError, match="reader .* is not a compute stage"):
        s.cache_read(B, "shared", [A])


def test_stages_attached_at_one_loop_may_read_each_other():
    """sum reads max, both computed at out's row loop (softmax's structure): max's region covers
    the sibling's reads too."""
    x = te.placeholder((3, 5), "float32", name="x")
    k1, k2 = te.reduce_axis((0, 5), "k1"), te.reduce_axis((0, 5), "k2")
    mx = te.compute((3,), lambda i: te.max(x[i, k1], axis=k1), name="mx")
    sm = te.compute((3,), lambda i: te.sum(x[i, k2] - mx[i], axis=k2), name="sm")
    out = te.compute((3, 5), lambda i, j: x[i, j] - mx[i] + sm[i], name="out")
    s = te.create_schedule(out)
    s[mx].compute_at(s[out], out.op.axis[0])
    s[sm].compute_at(s[out], out.op.axis[0])
    xv = rand(3, 5)
    (got,), _ = run_lowered(s, [x, out], [xv])
    want = xv - xv.max(1, keepdims=True) + (xv - xv.max(1, keepdims=True)).sum(1, keepdims=True)
    np.testing.assert_allclose(got, want, **TOL)
