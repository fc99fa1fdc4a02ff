"""The backward operators TVM v0.18 exposes as ops: nn.max_pool2d_grad, nn.avg_pool2d_grad (the
gradient of a 2-D pool with respect to its input) and nn.conv2d_backward_weight (the gradient of
conv2d with respect to its weight). OUT_ELEMWISE_FUSABLE. NCHW or NHWC data.

max_pool2d_grad routes each window's output gradient to the first cell (row-major over the
window) holding the window's maximum, as TVM's; avg_pool2d_grad spreads it evenly over the
cells the forward pool divided by (count_include_pad and ceil_mode as the forward op).
The computes are gathers: an input cell sums over the windows that contain it.

conv2d_backward_weight(grad, data): dw[o, c, p, q] = sum over (n, y, x) of
grad[n, o, y, x] * pad(data)[n, g(o) * C/G + c, y * sh + p * dh, x * sw + q * dw].
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs
from ...ir.dims import is_static
from ...ir.shape_math import dims_differ, floordiv
from ...ir.types import TensorType
from .. import samples as S
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as C
from . import _te as T
from . import _window as Wn
from ..constructor_docs import documented
from .conv_docs import CONV_PARAMETERS
from .pool import (LONG_SIDE, POOL_PARAMETERS, AvgPool2DAttrs, MaxPool2DAttrs, _counted, _make_pool_rel,
                   _padded_windows)


# --- pool gradients --------------------------------------------------------------------------------
def _make_pool_grad_rel(op):
    forward = _make_pool_rel(op)

    def rel(arg_types, attrs) -> TensorType:
        """(out_grad of the pool's output shape, data) -> data's type."""
        grad = C.tensor_arg(op, arg_types[0], "out_grad")
        data = C.tensor_arg(op, arg_types[1], "data")
        types = dict(out_grad=grad, data=data)
        C.same_dtype(op, **types)
        C.expect_rank(op, data, 4, f"data ({attrs.layout})", **types)
        nchw = TensorType(Wn.pick(data.shape, attrs.layout, "NCHW"), data.dtype)
        want = Wn.place(forward([nchw], attrs).shape, "NCHW", attrs.layout)
        if grad.ndim != 4 or any(dims_differ(a, b) for a, b in zip(grad.shape, want)):
            raise C.rel_error(op, f"out_grad must have the pool's output shape {tuple(want)}", **types)
        return data
    return rel


def _scatter_windows(per_tap, attrs, data_shape, pads):
    """Add per_tap(k) (N, C, OH, OW) for every window tap k back at its input cell; crop pads."""
    n, c, h, w = data_shape
    kh, kw = attrs.pool_size
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    out = np.zeros((n, c, h + pads[0] + pads[2], w + pads[1] + pads[3]))
    for p in range(kh):
        for q in range(kw):
            slab = per_tap(p * kw + q)
            oh, ow = slab.shape[2:]
            out[:, :, p * dh:p * dh + (oh - 1) * sh + 1:sh, q * dw:q * dw + (ow - 1) * sw + 1:sw] += slab
    return out[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w]


def _in_nchw(fn):
    """Run an NCHW (out_grad, data) reference on the op's layout."""
    def ref(grad, data, attrs):
        to = [attrs.layout.index(ch) for ch in "NCHW"]
        res = fn(np.transpose(grad, to), np.transpose(data, to), attrs)
        return Wn.from_channel_first(res.astype(data.dtype), "NCHW", attrs.layout)
    return ref


@_in_nchw
def _max_pool_grad_ref(grad, data, attrs):
    lowest = -np.inf if data.dtype.kind == "f" else np.iinfo(data.dtype).min
    win, _, pads = _padded_windows(data, attrs, lowest)
    first = win.reshape(win.shape[:4] + (-1,)).argmax(axis=4)        # the first maximum of each window
    g = grad.astype("float64")
    return _scatter_windows(lambda k: np.where(first == k, g, 0.0), attrs, data.shape, pads)


def _avg_counts(attrs, h, w, oh, ow):
    top, left, bottom, right = attrs.padding
    lo_h, hi_h = (-top, h + bottom) if attrs.count_include_pad else (0, h)
    lo_w, hi_w = (-left, w + right) if attrs.count_include_pad else (0, w)

    def per_axis(out, stride, kernel, dilation, lo, hi, before):
        starts = np.arange(out) * stride - before
        taps = starts[:, None] + np.arange(kernel)[None, :] * dilation
        return ((taps >= lo) & (taps < hi)).sum(axis=1)
    rows = per_axis(oh, attrs.strides[0], attrs.pool_size[0], attrs.dilation[0], lo_h, hi_h, top)
    cols = per_axis(ow, attrs.strides[1], attrs.pool_size[1], attrs.dilation[1], lo_w, hi_w, left)
    return np.maximum(rows[:, None] * cols[None, :], 1)


@_in_nchw
def _avg_pool_grad_ref(grad, data, attrs):
    _, (oh, ow), pads = _padded_windows(data, attrs, 0)
    share = grad.astype("float64") / _avg_counts(attrs, data.shape[2], data.shape[3], oh, ow)
    return _scatter_windows(lambda k: share, attrs, data.shape, pads)


def _window_of(index, p, q, attrs, oh, ow):
    """(valid, oy, ox): the output window whose tap (p, q) lands on input cell index (y, x)."""
    y, x = index
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    ty, tx = y + attrs.padding[0] - p * dh, x + attrs.padding[1] - q * dw
    conds = [ty >= 0, tx >= 0, ty < oh * sh, tx < ow * sw]
    conds += [ty % sh == 0] if sh > 1 else []
    conds += [tx % sw == 0] if sw > 1 else []
    return tir.all(*conds), ty // sh, tx // sw


def _pool_grad_compute(kind):
    def compute(attrs, inputs, out_type):
        """Gather: each input cell sums the share of every window tap landing on it (max: only
        the window's first maximum cell; avg: grad / counted cells)."""
        grad, data = inputs
        layout = attrs.layout
        n, c, h, w = Wn.pick(T.dims(data), layout, "NCHW")
        _, _, oh, ow = Wn.pick(T.dims(grad), layout, "NCHW")
        kh, kw = attrs.pool_size
        acc = T.acc_dtype(data.dtype) if tir.is_float_dtype(data.dtype) else "float64"
        tag = (MAX_POOL2D_GRAD if kind == "max" else AVG_POOL2D_GRAD).tag
        (sh, sw), (dh, dw), (top, left) = attrs.strides, attrs.dilation, attrs.padding[:2]

        def load(b, ch, y, x):
            return grad[Wn.place((b, ch, y, x), "NCHW", layout)].astype(acc)
        if kind == "max":
            ry, rx = te.reduce_axis((0, kh), "wy"), te.reduce_axis((0, kw), "wx")

            def cell(b, ch, oy, ox, p, q):
                iy, ix = oy * sh + p * dh - top, ox * sw + q * dw - left
                inside = tir.all(T.in_range(iy, 0, h), T.in_range(ix, 0, w))
                return inside, te.if_then_else(inside, data[Wn.place((b, ch, iy, ix), "NCHW", layout)],
                                               tir.min_value(data.dtype))
            wmax = te.compute((n, c, oh, ow), lambda b, ch, oy, ox: te.max(cell(b, ch, oy, ox, ry.var, rx.var)[1],
                                                                           axis=[ry, rx]), name="window_max", tag=tag)
            fy, fx = te.reduce_axis((0, kh), "fy"), te.reduce_axis((0, kw), "fx")

            def first(b, ch, oy, ox):
                _, value = cell(b, ch, oy, ox, fy.var, fx.var)
                hit = value == wmax[b, ch, oy, ox]
                return te.min(te.if_then_else(hit, fy.var * kw + fx.var, tir.const(kh * kw, "int32")), axis=[fy, fx])
            argmax = te.compute((n, c, oh, ow), first, name="window_argmax", tag=tag)
        else:
            top_, left_, bottom, right = attrs.padding
            ybounds = (-top_, h + bottom) if attrs.count_include_pad else (0, h)
            xbounds = (-left_, w + right) if attrs.count_include_pad else (0, w)
        gy, gx = te.reduce_axis((0, kh), "gy"), te.reduce_axis((0, kw), "gx")

        def body(*index):
            b, ch, y, x = Wn.pick(index, layout, "NCHW")
            valid, oy, ox = _window_of((y, x), gy.var, gx.var, attrs, oh, ow)
            if kind == "max":
                share = te.if_then_else(argmax[b, ch, oy, ox] == gy.var * kw + gx.var, load(b, ch, oy, ox),
                                        T.const(0, acc))
            else:
                count = _counted(oy * sh - top, kh, dh, *ybounds) * _counted(ox * sw - left, kw, dw, *xbounds)
                share = load(b, ch, oy, ox) / tir.max(count, 1).astype(acc)
            return te.sum(te.if_then_else(valid, share, T.const(0, acc)), axis=[gy, gx])
        total = te.compute(data.shape, body, name=f"{kind}_pool2d_grad_sum", tag=tag)
        return [te.compute(data.shape, lambda *i: total[i].astype(data.dtype), name=f"{kind}_pool2d_grad", tag=tag)]
    return compute


def _pool_grad_samples(attrs_cls):
    def gen(rng):
        A = attrs_cls
        extra = dict(count_include_pad=True) if attrs_cls is AvgPool2DAttrs else {}

        def inputs(shape, out_shape, dtype="float32"):
            data = rng.permutation(np.linspace(-3, 3, int(np.prod(shape)))).reshape(shape).astype(dtype)
            return [S.rand(rng, out_shape, dtype), data]
        return [Sample(inputs((1, 2, 4, 4), (1, 2, 2, 2)), A(pool_size=2, strides=2)),
                Sample(inputs((1, 1, 5, 6), (1, 1, 3, 3)), A(pool_size=3, strides=2, padding=1, **extra),
                       "overlapping windows, padding"),
                Sample(inputs((2, 2, 5, 5), (2, 2, 3, 2), "float64"), A(pool_size=(2, 3), strides=2, ceil_mode=True),
                       "ceil_mode"),
                Sample(inputs((1, 4, 5, 2), (1, 3, 4, 2)), A(pool_size=2, strides=1, layout="NHWC", **extra), "NHWC"),
                Sample(inputs((1, 1, LONG_SIDE, LONG_SIDE), (1, 1, 1, 1), "float16"), A(pool_size=LONG_SIDE),
                       "float16, one long window")]
    return gen


MAX_POOL2D_GRAD = defop("nn.max_pool2d_grad", inputs=("out_grad", "data"), attrs=MaxPool2DAttrs,
                        rel=_make_pool_grad_rel("nn.max_pool2d_grad"), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                        ref=_max_pool_grad_ref, compute=_pool_grad_compute("max"),
                        samples=_pool_grad_samples(MaxPool2DAttrs), level=2,
                        doc="d data: each window's out_grad at the window's first maximum cell")
AVG_POOL2D_GRAD = defop("nn.avg_pool2d_grad", inputs=("out_grad", "data"), attrs=AvgPool2DAttrs,
                        rel=_make_pool_grad_rel("nn.avg_pool2d_grad"), pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
                        ref=_avg_pool_grad_ref, compute=_pool_grad_compute("avg"),
                        samples=_pool_grad_samples(AvgPool2DAttrs), level=2,
                        doc="d data: each window's out_grad / count spread over its counted cells")


# The pool gradients take their forward pool's parameters (constructor_docs completes their docstrings)
POOL_GRAD_PARAMETERS = {
    **POOL_PARAMETERS,
    "out_grad": ("relay.Expr", "The gradient with respect to the forward pool's result (the pooled shape)."),
    "data": ("relay.Expr", "The forward pool's input, in `layout`."),
    "count_include_pad": ("bool, optional", "As the forward avg_pool2d: if True, padded cells count in the "
                                            "divisor; if False, only cells of the input do."),
}
INPUT_GRADIENT = ("result", "relay.Expr", "The gradient with respect to `data` (data's shape).")


@documented(POOL_GRAD_PARAMETERS, INPUT_GRADIENT)
def max_pool2d_grad(out_grad, data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0), layout="NCHW", out_layout="",
                    ceil_mode=False):
    """relay.nn.max_pool2d_grad: the gradient of max_pool2d with respect to its input."""
    return MAX_POOL2D_GRAD(out_grad, data, attrs=MaxPool2DAttrs(pool_size, strides, (1, 1), padding, layout,
                                                                out_layout, ceil_mode))


