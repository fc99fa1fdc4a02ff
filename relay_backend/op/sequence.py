"""Variable-length sequence operators (TVM v0.18 names): reverse_sequence, sequence_mask and
sliding_window.

  reverse_sequence(data, seq_lengths, seq_axis, batch_axis)
      reverses the first seq_lengths[b] elements along seq_axis of batch b (a length <= 1 leaves
      the sequence as it is; one past the axis reverses the whole axis, as topi's); INJECTIVE;
  sequence_mask(data, valid_length, mask_value, axis)
      data shaped [length, batch, ...] (axis 0) or [batch, length, ...] (axis 1): positions at or
      past valid_length[b] become mask_value; INJECTIVE;
  sliding_window(data, axis, window_shape, strides)
      every window of window_shape over the axes from `axis` on: output
      data.shape[:axis] + window counts + window_shape; OPAQUE as TVM's.
"""
import dataclasses

import numpy as np

from .. import te, tir
from ..ir.attrs import Attrs, always_printed, as_int_tuple
from ..ir.dims import dim_to_str, is_static
from ..ir.shape_math import dims_differ
from ..ir.types import TensorType
from . import index_math as IM
from . import samples as S
from .compute_common import cast as te_cast
from .index_rules import expect_int, fail, norm_axis
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor


# --- reverse_sequence ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ReverseSequenceAttrs(Attrs):
    seq_axis: int = 1
    batch_axis: int = 0

    def __post_init__(self):
        object.__setattr__(self, "seq_axis", int(self.seq_axis))
        object.__setattr__(self, "batch_axis", int(self.batch_axis))


def _reverse_sequence_axes(data, lengths, attrs):
    op = "reverse_sequence"
    expect_int(op, lengths, "seq_lengths", data, lengths)
    if lengths.ndim != 1:
        raise fail(op, f"seq_lengths must be 1-D, got rank {lengths.ndim}", data, lengths)
    seq = norm_axis(op, attrs.seq_axis, data.ndim, data, lengths)
    batch = norm_axis(op, attrs.batch_axis, data.ndim, data, lengths)
    if seq == batch:
        raise fail(op, f"seq_axis and batch_axis are both axis {seq}", data, lengths)
    if dims_differ(lengths.shape[0], data.shape[batch]):
        raise fail(op, f"seq_lengths has {dim_to_str(lengths.shape[0])} entries but the batch axis {batch} "
                       f"has size {dim_to_str(data.shape[batch])}", data, lengths)
    return seq, batch


def _reverse_sequence_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "reverse_sequence data")
    lengths = expect_tensor(arg_types[1], "reverse_sequence seq_lengths")
    _reverse_sequence_axes(data, lengths, attrs)
    return TensorType(data.shape, data.dtype)


def _reverse_sequence_ref(x, lengths, attrs):
    seq, batch = _reverse_sequence_axes(TensorType(x.shape, str(x.dtype)),
                                        TensorType(lengths.shape, str(lengths.dtype)), attrs)
    n = x.shape[seq]
    pos = np.arange(n)
    shape = [1] * x.ndim
    shape[seq] = n
    pos = pos.reshape(shape)
    bshape = [1] * x.ndim
    bshape[batch] = x.shape[batch]
    length = lengths.astype("int64").reshape(bshape)
    source = np.where((length <= 1) | (length <= pos), pos, np.where(length > n, n - 1 - pos, length - 1 - pos))
    source = np.broadcast_to(source, x.shape)
    return np.take_along_axis(x, source, axis=seq) if x.size else x.copy()


def _reverse_sequence_compute(attrs, inputs, out_type):
    """Position i along seq_axis reads len - 1 - i inside the sequence (n - 1 - i when the length
    passes the axis size n), i itself outside it."""
    x, lengths = inputs
    seq, batch = _reverse_sequence_axes(IM.probe_type(x), IM.probe_type(lengths), attrs)
    n = IM.dim_expr(IM.te_dims(x)[seq]).astype("int64")

    def body(*i):
        length = lengths[i[batch]].astype("int64")
        k = i[seq].astype("int64")
        source = te.if_then_else((length <= 1) | (length <= k), k,
                                 te.if_then_else(length > n, n - 1 - k, length - 1 - k))
        return x[i[:seq] + (source.astype("int32"),) + i[seq + 1:]]
    return [IM.compute(REVERSE_SEQUENCE, IM.te_dims(x), body)]


REVERSE_SEQUENCE = defop(
    "reverse_sequence", inputs=("data", "seq_lengths"), attrs=ReverseSequenceAttrs, rel=_reverse_sequence_rel,
    pattern=OpPattern.INJECTIVE, ref=_reverse_sequence_ref, compute=_reverse_sequence_compute, level=3,
    samples=lambda rng: [
        Sample([S.rand(rng, (4, 3)), np.array([1, 4, 2], "int32")], ReverseSequenceAttrs(0, 1)),
        Sample([S.rand(rng, (3, 5, 2), "int32"), np.array([5, 0, 3], "int64")], ReverseSequenceAttrs(1, 0)),
        Sample([S.rand(rng, (2, 4), "float64"), np.array([9, -2], "int32")], ReverseSequenceAttrs(-1, -2),
               "lengths past the axis and negative")],
    doc="the first seq_lengths[b] elements along seq_axis reversed for each batch b")


