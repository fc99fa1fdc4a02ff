"""te.extern: an opaque stage whose statement is built over its buffers — lowered with its
producer materialized (never inlined into it) and its consumer reading its output buffer."""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.codegen import build
from relay_backend.errors import CompileError
from relay_backend.runtime import nd
from relay_backend.strategy.generic import schedule_default


def _running_sum(ins, outs):
    """out[k] = out[k - 1] + in[k]: a loop with a carried dependence."""
    src, dst = ins[0], outs[0]
    k = tir.Var("k")
    prev = dst[tir.max(k - 1, 0)]
    body = tir.BufferStore(dst, te.if_then_else(k == 0, src[k], prev + src[k]), (k,))
    return tir.For(k, 0, src.shape[0], "serial", body)


def test_extern_between_computes_lowers_and_runs():
    n = te.var("n")
    x = te.placeholder((n,), "float32", name="x")
    doubled = te.compute((n,), lambda i: x[i] * 2.0, name="doubled")
    scan = te.extern((n,), [doubled], _running_sum, name="scan")
    out = te.compute((n,), lambda i: scan[i] + 1.0, name="plus_one")
    sched = schedule_default(None, [out], None)        # inlines injective stages, not doubled
    func = te.lower(sched, [x, out], "k")
    a = np.arange(1, 6, dtype="float32")
    want = np.cumsum(2 * a) + 1
    got = np.zeros(5, "float32")
    tir.interp.run(func, a, got)
    np.testing.assert_allclose(got, want)
    result = nd.empty((5,), "float32")
    build(func, target="llvm")["k"](nd.array(a), result)
    np.testing.assert_allclose(result.numpy(), want)


def test_extern_input_must_be_materialized():
    x = te.placeholder((4,), "float32", name="x")
    doubled = te.compute((4,), lambda i: x[i] * 2.0, name="doubled")
    scan = te.extern((4,), [doubled], _running_sum, name="scan")
    sched = te.create_schedule([scan])
    sched[doubled].compute_inline()
    with pytest.raises(CompileError, match="not materialized"):
        te.lower(sched, [x, scan], "k")
