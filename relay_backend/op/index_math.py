"""Index arithmetic shared by the te computes of the shape and indexing ops (transform.py, indexing.py).

A dim here is a Python int when static or a tir PrimExpr when symbolic (a te.var of a dynamic
shape), so the same helpers size outputs and map indices for static and dynamic shapes alike.
Every helper only builds index expressions: the computes stay injective (one load per element).
"""
from .. import te, tir
from ..ir import shape_math
from ..ir.dims import DIM_NODE_TYPES, Any
from ..ir.types import TensorType
from ..tir import expr as E


def te_dims(t) -> tuple:
    """The shape of te Tensor `t` with constant dims as Python ints and symbolic ones as PrimExprs."""
    return tuple(d.value if isinstance(d, E.IntImm) else d for d in t.shape)


def probe_type(t) -> TensorType:
    """A relay TensorType for te Tensor `t` to call relation helpers with: its symbolic dims stay
    symbolic (so a compute decides exactly as the relation did), any other expression is Any."""
    return TensorType(tuple(d if isinstance(d, int) or _is_dim(d) else Any() for d in te_dims(t)), t.dtype)


def _is_dim(d) -> bool:
    return all(isinstance(n, DIM_NODE_TYPES) and E.is_int_dtype(n.dtype) for n in tir.walk(d))


def is_static(d) -> bool:
    return isinstance(d, int)


def dim_expr(d) -> E.PrimExpr:
    """A dim as an int32 PrimExpr."""
    return E.convert(d, "int32")


def ravel(indices, shape) -> E.PrimExpr:
    """The row-major flat index of `indices` in a tensor of `shape`."""
    flat = None
    for i, d in zip(indices, shape):
        flat = i if flat is None else flat * d + i
    return E.const(0, "int32") if flat is None else dim_expr(flat)


def unravel(flat, shape) -> list:
    """The row-major indices of flat index `flat` in a tensor of `shape` (inverse of ravel)."""
    out = []
    for d in reversed(shape):
        out.append(E.const(0, "int32") if is_static(d) and d == 1 else tir.floormod(flat, d))
        flat = tir.floordiv(flat, d)
    return out[::-1]


def clamp(x, lo, hi) -> E.PrimExpr:
    """min(max(x, lo), hi) in x's dtype."""
    return tir.min(tir.max(x, lo), hi)


def slice_range(begin, end, stride, n):
    """(start, length) of numpy's x[begin:end:stride] over a dim of size `n` (end None: to the end).

    For a static `n` this is Python's own slice.indices; for a symbolic `n` the same clamping
    rules are written as PrimExpr arithmetic so the output size is known once n is.
    """
    if is_static(n):
        start, _, _ = slice(begin, end, stride).indices(n)
        return start, len(range(*slice(begin, end, stride).indices(n)))
    n = dim_expr(n)
    lo, hi = (0, n) if stride > 0 else (-1, n - 1)

    def norm(v, default):
        if v is None:
            return default
        v = (n + v) if v < 0 else E.const(v, "int32")
        return clamp(v, lo, hi)
    start = norm(begin, lo if stride > 0 else hi)
    stop = norm(end, hi if stride > 0 else lo)
    span = stop - start if stride > 0 else start - stop
    step = abs(stride)
    length = tir.max(tir.floordiv(span + (step - 1), step), 0)
    return start, length


def compute(op, shape, fcompute, suffix=""):
    """te.compute named after `op` (T_<name>) and tagged with op.tag, over `shape` (ints or PrimExprs)."""
    return te.compute(tuple(shape), fcompute, name=f"T_{op.name.replace('.', '_')}{suffix}", tag=op.tag)


def select_chain(cases) -> E.PrimExpr:
    """`v0 if c0 else v1 if c1 else ... else v_last`: the last case's condition is not tested."""
    value = cases[-1][1]
    for cond, v in reversed(cases[:-1]):
        value = E.Select(cond, v, value)
    return value


def broadcast_index(out_indices, dims) -> tuple:
    """Indices into an input of shape `dims` right-aligned under a broadcast output: a static dim
    of 1 reads 0, a symbolic dim reads 0 when it turns out to be 1 at run time."""
    out = []
    for i, d in zip(out_indices, dims):
        if is_static(d):
            out.append(E.const(0, "int32") if d == 1 else i)
        else:
            out.append(E.Select(d == 1, E.const(0, "int32"), i))
    return tuple(out)


def wrap_index(i, d) -> E.PrimExpr:
    """i mod d for a tiled dim (0 for a static dim of 1)."""
    return E.const(0, "int32") if is_static(d) and d == 1 else tir.floormod(i, d)


def prod_dims(dims):
    """Product of dims (ints, or PrimExprs in a compute), or Any if one of them is Any."""
    return shape_math.prod(dims)
