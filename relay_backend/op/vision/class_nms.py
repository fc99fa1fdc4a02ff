"""Per-class non-maximum suppression: vision.all_class_non_max_suppression (ONNX NonMaxSuppression,
TensorFlow combined NMS) and vision.regular_non_max_suppression (TFLite's regular NMS), TVM v0.18's
ops and results. Both OPAQUE te.extern kernels: per (batch, class) a stable descending merge sort
of the scores, then a greedy pass that compares each candidate with the boxes already selected
(O(n log n + n * selected)).

all_class_non_max_suppression(boxes (B, N, 4), scores (B, C, N), max_output_boxes_per_class,
iou_threshold, score_threshold): candidates score > score_threshold; a candidate is selected
unless its IoU with a selected box of its class is >= iou_threshold; at most
max_output_boxes_per_class per class (no limit when <= 0). output_format "onnx": rows
(batch, class, box) in batch, class, score order, then zero rows, and the total count (1,);
"tensorflow": per batch rows (class, box) and their scores, then zeros, and a count per batch.
(TVM selects nothing at all when iou_threshold <= 0, which ONNX does not; here the rule above
holds for every threshold.)

regular_non_max_suppression(boxes (B, N, 4) as (ymin, xmin, ymax, xmax), scores (B, N, C + bg)):
for each of the last num_classes score columns, candidates score >= score_threshold, a candidate
is dropped when its IoU with a selected box exceeds iou_threshold (boxes of zero area overlap
nothing), at most max_detections_per_class; all classes' selections stably sorted by score,
the first max_detections kept: boxes, classes (float32), scores, count.
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs, check_choice
from ...ir.types import TensorType, TupleType
from ...tir import ir_builder
from ..nn import _common as C
from ..nn import _te as T
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..tensor import real_attr
from . import ir_common as R
from .nms import NMS_PARAMETERS, as_const, load_scalar, scalar_arg


@dataclasses.dataclass(frozen=True)
class AllClassNonMaximumSuppressionAttrs(Attrs):
    output_format: str = "onnx"

    def __post_init__(self):
        check_choice("output_format", self.output_format, ("onnx", "tensorflow"))


def _class_boxes(op, arg_types, scores_layout):
    boxes = C.tensor_arg(op, arg_types[0], "boxes")
    scores = C.tensor_arg(op, arg_types[1], "scores")
    types = dict(boxes=boxes, scores=scores)
    if boxes.ndim != 3 or not C.dim_matches(boxes.shape[2], 4) or not boxes.dtype.startswith("float"):
        raise C.rel_error(op, "boxes must be a float tensor (batch, boxes, 4)", **types)
    if scores.ndim != 3 or not scores.dtype.startswith("float"):
        raise C.rel_error(op, f"scores must be a float tensor {scores_layout}", **types)
    return boxes, scores


def _acnms_rel(arg_types, attrs):
    op = "vision.all_class_non_max_suppression"
    boxes, scores = _class_boxes(op, arg_types, "(batch, classes, boxes)")
    if not (C.dim_matches(scores.shape[0], boxes.shape[0]) and C.dim_matches(scores.shape[2], boxes.shape[1])):
        raise C.rel_error(op, "scores must be (batch, classes, boxes) for boxes (batch, boxes, 4)",
                          boxes=boxes, scores=scores)
    scalar_arg(op, arg_types[2], "max_output_boxes_per_class", "int")
    scalar_arg(op, arg_types[3], "iou_threshold", "float")
    scalar_arg(op, arg_types[4], "score_threshold", "float")
    b, c, n = scores.shape
    from ...ir.shape_math import mul
    if attrs.output_format == "onnx":
        return TupleType([TensorType((mul(mul(b, c), n), 3), "int64"), TensorType((1,), "int64")])
    return TupleType([TensorType((b, mul(c, n), 2), "int64"), TensorType((b, mul(c, n)), scores.dtype),
                      TensorType((b,), "int64")])


def np_select(boxes, scores, limit, iou_threshold, candidate, ftype, overlap=R.np_iou, suppress=np.greater_equal):
    """Greedy selection of one (batch, class): box indices in descending score order; `limit`
    None for no limit."""
    chosen = []
    for j in R.stable_order_desc(scores):
        if limit is not None and len(chosen) >= limit:
            break
        if not candidate(scores[j]):
            continue
        if not any(suppress(overlap(boxes[j], boxes[p], ftype), iou_threshold) for p in chosen):
            chosen.append(int(j))
    return chosen


def _acnms_ref(boxes, scores, max_out, iou_threshold, score_threshold, attrs):
    b, c, n = scores.shape
    limit = int(np.asarray(max_out).reshape(-1)[0])
    ftype = R.compute_dtype(str(boxes.dtype))
    thr = np.asarray(iou_threshold).astype(ftype).reshape(-1)[0]
    sthr = np.asarray(score_threshold).astype(scores.dtype).reshape(-1)[0]
    cap = limit if limit > 0 else None
    chosen = [[np_select(boxes[i], scores[i, k], cap, thr, lambda s: s > sthr, ftype) for k in range(c)]
              for i in range(b)]
    if attrs.output_format == "onnx":
        rows = [(i, k, j) for i in range(b) for k in range(c) for j in chosen[i][k]]
        out = np.zeros((b * c * n, 3), "int64")
        out[:len(rows)] = np.asarray(rows, "int64").reshape(-1, 3)
        return out, np.array([len(rows)], "int64")
    idx = np.zeros((b, c * n, 2), "int64")
    sc = np.zeros((b, c * n), scores.dtype)
    count = np.zeros(b, "int64")
    for i in range(b):
        rows = [(k, j) for k in range(c) for j in chosen[i][k]]
        idx[i, :len(rows)] = np.asarray(rows, "int64").reshape(-1, 2)
        sc[i, :len(rows)] = [scores[i, k, j] for k, j in rows]
        count[i] = len(rows)
    return idx, sc, count


def select_ir(ib, order, chosen, count, key, n, candidate, limit, clash, row):
    """Sort row `row` by key (descending, stable), then greedily select into chosen[row + (q,)];
    count[row] = how many. clash(a, b) tells whether box a must yield to chosen box b."""
    R.argsort_desc(ib, key, n, order, row=row)
    state = ib.allocate("int32", (2,), name="select_state")   # selected so far, clash found
    state[0] = 0
    with ib.for_range(0, n, name="j") as j:
        cand = order[row + (j,)]
        room = state[0] < limit if limit is not None else tir.const(True, "bool")
        with ib.if_scope(tir.And(room, candidate(cand))):
            state[1] = 0
            with ib.for_range(0, state[0], name="q") as q:
                with ib.if_scope(state[1] == 0):
                    with ib.if_scope(clash(cand, chosen[row + (q,)])):
                        state[1] = 1
            with ib.if_scope(state[1] == 0):
                chosen[row + (state[0],)] = cand
                state[0] = state[0] + 1
    count[row] = state[0]


def _acnms_compute(attrs, inputs, out_type):
    boxes, scores = inputs[:2]
    b, c, n = T.dims(scores)
    ftype = R.compute_dtype(boxes.dtype)

    def select(ins, outs):
        ib = ir_builder.create()
        box, score = ib.buffer_ptr(ins[0]), ib.buffer_ptr(ins[1])
        limit = load_scalar(ins[2]).astype("int32")
        thr = load_scalar(ins[3]).astype(ftype)
        sthr = load_scalar(ins[4]).astype(scores.dtype)
        chosen, count, order = (ib.buffer_ptr(o) for o in outs)
        cap = ib.allocate("int32", (1,), name="cap")
        cap[0] = tir.if_then_else(limit > 0, limit, n)
        with ib.for_range(0, b, name="i") as i:
            with ib.for_range(0, c, name="k") as k:
                corners = lambda p: [box[i, p, q].astype(ftype) for q in range(4)]  # noqa: E731
                select_ir(ib, order, chosen, count, lambda p: score[i, k, p], n,
                          lambda p: score[i, k, p] > sthr, cap[0],
                          lambda p, q: R.iou(corners(p), corners(q), ftype) >= thr, (i, k))
        return ib.get()

    chosen, count, _ = te.extern([(b, c, n), (b, c), (b, c, n)], list(inputs), select,
                                 name="all_class_nms", dtype=["int32"] * 3)

    def collect(ins, outs):
        ib = ir_builder.create()
        picked, num, score = ib.buffer_ptr(ins[0]), ib.buffer_ptr(ins[1]), ib.buffer_ptr(ins[2])
        at = ib.allocate("int64", (1,), name="at")
        zero = tir.const(0, "int64")
        if attrs.output_format == "onnx":
            rows, total = ib.buffer_ptr(outs[0]), ib.buffer_ptr(outs[1])
            with ib.for_range(0, b * c * n, name="r") as r:
                for f in range(3):
                    rows[r, f] = zero
            at[0] = zero
            with ib.for_range(0, b, name="i") as i:
                with ib.for_range(0, c, name="k") as k:
                    with ib.for_range(0, num[i, k], name="q") as q:
                        rows[at[0], 0] = i.astype("int64")
                        rows[at[0], 1] = k.astype("int64")
                        rows[at[0], 2] = picked[i, k, q].astype("int64")
                        at[0] = at[0] + 1
            total[0] = at[0]
            return ib.get()
        rows, values, total = (ib.buffer_ptr(o) for o in outs)
        with ib.for_range(0, b, name="i") as i:
            with ib.for_range(0, c * n, name="r") as r:
                rows[i, r, 0] = zero
                rows[i, r, 1] = zero
                values[i, r] = tir.const(0.0, scores.dtype)
            at[0] = zero
            with ib.for_range(0, c, name="k") as k:
                with ib.for_range(0, num[i, k], name="q") as q:
                    rows[i, at[0], 0] = k.astype("int64")
                    rows[i, at[0], 1] = picked[i, k, q].astype("int64")
                    values[i, at[0]] = score[i, k, picked[i, k, q]]
                    at[0] = at[0] + 1
            total[i] = at[0]
        return ib.get()

    if attrs.output_format == "onnx":
        shapes, dtypes = [(b * c * n, 3), (1,)], ["int64", "int64"]
    else:
        shapes, dtypes = [(b, c * n, 2), (b, c * n), (b,)], ["int64", scores.dtype, "int64"]
    return te.extern(shapes, [chosen, count, scores], collect, name="all_class_nms_collect", dtype=dtypes)


def _corner_boxes(rng, b, n, dtype="float32"):
    corner = rng.uniform(0, 3, (b, n, 2))
    size = rng.uniform(0.5, 3, (b, n, 2))
    boxes = np.concatenate([corner, corner + size], axis=2)
    flip = rng.random((b, n)) < 0.3              # some boxes given with their corners swapped
    boxes[flip] = boxes[flip][:, [2, 3, 0, 1]]
    return boxes.astype(dtype)


def _acnms_samples(rng):
    A = AllClassNonMaximumSuppressionAttrs
    boxes = _corner_boxes(rng, 2, 8)
    scores = np.round(rng.uniform(0, 1, (2, 3, 8)), 1).astype("float32")

    def s(bx, sc, m, iou, st, a):
        return Sample([bx, sc, np.array(m, "int64"), np.array(iou, "float32"), np.array(st, "float32")], a)
    return [s(boxes, scores, 3, 0.4, 0.2, A()),
            s(boxes, scores, 0, 0.2, 0.0, A()),
            s(boxes, scores, 2, 0.5, 0.3, A("tensorflow")),
            s(boxes[:1, :1], scores[:1, :2, :1], 5, 0.5, 0.0, A()),
            s(boxes[:1, :0], scores[:1, :2, :0], 5, 0.5, 0.0, A("tensorflow"))]


ALL_CLASS_NMS = defop(
    "vision.all_class_non_max_suppression",
    inputs=("boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"),
    attrs=AllClassNonMaximumSuppressionAttrs, rel=_acnms_rel, pattern=OpPattern.OPAQUE, ref=_acnms_ref,
    compute=_acnms_compute, level=5, samples=_acnms_samples, doc="non-maximum suppression per batch and class")


# --- regular_non_max_suppression (TFLite) ------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class RegularNonMaximumSuppressionAttrs(Attrs):
    max_detections_per_class: int = 1
    max_detections: int = 1
    num_classes: int = 1
    iou_threshold: float = 0.5
    score_threshold: float = 0.0

    def __post_init__(self):
        op = "vision.regular_non_max_suppression"
        for name in ("max_detections_per_class", "max_detections", "num_classes"):
            value = int(getattr(self, name))
            if value < 0:
                raise AttrsError(f"{op}: {name}={value} must be >= 0")
            object.__setattr__(self, name, value)
        for name in ("iou_threshold", "score_threshold"):
            object.__setattr__(self, name, real_attr(op, name, getattr(self, name)))


def _rnms_rel(arg_types, attrs):
    op = "vision.regular_non_max_suppression"
    boxes, scores = _class_boxes(op, arg_types, "(batch, boxes, classes with background)")
    cols = scores.shape[2]
    if isinstance(cols, int) and cols < attrs.num_classes:
        raise C.rel_error(op, f"scores has {cols} columns, fewer than num_classes={attrs.num_classes}",
                          boxes=boxes, scores=scores)
    b, m = boxes.shape[0], attrs.max_detections
    return TupleType([TensorType((b, m, 4), boxes.dtype), TensorType((b, m), "float32"),
                      TensorType((b, m), scores.dtype), TensorType((b,), "int32")])


def tflite_iou(a, b, ftype):
    """TFLite's IoU: boxes (ymin, xmin, ymax, xmax); a box of no area overlaps nothing (numpy)."""
    a, b = np.asarray(a, ftype), np.asarray(b, ftype)
    zero = np.dtype(ftype).type(0)
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    if area_a <= zero or area_b <= zero:
        return zero
    inter = max(min(a[2], b[2]) - max(a[0], b[0]), zero) * max(min(a[3], b[3]) - max(a[1], b[1]), zero)
    return inter / (area_a + area_b - inter)