# --- sequence_mask ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SequenceMaskAttrs(Attrs):
    mask_value: float = 0.0
    axis: int = 0

    def __post_init__(self):
        object.__setattr__(self, "mask_value", float(self.mask_value))
        object.__setattr__(self, "axis", int(self.axis))


def _sequence_mask_rel(arg_types, attrs):
    op = "sequence_mask"
    data = expect_tensor(arg_types[0], f"{op} data")
    valid = expect_tensor(arg_types[1], f"{op} valid_length")
    if attrs.axis not in (0, 1):
        raise fail(op, f"axis must be 0 or 1 (the length axis), got {attrs.axis}", data, valid)
    if data.ndim < 2:
        raise fail(op, f"data must have rank >= 2 ([length, batch, ...] or [batch, length, ...]), got {data.ndim}",
                   data, valid)
    if valid.ndim != 1 or dims_differ(valid.shape[0], data.shape[1 - attrs.axis]):
        raise fail(op, f"valid_length must be 1-D with one entry per batch ({dim_to_str(data.shape[1 - attrs.axis])})",
                   data, valid)
    return TensorType(data.shape, data.dtype)


def _sequence_mask_ref(x, valid, attrs):
    shape = [1] * x.ndim
    shape[attrs.axis] = x.shape[attrs.axis]
    position = np.arange(x.shape[attrs.axis]).reshape(shape).astype(valid.dtype)
    vshape = [1] * x.ndim
    vshape[1 - attrs.axis] = x.shape[1 - attrs.axis]
    masked = position >= valid.reshape(vshape)
    return np.where(masked, np.asarray(attrs.mask_value).astype(x.dtype), x).astype(x.dtype)


def _sequence_mask_compute(attrs, inputs, out_type):
    """mask_value where the position along axis, in valid_length's dtype, is >= valid_length[b]."""
    x, valid = inputs
    mask = tir.const(attrs.mask_value, x.dtype)

    def body(*i):
        position = te_cast(i[attrs.axis], valid.dtype)
        return te.if_then_else(position >= valid[i[1 - attrs.axis]], mask, x[i])
    return [IM.compute(SEQUENCE_MASK, IM.te_dims(x), body)]


SEQUENCE_MASK = defop(
    "sequence_mask", inputs=("data", "valid_length"), attrs=SequenceMaskAttrs, rel=_sequence_mask_rel,
    pattern=OpPattern.INJECTIVE, ref=_sequence_mask_ref, compute=_sequence_mask_compute, level=10,
    samples=lambda rng: [
        Sample([S.rand(rng, (3, 2, 3)), np.array([1, 3], "int32")], SequenceMaskAttrs()),
        Sample([S.rand(rng, (2, 4)), np.array([2.5, 0.0], "float32")], SequenceMaskAttrs(-1.5, 1), "float lengths"),
        Sample([S.rand(rng, (4, 3), "int32"), np.array([0, 4, 9], "int64")], SequenceMaskAttrs(7.0, 0))],
    doc="positions at or past each batch's valid length set to mask_value")


# --- sliding_window ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SlidingWindowAttrs(Attrs):
    axis: int = always_printed(0)
    window_shape: tuple = always_printed(())
    strides: tuple = always_printed(())

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))
        object.__setattr__(self, "window_shape", as_int_tuple(self.window_shape, name="window_shape"))
        object.__setattr__(self, "strides", as_int_tuple(self.strides, name="strides"))


