"""nn.correlation (FlowNet's correlation layer, TVM v0.18; NCHW; OUT_ELEMWISE_FUSABLE).

Both inputs are zero-padded; for output pixel (i, j) and displacement q = (a, b) with
a, b in [-r, r] (r = max_displacement // stride2):
  y1 = i * stride1 + max_displacement,  y2 = y1 + a * stride2 (x likewise),
  out[n, q, i, j] = sum_{c, ky, kx} f(pad1[n, c, y1 + ky, x1 + kx], pad2[n, c, y2 + ky, x2 + kx])
                    / (kernel_size^2 * C),
f = product (is_multiply) or absolute difference. Output channels (2r + 1)^2, spatial size
ceil((padded size - 2 * (max_displacement + (kernel_size - 1) // 2)) / stride1).
"""
import dataclasses

import numpy as np

from ... import te
from ...errors import AttrsError
from ...ir.attrs import Attrs, always_printed
from ...ir.dims import is_static
from ...ir.shape_math import add, ceildiv, dims_differ
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from . import _window as Wn


@dataclasses.dataclass(frozen=True)
class CorrelationAttrs(Attrs):
    kernel_size: int = always_printed(1)
    max_displacement: int = always_printed(1)
    stride1: int = always_printed(1)
    stride2: int = always_printed(1)
    padding: tuple = always_printed((0, 0, 0, 0))
    is_multiply: bool = always_printed(True)
    layout: str = always_printed("NCHW")

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        set_("kernel_size", C.ints(self.kernel_size, 1, "kernel_size", minimum=1)[0])
        if self.kernel_size % 2 == 0:
            raise AttrsError(f"attribute kernel_size={self.kernel_size} must be odd")
        set_("max_displacement", C.ints(self.max_displacement, 1, "max_displacement")[0])
        set_("stride1", C.ints(self.stride1, 1, "stride1", minimum=1)[0])
        set_("stride2", C.ints(self.stride2, 1, "stride2", minimum=1)[0])
        set_("padding", C.padding4(self.padding))
        set_("is_multiply", bool(self.is_multiply))
        C.check_layout("nn.correlation", "layout", self.layout, ("NCHW",))


def _geometry(attrs):
    radius = attrs.max_displacement // attrs.stride2
    border = attrs.max_displacement + (attrs.kernel_size - 1) // 2
    return radius, 2 * radius + 1, border


def _rel(arg_types, attrs) -> TensorType:
    """data1, data2 (N, C, H, W) of one shape -> (N, (2r + 1)^2, OH, OW)."""
    op = "nn.correlation"
    a = C.tensor_arg(op, arg_types[0], "data1")
    b = C.tensor_arg(op, arg_types[1], "data2")
    types = dict(data1=a, data2=b)
    C.same_dtype(op, **types)
    C.expect_rank(op, a, 4, "data1 (NCHW)", **types)
    if b.ndim != 4 or any(dims_differ(x, y) for x, y in zip(a.shape, b.shape)):
        raise C.rel_error(op, "data1 and data2 must have the same shape", **types)
    _, size, border = _geometry(attrs)
    out = []
    for axis in (0, 1):
        padded = add(a.shape[2 + axis], attrs.padding[axis] + attrs.padding[axis + 2])
        if is_static(padded) and int(padded) - 2 * border < 1:
            raise C.rel_error(op, f"the padded input ({int(padded)} along {'HW'[axis]}) is smaller than the "
                                  f"border 2 * (max_displacement + kernel_size // 2) + 1 = {2 * border + 1}", **types)
        out.append(ceildiv(add(padded, -2 * border), attrs.stride1))
    return TensorType((a.shape[0], size * size) + tuple(out), a.dtype)


