"""te.extern with tir.ir_builder: a hand-written statement as a stage (running sums, loops,
if/else, local scalars), its inputs materialized even when a schedule inlined them, checked
with the tir interpreter against numpy; and the errors for misuse."""
import numpy as np
import pytest

from relay_backend import te, tir
from relay_backend.codegen import build
from relay_backend.runtime import nd
from relay_backend.strategy.generic import schedule_default
from relay_backend.errors import CompileError
from relay_backend.tir import ir_builder

from .te_helpers import run_lowered


def _running_sum_of_positives(n):
    """out[i] = sum of the positive values among x[0..i]; count[0] = how many there were."""
    def build(ins, outs):
        ib = ir_builder.create()
        x, out, count = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0]), ib.buffer_ptr(outs[1])
        acc = ib.allocate("float32", (1,), name="acc")
        acc[0] = 0.0
        count[0] = 0
        with ib.for_range(0, n, name="i") as i:
            with ib.if_scope(x[i] > 0.0):
                acc[0] = acc[0] + x[i]
                count[0] = count[0] + 1
            with ib.else_scope():
                acc[0] = acc[0] + 0.0
            out[i] = acc[0]
        return ib.get()
    return build


def test_extern_stage_reads_an_inlined_producer_from_memory():
    n = te.var("n")
    a = te.placeholder((n,), name="a")
    doubled = te.compute((n,), lambda i: a[i] * 2.0, name="doubled")
    out, count = te.extern([(n,), (1,)], [doubled], _running_sum_of_positives(n), name="scan",
                           dtype=["float32", "int32"])
    s = te.create_schedule([out, count])
    s[doubled].compute_inline()          # the extern reads it from memory: lowering keeps it
    x = np.array([1.0, -2.0, 0.5, 3.0, -1.0], "float32")
    (got, got_count), func = run_lowered(s, [a, out, count], [x])
    want = np.cumsum(np.where(2 * x > 0, 2 * x, 0))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got_count.tolist() == [3]
    assert "doubled" in str(func)


def test_extern_needs_a_statement_and_matching_dtypes():
    a = te.placeholder((3,), name="a")
    with pytest.raises(CompileError, match="tir statement"):
        te.extern((3,), [a], lambda ins, outs: None)
    with pytest.raises(CompileError, match="dtypes"):
        te.extern([(3,), (1,)], [a], lambda ins, outs: None, dtype=["float32"])


def test_else_scope_must_follow_an_if_scope():
    ib = ir_builder.create()
    with pytest.raises(CompileError, match="else_scope"):
        with ib.else_scope():
            pass


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
