"""ONNX Det: the determinant of each trailing n x n matrix, by Gaussian elimination with partial
pivoting unrolled over the (static) n columns, as LAPACK's LU that numpy uses.

Step k picks the row (from k down) whose entry in column k is largest in magnitude, swaps it
with row k (flipping the sign), and subtracts multiples of it from the rows below. The determinant
is the sign times the product of the pivots; a zero pivot (a singular matrix) makes it 0.
"""
import numpy as np

from .... import op as _op
from ..common import const
from ._registry import converter

MAX_ORDER = 64   # the elimination is unrolled: n steps over n x n matrices


@converter("Det", min_version=11)
def det(ctx, inputs):
    """The determinant of each trailing square matrix of X."""
    x = inputs[0]
    shape = ctx.static_shape(x, "X")
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ctx.invalid(f"X must end in square matrices, got shape {shape}")
    n = shape[-1]
    if n > MAX_ORDER:
        raise ctx.fail(f"the determinant of {n} x {n} matrices is not supported (at most {MAX_ORDER} x {MAX_ORDER})")
    dtype = ctx.dtype(x)
    batch = int(np.prod(shape[:-2], dtype=np.int64))
    if n == 0:
        return const(np.ones(shape[:-2], dtype))
    a = _op.reshape(x, (batch, n, n))
    c = lambda v: const(np.array(v, dtype))  # noqa: E731
    rows = const(np.arange(n, dtype="int64").reshape(1, n, 1))
    sign = const(np.ones((batch,), dtype))
    pivots = []
    for k in range(n):
        column = _op.abs(_op.take(a, const(np.int64(k)), axis=2, mode="fast"))             # (batch, n)
        candidates = _op.where(const(np.arange(n) >= k), column, c(-1))
        p = _op.cast(_op.argmax(candidates, axis=1), "int64")                               # (batch,)
        row_p = _op.take(a, p, axis=1, batch_dims=1, mode="fast")                          # (batch, n)
        row_k = _op.take(a, const(np.int64(k)), axis=1, mode="fast")
        at_k = _op.equal(rows, const(np.int64(k)))
        at_p = _op.equal(rows, _op.reshape(p, (batch, 1, 1)))
        a = _op.where(at_k, _op.expand_dims(row_p, 1), _op.where(at_p, _op.expand_dims(row_k, 1), a))
        sign = _op.where(_op.equal(p, const(np.int64(k))), sign, _op.negative(sign))
        pivot = _op.take(row_p, const(np.int64(k)), axis=1, mode="fast")                  # (batch,)
        pivots.append(pivot)
        safe = _op.where(_op.equal(pivot, c(0)), c(1), pivot)
        factors = _op.divide(_op.take(a, const(np.int64(k)), axis=2, mode="fast"), _op.expand_dims(safe, 1))
        below = _op.where(const(np.arange(n) > k), factors, c(0))                           # (batch, n)
        a = _op.subtract(a, _op.multiply(_op.expand_dims(below, 2), _op.expand_dims(row_p, 1)))
    product = pivots[0]
    for pivot in pivots[1:]:
        product = _op.multiply(product, pivot)
    return _op.reshape(_op.multiply(sign, product), shape[:-2])
