"""Operators on the last two axes as matrices (TVM v0.18 names): trilu and matrix_set_diag.

  trilu(data, k, upper)   keeps the upper (col - row >= k) or lower (col - row <= k) triangle
                          of every matrix and zeroes the rest; k is a 0-d integer tensor read at
                          run time (ELEMWISE, as TVM's);
  matrix_set_diag(data, diagonal, k1, k2, super_diag_right_align, sub_diag_right_align)
                          replaces diagonals k1..k2 of every matrix by `diagonal` (aligned as
                          TensorFlow's MatrixSetDiagV3, TVM's topi.matrix_set_diag; INJECTIVE).
"""
import dataclasses

import numpy as np

from .. import te, tir
from ..ir.attrs import Attrs
from ..ir.dims import dim_to_str, is_static
from ..ir.shape_math import dims_differ
from ..ir.types import TensorType
from . import index_math as IM
from . import samples as S
from .index_rules import expect_int, fail
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor


def _matrices(op_name, data, *types):
    if data.ndim < 2:
        raise fail(op_name, f"needs a matrix or a batch of matrices (rank >= 2), got rank {data.ndim}", *types)


# --- trilu --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TriluAttrs(Attrs):
    upper: bool = True

    def __post_init__(self):
        object.__setattr__(self, "upper", bool(self.upper))


def _trilu_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "trilu data")
    k = expect_tensor(arg_types[1], "trilu k")
    _matrices("trilu", data, data, k)
    expect_int("trilu", k, "k", data, k)
    if k.ndim != 0:
        raise fail("trilu", f"k must be a 0-d tensor, got rank {k.ndim}", data, k)
    return TensorType(data.shape, data.dtype)


def _trilu_ref(x, k, attrs):
    rows, cols = np.indices(x.shape[-2:])
    keep = (cols - rows >= int(k)) if attrs.upper else (cols - rows <= int(k))
    return np.where(keep, x, np.zeros((), x.dtype)).astype(x.dtype)


def _trilu_compute(attrs, inputs, out_type):
    """x where the diagonal offset col - row is on the kept side of k, else 0 (in int64, so no
    k is too large)."""
    x, k = inputs
    offset = k[()].astype("int64")
    zero = tir.const(0, x.dtype)

    def body(*i):
        diag = i[-1].astype("int64") - i[-2].astype("int64")
        keep = diag >= offset if attrs.upper else diag <= offset
        return te.if_then_else(keep, x[i], zero)
    return [IM.compute(TRILU, IM.te_dims(x), body)]


TRILU = defop(
    "trilu", inputs=("data", "k"), attrs=TriluAttrs, rel=_trilu_rel, pattern=OpPattern.ELEMWISE,
    ref=_trilu_ref, compute=_trilu_compute, level=3,
    samples=lambda rng: [Sample([S.rand(rng, (3, 4)), np.array(0, "int32")], TriluAttrs(True)),
                         Sample([S.rand(rng, (2, 3, 3), "int32"), np.array(-1, "int64")], TriluAttrs(False)),
                         Sample([S.rand(rng, (4, 2), "float64"), np.array(9, "int64")], TriluAttrs(True), "k past the end"),
                         Sample([S.rand(rng, (0, 3)), np.array(1, "int32")], TriluAttrs(False), "empty")],
    doc="the upper or lower triangle of every matrix (the last two axes), the rest zeroed")


# --- matrix_set_diag ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class MatrixSetDiagAttrs(Attrs):
    k1: int = 0
    k2: int = 0
    super_diag_right_align: bool = False
    sub_diag_right_align: bool = False

    def __post_init__(self):
        for name in ("k1", "k2"):
            object.__setattr__(self, name, int(getattr(self, name)))
        for name in ("super_diag_right_align", "sub_diag_right_align"):
            object.__setattr__(self, name, bool(getattr(self, name)))


def _max_diag_len(rows, cols, k1, k2):
    """The length of the longest diagonal in k1..k2 (the one nearest the main diagonal), as
    TensorFlow's MatrixSetDiagV3 defines it (TVM's relation writes a looser bound it never
    enforces)."""
    return min(rows + min(k2, 0), cols - max(k1, 0))


