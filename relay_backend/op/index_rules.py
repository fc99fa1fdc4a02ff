"""What the gather/scatter family shares: how an index is checked, made valid and compared.

Relay's gather, gather_nd, adv_index, scatter_elements and scatter_nd read or write at positions
given by an integer tensor. TVM v0.18 leaves an out-of-range position undefined (its kernels
read or write outside the buffer); here every kernel stays inside its buffers and the rule is
written down once, for the numpy references and the te computes alike:

  * a negative index counts from the end once (i + n for -n <= i < 0), as TVM's
    scatter_elements and ONNX's Gather*/Scatter* do;
  * reading (gather, gather_nd, adv_index): what is still out of range is clamped to the
    nearest valid position (take's default mode "clip");
  * writing (scatter_elements, scatter_nd): an update whose position is still out of range is
    dropped.

Indices given as constants are checked when the call is built (`check_constant_indices`): an
out-of-range constant is an InputError naming the op, the index and the valid range.
Scatter updates are combined one by one in index order into a copy of the data
(`scatter_step` is one step), so duplicate positions combine exactly as TVM's sequential CPU
kernel does (update: the last one wins; mean: each update averages with the value so far).
"""
import numpy as np

from .. import te, tir
from ..errors import InputError, TypeInferenceError
from ..ir.dims import is_static
from ..ir.expr import Constant
from ..ir.types import TensorType, type_to_str

INDEX_KINDS = "iu"


def fail(op_name: str, msg: str, *types) -> TypeInferenceError:
    """A TypeInferenceError naming the op, the problem and the argument types."""
    suffix = f" (input: {', '.join(type_to_str(t) for t in types)})" if types else ""
    return TypeInferenceError(f"{op_name}: {msg}{suffix}")


def norm_axis(op_name: str, axis: int, ndim: int, *types) -> int:
    """`axis` in [-ndim, ndim) made non-negative."""
    if not -ndim <= axis < ndim:
        raise fail(op_name, f"axis {axis} is out of range for rank {ndim}; use -{ndim} <= axis < {ndim}", *types)
    return axis + ndim if axis < 0 else axis


def expect_int(op_name: str, t: TensorType, what: str, *types) -> None:
    """`t` must be an integer tensor."""
    if np.dtype(t.dtype).kind not in INDEX_KINDS:
        raise fail(op_name, f"{what} must be an integer tensor, got dtype {t.dtype}", *types)


# --- numpy side (references) ---------------------------------------------------------------------
def np_from_end(idx, n):
    """Negative indices counted from the end once, as int64."""
    idx = np.asarray(idx).astype("int64")
    return np.where(idx < 0, idx + n, idx)


def np_clip_index(idx, n):
    """The read rule: from the end, then clamped into [0, n - 1] (n must be > 0)."""
    return np.clip(np_from_end(idx, n), 0, max(int(n) - 1, 0))


# --- te side (computes) --------------------------------------------------------------------------
def _wide(j):
    """`j` as a signed integer expression wide enough for the index and any axis size."""
    wide = "int64" if j.dtype in ("int64", "uint32", "uint64") else "int32"
    return j if j.dtype == wide else j.astype(wide)


def te_from_end(j, n):
    """j + n where j < 0, in a signed dtype wide enough for both (n an int or a PrimExpr)."""
    signed = not j.dtype.startswith("uint")
    j = _wide(j)
    n = tir.convert(n, j.dtype) if isinstance(n, int) else n.astype(j.dtype)
    return te.if_then_else(j < tir.const(0, j.dtype), j + n, j) if signed else j


def te_clip_index(j, n):
    """The read rule as an int32 expression: from the end, then clamped into [0, n - 1]."""
    j = te_from_end(j, n)
    n = tir.convert(n, j.dtype) if isinstance(n, int) else n.astype(j.dtype)
    j = tir.min(tir.max(j, tir.const(0, j.dtype)), n - tir.const(1, j.dtype))
    return j if j.dtype == "int32" else j.astype("int32")


def te_valid_index(j, n):
    """(in_range, position) of the write rule: from the end, then valid when in [0, n); the
    position is clamped so that loading through it stays inside the buffer either way."""
    j = te_from_end(j, n)
    n = tir.convert(n, j.dtype) if isinstance(n, int) else n.astype(j.dtype)
    ok = (j >= tir.const(0, j.dtype)) & (j < n)
    pos = tir.min(tir.max(j, tir.const(0, j.dtype)), n - tir.const(1, j.dtype))
    return ok, (pos if pos.dtype == "int32" else pos.astype("int32"))


# --- constant indices ------------------------------------------------------------------------------
def known_shape(expr):
    """The static shape of `expr` when its type is known before InferType (an annotated var, a
    constant, an already typed expression), else None."""
    ty = getattr(expr, "_checked_type_", None) or getattr(expr, "type_annotation", None)
    if isinstance(expr, Constant):
        return tuple(np.shape(expr.data.numpy()))
    if isinstance(ty, TensorType) and all(is_static(d) for d in ty.shape):
        return tuple(int(d) for d in ty.shape)
    return None


def constant_value(expr):
    """The numpy value of a Constant, else None."""
    return expr.data.numpy() if isinstance(expr, Constant) else None


def check_constant_indices(op_name: str, values, size, what: str) -> None:
    """Every index in `values` must lie in [-size, size); an InputError names the first that
    does not (a constant index is known to be wrong before anything runs)."""
    values = np.asarray(values)
    if values.size == 0 or size is None:
        return
    if values.dtype.kind not in INDEX_KINDS:
        return   # the type relation rejects it with the type
    bad = (values < -size) | (values >= size)
    if bad.any():
        first = int(values[bad].reshape(-1)[0])
        valid = f"[{-size}, {size - 1}]" if size else "none (the axis is empty)"
        raise InputError(f"{op_name}: constant index {first} is out of range for {what} of size {size} "
                         f"(valid indices: {valid}; {int(bad.sum())} bad index(es) in all)")


# --- scatter: updates folded in order onto the data element ---------------------------------------
def scatter_step(reduction: str, dtype: str):
    """f(so_far, update) of a scatter reduction on tir values of `dtype` (one step of TVM's
    sequential kernel)."""
    is_float = np.dtype(dtype).kind == "f"

    def mean(a, b):
        total = a + b
        return total / tir.const(2, dtype) if is_float else tir.truncdiv(total, tir.const(2, dtype))
    table = {"update": lambda a, b: b, "add": lambda a, b: a + b, "mul": lambda a, b: a * b,
             "min": tir.min, "max": tir.max, "mean": mean}
    return table[reduction]


def np_fold(reduction: str, current, update):
    """numpy's one step of a scatter reduction on scalars of the data dtype."""
    dtype = np.asarray(current).dtype
    if reduction == "update":
        return update
    if reduction == "add":
        return (current + update).astype(dtype)
    if reduction == "mul":
        return (current * update).astype(dtype)
    if reduction == "min":
        return np.minimum(current, update)
    if reduction == "max":
        return np.maximum(current, update)
    total = current + update        # mean: float halves, ints truncate toward zero
    return (total / 2).astype(dtype) if dtype.kind == "f" else np.asarray(int(total) // 2 if total >= 0
                                                                          else -(-int(total) // 2), dtype)


SCATTER_REDUCTIONS = ("update", "add", "mul", "mean", "min", "max")
