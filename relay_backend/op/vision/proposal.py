"""vision.proposal: Faster R-CNN's region proposal layer (TVM v0.18's op and attrs). OPAQUE, a
te.extern kernel per batch image:

1. every cell (h, w) of the feature map and anchor k (ratio k // len(scales), scale
   k % len(scales), around a feature_stride square) gives a box: the anchor moved by the deltas of
   bbox_pred (centre and log-size regression, or plain corner offsets with iou_loss), clipped to
   the image of im_info (height, width, scale); its score is cls_prob's foreground channel, -1 for
   cells outside im_info's image, and a box smaller than rpn_min_size * scale grows by that size
   and gets score -1;
2. the boxes are sorted by score, descending and stable, and the first rpn_pre_nms_top_n kept;
3. greedy suppression: a box is dropped when its overlap ((w + 1) * (h + 1) areas, as TVM) with a
   kept box exceeds `threshold`;
4. the survivors, repeated in turn until rpn_post_nms_top_n rows are filled, are written as
   (batch index, x1, y1, x2, y2) rows: the output is (batch * rpn_post_nms_top_n, 5).
"""
import dataclasses
import math

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs
from ...ir.shape_math import mul
from ...ir.types import TensorType
from ...tir import ir_builder
from ..nn import _common as C
from ..nn import _te as T
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..tensor import real_attr
from . import ir_common as R

OP = "vision.proposal"


@dataclasses.dataclass(frozen=True)
class ProposalAttrs(Attrs):
    scales: tuple = (4.0, 8.0, 16.0, 32.0)
    ratios: tuple = (0.5, 1.0, 2.0)
    feature_stride: int = 16
    threshold: float = 0.7
    rpn_pre_nms_top_n: int = 6000
    rpn_post_nms_top_n: int = 300
    rpn_min_size: int = 16
    iou_loss: bool = False

    def __post_init__(self):
        for name in ("scales", "ratios"):
            values = tuple(real_attr(OP, name, v) for v in getattr(self, name))
            if not values:
                raise AttrsError(f"{OP}: {name} must hold at least one value")
            object.__setattr__(self, name, values)
        for name in ("feature_stride", "rpn_pre_nms_top_n", "rpn_post_nms_top_n", "rpn_min_size"):
            object.__setattr__(self, name, int(getattr(self, name)))
        if self.rpn_post_nms_top_n < 1 or self.feature_stride < 1:
            raise AttrsError(f"{OP}: rpn_post_nms_top_n and feature_stride must be positive")
        object.__setattr__(self, "threshold", real_attr(OP, "threshold", self.threshold))
        object.__setattr__(self, "iou_loss", bool(self.iou_loss))


def _rel(arg_types, attrs):
    cls = C.tensor_arg(OP, arg_types[0], "cls_prob")
    pred = C.tensor_arg(OP, arg_types[1], "bbox_pred")
    info = C.tensor_arg(OP, arg_types[2], "im_info")
    types = dict(cls_prob=cls, bbox_pred=pred, im_info=info)
    a = len(attrs.scales) * len(attrs.ratios)
    if cls.ndim != 4 or pred.ndim != 4 or info.ndim != 2:
        raise C.rel_error(OP, "expects cls_prob (B, 2A, H, W), bbox_pred (B, 4A, H, W), im_info (B, 3)", **types)
    if not (C.dim_matches(cls.shape[1], 2 * a) and C.dim_matches(pred.shape[1], 4 * a)):
        raise C.rel_error(OP, f"{a} anchors (scales x ratios) need {2 * a} score and {4 * a} delta channels",
                          **types)
    return TensorType((mul(cls.shape[0], attrs.rpn_post_nms_top_n), 5), cls.dtype)


