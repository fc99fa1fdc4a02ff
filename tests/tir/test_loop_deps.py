"""The loop-independence check (tir/loop_deps.py) that licenses `omp simd` in the C backend:
it accepts a store per iteration read back at the same index and rejects every pattern with a
cross-iteration dependence."""
from relay_backend import tir
from relay_backend.tir.loop_deps import iterations_independent


def test_iterations_independent_proves_only_what_holds():
    """tir.loop_deps (the C backend's `omp simd` licence): a store per iteration, read back at
    the same index, is independent; a store to one element, a read of another iteration's
    element or a non-injective index is not."""
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
