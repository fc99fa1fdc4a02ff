"""The one sort kernel (op/algorithm/loops.py's merge sort) through the two entry points other
kernels use: te_search.stable_sort (ascending values and source positions: unique,
invert_permutation, sparse_to_dense) and vision/ir_common.argsort_desc (descending indices of a
run-time count: the NMS family, proposal). Compiled with LLVM and compared with numpy's stable
argsort for every size class (0, 1, odd, powers of two and around them, a few thousand), ties
(stable) and NaN (the largest: last ascending, first descending)."""
import functools

import numpy as np
import pytest

from relay_backend import te
from relay_backend.codegen import build
from relay_backend.op.te_search import stable_sort
from relay_backend.op.vision.ir_common import argsort_desc, stable_order_desc
from relay_backend.runtime import nd
from relay_backend.tir import ir_builder

SIZES = [0, 1, 2, 3, 7, 8, 9, 33, 64, 1000, 4099]


def _data(size, dtype, seed):
    """Values with many ties; float rows also hold NaN, infinities and signed zeros."""
    rng = np.random.default_rng(seed + size)
    x = rng.integers(-4, 5, size=size).astype(dtype)
    if dtype.startswith("float") and size:
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype)
        x[rng.integers(0, size, size=max(size // 4, 1))] = rng.choice(specials, size=max(size // 4, 1))
    return x


@functools.lru_cache(maxsize=None)
def _ascending_kernel(dtype):
    n = te.var("n")
    x = te.placeholder((n,), dtype, name="x")
    ordered, source = stable_sort(x, n, "sorted", "stable_sort_test")
    func = te.lower(te.create_schedule([ordered, source]), [x, ordered, source], "ascending")
    return build(func, target="llvm")["ascending"]


@functools.lru_cache(maxsize=None)
def _descending_kernel(dtype):
    """order[:count] = argsort_desc of x[:count] (count a run-time value below the capacity)."""
    m = te.var("m")
    x = te.placeholder((m,), dtype, name="x")
    count = te.placeholder((1,), "int32", name="count")

    def body(ins, outs):
        ib = ir_builder.create()
        keys, limit = ib.buffer_ptr(ins[0]), ib.buffer_ptr(ins[1])
        argsort_desc(ib, lambda p: keys[p], limit[0], ib.buffer_ptr(outs[0]))
        return ib.get()
    order = te.extern((m,), [x, count], body, name="descending", dtype="int32")
    func = te.lower(te.create_schedule([order]), [x, count, order], "descending")
    return build(func, target="llvm")["descending"]


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("size", SIZES)
def test_stable_sort_ascending_matches_numpy(size, dtype):
    x = _data(size, dtype, 0)
    ordered, source = nd.empty((size,), dtype), nd.empty((size,), "int32")
    _ascending_kernel(dtype)(nd.array(x), ordered, source)
    want = np.argsort(x, kind="stable")
    np.testing.assert_array_equal(source.numpy(), want)
    np.testing.assert_array_equal(ordered.numpy(), x[want])      # NaN compares equal here


@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("size", SIZES)
def test_argsort_desc_matches_the_reference_order(size, dtype):
    """A prefix of the buffer (the run-time count) is sorted; the rest of the row is untouched."""
    x = _data(size + 3, dtype, 1)
    order = nd.array(np.full(size + 3, -7, "int32"))
    _descending_kernel(dtype)(nd.array(x), nd.array(np.array([size], "int32")), order)
    got = order.numpy()
    np.testing.assert_array_equal(got[:size], stable_order_desc(x[:size]))
    np.testing.assert_array_equal(got[size:], -7)


def test_descending_reference_puts_nan_first_and_keeps_ties_in_index_order():
    scores = np.array([1.0, np.nan, 3.0, 3.0, np.nan, -np.inf, np.inf], "float32")
    assert stable_order_desc(scores).tolist() == [1, 4, 6, 2, 3, 0, 5]