def anchors(attrs):
    """[(x1, y1, x2, y2)] of the base anchors, in float64 (TVM's generate_anchor)."""
    out = []
    base = float(attrs.feature_stride)
    for k in range(len(attrs.scales) * len(attrs.ratios)):
        ratio, scale = attrs.ratios[k // len(attrs.scales)], attrs.scales[k % len(attrs.scales)]
        ctr = 0.5 * (base - 1.0)
        size_ratios = math.floor(base * base / ratio)
        new_w = math.floor(math.sqrt(size_ratios) + 0.5) * scale
        new_h = math.floor((new_w / scale * ratio) + 0.5) * scale
        out.append((ctr - 0.5 * (new_w - 1.0), ctr - 0.5 * (new_h - 1.0),
                    ctr + 0.5 * (new_w - 1.0), ctr + 0.5 * (new_h - 1.0)))
    return out


def _decode(x1, y1, x2, y2, d, attrs, exp):
    """The regressed box (works on numpy scalars and tir expressions alike)."""
    if attrs.iou_loss:
        return x1 + d[0], y1 + d[1], x2 + d[2], y2 + d[3]
    w, h = x2 - x1 + 1.0, y2 - y1 + 1.0
    cx, cy = x1 + 0.5 * (w - 1.0), y1 + 0.5 * (h - 1.0)
    pcx, pcy = d[0] * w + cx, d[1] * h + cy
    pw, ph = exp(d[2]) * w, exp(d[3]) * h
    return pcx - 0.5 * (pw - 1.0), pcy - 0.5 * (ph - 1.0), pcx + 0.5 * (pw - 1.0), pcy + 0.5 * (ph - 1.0)


def _overlap(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]) + 1.0)
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]) + 1.0)
    inter = w * h
    return inter / ((a[2] - a[0] + 1.0) * (a[3] - a[1] + 1.0) + (b[2] - b[0] + 1.0) * (b[3] - b[1] + 1.0) - inter)


def _ref(cls_prob, bbox_pred, im_info, attrs):
    b, _, height, width = cls_prob.shape
    ft = np.dtype(R.compute_dtype(str(cls_prob.dtype))).type
    base = anchors(attrs)
    a = len(base)
    post = attrs.rpn_post_nms_top_n
    out = np.zeros((b * post, 5), cls_prob.dtype)
    for i in range(b):
        im_h, im_w, im_scale = (ft(v) for v in im_info[i])
        rows = []
        for h, w, k in np.ndindex(height, width, a):
            x1, y1, x2, y2 = (ft(base[k][q]) + ft(w if q % 2 == 0 else h) * ft(attrs.feature_stride)
                              for q in range(4))
            deltas = [ft(bbox_pred[i, k * 4 + q, h, w]) for q in range(4)]
            box = [min(max(v, ft(0)), lim - ft(1)) for v, lim in
                   zip(_decode(x1, y1, x2, y2, deltas, attrs, np.exp), (im_w, im_h, im_w, im_h))]
            score = ft(-1) if h >= int(im_h / ft(attrs.feature_stride)) or w >= int(im_w / ft(attrs.feature_stride)) \
                else ft(cls_prob[i, a + k, h, w])
            min_size = im_scale * ft(attrs.rpn_min_size)
            if box[2] - box[0] + ft(1) < min_size or box[3] - box[1] + ft(1) < min_size:
                half = min_size / ft(2)
                box = [box[0] - half, box[1] - half, box[2] + half, box[3] + half]
                score = ft(-1)
            rows.append((box, score))
        order = R.stable_order_desc(np.asarray([r[1] for r in rows], "float64"))
        pre = attrs.rpn_pre_nms_top_n
        order = order[:min(pre, len(order)) if pre > 0 else len(order)]
        kept = []
        for j in order:
            if not any(_overlap(rows[j][0], rows[p][0]) > ft(attrs.threshold) for p in kept):
                kept.append(j)
        for r in range(post if kept else 0):
            out[i * post + r] = [i] + list(rows[kept[r % len(kept)]][0])
    return out


