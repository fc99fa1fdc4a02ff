"""global_pool_columns.x86 (strategy/x86_global_pool.py): NCHW global pools reduced columns first
match numpy at widths that split into vectors, fit one vector or leave a remainder, in float16,
float32 and float64, with a fused epilogue, with NaNs; the kernel vectorizes the column sums; a
model's global pool is built with it."""
import re

import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.codegen import build
from relay_backend.ir.types import TensorType
from relay_backend.op.nn.pool import GlobalPool2DAttrs
from relay_backend.op.registry import get as get_op
from relay_backend.runtime import nd
from relay_backend.strategy import op_strategy, x86_global_pool

pytestmark = pytest.mark.compile

NAME = "global_pool_columns.x86"
TOL = {"float64": 1e-12, "float32": 1e-5, "float16": 1e-3}


def _impl(op_name, x, attrs):
    op = get_op(op_name)
    out_type = op.rel([TensorType(x.shape, str(x.dtype))], attrs)
    ph = te.placeholder(x.shape, str(x.dtype), name="data")
    strategy = op_strategy(op, attrs, [ph], out_type, "llvm")
    impls = [impl for spec in strategy.specializations for impl in spec.implementations]
    return out_type, next((impl for impl in impls if impl.name == NAME), None), impls


def _run(op_name, x, bias=None):
    """Build the columns implementation (with relu(out + bias[c]) fused when `bias` is given)
    and return its output, and the lowered function's text."""
    attrs = GlobalPool2DAttrs()
    out_type, impl, _ = _impl(op_name, x, attrs)
    ph = te.placeholder(x.shape, str(x.dtype), name="data")
    outs = impl.compute(attrs, [ph], out_type)
    args = [ph]
    if bias is not None:
        b = te.placeholder(bias.shape, str(bias.dtype), name="bias")
        pooled = outs[0]
        outs = [te.compute(pooled.shape, lambda n, c, y, x_: tir.max(pooled[n, c, y, x_] + b[c],
                                                                      tir.const(0.0, pooled.dtype)))]
        args.append(b)
    func = te.lower(impl.schedule(attrs, outs, "llvm"), args + outs, "kernel")
    result = nd.empty(tuple(int(d.value) for d in outs[0].shape), outs[0].dtype)
    inputs = [nd.array(x)] + ([nd.array(bias)] if bias is not None else [])
    build(func)["kernel"](*inputs, result)
    return result.numpy(), str(func)


def _want(op_name, x):
    wide = x.astype("float64")
    pooled = wide.max(axis=(2, 3), keepdims=True) if "max" in op_name else wide.mean(axis=(2, 3), keepdims=True)
    return pooled


@pytest.mark.parametrize("op_name", x86_global_pool.OPS)
@pytest.mark.parametrize("shape,dtype", [((1, 16, 32, 32), "float32"), ((2, 3, 9, 48), "float32"),
                                         ((1, 5, 7, 7), "float64"), ((1, 4, 6, 5), "float32"),
                                         ((1, 3, 40, 24), "float16"), ((1, 2, 3, 20), "float32")])
def test_columns_match_numpy(op_name, shape, dtype):
    x = np.random.default_rng(sum(shape)).uniform(-2, 3, shape).astype(dtype)
    got, _ = _run(op_name, x)
    assert got.dtype == x.dtype and got.shape == shape[:2] + (1, 1)
    np.testing.assert_allclose(got.astype("float64"), _want(op_name, x), rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("op_name", x86_global_pool.OPS)
def test_fused_bias_relu(op_name):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 6, 14, 32)).astype("float32")
    bias = rng.standard_normal(6).astype("float32")
    got, _ = _run(op_name, x, bias)
    want = np.maximum(_want(op_name, x) + bias[:, None, None], 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_max_propagates_nan_like_the_row_schedule():
    """A NaN anywhere in a plane makes its maximum NaN, as the op's reference says."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 6, 9, 16)).astype("float32")
    x[0, 1, 4, 3] = np.nan
    x[0, 4, 0, 15] = np.nan
    got, _ = _run("nn.global_max_pool2d", x)
    want = get_op("nn.global_max_pool2d").ref(x, GlobalPool2DAttrs())
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)], want[~np.isnan(want)])
    assert np.isnan(want).sum() == 2


def test_column_sums_are_vectorized():
    """Inside the loop over rows, the columns are one vector (a row of 48 columns: 3 x 16 lanes)."""
    x = np.zeros((1, 2, 5, 48), "float32")
    _, text = _run("nn.global_avg_pool2d", x)
    assert re.search(r"for ry in range\(0, 5\):\n\s+for x\.inner in vectorized\(0, 16\)", text), text


@pytest.mark.parametrize("shape,layout,chosen", [((1, 16, 32, 32), "NCHW", True),
                                                 ((1, 16, 32, 3), "NCHW", False),
                                                 ((1, 32, 32, 16), "NHWC", False),
                                                 ((1, 2, 8, 8, 16), "NCHW16c", False)])
def test_applies_to_wide_nchw_planes_only(shape, layout, chosen):
    x = np.zeros(shape, "float32")
    _, impl, impls = _impl("nn.global_avg_pool2d", x, GlobalPool2DAttrs(layout=layout))
    assert (impl is not None) == chosen
    if chosen:
        assert impl.plevel == max(i.plevel for i in impls)