def _window_counts(op, data, attrs):
    """The number of windows along each slid axis (dims that may be symbolic)."""
    if not 0 <= attrs.axis < data.ndim:
        raise fail(op, f"axis {attrs.axis} must be in [0, {data.ndim}) (TVM takes no negative axis)", data)
    slid = data.shape[attrs.axis:]
    if len(attrs.window_shape) != len(slid) or len(attrs.strides) != len(slid):
        raise fail(op, f"window_shape {attrs.window_shape} and strides {attrs.strides} need one entry per "
                       f"axis from {attrs.axis} on ({len(slid)})", data)
    if any(w < 1 for w in attrs.window_shape) or any(s < 1 for s in attrs.strides):
        raise fail(op, f"window_shape {attrs.window_shape} and strides {attrs.strides} must be >= 1", data)
    counts = []
    for d, w, s in zip(slid, attrs.window_shape, attrs.strides):
        if is_static(d):
            if int(d) < w:
                raise fail(op, f"a window of {w} does not fit an axis of size {int(d)}", data)
            counts.append((int(d) - w) // s + 1)
        else:
            counts.append(None)   # symbolic: the relation writes it as an expression
    return counts


def _sliding_window_rel(arg_types, attrs):
    from ..ir.shape_math import add, floordiv, sub
    data = expect_tensor(arg_types[0], "sliding_window data")
    counts = _window_counts("sliding_window", data, attrs)
    dims = []
    for c, d, w, s in zip(counts, data.shape[attrs.axis:], attrs.window_shape, attrs.strides):
        dims.append(c if c is not None else add(floordiv(sub(d, w), s), 1))
    return TensorType(tuple(data.shape[:attrs.axis]) + tuple(dims) + attrs.window_shape, data.dtype)


def _sliding_window_ref(x, attrs):
    out_type = _sliding_window_rel([TensorType(x.shape, str(x.dtype))], attrs)
    shape = tuple(int(d) for d in out_type.shape)
    k = len(attrs.window_shape)
    out = np.empty(shape, x.dtype)
    if out.size == 0:
        return out
    lead, counts = shape[:attrs.axis], shape[attrs.axis:attrs.axis + k]
    for w in np.ndindex(*counts):
        starts = [a * s for a, s in zip(w, attrs.strides)]
        window = x[(Ellipsis,) + tuple(slice(b, b + n) for b, n in zip(starts, attrs.window_shape))]
        out[(slice(None),) * len(lead) + w] = window
    return out


def _sliding_window_compute(attrs, inputs, out_type):
    """out[lead, w, e] = data[lead, w * strides + e]."""
    x = inputs[0]
    dims = IM.te_dims(x)
    a, k = attrs.axis, len(attrs.window_shape)
    counts = [(d - w) // s + 1 if IM.is_static(d) else tir.floordiv(d - w, s) + 1
              for d, w, s in zip(dims[a:], attrs.window_shape, attrs.strides)]

    def body(*i):
        windows, within = i[a:a + k], i[a + k:]
        return x[i[:a] + tuple(w * s + e for w, s, e in zip(windows, attrs.strides, within))]
    return [IM.compute(SLIDING_WINDOW, tuple(dims[:a]) + tuple(counts) + attrs.window_shape, body)]


SLIDING_WINDOW = defop(
    "sliding_window", inputs=("data",), attrs=SlidingWindowAttrs, rel=_sliding_window_rel,
    pattern=OpPattern.OPAQUE, ref=_sliding_window_ref, compute=_sliding_window_compute, level=10,
    samples=lambda rng: [
        Sample([S.rand(rng, (2, 6))], SlidingWindowAttrs(1, (3,), (2,))),
        Sample([S.rand(rng, (5, 4), "int32")], SlidingWindowAttrs(0, (2, 2), (1, 2))),
        Sample([S.rand(rng, (1, 2, 3, 4), "float64")], SlidingWindowAttrs(1, (2, 2, 3), (1, 1, 1)))],
    doc="every window of window_shape (stepped by strides) over the axes from axis on")


# --- Python constructors with tvm.relay's names --------------------------------------------------------------
def reverse_sequence(data, seq_lengths, seq_axis=1, batch_axis=0):
    """relay.reverse_sequence: reverse the first seq_lengths[b] elements along seq_axis of each
    batch b along batch_axis.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    seq_lengths : relay.Expr
        The integer length of each batch's sequence, 1-D of length data.shape[batch_axis].
    seq_axis : int, optional
        The axis reversed. Defaults to 1.
    batch_axis : int, optional
        The axis of the batches. Defaults to 0.
    Returns
    -------
    result : relay.Expr
        The tensor, of data's type.
    """
    return REVERSE_SEQUENCE(data, seq_lengths, attrs=ReverseSequenceAttrs(seq_axis, batch_axis))


def sequence_mask(data, valid_length, mask_value=0, axis=0):
    """relay.sequence_mask: positions at or past valid_length set to mask_value (axis: the length
    axis, 0 or 1).

    Parameters
    ----------
    data : relay.Expr
        The input, (length, batch, ...) for axis 0 or (batch, length, ...) for axis 1.
    valid_length : relay.Expr
        The valid length of each batch, 1-D of length batch.
    mask_value : float, optional
        The value of the masked positions. Defaults to 0.
    axis : int, optional
        The length axis, 0 or 1; the other of the two is the batch axis. Defaults to 0.
    Returns
    -------
    result : relay.Expr
        The masked tensor, of data's type.
    """
    return SEQUENCE_MASK(data, valid_length, attrs=SequenceMaskAttrs(mask_value, axis))


def sliding_window(data, axis, window_shape, strides):
    """relay.sliding_window: all windows of window_shape over the axes from `axis` on.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    axis : int
        The first axis windowed; it and every later axis get a window.
    window_shape : tuple of int
        The window's length along each axis from `axis` on.
    strides : tuple of int
        The step between windows along each axis from `axis` on.
    Returns
    -------
    result : relay.Expr
        data's axes before `axis`, then the number of windows along each windowed axis, then
        window_shape.
    """
    return SLIDING_WINDOW(data, attrs=SlidingWindowAttrs(axis, window_shape, strides))


__all__ = ["reverse_sequence", "sequence_mask", "sliding_window"]
