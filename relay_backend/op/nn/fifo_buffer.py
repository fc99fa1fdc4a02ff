"""nn.fifo_buffer (TVM v0.18): push `data` into the end of a FIFO `buffer` along `axis`, dropping
the oldest entries: out = concatenate(buffer, data, axis)[data.shape[axis]:] along axis, so the
output has the buffer's type. OPAQUE, as in TVM (a stateful pattern: callers feed the output
back as the next buffer)."""
import dataclasses

import numpy as np

from ... import te
from ...ir.attrs import Attrs
from ...ir.dims import is_static
from ...ir.shape_math import dims_differ
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T


@dataclasses.dataclass(frozen=True)
class FIFOBufferAttrs(Attrs):
    axis: int = 0

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))


def _rel(arg_types, attrs) -> TensorType:
    """data and buffer agree except along axis, where the buffer is at least as long."""
    op = "nn.fifo_buffer"
    data = C.tensor_arg(op, arg_types[0], "data")
    buffer = C.tensor_arg(op, arg_types[1], "buffer")
    types = dict(data=data, buffer=buffer)
    C.same_dtype(op, **types)
    if data.ndim != buffer.ndim:
        raise C.rel_error(op, "data and buffer must have the same rank", **types)
    ax = C.norm_axis(op, attrs.axis, buffer.ndim, **types)
    for k, (d, b) in enumerate(zip(data.shape, buffer.shape)):
        if k != ax and dims_differ(d, b):
            raise C.rel_error(op, f"data and buffer differ on axis {k} (only axis {ax} may differ)", **types)
    if is_static(data.shape[ax]) and is_static(buffer.shape[ax]) and int(data.shape[ax]) > int(buffer.shape[ax]):
        raise C.rel_error(op, f"data ({data.shape[ax]} along axis {ax}) is longer than the buffer", **types)
    return buffer


def _ref(data, buffer, attrs):
    ax = attrs.axis % buffer.ndim
    both = np.concatenate([buffer, data], axis=ax)
    return np.ascontiguousarray(np.take(both, range(data.shape[ax], both.shape[ax]), axis=ax))


def _compute(attrs, inputs, out_type):
    data, buffer = inputs
    ax = T.norm_axis(attrs.axis, len(buffer.shape))
    shift, length = T.dims(data)[ax], T.dims(buffer)[ax]

    def f(*i):
        j = i[ax] + shift
        from_buffer = tuple(j if k == ax else v for k, v in enumerate(i))
        from_data = tuple(j - length if k == ax else v for k, v in enumerate(i))
        return te.if_then_else(j < length, buffer[from_buffer], data[from_data])
    return [te.compute(buffer.shape, f, name="fifo_buffer", tag=FIFO_BUFFER.tag)]


FIFO_BUFFER = defop(
    "nn.fifo_buffer", inputs=("data", "buffer"), attrs=FIFOBufferAttrs, rel=_rel, pattern=OpPattern.OPAQUE, ref=_ref,
    compute=_compute, level=10,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3)), S.rand(rng, (5, 3))], FIFOBufferAttrs(0)),
                         Sample([S.rand(rng, (1, 2, 4), "float64"), S.rand(rng, (1, 2, 4), "float64")],
                                FIFOBufferAttrs(-1), "data as long as the buffer"),
                         Sample([S.rand(rng, (2, 1), "int32", -9, 9), S.rand(rng, (2, 6), "int32", -9, 9)],
                                FIFOBufferAttrs(1))],
    doc="out = concatenate(buffer, data, axis)[len(data):] along axis")


def fifo_buffer(data, buffer, axis):
    """relay.nn.fifo_buffer: append data to the buffer along axis, dropping the oldest entries.

    Parameters
    ----------
    data : relay.Expr
        The new entries; its shape is the buffer's except along `axis`.
    buffer : relay.Expr
        The current buffer, at least as long as `data` along `axis`.
    axis : int
        The axis along which entries are pushed.

    Returns
    -------
    result : relay.Expr
        The next buffer, of the type of `buffer`: its last entries along `axis` are `data`.
    """
    return FIFO_BUFFER(data, buffer, attrs=FIFOBufferAttrs(axis))


__all__ = ["fifo_buffer", "FIFOBufferAttrs"]