def _ref(x1, x2, attrs):
    radius, size, border = _geometry(attrs)
    pads = attrs.padding
    p1, p2 = (C.pad_hw(x.astype("float64"), pads) for x in (x1, x2))
    n, c, hp, wp = p1.shape
    oh, ow = -(-(hp - 2 * border) // attrs.stride1), -(-(wp - 2 * border) // attrs.stride1)
    k, s1, md = attrs.kernel_size, attrs.stride1, attrs.max_displacement
    win1 = C.windows(p1[:, :, md:, md:], (k, k), (s1, s1), (1, 1), (oh, ow))      # N, C, OH, OW, K, K
    out = np.zeros((n, size * size, oh, ow))
    for q in range(size * size):
        dy, dx = (q // size - radius) * attrs.stride2, (q % size - radius) * attrs.stride2
        win2 = C.windows(p2[:, :, md + dy:, md + dx:], (k, k), (s1, s1), (1, 1), (oh, ow))
        terms = win1 * win2 if attrs.is_multiply else np.abs(win1 - win2)
        out[:, q] = terms.sum(axis=(1, 4, 5))
    return (out / (k * k * c)).astype(x1.dtype)


def _compute(attrs, inputs, out_type):
    """Padded input stages (inlinable), one reduction over (c, ky, kx), then the division."""
    x1, x2 = inputs
    radius, size, _ = _geometry(attrs)
    n, c, h, w = T.dims(x1)
    acc = T.acc_dtype(x1.dtype)
    pads = attrs.padding
    p1, p2 = (Wn.pad_stage(x, (2, 3), pads[:2], pads[2:], 0, name=f"pad_data{k}") for k, x in ((1, x1), (2, x2)))
    k, s1, s2, md = attrs.kernel_size, attrs.stride1, attrs.stride2, attrs.max_displacement
    rc, ry, rx = te.reduce_axis((0, c), "rc"), te.reduce_axis((0, k), "ry"), te.reduce_axis((0, k), "rx")
    tag = CORRELATION.tag

    def body(b, q, i, j):
        y1, x1_ = i * s1 + md, j * s1 + md
        y2, x2_ = y1 + (q // size - radius) * s2, x1_ + (q % size - radius) * s2
        u = p1[b, rc.var, y1 + ry.var, x1_ + rx.var].astype(acc)
        v = p2[b, rc.var, y2 + ry.var, x2_ + rx.var].astype(acc)
        return te.sum(u * v if attrs.is_multiply else te.abs(u - v), axis=[rc, ry, rx])
    shape = [T.dim(d) for d in out_type.shape]
    total = te.compute(shape, body, name="correlation_sum", tag=tag)
    scale = T.const(1, acc) * (k * k * c)
    return [te.compute(shape, lambda *i: (total[i] / scale).astype(x1.dtype), name="correlation", tag=tag)]


def _samples(rng):
    A = CorrelationAttrs
    n16 = S.FLOAT16_REDUCTION_TERMS
    return [Sample([S.rand(rng, (1, 2, 6, 6)), S.rand(rng, (1, 2, 6, 6))], A(1, 2, 1, 1, (2, 2), True)),
            Sample([S.rand(rng, (2, 3, 7, 8), "float64"), S.rand(rng, (2, 3, 7, 8), "float64")],
                   A(3, 2, 2, 2, (2, 1, 2, 3), False), "kernel 3, strides 2, absolute differences"),
            Sample([S.rand(rng, (1, n16 // 8, 4, 4), "float16", 0, 1),
                    S.rand(rng, (1, n16 // 8, 4, 4), "float16", 0, 1)],
                   A(3, 1, 1, 1, (1, 1), True), "float16, a long reduction")]


CORRELATION = defop("nn.correlation", inputs=("data1", "data2"), attrs=CorrelationAttrs, rel=_rel,
                    pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_ref, compute=_compute, samples=_samples, level=10,
                    doc="FlowNet correlation of two feature maps over (2r + 1)^2 displacements")


def correlation(data1, data2, kernel_size, max_displacement, stride1, stride2, padding, is_multiply, layout):
    """relay.nn.correlation: FlowNet's correlation layer (layout NCHW).

    For each output pixel and each displacement (a, b) of the second image's patch, the mean
    over channels and patch cells of the product (or absolute difference) of the two patches.

    Parameters
    ----------
    data1 : relay.Expr
        The first feature map, (N, C, H, W).
    data2 : relay.Expr
        The second feature map, of data1's shape.
    kernel_size : int
        The side of the square patches compared (odd).
    max_displacement : int
        The largest displacement of the second patch, in input pixels, along each axis.
    stride1 : int
        The step between the output pixels, in the first map.
    stride2 : int
        The step between the displacements tried; there are (2 * (max_displacement // stride2)
        + 1) squared of them, one output channel each.
    padding : int or tuple of int
        Zero padding around both inputs: one value for every side, two for (height, width), or
        four for (top, left, bottom, right).
    is_multiply : bool
        If True, patches are compared by their product; if False, by the absolute difference.
    layout : str
        The layout of the inputs; only "NCHW".

    Returns
    -------
    result : relay.Expr
        The (N, displacements, OH, OW) correlation volume.
    """
    return CORRELATION(data1, data2, attrs=CorrelationAttrs(kernel_size, max_displacement, stride1, stride2, padding,
                                                            is_multiply, layout))


__all__ = ["correlation", "CorrelationAttrs"]
