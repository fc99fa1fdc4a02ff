"""Views of NCHW data in other layouts: numpy pack/unpack of channel blocks (the blocked ops'
references) and the layouts the 2-D pools accept, with the wrapper that lets one NCHW formula serve them:
NCHW, NHWC (a transposed view) and the channel-blocked NCHW{b}c of AlterOpLayout (data
(N, C/b, H, W, b); the pool computes take the block as a trailing index, so a blocked pool is
one stage with the block innermost, vectorizable).

`in_layout(rel=...)`, `in_layout(ref=...)`, `in_layout(compute=...)` wrap an NCHW relation,
reference or compute; relations and references see an NCHW view (the reference unpacks and
repacks blocks with numpy), computes see the blocked data directly.
"""
import re

import numpy as np

from ... import te
from ...ir.shape_math import dims_differ, floordiv, mul
from ...ir.types import TensorType
from . import _common as C
from . import _te as T

_BLOCKED = re.compile(r"^NCHW(\d+)c$")


def block_of(layout: str) -> int:
    """The channel block of a layout NCHW{b}c, or 0 for NCHW / NHWC."""
    m = _BLOCKED.match(layout or "")
    return int(m.group(1)) if m else 0


def check_layouts(attrs) -> None:
    what = f"{type(attrs).__name__}"
    if not block_of(attrs.layout):
        C.check_layout(what, "layout", attrs.layout, ("NCHW", "NHWC", "NCHW8c"))
    C.check_layout(what, "out_layout", attrs.out_layout, ("", attrs.layout))


def unpack_nchw(x: np.ndarray) -> np.ndarray:
    """(N, C/b, H, W, b) -> (N, C, H, W)."""
    n, cc, h, w, b = x.shape
    return x.transpose(0, 1, 4, 2, 3).reshape(n, cc * b, h, w)


def pack_nchw(x: np.ndarray, block: int) -> np.ndarray:
    """(N, C, H, W) -> (N, C/block, H, W, block)."""
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // block, block, h, w).transpose(0, 1, 3, 4, 2))


def _to_nchw(layout: str) -> list:
    return [layout.index(c) for c in "NCHW"]


def _from_nchw(layout: str) -> list:
    return ["NCHW".index(c) for c in layout]


def _blocked_rel(rel, arg_types, attrs, block):
    """The NCHW relation on the unpacked view of (N, C/b, H, W, b) data, its result packed again
    (symbolic dims allowed; a block dim that is not provably `block` is checked at run time)."""
    data = arg_types[0]
    if data.ndim != 5 or dims_differ(data.shape[4], block):
        raise C.rel_error("pool", f"data in layout {attrs.layout} must have rank 5 with a last dimension of "
                                  f"{block}", data=data)
    n, cc, h, w, _ = data.shape
    out = rel([TensorType((n, mul(cc, block), h, w), data.dtype)], attrs)
    on, oc, oh, ow = out.shape
    return TensorType((on, floordiv(oc, block), oh, ow, block), out.dtype)


def in_layout(rel=None, ref=None, compute=None):
    """Wrap an NCHW relation, reference or compute so it serves the op's `layout` too."""
    if rel is not None:
        def layout_rel(arg_types, attrs):
            block = block_of(attrs.layout)
            if block and isinstance(arg_types[0], TensorType):
                return _blocked_rel(rel, arg_types, attrs, block)
            if attrs.layout == "NCHW" or not isinstance(arg_types[0], TensorType) or arg_types[0].ndim != 4:
                return rel(arg_types, attrs)
            data = arg_types[0]
            out = rel([TensorType([data.shape[i] for i in _to_nchw(attrs.layout)], data.dtype)], attrs)
            return TensorType([out.shape[i] for i in _from_nchw(attrs.layout)], out.dtype)
        return layout_rel
    if ref is not None:
        def layout_ref(x, attrs):
            block = block_of(attrs.layout)
            if block:
                return pack_nchw(ref(unpack_nchw(x), attrs), block)
            if attrs.layout == "NCHW":
                return ref(x, attrs)
            out = ref(np.transpose(x, _to_nchw(attrs.layout)), attrs)
            return np.ascontiguousarray(np.transpose(out, _from_nchw(attrs.layout)))
        return layout_ref

    def layout_compute(attrs, inputs, out_type):
        data, = inputs
        if attrs.layout == "NCHW" or block_of(attrs.layout):
            return compute(attrs, inputs, out_type)    # the block is a trailing index
        to = _to_nchw(attrs.layout)
        dims = T.dims(data)
        view = te.compute([dims[i] for i in to], lambda *i: data[tuple(i[_from_nchw(attrs.layout)[k]]
                                                                       for k in range(4))],
                          name="nchw_view", tag=T.PAD_TAG)
        out, = compute(attrs, [view], out_type)
        odims = T.dims(out)
        back = _from_nchw(attrs.layout)
        return [te.compute([odims[i] for i in back], lambda *i: out[tuple(i[to[k]] for k in range(4))],
                           name=out.op.name + "_" + attrs.layout.lower(), tag=out.op.tag)]
    return layout_compute