def _matrix_set_diag_rel(arg_types, attrs):
    op = "matrix_set_diag"
    data = expect_tensor(arg_types[0], f"{op} data")
    diag = expect_tensor(arg_types[1], f"{op} diagonal")
    types = (data, diag)
    _matrices(op, data, *types)
    if attrs.k2 < attrs.k1:
        raise fail(op, f"k2 ({attrs.k2}) must be >= k1 ({attrs.k1})", *types)
    if diag.dtype != data.dtype:
        raise fail(op, f"diagonal must have data's dtype {data.dtype}, got {diag.dtype}", *types)
    band = attrs.k1 != attrs.k2
    want_rank = data.ndim if band else data.ndim - 1
    if diag.ndim != want_rank:
        raise fail(op, f"diagonal must have rank {want_rank}, got {diag.ndim}", *types)
    for a in range(data.ndim - 2):
        if dims_differ(data.shape[a], diag.shape[a]):
            raise fail(op, f"batch dim {a} differs: {dim_to_str(data.shape[a])} vs {dim_to_str(diag.shape[a])}", *types)
    rows, cols = data.shape[-2], data.shape[-1]
    if is_static(rows) and is_static(cols):
        rows, cols = int(rows), int(cols)
        if not (-rows < attrs.k1 and attrs.k2 < cols):
            raise fail(op, f"diagonals {attrs.k1}..{attrs.k2} lie outside a {rows}x{cols} matrix", *types)
        if band and dims_differ(diag.shape[-2], attrs.k2 - attrs.k1 + 1):
            raise fail(op, f"diagonal must hold {attrs.k2 - attrs.k1 + 1} diagonals, got "
                           f"{dim_to_str(diag.shape[-2])}", *types)
        length = _max_diag_len(rows, cols, attrs.k1, attrs.k2)
        if dims_differ(diag.shape[-1], length):
            raise fail(op, f"diagonals must have the longest diagonal's length {length}, got "
                           f"{dim_to_str(diag.shape[-1])}", *types)
    return TensorType(data.shape, data.dtype)


def _diag_position(row, col, rows, cols, diag_len, attrs, where):
    """(index of the diagonal in `diagonal`'s band axis, position along it) of element (row, col)
    on diagonal d = col - row; `where` builds a select (np.where or te's)."""
    d = col - row
    along = where(d >= 0, row, col)
    if attrs.k1 == attrs.k2:
        return None, along

    def pad(length):
        return diag_len - length
    super_len = where(rows < cols - d, rows, cols - d)           # min(rows, cols - d)
    sub_len = where(rows + d < cols, rows + d, cols)             # min(rows + d, cols)
    offset = where(d >= 0, pad(super_len) if attrs.super_diag_right_align else 0 * d,
                   pad(sub_len) if attrs.sub_diag_right_align else 0 * d)
    return attrs.k2 - d, along + offset


def _matrix_set_diag_ref(x, diag, attrs):
    _matrix_set_diag_rel([TensorType(x.shape, str(x.dtype)), TensorType(diag.shape, str(diag.dtype))], attrs)
    rows, cols = x.shape[-2:]
    r, c = np.indices((rows, cols))
    band, along = _diag_position(r, c, rows, cols, diag.shape[-1], attrs, np.where)
    inside = (c - r >= attrs.k1) & (c - r <= attrs.k2)
    out = x.copy()
    if out.size == 0:
        return out
    band_index = np.clip(band, 0, attrs.k2 - attrs.k1) if band is not None else None
    along = np.clip(along, 0, diag.shape[-1] - 1)
    values = diag[..., band_index, along] if band is not None else diag[..., along]
    return np.where(inside, values, out).astype(x.dtype)


def _matrix_set_diag_compute(attrs, inputs, out_type):
    x, diag = inputs
    dims, ddims = IM.te_dims(x), IM.te_dims(diag)
    rows, cols = IM.dim_expr(dims[-2]), IM.dim_expr(dims[-1])

    def body(*i):
        r, c = i[-2], i[-1]
        band, along = _diag_position(r, c, rows, cols, IM.dim_expr(ddims[-1]), attrs, te.if_then_else)
        lead = tuple(i[:-2])
        value = diag[lead + ((band, along) if band is not None else (along,))]
        inside = (c - r >= attrs.k1) & (c - r <= attrs.k2)
        return te.if_then_else(inside, value, x[i])
    return [IM.compute(MATRIX_SET_DIAG, dims, body)]


