"""Sequential building blocks the vision kernels share, written with tir.ir_builder: a stable
descending argsort (bottom-up merge sort, O(n log n) for every n including 0 and 1), the IoU of
two corner boxes, and clamping. The numpy references next to each op use np.argsort(kind=
"stable") and the same IoU formula (np_iou), so ties and rounding agree.
"""
import numpy as np

from ... import tir

MAX_PASSES = 31     # merge passes of width 1, 2, 4, ...: enough for any int32 length


def clamp(value, lo, hi):
    """lo <= value <= hi (tir)."""
    return tir.max(tir.min(value, hi), lo)


def argsort_desc(ib, key, n, order, tmp, row=()):
    """order[row + (p,)] for p < n := the indices 0..n-1 sorted by key(index) descending, ties in
    index order. `order` and `tmp` are BufferPtrs whose last axis has room for n; `row` indexes
    the leading axes. `key(index_expr)` reads the sort key of an index."""
    at = lambda p: row + (p,)  # noqa: E731
    with ib.for_range(0, n, name="init") as j:
        order[at(j)] = j
    width = ib.allocate("int32", (1,), name="width")
    head = ib.allocate("int32", (2,), name="heads")
    width[0] = 1
    with ib.for_range(0, MAX_PASSES, name="merge_pass"):
        with ib.if_scope(width[0] < n):
            w = width[0]
            blocks = (n + 2 * w - 1) // (2 * w)
            with ib.for_range(0, n, name="block") as b:
                with ib.if_scope(b < blocks):
                    left = b * (2 * w)
                    mid = tir.min(left + w, n)
                    right = tir.min(left + 2 * w, n)
                    head[0] = left
                    head[1] = mid
                    with ib.for_range(0, right - left, name="k") as k:
                        a, c = head[0], head[1]
                        first = order[at(tir.min(a, n - 1))]
                        second = order[at(tir.min(c, n - 1))]
                        take_first = tir.And(a < mid, tir.Or(c >= right, key(first) >= key(second)))
                        with ib.if_scope(take_first):
                            tmp[at(left + k)] = first
                            head[0] = a + 1
                        with ib.else_scope():
                            tmp[at(left + k)] = second
                            head[1] = c + 1
            with ib.for_range(0, n, name="copy") as j:
                order[at(j)] = tmp[at(j)]
            width[0] = w * 2


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
    """Indices sorting `scores` descending, ties in index order (the merge sort's order)."""
    return np.argsort(-scores.astype("float64"), kind="stable")


__all__ = ["argsort_desc", "iou", "np_iou", "clamp", "compute_dtype", "stable_order_desc", "MAX_PASSES"]