@documented(POOL_GRAD_PARAMETERS, INPUT_GRADIENT)
def avg_pool2d_grad(out_grad, data, pool_size=(1, 1), strides=(1, 1), padding=(0, 0), layout="NCHW", out_layout="",
                    ceil_mode=False, count_include_pad=False):
    """relay.nn.avg_pool2d_grad: the gradient of avg_pool2d with respect to its input."""
    return AVG_POOL2D_GRAD(out_grad, data, attrs=AvgPool2DAttrs(pool_size, strides, (1, 1), padding, layout,
                                                                out_layout, ceil_mode, count_include_pad))


# --- conv2d_backward_weight ------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Conv2DBackwardWeightAttrs(Attrs):
    """TVM stores these in Conv2DAttrs with the layouts repurposed; here each has its own name."""
    strides: tuple = (1, 1)
    padding: tuple = (0, 0, 0, 0)
    dilation: tuple = (1, 1)
    groups: int = 1
    channels: int = None
    kernel_size: tuple = None
    grad_layout: str = "NCHW"
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_dtype: str = ""

    def __post_init__(self):
        op = "nn.conv2d_backward_weight"
        C.normalize_conv_window(self, 2, C.padding4)
        if self.kernel_size is None:
            raise AttrsError(f"{op}: kernel_size must be given (the weight's spatial size)")
        Wn.check_order(op, "grad_layout", self.grad_layout, "NCHW")
        Wn.check_order(op, "data_layout", self.data_layout, "NCHW")
        Wn.check_order(op, "kernel_layout", self.kernel_layout, "OIHW")