def _compute(attrs, inputs, out_type):
    cls_prob, bbox_pred, im_info = inputs
    b, _, height, width = T.dims(cls_prob)
    ft = R.compute_dtype(cls_prob.dtype)
    base = anchors(attrs)
    a = len(base)
    total = height * width * a
    pre = min(attrs.rpn_pre_nms_top_n, total) if attrs.rpn_pre_nms_top_n > 0 else total
    post = attrs.rpn_post_nms_top_n

    def body(ins, outs):
        ib = ir_builder.create()
        prob, pred, info = (ib.buffer_ptr(t) for t in ins)
        out = ib.buffer_ptr(outs[0])
        boxes = ib.allocate(ft, (T.imax(total, 1), 5), name="boxes", scope="global")
        order = ib.allocate("int32", (1, T.imax(total, 1)), name="order", scope="global")
        kept = ib.allocate("int32", (1, T.imax(total, 1)), name="kept", scope="global")
        num = ib.allocate("int32", (1,), name="num")
        c = lambda v: tir.const(float(v), ft)  # noqa: E731
        stride = c(attrs.feature_stride)
        with ib.for_range(0, b, name="i") as i:
            im_h, im_w, im_scale = (info[i, q].astype(ft) for q in range(3))
            with ib.for_range(0, height, name="h") as h:
                with ib.for_range(0, width, name="w") as w:
                    for k in range(a):
                        row = (h * width + w) * a + k
                        x1, y1, x2, y2 = (c(base[k][q]) + (w if q % 2 == 0 else h).astype(ft) * stride
                                          for q in range(4))
                        deltas = [pred[i, k * 4 + q, h, w].astype(ft) for q in range(4)]
                        box = _decode(x1, y1, x2, y2, deltas, attrs, te.exp)
                        box = [tir.max(tir.min(v, lim - c(1)), c(0)) for v, lim in zip(box, (im_w, im_h, im_w, im_h))]
                        outside = tir.Or(h >= (im_h / stride).astype("int32"), w >= (im_w / stride).astype("int32"))
                        score = te.if_then_else(outside, c(-1), prob[i, a + k, h, w].astype(ft))
                        min_size = im_scale * c(attrs.rpn_min_size)
                        small = tir.Or(box[2] - box[0] + c(1) < min_size, box[3] - box[1] + c(1) < min_size)
                        half = min_size / c(2)
                        grow = [-half, -half, half, half]
                        for q in range(4):
                            boxes[row, q] = te.if_then_else(small, box[q] + grow[q], box[q])
                        boxes[row, 4] = te.if_then_else(small, c(-1), score)
            corners = lambda p: [boxes[p, q] for q in range(4)]  # noqa: E731

            def clash(p, q):
                a_, b_ = corners(p), corners(q)
                one, zero = c(1), c(0)
                iw = tir.max(zero, tir.min(a_[2], b_[2]) - tir.max(a_[0], b_[0]) + one)
                ih = tir.max(zero, tir.min(a_[3], b_[3]) - tir.max(a_[1], b_[1]) + one)
                inter = iw * ih
                union = (a_[2] - a_[0] + one) * (a_[3] - a_[1] + one) + (b_[2] - b_[0] + one) * (b_[3] - b_[1] + one)
                return inter / (union - inter) > c(attrs.threshold)

            R.argsort_desc(ib, lambda p: boxes[p, 4], total, order, row=(0,))
            select_ir_sorted(ib, order, kept, num, pre, clash)     # the best `pre` candidates only
            with ib.for_range(0, post, name="r") as r:
                with ib.if_scope(num[0] > 0):
                    src = kept[0, r % tir.max(num[0], 1)]
                    out[i * post + r, 0] = i.astype(cls_prob.dtype)
                    for q in range(4):
                        out[i * post + r, q + 1] = boxes[src, q].astype(cls_prob.dtype)
                with ib.else_scope():
                    for q in range(5):
                        out[i * post + r, q] = tir.const(0.0, cls_prob.dtype)
        return ib.get()
    return [te.extern((b * post, 5), [cls_prob, bbox_pred, im_info], body, name="proposal", dtype=cls_prob.dtype)]


