"""Loads of read-only parameters are emitted once per basic block and address
(llvm_expr.ExprEmitter.load_at): an unrolled register tile loads each weight vector and input
element once per step; a parameter the function also stores to is loaded every time (a store
between two loads changes what the second reads); results match numpy."""
import numpy as np
import pytest

from relay_backend import tir
from relay_backend.codegen import build, codegen_llvm
from relay_backend.codegen.llvm import read_only_params
from relay_backend.runtime import nd

pytestmark = pytest.mark.compile


def _tile_kernel(rows=4, cols=3, lanes=16):
    """Y[r, c, :] = X[r] * W[c, :] + X[r] * W[c, :] with r, c unrolled and the lanes
    vectorized: each W[c, :] vector and each X[r] is read 2 * rows (2 * cols) times."""
    x = tir.Buffer("X", (rows,), "float32")
    w = tir.Buffer("W", (cols, lanes), "float32")
    y = tir.Buffer("Y", (rows, cols, lanes), "float32")
    r, c, k = tir.Var("r"), tir.Var("c"), tir.Var("k")
    value = x[r] * w[c, k] + x[r] * w[c, k]
    body = tir.For(r, 0, rows, "unrolled", tir.For(c, 0, cols, "unrolled", tir.For(
        k, 0, lanes, "vectorized", tir.BufferStore(y, value, (r, c, k)))))
    return tir.PrimFunc([x, w, y], body, "tile")


def test_read_only_operands_load_once_per_step():
    rows, cols, lanes = 4, 3, 16
    text, _ = codegen_llvm([_tile_kernel(rows, cols, lanes)])
    assert text.count(f"load <{lanes} x float>") == cols            # one per weight vector
    assert text.count("load float,") == rows                          # one per input element
    x = np.arange(rows, dtype="float32") + 1
    w = np.arange(cols * lanes, dtype="float32").reshape(cols, lanes) / 7
    y = nd.empty((rows, cols, lanes), "float32")
    build(_tile_kernel(rows, cols, lanes))["tile"](nd.array(x), nd.array(w), y)
    np.testing.assert_allclose(y.numpy(), 2 * x[:, None, None] * w[None], rtol=1e-6)


def _read_write_kernel():
    """Y[0] = X[0]; X[0] = X[0] * 2; Y[1] = X[0]: X is written, so it is loaded again."""
    x, y = tir.Buffer("X", (1,), "float32"), tir.Buffer("Y", (2,), "float32")
    body = tir.seq(tir.BufferStore(y, x[0], (0,)),
                   tir.BufferStore(x, x[0] * 2.0, (0,)),
                   tir.BufferStore(y, x[0], (1,)))
    return tir.PrimFunc([x, y], body, "rw")


def test_a_parameter_that_is_stored_to_is_loaded_every_time():
    func = _read_write_kernel()
    assert read_only_params(func.params, func.body) == frozenset()      # X and Y are both stored to
    text, _ = codegen_llvm([func])
    assert text.count("load float,") == 3
    x, y = nd.array(np.array([3.0], "float32")), nd.empty((2,), "float32")
    build(_read_write_kernel())["rw"](x, y)
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(x.numpy(), [6.0])


def test_read_only_set():
    func = _tile_kernel()
    x, w, y = func.params
    assert read_only_params(func.params, func.body) == frozenset({id(x.data), id(w.data)})
    unknown = tir.SeqStmt([func.body, tir.Evaluate(tir.const(0, "int32"))])
    assert read_only_params(func.params, unknown) == frozenset()       # an unknown statement: none