def _te_tflite_iou(a, b, ftype):
    zero = tir.const(0.0, ftype)
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    inter = tir.max(tir.min(a[2], b[2]) - tir.max(a[0], b[0]), zero) * \
        tir.max(tir.min(a[3], b[3]) - tir.max(a[1], b[1]), zero)
    return te.if_then_else(tir.Or(area_a <= zero, area_b <= zero), zero, inter / (area_a + area_b - inter))


def _rnms_ref(boxes, scores, attrs):
    b, n, cols = scores.shape
    offset = cols - attrs.num_classes
    ftype = R.compute_dtype(str(boxes.dtype))
    m = attrs.max_detections
    out_boxes = np.zeros((b, m, 4), boxes.dtype)
    out_classes = np.zeros((b, m), "float32")
    out_scores = np.zeros((b, m), scores.dtype)
    count = np.zeros(b, "int32")
    sthr = scores.dtype.type(attrs.score_threshold)
    for i in range(b):
        picked = []
        for k in range(attrs.num_classes):
            col = scores[i, :, k + offset]
            chosen = np_select(boxes[i], col, attrs.max_detections_per_class, np.dtype(ftype).type(attrs.iou_threshold),
                               lambda s: s >= sthr, ftype, tflite_iou, np.greater)
            picked += [(col[j], k, j) for j in chosen]
        order = R.stable_order_desc(np.asarray([p[0] for p in picked], "float64"))[:m]
        for r, t in enumerate(order):
            score, k, j = picked[t]
            out_boxes[i, r], out_classes[i, r], out_scores[i, r] = boxes[i, j], k, score
        count[i] = len(order)
    return out_boxes, out_classes, out_scores, count