def _msd_samples(rng):
    def attrs(k1, k2, align="RIGHT_LEFT"):
        return MatrixSetDiagAttrs(k1, k2, align[:5] == "RIGHT", align[-5:] == "RIGHT")
    return [Sample([S.rand(rng, (2, 3, 4)), S.rand(rng, (2, 3))], attrs(0, 0), "TVM's example shapes"),
            Sample([S.rand(rng, (3, 4), "int32"), S.rand(rng, (3,), "int32")], attrs(1, 1)),
            Sample([S.rand(rng, (4, 3), "float64"), S.rand(rng, (3, 3), "float64")], attrs(-2, 0), "band, RIGHT_LEFT"),
            Sample([S.rand(rng, (3, 5)), S.rand(rng, (4, 3))], attrs(-1, 2, "LEFT_RIGHT"), "band, LEFT_RIGHT"),
            Sample([S.rand(rng, (3, 3)), S.rand(rng, (2, 3))], attrs(-1, 0, "LEFT_LEFT")),
            Sample([S.rand(rng, (2, 4)), S.rand(rng, (3, 2))], attrs(0, 2, "RIGHT_RIGHT"))]


MATRIX_SET_DIAG = defop(
    "matrix_set_diag", inputs=("data", "diagonal"), attrs=MatrixSetDiagAttrs, rel=_matrix_set_diag_rel,
    pattern=OpPattern.INJECTIVE, ref=_matrix_set_diag_ref, compute=_matrix_set_diag_compute, level=10,
    samples=_msd_samples, doc="data with diagonals k1..k2 of every matrix replaced by `diagonal`")


# --- Python constructors with tvm.relay's names --------------------------------------------------------------
def trilu(data, k, upper=True):
    """relay.trilu: the upper (or lower) triangle of every matrix from diagonal k on; k an int or
    a 0-d integer tensor expression.

    Parameters
    ----------
    data : relay.Expr
        The input, whose last two axes are the matrices.
    k : int or relay.Expr
        The diagonal that bounds the triangle kept: 0 the main one, positive above it, negative
        below it.
    upper : bool, optional
        If True, keep the elements on or above diagonal k (col - row >= k); if False, those on
        or below it (col - row <= k). Defaults to True.
    Returns
    -------
    result : relay.Expr
        The tensor with the other elements zeroed, of data's type.
    """
    from ..ir.expr import Expr, const
    if not isinstance(k, Expr):
        k = const(np.array(int(k), "int32"))
    return TRILU(data, k, attrs=TriluAttrs(upper))


def matrix_set_diag(data, diagonal, k=0, align="RIGHT_LEFT"):
    """relay.matrix_set_diag: diagonal k (an int) or band k = (low, high) of every matrix set to
    `diagonal`; align (RIGHT_LEFT, LEFT_RIGHT, LEFT_LEFT, RIGHT_RIGHT) says how shorter
    super- and sub-diagonals are packed.

    Parameters
    ----------
    data : relay.Expr
        The input, whose last two axes are the matrices.
    diagonal : relay.Expr
        The new values: data's batch axes, then (for a band) one row per diagonal from high to
        low, then the longest diagonal's length.
    k : int or tuple of int, optional
        The diagonal replaced (0 the main one, positive above it), or the (low, high) band of
        diagonals. Defaults to 0.
    align : str, optional
        How a diagonal shorter than the row of `diagonal` is packed into it: the first word for
        the super-diagonals, the second for the sub-diagonals, each "RIGHT" or "LEFT". Defaults
        to "RIGHT_LEFT".
    Returns
    -------
    result : relay.Expr
        The tensor with the diagonals replaced, of data's type.
    """
    k1, k2 = (k[0], k[1] if len(k) > 1 else k[0]) if isinstance(k, (tuple, list)) else (k, k)
    return MATRIX_SET_DIAG(data, diagonal, attrs=MatrixSetDiagAttrs(k1, k2, align[:5] == "RIGHT",
                                                                     align[-5:] == "RIGHT"))


__all__ = ["trilu", "matrix_set_diag"]
