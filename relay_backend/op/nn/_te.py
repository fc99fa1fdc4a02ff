"""te helpers shared by the nn computes: dims that are Python ints when static and tir
expressions when symbolic (so one formula serves both), output dtypes from the checked type,
accumulation casts, sliding-window arithmetic, the padded-input stage of conv2d and reductions
along one axis (softmax, layer_norm).

The arithmetic helpers accept a mix of ints and PrimExprs and stay ints when they can, so
static shapes remain plain numbers in the lowered loops; symbolic results use only
+, -, *, //, min, max, which codegen can evaluate as buffer dimensions.
"""
from ... import te, tir
from ...ir.types import TupleType
from . import _common as C

PAD_TAG = "injective,pad"


# --- dims and dtypes ---------------------------------------------------------------------------
def dim(d):
    """A te shape entry as an int when it is a constant, else the PrimExpr itself."""
    return d.value if isinstance(d, tir.IntImm) else d


def dims(t) -> list:
    """The shape of a te.Tensor as a list of ints / PrimExprs."""
    return [dim(d) for d in t.shape]


def out_dtype(out_type, k: int = 0) -> str:
    """The dtype of output k of the call's checked type (a TensorType or TupleType)."""
    if isinstance(out_type, TupleType):
        return out_type.fields[k].dtype
    return out_type.dtype


def acc_dtype(dtype: str) -> str:
    """The dtype a reduction accumulates in (float16 -> float32), as the references do."""
    return C.acc_dtype(dtype)


def cast_to(t, dtype: str, tag: str, name: str = "cast"):
    """`t` itself when it already has `dtype`, else an elementwise cast stage."""
    if t.dtype == dtype:
        return t
    return te.compute(t.shape, lambda *i: t[i].astype(dtype), name=name, tag=tag)


def const(value, dtype: str):
    """A tir constant of `dtype` (a float value is truncated for integer dtypes)."""
    if tir.is_float_dtype(dtype):
        return tir.const(float(value), dtype)
    return tir.const(bool(value) if dtype == "bool" else int(value), dtype)


def is_static(*values) -> bool:
    return all(isinstance(v, int) for v in values)


def imin(a, b):
    return min(a, b) if is_static(a, b) else tir.min(a, b)


def imax(a, b):
    return max(a, b) if is_static(a, b) else tir.max(a, b)


def ceil_div(a, b):
    """ceil(a / b) for b > 0 (exact for negative a: floor division rounds down)."""
    return (a + b - 1) // b


def norm_axis(axis: int, ndim: int) -> int:
    return axis + ndim if axis < 0 else axis


# --- sliding windows -----------------------------------------------------------------------------
def window_out(size, kernel: int, stride: int, dilation: int, pad_before: int, pad_after: int,
               ceil_mode: bool = False):
    """Output length of a sliding window (as _common.window_out_dim), symbolic sizes allowed."""
    if is_static(size):
        return C.window_out_dim(size, kernel, stride, dilation, pad_before, pad_after, ceil_mode)
    span = (kernel - 1) * dilation + 1
    total = size + (pad_before + pad_after - span)
    if not ceil_mode:
        return total // stride + 1
    out = ceil_div(total, stride) + 1
    # A last window starting in the trailing padding does not count (PyTorch/TVM rule): drop
    # one when (out - 1) * stride >= size + pad_before. Written with min/max, not a select,
    # so the result stays a buffer dimension codegen can evaluate.
    fits = (size + (pad_before - 1)) // stride + 1      # windows starting before the trailing pad
    return tir.min(out, tir.max(out - 1, fits))


def in_range(index, lo, hi):
    """lo <= index < hi as a bool expression (bounds may be ints)."""
    return tir.all(index >= lo, index < hi)


def pad_hw_stage(data, pads4, value=0.0, name: str = "pad"):
    """The NCHW input padded on H and W by (top, left, bottom, right) with `value`, as an
    injective stage a schedule can inline; `data` itself when there is no padding."""
    top, left, bottom, right = pads4
    if not any(pads4):
        return data
    n, c, h, w = dims(data)
    fill = const(value, data.dtype)

    def f(b, ch, y, x):
        inside = tir.all(in_range(y, top, top + h), in_range(x, left, left + w))
        return te.if_then_else(inside, data[b, ch, y - top, x - left], fill)
    return te.compute((n, c, h + top + bottom, w + left + right), f, name=name, tag=PAD_TAG)


def pad_axes_stage(data, axes, pads4, value=0.0, name: str = "pad"):
    """`data` padded on its two spatial `axes` (H, W positions) by (top, left, bottom, right)
    with `value`, as an injective stage (pad_hw_stage for any layout)."""
    top, left, bottom, right = pads4
    if not any(pads4):
        return data
    shape = dims(data)
    ah, aw = axes
    h, w = shape[ah], shape[aw]
    out = list(shape)
    out[ah], out[aw] = h + top + bottom, w + left + right
    fill = const(value, data.dtype)

    def f(*i):
        y, x = i[ah], i[aw]
        inside = tir.all(in_range(y, top, top + h), in_range(x, left, left + w))
        src = list(i)
        src[ah], src[aw] = y - top, x - left
        return te.if_then_else(inside, data[tuple(src)], fill)
    return te.compute(tuple(out), f, name=name, tag=PAD_TAG)


# --- reductions along one axis ----------------------------------------------------------------------
def insert(index: tuple, axis: int, value) -> tuple:
    """`index` (of a tensor with `axis` reduced away) with `value` put back at `axis`."""
    return tuple(index[:axis]) + (value,) + tuple(index[axis:])


def drop(index: tuple, axis: int) -> tuple:
    """`index` without its entry at `axis` (the index into a reduced tensor)."""
    return tuple(index[:axis]) + tuple(index[axis + 1:])


def reduce_along(x_shape, axis: int, body, reducer, name: str, tag: str):
    """A stage of shape x_shape without `axis`: reducer over k of body(full index with k)."""
    k = te.reduce_axis((0, x_shape[axis]), name + "_k")
    reduced = list(x_shape[:axis]) + list(x_shape[axis + 1:])
    return te.compute(reduced, lambda *i: reducer(body(insert(i, axis, k.var)), axis=k), name=name, tag=tag)