def _rnms_compute(attrs, inputs, out_type):
    boxes, scores = inputs
    b, n, cols = T.dims(scores)
    ftype = R.compute_dtype(boxes.dtype)
    classes, per_class, m = attrs.num_classes, attrs.max_detections_per_class, attrs.max_detections
    offset = cols - classes
    pool = max(classes * min(per_class, n) if isinstance(n, int) else classes * per_class, 1)

    def body(ins, outs):
        ib = ir_builder.create()
        box, score = ib.buffer_ptr(ins[0]), ib.buffer_ptr(ins[1])
        out_boxes, out_classes, out_scores, count = (ib.buffer_ptr(o) for o in outs)
        order = ib.allocate("int32", (1, T.imax(n, 1)), name="order", scope="global")
        chosen = ib.allocate("int32", (1, T.imax(n, 1)), name="chosen", scope="global")
        num = ib.allocate("int32", (1,), name="num")
        pool_score = ib.allocate(scores.dtype, (pool,), name="pool_score", scope="global")
        pool_class = ib.allocate("int32", (pool,), name="pool_class", scope="global")
        pool_box = ib.allocate("int32", (pool,), name="pool_box", scope="global")
        rank = ib.allocate("int32", (1, pool), name="rank", scope="global")
        filled = ib.allocate("int32", (1,), name="filled")
        sthr = tir.const(attrs.score_threshold, scores.dtype)
        with ib.for_range(0, b, name="i") as i:
            filled[0] = 0
            corners = lambda p: [box[i, p, q].astype(ftype) for q in range(4)]  # noqa: E731
            for k in range(classes):
                col = k + offset
                select_ir(ib, order, chosen, num, lambda p: score[i, p, col], n,
                          lambda p: score[i, p, col] >= sthr, per_class,
                          lambda p, q: _te_tflite_iou(corners(p), corners(q), ftype) >
                          tir.const(attrs.iou_threshold, ftype), (0,))
                with ib.for_range(0, num[0], name="q") as q:
                    pool_box[filled[0]] = chosen[0, q]
                    pool_class[filled[0]] = k
                    pool_score[filled[0]] = score[i, chosen[0, q], col]
                    filled[0] = filled[0] + 1
            R.argsort_desc(ib, lambda p: pool_score[p], filled[0], rank, row=(0,))
            total = tir.min(filled[0], m)
            with ib.for_range(0, m, name="r") as r:
                with ib.if_scope(r < total):
                    t = rank[0, r]
                    for q in range(4):
                        out_boxes[i, r, q] = box[i, pool_box[t], q]
                    out_classes[i, r] = pool_class[t].astype("float32")
                    out_scores[i, r] = pool_score[t]
                with ib.else_scope():
                    for q in range(4):
                        out_boxes[i, r, q] = tir.const(0.0, boxes.dtype)
                    out_classes[i, r] = tir.const(0.0, "float32")
                    out_scores[i, r] = tir.const(0.0, scores.dtype)
            count[i] = total
        return ib.get()
    return te.extern([(b, m, 4), (b, m), (b, m), (b,)], [boxes, scores], body, name="regular_nms",
                     dtype=[boxes.dtype, "float32", scores.dtype, "int32"])