def _bw_rel(arg_types, attrs) -> TensorType:
    """grad (N, O, OH, OW), data (N, C, H, W) -> weight (O, C / groups, KH, KW) in kernel_layout."""
    op = "nn.conv2d_backward_weight"
    types = C.layout_operands(op, arg_types, 4, grad=attrs.grad_layout, data=attrs.data_layout)
    grad, data = types.values()
    gn, o, oh, ow = Wn.pick(grad.shape, attrs.grad_layout, "NCHW")
    n, c, h, w = Wn.pick(data.shape, attrs.data_layout, "NCHW")
    g = attrs.groups
    for what, channels in (("input", c), ("output", o)):
        if is_static(channels) and int(channels) % g:
            raise C.rel_error(op, f"groups={g} does not divide the {channels} {what} channels", **types)
    if dims_differ(gn, n):
        raise C.rel_error(op, "grad and data must have the same batch size", **types)
    for axis, (size, out) in enumerate(((h, oh), (w, ow))):
        want = C.window_out_dim(size, attrs.kernel_size[axis], attrs.strides[axis], attrs.dilation[axis],
                                attrs.padding[axis], attrs.padding[axis + 2])
        if want is None or dims_differ(want, out):
            raise C.rel_error(op, f"grad's {'HW'[axis]} size must be the forward conv2d's output size {want}", **types)
    shape = Wn.place((o, floordiv(c, g)) + tuple(attrs.kernel_size), "OIHW", attrs.kernel_layout)
    return TensorType(shape, C.result_dtype(attrs.out_dtype, grad.dtype))


