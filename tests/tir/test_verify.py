"""The PrimFunc verifier catches unbound vars, rank mismatches, dtype errors, stray buffers."""
import pytest

from relay_backend import tir
from relay_backend.errors import CompileError
from relay_backend.tir.functor import copy_with


def _func(body, *bufs):
    return tir.PrimFunc(list(bufs), body, "f")


A = tir.Buffer("A", (4, 4), "float32")
B = tir.Buffer("B", (4, 4), "float32")


def _loops(body_fn):
    i, j = tir.Var("i"), tir.Var("j")
    return tir.For(i, 0, 4, "serial", tir.For(j, 0, 4, "serial", body_fn(i, j)))


def test_well_formed_passes():
    f = _func(_loops(lambda i, j: tir.BufferStore(B, A[i, j] + 1.0, (i, j))), A, B)
    assert tir.verify(f) is f
    assert tir.verify_errors(f) == []


def test_unbound_var_is_reported():
    k = tir.Var("k")
    f = _func(_loops(lambda i, j: tir.BufferStore(B, A[i, k], (i, j))), A, B)
    errors = tir.verify_errors(f)
    assert len(errors) == 1 and "variable k is used but not bound" in errors[0]
    with pytest.raises(CompileError, match="variable k"):
        tir.verify(f)


def test_rank_mismatch_and_unknown_buffer():
    C = tir.Buffer("C", (4,), "float32")
    load = tir.BufferLoad(A, (tir.const(0), tir.const(0)))
    bad = copy_with(load, indices=(tir.const(0),))
    f = _func(_loops(lambda i, j: tir.BufferStore(B, bad + C[i], (i, j))), A, B)
    errors = " | ".join(tir.verify_errors(f))
    assert "rank 2 but is accessed with 1 indices" in errors
    assert "buffer C is neither a parameter nor allocated" in errors


def test_dtype_errors():
    i = tir.Var("i")
    store = tir.BufferStore(B, tir.const(1.0), (i, i))
    bad = copy_with(store, value=tir.const(1, "int32"))
    f = _func(tir.For(i, 0, 4, "serial", bad), A, B)
    assert any("dtype int32, buffer has float32" in e for e in tir.verify_errors(f))
    with pytest.raises(CompileError, match="dtypes differ"):
        tir.Add(tir.Var("x", "float32"), tir.Var("y", "float64"))


def test_allocate_binds_its_buffer_and_loop_vars_scope():
    T = tir.Buffer("T", (4,), "float32", scope="local")
    i = tir.Var("i")
    inner = tir.For(i, 0, 4, "serial", tir.BufferStore(T, tir.const(0.0), (i,)))
    outside = tir.BufferStore(B, T[i], (i, i))    # T and i used out of scope
    f = _func(tir.seq(tir.Allocate(T, inner), outside), A, B)
    errors = " | ".join(tir.verify_errors(f))
    assert "buffer T is neither" in errors and "variable i is used" in errors