def _rnms_samples(rng):
    A = RegularNonMaximumSuppressionAttrs
    boxes = _corner_boxes(rng, 2, 7)
    boxes[0, 3] = boxes[0, 3, [0, 1, 0, 1]]        # a box of no area
    scores = np.round(rng.uniform(0, 1, (2, 7, 4)), 1).astype("float32")
    return [Sample([boxes, scores], A(2, 5, 3, 0.4, 0.3)),
            Sample([boxes.astype("float64"), scores.astype("float64")], A(3, 4, 4, 0.2, 0.0)),
            Sample([boxes[:1, :1], scores[:1, :1]], A(1, 2, 2, 0.5, 0.0))]


REGULAR_NMS = defop(
    "vision.regular_non_max_suppression", inputs=("boxes", "scores"), attrs=RegularNonMaximumSuppressionAttrs,
    rel=_rnms_rel, pattern=OpPattern.OPAQUE, ref=_rnms_ref, compute=_rnms_compute, level=5, samples=_rnms_samples,
    doc="TFLite's regular non-maximum suppression: per class, then the best max_detections overall")


@documented(NMS_PARAMETERS)
def all_class_non_max_suppression(boxes, scores, max_output_boxes_per_class=-1, iou_threshold=-1.0,
                                  score_threshold=-1.0, output_format="onnx"):
    """relay.vision.all_class_non_max_suppression: a TupleWrapper of 2 ("onnx") or 3
    ("tensorflow") outputs (see the module doc).

    Parameters
    ----------
    scores : relay.Expr
        A float tensor (batch, num_classes, num_boxes): the score of every box for every class.
    max_output_boxes_per_class : int or relay.Expr, optional
        The most boxes selected per batch and class; a value <= 0 selects any number. Defaults
        to -1.
    output_format : str, optional
        "onnx" (ONNX's NonMaxSuppression) or "tensorflow" (TensorFlow's combined NMS): the form
        of the results, below. Defaults to 'onnx'.

    Returns
    -------
    result : relay.TupleWrapper
        "onnx": (the selected (batch, class, box) index triples, int64 (batch * num_classes *
        num_boxes, 3), ordered by batch, class and falling score, zero rows after them; their
        count, int64 (1,)). "tensorflow": (per batch the (class, box) pairs selected, int64
        (batch, num_classes * num_boxes, 2); their scores; the count per batch, int64 (batch,)).
    """
    from ...ir.expr import TupleWrapper
    call = ALL_CLASS_NMS(boxes, scores, as_const(max_output_boxes_per_class, "int64"), as_const(iou_threshold, "float32"),
                         as_const(score_threshold, "float32"),
                         attrs=AllClassNonMaximumSuppressionAttrs(output_format))
    return TupleWrapper(call, 2 if output_format == "onnx" else 3)