def _bw_ref(grad, data, attrs):
    dtype = C.result_dtype(attrs.out_dtype, str(grad.dtype))
    g = Wn.to_channel_first(grad, attrs.grad_layout, "NCHW").astype("float64")
    x = Wn.to_channel_first(data, attrs.data_layout, "NCHW").astype("float64")
    xp = C.pad_hw(x, attrs.padding)
    win = C.windows(xp, attrs.kernel_size, attrs.strides, attrs.dilation, g.shape[2:])   # N, C, OH, OW, KH, KW
    groups = attrs.groups
    n, c, oh, ow, kh, kw = win.shape
    o = g.shape[1]
    wg = win.reshape(n, groups, c // groups, oh, ow, kh, kw)
    gg = g.reshape(n, groups, o // groups, oh, ow)
    dw = np.einsum("ngcyxpq,ngoyx->gocpq", wg, gg, optimize=True).reshape(o, c // groups, kh, kw)
    return Wn.from_channel_first(dw, "OIHW", attrs.kernel_layout).astype(dtype)


def _bw_compute(attrs, inputs, out_type):
    """A padded-data stage (inlinable), then the reduction over (n, y, x) per weight element."""
    grad, data = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    gl, dl, kl = attrs.grad_layout, attrs.data_layout, attrs.kernel_layout
    n, o, oh, ow = Wn.pick(T.dims(grad), gl, "NCHW")
    c = Wn.pick(T.dims(data), dl, "NCHW")[1]
    per_in, per_out = c // attrs.groups, o // attrs.groups
    pads = attrs.padding
    padded = Wn.pad_stage(data, (dl.index("H"), dl.index("W")), pads[:2], pads[2:], 0, name="pad_data")
    rn, ry, rx = te.reduce_axis((0, n), "rn"), te.reduce_axis((0, oh), "ry"), te.reduce_axis((0, ow), "rx")
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation

    def body(*index):
        oc, ic, p, q = Wn.pick(index, kl, "OIHW")
        channel = (oc // per_out) * per_in + ic if attrs.groups > 1 else ic
        pixel = padded[Wn.place((rn.var, channel, ry.var * sh + p * dh, rx.var * sw + q * dw), "NCHW", dl)]
        return te.sum(grad[Wn.place((rn.var, oc, ry.var, rx.var), "NCHW", gl)].astype(acc) * pixel.astype(acc),
                      axis=[rn, ry, rx])
    kh, kw = attrs.kernel_size
    res = te.compute(Wn.place((o, per_in, kh, kw), "OIHW", kl), body, name="conv2d_backward_weight",
                     tag=CONV2D_BACKWARD_WEIGHT.tag)
    return [T.cast_to(res, dtype, CONV2D_BACKWARD_WEIGHT.tag, "conv2d_backward_weight_cast")]


def _bw_samples(rng):
    A = Conv2DBackwardWeightAttrs
    n16 = S.FLOAT16_REDUCTION_TERMS
    return [Sample([S.rand(rng, (2, 4, 5, 5)), S.rand(rng, (2, 3, 5, 5))], A(padding=1, kernel_size=3)),
            Sample([S.rand(rng, (1, 4, 2, 3)), S.rand(rng, (1, 2, 5, 6))],
                   A(strides=2, padding=(0, 1, 0, 0), dilation=(1, 2), groups=2, kernel_size=(2, 2)),
                   "strided, dilated, grouped"),
            Sample([S.rand(rng, (1, 3, 2, 2), "float64"), S.rand(rng, (1, 4, 3, 3), "float64")],
                   A(kernel_size=(2, 2), grad_layout="NHWC", data_layout="NHWC", kernel_layout="HWIO"), "NHWC / HWIO"),
            Sample([S.rand(rng, (n16 // 16, 1, 4, 4), "float16", 0, 1),
                    S.rand(rng, (n16 // 16, 1, 4, 4), "float16", 0, 1)],
                   A(padding=1, kernel_size=3), "float16, a long reduction")]


CONV2D_BACKWARD_WEIGHT = defop(
    "nn.conv2d_backward_weight", inputs=("grad", "data"), attrs=Conv2DBackwardWeightAttrs, rel=_bw_rel,
    pattern=OpPattern.OUT_ELEMWISE_FUSABLE, ref=_bw_ref, compute=_bw_compute, samples=_bw_samples, level=2,
    doc="dw[o, c, p, q] = sum_{n, y, x} grad[n, o, y, x] * pad(data)[n, g(o)*C/G + c, y*sh + p*dh, x*sw + q*dw]")


@documented(CONV_PARAMETERS, ("result", "relay.Expr", "The weight gradient, in `kernel_layout`."))
def conv2d_backward_weight(grad, data, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, channels=None,
                           kernel_size=None, grad_layout="NCHW", data_layout="NCHW", kernel_layout="OIHW",
                           out_dtype=""):
    """relay.nn.conv2d_backward_weight: the gradient of conv2d with respect to its weight.

    The other parameters are those of the forward conv2d whose weight gradient is wanted.

    Parameters
    ----------
    grad : relay.Expr
        The gradient with respect to the forward conv2d's result, in `grad_layout`.
    data : relay.Expr
        The forward conv2d's input, in `data_layout`.
    channels : None or int, optional
        The forward conv2d's output channels, when known; None reads them from `grad`. Defaults
        to None.
    kernel_size : int or tuple of int
        The forward kernel's (KH, KW). Required: the None default is refused with an error that
        asks for it.
    grad_layout : str, optional
        The order of the letters N, C, H, W in `grad`. Defaults to "NCHW".
    kernel_layout : str, optional
        The layout of the weight gradient (the forward weight's), e.g. "OIHW" or "HWIO". Defaults
        to "OIHW".
    """
    return CONV2D_BACKWARD_WEIGHT(grad, data, attrs=Conv2DBackwardWeightAttrs(
        strides, padding, dilation, groups, channels, kernel_size, grad_layout, data_layout, kernel_layout, out_dtype))


__all__ = ["max_pool2d_grad", "avg_pool2d_grad", "conv2d_backward_weight", "Conv2DBackwardWeightAttrs"]