def select_ir_sorted(ib, order, kept, num, limit, clash):
    """Greedy suppression over the first `limit` entries of an already sorted order[0, :]."""
    state = ib.allocate("int32", (1,), name="clash")
    num[0] = 0
    with ib.for_range(0, limit, name="j") as j:
        cand = order[0, j]
        state[0] = 0
        with ib.for_range(0, num[0], name="q") as q:
            with ib.if_scope(state[0] == 0):
                with ib.if_scope(clash(cand, kept[0, q])):
                    state[0] = 1
        with ib.if_scope(state[0] == 0):
            kept[0, num[0]] = cand
            num[0] = num[0] + 1


def _samples(rng):
    def case(b, h, w, attrs, dtype="float32"):
        a = len(attrs.scales) * len(attrs.ratios)
        prob = np.round(rng.uniform(0, 1, (b, 2 * a, h, w)), 2).astype(dtype)
        pred = rng.uniform(-0.3, 0.3, (b, 4 * a, h, w)).astype(dtype)
        info = np.array([[h * attrs.feature_stride, w * attrs.feature_stride, 1.0]] * b, dtype)
        info[-1, :2] -= attrs.feature_stride       # the last image is one cell smaller: its border scores -1
        return Sample([prob, pred, info], attrs)
    A = ProposalAttrs
    return [case(1, 3, 4, A((2.0, 4.0), (0.5, 1.0), 4, 0.6, 20, 6, 3)),
            case(2, 2, 3, A((1.0,), (1.0, 2.0), 8, 0.5, -1, 5, 2, True)),
            case(1, 2, 2, A((2.0,), (1.0,), 4, 0.7, 3, 4, 1), "float64")]


PROPOSAL = defop(OP, inputs=("cls_prob", "bbox_pred", "im_info"), attrs=ProposalAttrs, rel=_rel,
                 pattern=OpPattern.OPAQUE, ref=_ref, compute=_compute, level=5, samples=_samples,
                 doc="Faster R-CNN region proposals: decode, sort, suppress, keep the top boxes")


def proposal(cls_prob, bbox_pred, im_info, scales, ratios, feature_stride, threshold, rpn_pre_nms_top_n,
             rpn_post_nms_top_n, rpn_min_size, iou_loss):
    """relay.vision.proposal (see the module doc).

    Parameters
    ----------
    cls_prob : relay.Expr
        The anchor scores, (batch, 2 * num_anchors, height, width): the background score of each
        anchor, then the object score of each.
    bbox_pred : relay.Expr
        The box regressions, (batch, 4 * num_anchors, height, width): 4 deltas per anchor.
    im_info : relay.Expr
        Per image (height, width, scale), (batch, 3): the boxes are clipped to height x width, and
        rpn_min_size is multiplied by scale.
    scales : tuple of float
        The anchor scales, in multiples of feature_stride.
    ratios : tuple of float
        The anchor height / width ratios; there are len(scales) * len(ratios) anchors per cell.
    feature_stride : int
        The distance in image pixels between neighbouring cells of the feature map.
    threshold : float
        A box is dropped when its overlap (intersection over union) with a box already kept is
        greater than this.
    rpn_pre_nms_top_n : int
        How many of the highest-scoring boxes enter suppression; a value <= 0 keeps all.
    rpn_post_nms_top_n : int
        How many rows each image gets in the result (the kept boxes repeated to fill them).
    rpn_min_size : int
        The least width and height of a box, in image pixels before scaling; a smaller box
        scores -1.
    iou_loss : bool
        If True, the deltas are offsets of the corners; if False, of the centre and the log of the
        size.

    Returns
    -------
    result : relay.Expr
        The proposals, (batch * rpn_post_nms_top_n, 5): rows (batch index, x1, y1, x2, y2).
    """
    return PROPOSAL(cls_prob, bbox_pred, im_info,
                    attrs=ProposalAttrs(tuple(scales), tuple(ratios), feature_stride, threshold, rpn_pre_nms_top_n,
                                        rpn_post_nms_top_n, rpn_min_size, iou_loss))


__all__ = ["proposal", "ProposalAttrs"]
