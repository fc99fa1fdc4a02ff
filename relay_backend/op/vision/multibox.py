"""SSD's anchor ops (TVM v0.18's vision.multibox_prior, vision.multibox_transform_loc) and
vision.yolo_reorg.

multibox_prior(data (N, C, H, W)): (1, H * W * (len(sizes) + len(ratios) - 1), 4) anchor boxes
(x1, y1, x2, y2), centred at ((j + offset_w) * step_w, (i + offset_h) * step_h) (steps default to
1 / W, 1 / H): first one box per size, then one per extra ratio with the first size; clip clamps
them to [0, 1]. INJECTIVE, a te.compute over the anchors.

multibox_transform_loc(cls_prob (B, classes, A), loc_pred (B, A * 4), anchor (1, A, 4)): per
anchor the best class (background skipped unless keep_background) and its score; a non-background
anchor whose score is below threshold becomes background; kept anchors (class > 0, or all with
keep_background) are packed to the front as (class - 1, score, decoded box) where the box is
the anchor moved by loc_pred scaled by variances (centre offsets, exp of log sizes), clamped to
[0, 1] when clip. Unused rows are -1 (TVM leaves them unset). Returns (boxes, valid count). OPAQUE.

yolo_reorg(data (N, C, H, W), stride): YOLOv2's reorganisation to (N, C * stride^2, H / stride,
W / stride) exactly as TVM computes it: per image a gather into the input's (C, H, W) shape by
Darknet's reorg index arithmetic, then read back in the output shape. (TVM's kernel also
multiplies the batch index by stride^2, reading outside the data for every image after the
first; here each image uses its own data.) INJECTIVE.
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs
from ...ir.shape_math import floordiv, mul
from ...ir.types import TensorType, TupleType
from ...tir import ir_builder
from .. import samples as S
from ..nn import _common as C
from ..nn import _te as T
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..tensor import real_attr
from . import ir_common as R


def _floats(op, name, value, length=None):
    values = tuple(real_attr(op, name, v) for v in (value if isinstance(value, (list, tuple)) else (value,)))
    if not values or (length is not None and len(values) != length):
        raise AttrsError(f"{op}: {name}={values} must hold {length or 'at least one'} value(s)")
    return values


@dataclasses.dataclass(frozen=True)
class MultiBoxPriorAttrs(Attrs):
    sizes: tuple = (1.0,)
    ratios: tuple = (1.0,)
    steps: tuple = (-1.0, -1.0)
    offsets: tuple = (0.5, 0.5)
    clip: bool = False

    def __post_init__(self):
        op = "vision.multibox_prior"
        object.__setattr__(self, "sizes", _floats(op, "sizes", self.sizes))
        object.__setattr__(self, "ratios", _floats(op, "ratios", self.ratios))
        object.__setattr__(self, "steps", _floats(op, "steps", self.steps, 2))
        object.__setattr__(self, "offsets", _floats(op, "offsets", self.offsets, 2))
        object.__setattr__(self, "clip", bool(self.clip))


def _prior_rel(arg_types, attrs):
    op = "vision.multibox_prior"
    data = C.tensor_arg(op, arg_types[0], "data")
    C.expect_rank(op, data, 4, "data (NCHW)", data=data)
    per_cell = len(attrs.sizes) + len(attrs.ratios) - 1
    return TensorType((1, mul(mul(data.shape[2], data.shape[3]), per_cell), 4), data.dtype)


def _half_extents(attrs, h, w):
    """[(half width, half height)] per anchor of a cell, in float64 (TVM's arithmetic)."""
    out = [(size * h / w / 2.0, size / 2.0) for size in attrs.sizes]
    size = attrs.sizes[0]
    out += [(size * h / w * np.sqrt(r) / 2.0, size / np.sqrt(r) / 2.0) for r in attrs.ratios[1:]]
    return out


def _steps(attrs, h, w):
    return (attrs.steps[0] if attrs.steps[0] > 0 else 1.0 / h, attrs.steps[1] if attrs.steps[1] > 0 else 1.0 / w)


def _prior_ref(data, attrs):
    h, w = data.shape[2:]
    ft = np.dtype(R.compute_dtype(str(data.dtype))).type
    halves = _half_extents(attrs, h, w)
    step_h, step_w = _steps(attrs, h, w)
    out = np.zeros((h, w, len(halves), 4), ft)
    cy = (np.arange(h).astype(ft) + ft(attrs.offsets[0])) * ft(step_h)
    cx = (np.arange(w).astype(ft) + ft(attrs.offsets[1])) * ft(step_w)
    for k, (hw, hh) in enumerate(halves):
        out[:, :, k, 0] = cx[None, :] - ft(hw)
        out[:, :, k, 1] = cy[:, None] - ft(hh)
        out[:, :, k, 2] = cx[None, :] + ft(hw)
        out[:, :, k, 3] = cy[:, None] + ft(hh)
    if attrs.clip:
        out = np.clip(out, ft(0), ft(1))
    return out.reshape(1, -1, 4).astype(data.dtype)


def _prior_compute(attrs, inputs, out_type):
    data, = inputs
    h, w = T.dims(data)[2:]
    ft = R.compute_dtype(data.dtype)
    if not (isinstance(h, int) and isinstance(w, int)):
        raise C.rel_error("vision.multibox_prior", "the compute needs a static height and width")
    halves = _half_extents(attrs, h, w)
    step_h, step_w = _steps(attrs, h, w)
    k = len(halves)

    def f(_, a, c):
        i, j, anchor = a // (w * k), (a // k) % w, a % k
        cy = (i.astype(ft) + tir.const(attrs.offsets[0], ft)) * tir.const(step_h, ft)
        cx = (j.astype(ft) + tir.const(attrs.offsets[1], ft)) * tir.const(step_w, ft)
        half_w, half_h = tir.const(halves[-1][0], ft), tir.const(halves[-1][1], ft)
        for idx in range(k - 2, -1, -1):
            half_w = te.if_then_else(anchor == idx, tir.const(halves[idx][0], ft), half_w)
            half_h = te.if_then_else(anchor == idx, tir.const(halves[idx][1], ft), half_h)
        value = te.if_then_else(c == 0, cx - half_w, te.if_then_else(
            c == 1, cy - half_h, te.if_then_else(c == 2, cx + half_w, cy + half_h)))
        if attrs.clip:
            value = tir.min(tir.max(value, tir.const(0.0, ft)), tir.const(1.0, ft))
        return value.astype(data.dtype)
    return [te.compute(list(out_type.shape), f, name="multibox_prior", tag="injective")]


MULTIBOX_PRIOR = defop(
    "vision.multibox_prior", inputs=("data",), attrs=MultiBoxPriorAttrs, rel=_prior_rel, pattern=OpPattern.INJECTIVE,
    ref=_prior_ref, compute=_prior_compute, level=5, doc="SSD anchor boxes for every cell of a feature map",
    samples=lambda rng: [Sample([S.rand(rng, (1, 2, 3, 4))], MultiBoxPriorAttrs()),
                         Sample([S.rand(rng, (2, 1, 5, 3))], MultiBoxPriorAttrs((0.3, 0.6), (1.0, 2.0, 0.5),
                                                                                (0.2, 0.25), (0.5, 0.4), True)),
                         Sample([S.rand(rng, (1, 1, 2, 2), "float64")], MultiBoxPriorAttrs((0.9,), (1.0, 3.0)))])


# --- multibox_transform_loc ------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class MultiBoxTransformLocAttrs(Attrs):
    clip: bool = True
    threshold: float = 0.01
    variances: tuple = (0.1, 0.1, 0.2, 0.2)
    keep_background: bool = False

    def __post_init__(self):
        op = "vision.multibox_transform_loc"
        object.__setattr__(self, "clip", bool(self.clip))
        object.__setattr__(self, "threshold", real_attr(op, "threshold", self.threshold))
        object.__setattr__(self, "variances", _floats(op, "variances", self.variances, 4))
        object.__setattr__(self, "keep_background", bool(self.keep_background))


def _loc_rel(arg_types, attrs):
    op = "vision.multibox_transform_loc"
    cls = C.tensor_arg(op, arg_types[0], "cls_prob")
    loc = C.tensor_arg(op, arg_types[1], "loc_pred")
    anchor = C.tensor_arg(op, arg_types[2], "anchor")
    types = dict(cls_prob=cls, loc_pred=loc, anchor=anchor)
    if cls.ndim != 3 or loc.ndim != 2 or anchor.ndim != 3:
        raise C.rel_error(op, "expects cls_prob (batch, classes, anchors), loc_pred (batch, anchors * 4) and "
                              "anchor (1, anchors, 4)", **types)
    if not (C.dim_matches(loc.shape[1], mul(cls.shape[2], 4)) and C.dim_matches(anchor.shape[1], cls.shape[2])):
        raise C.rel_error(op, "loc_pred must hold 4 values and anchor one box per anchor of cls_prob", **types)
    b, n = cls.shape[0], cls.shape[2]
    return TupleType([TensorType((b, n, 6), cls.dtype), TensorType((b,), "int32")])


def _np_decode(anchor, loc, variances, clip, ft):
    al, at, ar, ab = (ft(v) for v in anchor)
    px, py, pw, ph = (ft(v) for v in loc)
    vx, vy, vw, vh = (ft(v) for v in variances)
    aw, ah = ar - al, ab - at
    ax, ay = (al + ar) / ft(2), (at + ab) / ft(2)
    ox, oy = px * vx * aw + ax, py * vy * ah + ay
    ow, oh = np.exp(pw * vw) * aw / ft(2), np.exp(ph * vh) * ah / ft(2)
    box = [ox - ow, oy - oh, ox + ow, oy + oh]
    return [min(max(v, ft(0)), ft(1)) for v in box] if clip else box


def _loc_ref(cls_prob, loc_pred, anchor, attrs):
    b, classes, n = cls_prob.shape
    ft = np.dtype(R.compute_dtype(str(cls_prob.dtype))).type
    out = np.full((b, n, 6), -1, cls_prob.dtype)
    count = np.zeros(b, "int32")
    first = 0 if attrs.keep_background else 1
    for i in range(b):
        for j in range(n):
            score, cls = ft(-1), 0
            for k in range(first, classes):
                if ft(cls_prob[i, k, j]) > score:
                    score, cls = ft(cls_prob[i, k, j]), k
            if cls > 0 and score < ft(attrs.threshold):
                cls = 0
            if attrs.keep_background or cls > 0:
                box = _np_decode(anchor[0, j], loc_pred[i, 4 * j:4 * j + 4], attrs.variances, attrs.clip, ft)
                out[i, count[i]] = [cls if attrs.keep_background else cls - 1, score] + box
                count[i] += 1
    return out, count


def _loc_compute(attrs, inputs, out_type):
    cls_prob, loc_pred, anchor = inputs
    b, classes, n = T.dims(cls_prob)
    ft = R.compute_dtype(cls_prob.dtype)

    def body(ins, outs):
        ib = ir_builder.create()
        prob, loc, anc = (ib.buffer_ptr(t) for t in ins)
        out, count = ib.buffer_ptr(outs[0]), ib.buffer_ptr(outs[1])
        best = ib.allocate(ft, (1,), name="best")
        label = ib.allocate("int32", (1,), name="label")
        two, zero, one = tir.const(2.0, ft), tir.const(0.0, ft), tir.const(1.0, ft)
        var = [tir.const(v, ft) for v in attrs.variances]
        with ib.for_range(0, b, name="i") as i:
            count[i] = 0
            with ib.for_range(0, n, name="j") as j:
                for f in range(6):
                    out[i, j, f] = tir.const(-1.0, cls_prob.dtype)
            with ib.for_range(0, n, name="j") as j:
                best[0], label[0] = tir.const(-1.0, ft), 0
                with ib.for_range(0 if attrs.keep_background else 1, classes, name="k") as k:
                    with ib.if_scope(prob[i, k, j].astype(ft) > best[0]):
                        best[0], label[0] = prob[i, k, j].astype(ft), k
                with ib.if_scope(tir.And(label[0] > 0, best[0] < tir.const(attrs.threshold, ft))):
                    label[0] = 0
                keep = tir.const(True, "bool") if attrs.keep_background else label[0] > 0
                with ib.if_scope(keep):
                    al, at, ar, ab = (anc[0, j, q].astype(ft) for q in range(4))
                    px, py, pw, ph = (loc[i, j * 4 + q].astype(ft) for q in range(4))
                    aw, ah = ar - al, ab - at
                    ax, ay = (al + ar) / two, (at + ab) / two
                    ox, oy = px * var[0] * aw + ax, py * var[1] * ah + ay
                    ow, oh = te.exp(pw * var[2]) * aw / two, te.exp(ph * var[3]) * ah / two
                    box = [ox - ow, oy - oh, ox + ow, oy + oh]
                    if attrs.clip:
                        box = [tir.max(zero, tir.min(one, v)) for v in box]
                    row = count[i]
                    shift = 0 if attrs.keep_background else 1
                    out[i, row, 0] = (label[0] - shift).astype(cls_prob.dtype)
                    out[i, row, 1] = best[0].astype(cls_prob.dtype)
                    for f, v in enumerate(box):
                        out[i, row, 2 + f] = v.astype(cls_prob.dtype)
                    count[i] = row + 1
        return ib.get()
    return te.extern([(b, n, 6), (b,)], list(inputs), body, name="multibox_transform_loc",
                     dtype=[cls_prob.dtype, "int32"])


def _loc_samples(rng):
    A = MultiBoxTransformLocAttrs

    def case(b, classes, n, dtype="float32"):
        prob = rng.uniform(0, 1, (b, classes, n)).astype(dtype)
        prob = prob / prob.sum(axis=1, keepdims=True)
        loc = rng.uniform(-1, 1, (b, n * 4)).astype(dtype)
        anchor = _prior_ref(np.zeros((1, 1, 2, max(n // 2, 1)), dtype), MultiBoxPriorAttrs((0.4,)))[:, :n]
        return [prob.astype(dtype), loc, anchor.astype(dtype)]
    return [Sample(case(2, 3, 6), A(threshold=0.35)),
            Sample(case(1, 4, 4, "float64"), A(clip=False, threshold=0.2, variances=(0.2, 0.1, 0.3, 0.2))),
            Sample(case(1, 2, 2), A(keep_background=True))]


MULTIBOX_TRANSFORM_LOC = defop(
    "vision.multibox_transform_loc", inputs=("cls_prob", "loc_pred", "anchor"), attrs=MultiBoxTransformLocAttrs,
    rel=_loc_rel, pattern=OpPattern.OPAQUE, ref=_loc_ref, compute=_loc_compute, level=5, samples=_loc_samples,
    doc="decode SSD location predictions against their anchors, best class per anchor")


# --- yolo_reorg -------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class YoloReorgAttrs(Attrs):
    stride: int = 1

    def __post_init__(self):
        object.__setattr__(self, "stride", C.ints(self.stride, 1, "stride", minimum=1)[0])


def _reorg_rel(arg_types, attrs):
    op = "vision.yolo_reorg"
    data = C.tensor_arg(op, arg_types[0], "data")
    C.expect_rank(op, data, 4, "data (NCHW)", data=data)
    s = attrs.stride
    n, c, h, w = data.shape
    for what, dim, unit in (("channels", c, s * s), ("height", h, s), ("width", w, s)):
        if isinstance(dim, int) and dim % unit:
            raise C.rel_error(op, f"{what} {dim} must be a multiple of {unit} for stride {s}", data=data)
    return TensorType((n, mul(c, s * s), floordiv(h, s), floordiv(w, s)), data.dtype)


def _reorg_source(k, j, i, c, h, w, s):
    """(channel, row, column) of the input element TVM's reorg puts at position (k, j, i) of its
    (C, H, W)-shaped intermediate (ints or tir expressions)."""
    out_c = c // (s * s)
    c2, offset = k % out_c, k // out_c
    flat = c2 * (s * s * h * w) + (j * s + offset // s) * (s * w) + i * s + offset % s
    return flat // (h * w), (flat // w) % h, flat % w


def _reorg_ref(data, attrs):
    """Per image: the (C, H, W) gather of TVM's reorg, read back as (C * s^2, H / s, W / s)."""
    n, c, h, w = data.shape
    s = attrs.stride
    k, j, i = np.meshgrid(np.arange(c), np.arange(h), np.arange(w), indexing="ij")
    src = _reorg_source(k, j, i, c, h, w, s)
    out = data[:, src[0], src[1], src[2]] if data.size else np.zeros(data.shape, data.dtype)
    return out.reshape(n, c * s * s, h // s, w // s)


def _reorg_compute(attrs, inputs, out_type):
    data, = inputs
    n, c, h, w = T.dims(data)
    s = attrs.stride
    oh, ow = h // s, w // s

    def f(b, k2, j2, i2):
        flat = (k2 * oh + j2) * ow + i2            # position in the image's (C, H, W) block
        src = _reorg_source(flat // (h * w), (flat // w) % h, flat % w, c, h, w, s)
        return data[(b,) + src]
    return [te.compute(list(out_type.shape), f, name="yolo_reorg", tag="injective")]


YOLO_REORG = defop(
    "vision.yolo_reorg", inputs=("data",), attrs=YoloReorgAttrs, rel=_reorg_rel, pattern=OpPattern.INJECTIVE,
    ref=_reorg_ref, compute=_reorg_compute, level=5, doc="YOLOv2 reorg: space to depth by stride",
    samples=lambda rng: [Sample([S.rand(rng, (1, 4, 4, 6))], YoloReorgAttrs(2)),
                         Sample([S.rand(rng, (2, 9, 6, 3), "int32", -9, 9)], YoloReorgAttrs(3)),
                         Sample([S.rand(rng, (1, 1, 2, 2), "float16")], YoloReorgAttrs(1))])


def multibox_prior(data, sizes=(1.0,), ratios=(1.0,), steps=(-1.0, -1.0), offsets=(0.5, 0.5), clip=False):
    """relay.vision.multibox_prior (see the module doc).

    Parameters
    ----------
    data : relay.Expr
        The feature map, NCHW; only its height and width are read: one cell per pixel.
    sizes : tuple of float, optional
        The anchor sizes, as fractions of the image height; each gives one square-ish anchor per
        cell (its width scaled by height / width). Defaults to (1.0,).
    ratios : tuple of float, optional
        The width / height ratios; each after the first gives one more anchor per cell, of the
        first size. Defaults to (1.0,).
    steps : tuple of float, optional
        The (vertical, horizontal) distance between the centres of neighbouring cells, as
        fractions of the image; a value <= 0 means 1 / height (1 / width). Defaults to
        (-1.0, -1.0).
    offsets : tuple of float, optional
        The (vertical, horizontal) position of an anchor centre within its cell, in steps.
        Defaults to (0.5, 0.5).
    clip : bool, optional
        If True, the anchor corners are clamped to [0, 1]. Defaults to False.

    Returns
    -------
    result : relay.Expr
        The anchors, (1, height * width * (len(sizes) + len(ratios) - 1), 4): each row the corners
        (x1, y1, x2, y2) normalized to the image, the anchors of a cell together.
    """
    return MULTIBOX_PRIOR(data, attrs=MultiBoxPriorAttrs(sizes, ratios, steps, offsets, clip))


def multibox_transform_loc(cls_prob, loc_pred, anchor, clip=True, threshold=0.01, variances=(0.1, 0.1, 0.2, 0.2),
                           keep_background=False):
    """relay.vision.multibox_transform_loc: a TupleWrapper of (boxes, valid count).

    Parameters
    ----------
    cls_prob : relay.Expr
        The class probabilities, (batch, num_classes, num_anchors); class 0 is the background.
    loc_pred : relay.Expr
        The predicted box offsets, (batch, num_anchors * 4): per anchor the centre's x and y
        offsets (in anchor widths and heights) and the log of the width and height scales.
    anchor : relay.Expr
        The anchors, (1, num_anchors, 4) corners (x1, y1, x2, y2), as multibox_prior makes them.
    clip : bool, optional
        If True, the decoded corners are clamped to [0, 1]. Defaults to True.
    threshold : float, optional
        An anchor whose best class scores below this counts as background. Defaults to 0.01.
    variances : tuple of float, optional
        The 4 factors the x, y, width and height offsets of `loc_pred` are multiplied by before
        they are applied. Defaults to (0.1, 0.1, 0.2, 0.2).
    keep_background : bool, optional
        If True, the background class competes for each anchor and background anchors are kept;
        if False, they are dropped. Defaults to False.

    Returns
    -------
    result : relay.TupleWrapper
        (the kept anchors' detections (batch, num_anchors, 6), each row (class id, score, x1, y1,
        x2, y2) packed to the front, -1 after them, the class ids counting from the first
        non-background class unless keep_background; how many are kept, int32 (batch,)).
    """
    from ...ir.expr import TupleWrapper
    attrs = MultiBoxTransformLocAttrs(clip, threshold, variances, keep_background)
    return TupleWrapper(MULTIBOX_TRANSFORM_LOC(cls_prob, loc_pred, anchor, attrs=attrs), 2)


def yolo_reorg(data, stride):
    """relay.vision.yolo_reorg: space-to-depth by `stride`.

    Parameters
    ----------
    data : relay.Expr
        The feature map, NCHW, its channels a multiple of stride * stride and its height and width
        multiples of stride.
    stride : int
        The factor height and width shrink by (and channels grow by, squared).

    Returns
    -------
    result : relay.Expr
        The reorganised map, (batch, channels * stride ** 2, height / stride, width / stride).
    """
    return YOLO_REORG(data, attrs=YoloReorgAttrs(stride))


__all__ = ["multibox_prior", "multibox_transform_loc", "yolo_reorg", "MultiBoxPriorAttrs",
           "MultiBoxTransformLocAttrs", "YoloReorgAttrs"]
