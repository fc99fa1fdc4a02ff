"""vision.get_valid_counts and vision.non_max_suppression (TVM v0.18's ops, attrs and results),
the SSD-style pair over (batch, anchors, [class, score, x1, y1, x2, y2]) boxes. Both OPAQUE: each
kernel is a sequential te.extern per batch row.

get_valid_counts keeps the boxes whose score beats score_threshold (and whose class id is >= 0
unless id_index < 0), packed to the front in input order; the rest of the rows are -1.

non_max_suppression, per batch row, with iou_threshold > 0: the first valid_count boxes sorted
by score, descending and stable (a merge sort); only the first top_k kept when 0 < top_k; then
greedily, a box whose score is > 0 survives unless it overlaps a survivor (IoU >= iou_threshold,
same class unless force_suppress) or max_output_size survivors exist already; a rejected box
becomes -1. Each box is compared with the survivors only, so the work is O(n log n + n * kept).
With iou_threshold <= 0 the valid boxes pass unsorted. return_indices gives the survivors'
positions in the original data (through `indices`) packed to the front, and their count;
otherwise the boxes, with invalid_to_bottom packing the rows whose first field is >= 0.
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...ir.attrs import Attrs
from ...ir.types import TensorType, TupleType
from ...tir import ir_builder
from ..nn import _common as C
from ..nn import _te as T
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import ir_common as R


def _boxes(op, arg_types, **more):
    data = C.tensor_arg(op, arg_types[0], "data")
    C.expect_rank(op, data, 3, "data (batch, anchors, box fields)", data=data, **more)
    if not data.dtype.startswith("float"):
        raise C.rel_error(op, "data must be a float tensor", data=data)
    return data


def scalar_arg(op, t, what, kind):
    """The type of a scalar input (rank 0 or one element) whose dtype starts with `kind`."""
    t = C.tensor_arg(op, t, what)
    if t.ndim > 1 or (t.ndim == 1 and not C.dim_matches(t.shape[0], 1)) or not t.dtype.startswith(kind):
        raise C.rel_error(op, f"{what} must be a {kind} scalar", **{what: t})
    return t


def load_scalar(buf):
    """The value of a one-element buffer (rank 0 or 1) as a tir expression."""
    return buf[(0,) * len(buf.shape)]


# --- get_valid_counts -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class GetValidCountsAttrs(Attrs):
    id_index: int = 0
    score_index: int = 1

    def __post_init__(self):
        object.__setattr__(self, "id_index", int(self.id_index))
        object.__setattr__(self, "score_index", int(self.score_index))


def _gvc_rel(arg_types, attrs):
    op = "vision.get_valid_counts"
    data = _boxes(op, arg_types)
    scalar_arg(op, arg_types[1], "score_threshold", "float")
    b, n = data.shape[0], data.shape[1]
    return TupleType([TensorType((b,), "int32"), data, TensorType((b, n), "int32")])


def _gvc_ref(data, threshold, attrs):
    b, n, k = data.shape
    count = np.zeros(b, "int32")
    out = np.full(data.shape, -1, data.dtype)
    idx = np.full((b, n), -1, "int32")
    thr = np.asarray(threshold).astype(data.dtype).reshape(())
    for i in range(b):
        keep = data[i, :, attrs.score_index] > thr
        if attrs.id_index >= 0:
            keep &= data[i, :, attrs.id_index] >= 0
        rows = np.nonzero(keep)[0]
        count[i] = len(rows)
        out[i, :len(rows)] = data[i, rows]
        idx[i, :len(rows)] = rows
    return count, out, idx


def _gvc_compute(attrs, inputs, out_type):
    data, threshold = inputs
    b, n, k = T.dims(data)

    def body(ins, outs):
        ib = ir_builder.create()
        x, thr = ib.buffer_ptr(ins[0]), load_scalar(ins[1]).astype(data.dtype)
        count, out, idx = (ib.buffer_ptr(o) for o in outs)
        with ib.for_range(0, b, name="i") as i:
            count[i] = 0
            with ib.for_range(0, n, name="j") as j:
                keep = x[i, j, attrs.score_index] > thr
                if attrs.id_index >= 0:
                    keep = tir.And(keep, x[i, j, attrs.id_index] >= tir.const(0.0, data.dtype))
                with ib.if_scope(keep):
                    with ib.for_range(0, k, name="f") as f:
                        out[i, count[i], f] = x[i, j, f]
                    idx[i, count[i]] = j
                    count[i] = count[i] + 1
            with ib.for_range(0, n, name="j") as j:
                with ib.if_scope(j >= count[i]):
                    with ib.for_range(0, k, name="f") as f:
                        out[i, j, f] = tir.const(-1.0, data.dtype)
                    idx[i, j] = -1
        return ib.get()
    return te.extern([(b,), (b, n, k), (b, n)], [data, threshold], body, name="get_valid_counts",
                     dtype=["int32", data.dtype, "int32"])


def _box_samples(rng, b, n, k=6, dtype="float32", classes=3):
    """Boxes (class, score, x1, y1, x2, y2) with a few shared scores, overlaps and class -1 rows."""
    data = np.zeros((b, n, k), dtype)
    data[..., 0] = rng.integers(-1, classes, (b, n))
    data[..., 1] = np.round(rng.uniform(-0.2, 1.0, (b, n)), 1)      # rounded: equal scores (ties)
    corner = rng.uniform(0, 6, (b, n, 2))
    size = rng.uniform(0.5, 4, (b, n, 2))
    data[..., k - 4:k - 2] = corner
    data[..., k - 2:] = corner + size
    return data.astype(dtype)


def _gvc_samples(rng):
    A = GetValidCountsAttrs
    return [Sample([_box_samples(rng, 2, 7), np.array(0.3, "float32")], A()),
            Sample([_box_samples(rng, 1, 5, 6, "float64")[..., 1:], np.array(-0.1, "float64")],
                   A(id_index=-1, score_index=0)),
            Sample([_box_samples(rng, 1, 1), np.array(0.0, "float32")], A()),
            Sample([np.zeros((1, 0, 6), "float32"), np.array(0.0, "float32")], A())]


GET_VALID_COUNTS = defop("vision.get_valid_counts", inputs=("data", "score_threshold"), attrs=GetValidCountsAttrs,
                         rel=_gvc_rel, pattern=OpPattern.OPAQUE, ref=_gvc_ref, compute=_gvc_compute, level=5,
                         samples=_gvc_samples, doc="pack the boxes whose score beats a threshold to the front")


# --- non_max_suppression ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class NonMaximumSuppressionAttrs(Attrs):
    force_suppress: bool = False
    top_k: int = -1
    coord_start: int = 2
    score_index: int = 1
    id_index: int = 0
    return_indices: bool = True
    invalid_to_bottom: bool = False

    def __post_init__(self):
        for name in ("top_k", "coord_start", "score_index", "id_index"):
            object.__setattr__(self, name, int(getattr(self, name)))
        for name in ("force_suppress", "return_indices", "invalid_to_bottom"):
            object.__setattr__(self, name, bool(getattr(self, name)))


def _nms_rel(arg_types, attrs):
    op = "vision.non_max_suppression"
    data = _boxes(op, arg_types)
    valid = C.tensor_arg(op, arg_types[1], "valid_count")
    indices = C.tensor_arg(op, arg_types[2], "indices")
    if valid.ndim != 1 or not valid.dtype.startswith("int"):
        raise C.rel_error(op, "valid_count must be a 1-D integer tensor (one count per batch)", valid_count=valid)
    if indices.ndim != 2 or not indices.dtype.startswith("int"):
        raise C.rel_error(op, "indices must be a 2-D integer tensor (batch, anchors)", indices=indices)
    scalar_arg(op, arg_types[3], "max_output_size", "int")
    scalar_arg(op, arg_types[4], "iou_threshold", "float")
    fields = data.shape[2]
    if isinstance(fields, int) and attrs.coord_start + 4 > fields:
        raise C.rel_error(op, f"coord_start={attrs.coord_start} leaves no room for 4 coordinates", data=data)
    b, n = data.shape[0], data.shape[1]
    if attrs.return_indices:
        return TupleType([TensorType((b, n), "int32"), TensorType((b, 1), "int32")])
    return data


def _np_nms_row(x, count, indices, max_out, thr, a):
    """(boxes, box indices) of one batch row, before the final packing."""
    n, k = x.shape
    out = np.full_like(x, -1)
    box = np.full(n, -1, "int64")
    ftype = R.compute_dtype(str(x.dtype))
    count = int(min(max(count, 0), n))
    if thr > 0:
        order = R.stable_order_desc(x[:count, a.score_index])
        keep_n = a.top_k if 0 < a.top_k < count else count
        out[:keep_n] = x[order[:keep_n]]
        box[:keep_n] = order[:keep_n]
        kept = []
        for j in range(count):
            if len(kept) == max_out:
                out[j], box[j] = -1, -1
            elif out[j, a.score_index] > 0:
                coords = out[j, a.coord_start:a.coord_start + 4]
                clash = any((a.id_index < 0 or out[p, a.id_index] >= 0)
                            and (a.force_suppress or a.id_index < 0 or out[j, a.id_index] == out[p, a.id_index])
                            and R.np_iou(coords, out[p, a.coord_start:a.coord_start + 4], ftype) >= thr
                            for p in kept)
                if clash:
                    out[j], box[j] = -1, -1
                else:
                    kept.append(j)
    else:
        out[:count] = x[:count]
        box[:count] = np.arange(count)
    if a.return_indices:
        box[:count] = np.where(box[:count] >= 0, indices[np.clip(box[:count], 0, n - 1)], -1)
    return out, box


def _nms_ref(data, valid_count, indices, max_output_size, iou_threshold, attrs):
    b, n, _ = data.shape
    max_out = int(np.asarray(max_output_size).reshape(()))
    thr = np.asarray(iou_threshold).astype(R.compute_dtype(str(data.dtype))).reshape(())
    rows = [_np_nms_row(data[i], valid_count[i], indices[i], max_out, thr, attrs) for i in range(b)]
    if attrs.return_indices:
        packed = np.full((b, n), -1, "int32")
        counts = np.zeros((b, 1), "int32")
        for i, (_, box) in enumerate(rows):
            good = box[(box >= 0) | (box > n) | (box < -n)]
            packed[i, :len(good)] = np.where((good > n) | (good < -n), 0, good)
            counts[i, 0] = len(good)
        return packed, counts
    out = np.stack([r[0] for r in rows]) if b else np.zeros(data.shape, data.dtype)
    if attrs.invalid_to_bottom:
        packed = np.full_like(out, -1)
        for i in range(b):
            good = out[i][out[i][:, 0] >= 0]
            packed[i, :len(good)] = good
        out = packed
    return out.astype(data.dtype)


def _nms_body(attrs, data, n, k, ins, outs):
    """The per-row suppression of the module doc (into box rows `out` and indices `box`)."""
    ib = ir_builder.create()
    x, valid, indices = (ib.buffer_ptr(t) for t in ins[:3])
    max_out = load_scalar(ins[3]).astype("int32")
    ftype = R.compute_dtype(data.dtype)
    thr = load_scalar(ins[4]).astype(ftype)
    out, box, order = (ib.buffer_ptr(t) for t in outs)
    kept = ib.allocate("int32", (T.imax(n, 1),), name="kept", scope="global")
    state = ib.allocate("int32", (3,), name="state")      # count, survivors, clash
    minus = tir.const(-1.0, data.dtype)
    si, cs, ii = attrs.score_index, attrs.coord_start, attrs.id_index
    b = T.dims(data)[0]
    with ib.for_range(0, b, name="i") as i:
        state[0] = R.clamp(valid[i].astype("int32"), 0, n)
        count = state[0]
        with ib.for_range(0, n, name="j") as j:
            box[i, j] = -1
            with ib.for_range(0, k, name="f") as f:
                out[i, j, f] = minus
        with ib.if_scope(thr > tir.const(0.0, ftype)):
            R.argsort_desc(ib, lambda p: x[i, p, si], count, order, row=(i,))
            keep_n = tir.min(count, attrs.top_k) if attrs.top_k > 0 else count
            with ib.for_range(0, keep_n, name="j") as j:
                with ib.for_range(0, k, name="f") as f:
                    out[i, j, f] = x[i, order[i, j], f]
                box[i, j] = order[i, j]
            state[1] = 0
            with ib.for_range(0, count, name="j") as j:
                with ib.if_scope(state[1] == max_out):
                    with ib.for_range(0, k, name="f") as f:
                        out[i, j, f] = minus
                    box[i, j] = -1
                with ib.else_scope():
                    with ib.if_scope(out[i, j, si] > tir.const(0.0, data.dtype)):
                        state[2] = 0
                        with ib.for_range(0, state[1], name="q") as q:
                            p = kept[q]
                            same = tir.const(True, "bool")
                            if ii >= 0:
                                same = out[i, p, ii] >= tir.const(0.0, data.dtype)
                                if not attrs.force_suppress:
                                    same = tir.And(same, out[i, j, ii] == out[i, p, ii])
                            with ib.if_scope(tir.And(state[2] == 0, same)):
                                a_box = [out[i, j, cs + c].astype(ftype) for c in range(4)]
                                b_box = [out[i, p, cs + c].astype(ftype) for c in range(4)]
                                with ib.if_scope(R.iou(a_box, b_box, ftype) >= thr):
                                    state[2] = 1
                        with ib.if_scope(state[2] == 1):
                            with ib.for_range(0, k, name="f") as f:
                                out[i, j, f] = minus
                            box[i, j] = -1
                        with ib.else_scope():
                            kept[state[1]] = j
                            state[1] = state[1] + 1
        with ib.else_scope():
            with ib.for_range(0, count, name="j") as j:
                with ib.for_range(0, k, name="f") as f:
                    out[i, j, f] = x[i, j, f]
                box[i, j] = j
        if attrs.return_indices:
            with ib.for_range(0, count, name="j") as j:
                with ib.if_scope(box[i, j] >= 0):
                    box[i, j] = indices[i, R.clamp(box[i, j], 0, n - 1)].astype("int32")
    return ib.get()


def _pack_body(attrs, data, n, k, ins, outs):
    """The final packing: indices and their count, or the rows with a class id >= 0 first."""
    ib = ir_builder.create()
    b = T.dims(data)[0]
    fill = ib.allocate("int32", (1,), name="fill")
    if attrs.return_indices:
        box = ib.buffer_ptr(ins[0])
        packed, counts = ib.buffer_ptr(outs[0]), ib.buffer_ptr(outs[1])
        with ib.for_range(0, b, name="i") as i:
            fill[0] = 0
            with ib.for_range(0, n, name="j") as j:
                v = box[i, j]
                with ib.if_scope(tir.Or(v >= 0, tir.Or(v > n, v < -n))):
                    packed[i, fill[0]] = tir.if_then_else(tir.Or(v > n, v < -n), 0, v)
                    fill[0] = fill[0] + 1
            with ib.for_range(0, n, name="j") as j:
                with ib.if_scope(j >= fill[0]):
                    packed[i, j] = -1
            counts[i, 0] = fill[0]
        return ib.get()
    rows, packed = ib.buffer_ptr(ins[0]), ib.buffer_ptr(outs[0])
    with ib.for_range(0, b, name="i") as i:
        fill[0] = 0
        with ib.for_range(0, n, name="j") as j:
            with ib.if_scope(rows[i, j, 0] >= tir.const(0.0, data.dtype)):
                with ib.for_range(0, k, name="f") as f:
                    packed[i, fill[0], f] = rows[i, j, f]
                fill[0] = fill[0] + 1
        with ib.for_range(0, n, name="j") as j:
            with ib.if_scope(j >= fill[0]):
                with ib.for_range(0, k, name="f") as f:
                    packed[i, j, f] = tir.const(-1.0, data.dtype)
    return ib.get()


def _nms_compute(attrs, inputs, out_type):
    data = inputs[0]
    b, n, k = T.dims(data)
    rows, box, _ = te.extern([(b, n, k), (b, n), (b, n)], list(inputs),
                             lambda ins, outs: _nms_body(attrs, data, n, k, ins, outs),
                             name="nms", dtype=[data.dtype, "int32", "int32"])
    if attrs.return_indices:
        return te.extern([(b, n), (b, 1)], [box], lambda ins, outs: _pack_body(attrs, data, n, k, ins, outs),
                         name="nms_pack", dtype=["int32", "int32"])
    if attrs.invalid_to_bottom:
        return [te.extern((b, n, k), [rows], lambda ins, outs: _pack_body(attrs, data, n, k, ins, outs),
                          name="nms_pack", dtype=data.dtype)]
    return [rows]


def _nms_samples(rng):
    A = NonMaximumSuppressionAttrs
    data = _box_samples(rng, 2, 9)
    count = np.array([9, 6], "int32")
    idx = np.stack([np.arange(9), np.arange(9)[::-1]]).astype("int32")

    def s(d, c, i, m, t, a):
        return Sample([d, c, i, np.array(m, "int32"), np.array(t, "float32")], a)
    return [s(data, count, idx, -1, 0.4, A()),
            s(data, count, idx, 3, 0.3, A(force_suppress=True, top_k=5)),
            s(data, count, idx, -1, 0.5, A(return_indices=False)),
            s(data, count, idx, 4, 0.2, A(return_indices=False, invalid_to_bottom=True, id_index=-1)),
            s(data, count, idx, -1, 0.0, A(return_indices=False)),
            s(data[:1, :1], np.array([1], "int32"), idx[:1, :1], -1, 0.5, A()),
            s(data[:1, :0], np.array([0], "int32"), idx[:1, :0], -1, 0.5, A())]


NON_MAX_SUPPRESSION = defop(
    "vision.non_max_suppression", inputs=("data", "valid_count", "indices", "max_output_size", "iou_threshold"),
    attrs=NonMaximumSuppressionAttrs, rel=_nms_rel, pattern=OpPattern.OPAQUE, ref=_nms_ref, compute=_nms_compute,
    level=5, samples=_nms_samples, doc="greedy non-maximum suppression of scored boxes per batch row")


def as_const(value, dtype):
    """`value` itself if it is a Relay expression, else a constant of `dtype` (TVM's constructors)."""
    from ...ir.expr import Expr, const
    return value if isinstance(value, Expr) else const(np.asarray(value, dtype))


# The parameters the box filters and suppressions share (here and in class_nms.py;
# constructor_docs completes their docstrings).
NMS_PARAMETERS = {
    "data": ("relay.Expr", "The boxes, a float tensor (batch, num_anchors, fields): each row one box, "
                           "with its class id in field `id_index`, its score in field `score_index` and "
                           "its corners after them (non_max_suppression reads the 4 corners from field "
                           "`coord_start` on)."),
    "boxes": ("relay.Expr", "The corners of the boxes, a float tensor (batch, num_boxes, 4)."),
    "score_threshold": ("float or relay.Expr", "A box is a candidate only if its score is greater than this."),
    "iou_threshold": ("float or relay.Expr",
                      "A candidate is dropped when its intersection over union with a box already "
                      "selected (of its class) is at least this."),
    "score_index": ("int", "The field of a box row that holds its score."),
    "id_index": ("int", "The field of a box row that holds its class id (a box whose id is negative is "
                        "invalid); a negative id_index means the rows carry no class id, so every box "
                        "is of one class."),
}


@documented(NMS_PARAMETERS)
def get_valid_counts(data, score_threshold, id_index=0, score_index=1):
    """relay.vision.get_valid_counts: (valid_count, packed boxes, their original indices).

    Returns
    -------
    result : relay.TupleWrapper
        (valid_count (batch,) int32: how many boxes of each batch row are valid; the valid boxes
        packed to the front of each row in their input order, the other rows -1, in the shape of
        `data`; the index (batch, num_anchors) int32 in `data` of each packed box, -1 after them).
    """
    from ...ir.expr import TupleWrapper
    call = GET_VALID_COUNTS(data, as_const(score_threshold, "float32"), attrs=GetValidCountsAttrs(id_index, score_index))
    return TupleWrapper(call, 3)


@documented(NMS_PARAMETERS)
def non_max_suppression(data, valid_count, indices, max_output_size=-1, iou_threshold=0.5, force_suppress=False,
                        top_k=-1, coord_start=2, score_index=1, id_index=0, return_indices=True,
                        invalid_to_bottom=False):
    """relay.vision.non_max_suppression (see the module doc); a TupleWrapper of (indices, count)
    when return_indices, else the boxes.

    Parameters
    ----------
    valid_count : relay.Expr
        An integer tensor (batch,): how many boxes at the front of each row of `data` take part
        (get_valid_counts's first result).
    indices : relay.Expr
        An integer tensor (batch, num_anchors): the original index of each row of `data`, which
        return_indices reports (get_valid_counts's third result).
    max_output_size : int or relay.Expr, optional
        The most boxes kept per batch row; a negative value keeps any number. Defaults to -1.
    iou_threshold : float or relay.Expr, optional
        A box is dropped when its intersection over union with a box already kept (of its class,
        unless force_suppress) is at least this; a value <= 0 turns suppression off and passes the
        valid boxes through unsorted. Defaults to 0.5.
    force_suppress : bool, optional
        If True, boxes suppress each other whatever their class ids. Defaults to False.
    top_k : int, optional
        If positive, only the top_k highest-scoring valid boxes of a row are considered. Defaults
        to -1.
    coord_start : int, optional
        The field of a box row where its 4 corners (x1, y1, x2, y2) begin. Defaults to 2.
    return_indices : bool, optional
        If True, the result is the kept boxes' original indices (from `indices`) and their count;
        if False, the boxes themselves. Defaults to True.
    invalid_to_bottom : bool, optional
        With return_indices False: if True, the kept boxes are packed to the top of each row and
        the dropped ones (all -1) follow. Defaults to False.

    Returns
    -------
    result : relay.TupleWrapper or relay.Expr
        With return_indices, (the kept boxes' indices (batch, num_anchors) int32 packed to the
        front, -1 after them; their count (batch, 1) int32); otherwise the boxes in the shape of
        `data`, a dropped box's row all -1.
    """
    from ...ir.expr import TupleWrapper
    attrs = NonMaximumSuppressionAttrs(force_suppress, top_k, coord_start, score_index, id_index, return_indices,
                                       invalid_to_bottom)
    call = NON_MAX_SUPPRESSION(data, valid_count, indices, as_const(max_output_size, "int32"),
                               as_const(iou_threshold, "float32"), attrs=attrs)
    return TupleWrapper(call, 2) if return_indices else call


__all__ = ["get_valid_counts", "non_max_suppression", "GetValidCountsAttrs", "NonMaximumSuppressionAttrs"]
