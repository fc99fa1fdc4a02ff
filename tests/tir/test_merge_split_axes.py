"""tir/merge_split_axes.py: accesses `buf[x // c + a, (x % c) * m + b]` whose second axis is c * m
long are rewritten onto one merged axis `m * x + c * m * a + b` of a view sharing the buffer's
data (before/expected through the printer); accesses the identity does not cover are left alone;
random split-and-fused kernels compute the same outputs before and after in the tir
interpreter (which bounds-checks every flat offset)."""
import numpy as np
import pytest

from relay_backend import tir
from relay_backend.tir.merge_split_axes import merge_split_axes


def _copy_func(outer, c, m, a, cols=3, divisor=None, coeff=1):
    """y[x // c, x % c, r, k] = src[coeff * (x // divisor) + a, (x % divisor) * m + r, k] over x
    in [0, outer * c), r in [0, m), k in [0, cols): a fused loop split again, as te lowers one."""
    divisor = divisor or c
    src = tir.decl_buffer((outer * coeff + a, c * m, cols), name="src")
    y = tir.decl_buffer((outer, c, m, cols), name="y")
    x, r, k = tir.Var("x"), tir.Var("r"), tir.Var("k")
    load = tir.BufferLoad(src, [(x // divisor) * coeff + a, (x % divisor) * m + r, k])
    store = tir.BufferStore(y, load, [x // c, x % c, r, k])
    body = tir.For(x, 0, outer * c, "serial",
                   tir.For(r, 0, m, "serial", tir.For(k, 0, cols, "serial", store)))
    return tir.PrimFunc([src, y], body, "copy")


def _merged(func):
    return tir.PrimFunc(func.params, merge_split_axes(func.body), func.name)


def _store_line(func) -> str:
    return next(line.strip() for line in tir.func_to_str(func).splitlines() if " = " in line)


def test_a_concatenation_row_and_its_input_merge():
    # DenseNet's concatenation: out[0, f // 14, f % 14, w, i] = x[0, f // 14 - 16, f % 14, w, i]
    out = tir.decl_buffer((1, 62, 14, 14, 16), name="out")
    src = tir.decl_buffer((1, 2, 14, 14, 16), name="src")
    f, w, i = tir.Var("f"), tir.Var("w"), tir.Var("i")
    store = tir.BufferStore(out, tir.BufferLoad(src, [0, f // 14 - 16, f % 14, w, i]), [0, f // 14, f % 14, w, i])
    merged = merge_split_axes(store)
    assert str(merged).strip() == "out[0, f, w, i] = src[0, (f - 224), w, i]"
    assert merged.buffer.data is out.data and merged.value.buffer.data is src.data
    assert [int(d.value) for d in merged.buffer.shape] == [1, 868, 14, 16]


def test_a_tile_row_with_a_multiplier_and_offsets_merges():
    # a convolution's padded tile: pad[0, 0, t // 2 + ry - 1, (t % 2) * 16 + rx - 1, i], 32 wide
    pad = tir.decl_buffer((1, 1, 34, 32, 3), name="pad")
    t, ry, rx, i = (tir.Var(n) for n in ("t", "ry", "rx", "i"))
    load = tir.BufferLoad(pad, [0, 0, t // 2 + ry - 1, (t % 2) * 16 + rx - 1, i])
    merged = merge_split_axes(tir.Evaluate(load)).value
    assert str(merged) == "pad[0, 0, ((((ry * 32) + rx) + (t * 16)) - 33), i]"
    assert [int(d.value) for d in merged.buffer.shape] == [1, 1, 1088, 3]


@pytest.mark.parametrize("case", ["divisor does not divide the axis", "floor division scaled",
                                  "strided buffer", "symbolic shape", "modulo of another value"])
def test_accesses_the_identity_does_not_cover_stay(case):
    x, y = tir.Var("x"), tir.Var("y")
    shape, strides, index = (4, 10), None, [x // 3, x % 3]
    if case == "floor division scaled":
        index = [(x // 5) * 2, x % 5]
    elif case == "strided buffer":
        shape, strides, index = (4, 10), (20, 1), [x // 10, x % 10]
    elif case == "symbolic shape":
        shape, index = (4, tir.SizeVar("n")), [x // 10, x % 10]
    elif case == "modulo of another value":
        index = [x // 10, y % 10]
    buf = tir.decl_buffer(shape, name="b", strides=strides)
    load = tir.BufferLoad(buf, index)
    assert merge_split_axes(tir.Evaluate(load)).value is load


@pytest.mark.parametrize("seed", range(6))
def test_random_split_kernels_compute_the_same(seed):
    rng = np.random.default_rng(seed)
    outer, c, m, a = (int(v) for v in (rng.integers(1, 4), rng.integers(2, 6), rng.integers(1, 4),
                                       rng.integers(0, 3)))
    func = _copy_func(outer, c, m, a)
    merged = _merged(func)
    assert "//" not in _store_line(merged) and "%" not in _store_line(merged), tir.func_to_str(merged)
    src = rng.standard_normal((outer + a, c * m, 3)).astype("float32")
    got, want = np.zeros((outer, c, m, 3), "float32"), np.zeros((outer, c, m, 3), "float32")
    tir.interp.run(func, src, want)
    tir.interp.run(merged, src, got)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, src[a:a + outer].reshape(outer, c, m, 3))