def regular_non_max_suppression(boxes, scores, max_detections_per_class, max_detections, num_classes,
                                iou_threshold, score_threshold):
    """relay.vision.regular_non_max_suppression: a TupleWrapper of (boxes, classes, scores, count).

    Parameters
    ----------
    boxes : relay.Expr
        A float tensor (batch, num_boxes, 4), each box as (ymin, xmin, ymax, xmax).
    scores : relay.Expr
        A float tensor (batch, num_boxes, columns): per box a score per class, the classes being
        the last num_classes columns (a background column may come first).
    max_detections_per_class : int
        The most boxes selected per batch and class.
    max_detections : int
        The most boxes kept per batch, the highest-scoring of all classes' selections.
    num_classes : int
        The number of classes, read from the last columns of `scores`.
    iou_threshold : float
        A candidate is dropped when its intersection over union with a box already selected of
        its class is greater than this (a box of no area overlaps nothing).
    score_threshold : float
        A box is a candidate for a class only if its score is at least this.

    Returns
    -------
    result : relay.TupleWrapper
        (the kept boxes (batch, max_detections, 4); their classes, float32 (batch,
        max_detections); their scores (batch, max_detections); how many are kept, int32 (batch,)),
        each padded with zeros after the kept ones.
    """
    from ...ir.expr import TupleWrapper
    attrs = RegularNonMaximumSuppressionAttrs(max_detections_per_class, max_detections, num_classes, iou_threshold,
                                              score_threshold)
    return TupleWrapper(REGULAR_NMS(boxes, scores, attrs=attrs), 4)


__all__ = ["all_class_non_max_suppression", "regular_non_max_suppression", "AllClassNonMaximumSuppressionAttrs",
           "RegularNonMaximumSuppressionAttrs"]
