"""Sequential building blocks the vision kernels share, written with tir.ir_builder: a stable
descending argsort (the sort ops' merge sort, op/algorithm/loops.py: O(n log n) for every n
including 0 and 1), the IoU of two corner boxes, and clamping. The numpy references next to each
op use the sort ops' reference order (stable_order_desc) and the same IoU formula (np_iou), so
ties, NaN and rounding agree.
"""
import numpy as np

from ... import tir
from ...tir import stmt as S
from ..algorithm import loops as L
from ..algorithm.sorting import stable_argsort_ref


def clamp(value, lo, hi):
    """lo <= value <= hi (tir)."""
    return tir.max(tir.min(value, hi), lo)


def argsort_desc(ib, key, n, order, row=()):
    """order[row + (p,)] for p < n := the indices 0..n-1 sorted by key(index) descending, ties in
    index order, NaN first (the largest, as TVM's sorts): op/algorithm/loops.py's merge sort.
    `order` is a BufferPtr whose last axis has room for n; `row` indexes its leading axes.
    `key(index_expr)` reads the sort key of an index."""
    dtype = key(tir.Var("probe", "int32")).dtype
    bufs = tuple(ib.allocate(buf.dtype, buf.shape, buf.name, buf.scope, at_root=buf.scope != "local").buffer
                 for buf in L.sort_buffers(order.shape[-1], dtype))   # rows outside the kernel's loops
    sorted_order = bufs[0]
    ib.emit(S.seq(L.stable_argsort(key, n, bufs, True),
                  L.loop(n, lambda p: S.BufferStore(order.buffer, sorted_order[p], tuple(row) + (p,)), "p")))


def iou(box_a, box_b, dtype):
    """Intersection over union of two boxes given as 4 corner coordinates each (any corner
    order: TVM takes min / max per axis); 0 when the union is empty (tir)."""
    zero = tir.const(0.0, dtype)
    a_l, a_t = tir.min(box_a[0], box_a[2]), tir.min(box_a[1], box_a[3])
    a_r, a_b = tir.max(box_a[0], box_a[2]), tir.max(box_a[1], box_a[3])
    b_l, b_t = tir.min(box_b[0], box_b[2]), tir.min(box_b[1], box_b[3])
    b_r, b_b = tir.max(box_b[0], box_b[2]), tir.max(box_b[1], box_b[3])
    w = tir.max(zero, tir.min(a_r, b_r) - tir.max(a_l, b_l))
    h = tir.max(zero, tir.min(a_b, b_b) - tir.max(a_t, b_t))
    inter = h * w
    union = (a_r - a_l) * (a_b - a_t) + (b_r - b_l) * (b_b - b_t) - inter
    return tir.if_then_else(union <= zero, zero, inter / union)


def np_iou(box_a, box_b, dtype):
    """iou for numpy: the same operations in the same order."""
    a, b = np.asarray(box_a, dtype), np.asarray(box_b, dtype)
    zero = np.dtype(dtype).type(0)
    a_l, a_t, a_r, a_b = min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])
    b_l, b_t, b_r, b_b = min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])
    w = max(zero, min(a_r, b_r) - max(a_l, b_l))
    h = max(zero, min(a_b, b_b) - max(a_t, b_t))
    inter = h * w
    union = (a_r - a_l) * (a_b - a_t) + (b_r - b_l) * (b_b - b_t) - inter
    return zero if union <= zero else inter / union


def compute_dtype(dtype: str) -> str:
    """The float type box arithmetic runs in (float16 boxes compute in float32)."""
    return "float64" if dtype == "float64" else "float32"


def stable_order_desc(scores: np.ndarray) -> np.ndarray:
    """Indices sorting 1-D `scores` descending, ties in index order, NaN first (argsort_desc's
    order; the sort ops' reference)."""
    return stable_argsort_ref(np.asarray(scores), 0, False)


__all__ = ["argsort_desc", "iou", "np_iou", "clamp", "compute_dtype", "stable_order_desc"]
