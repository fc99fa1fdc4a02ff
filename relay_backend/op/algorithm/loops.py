"""tir statements for the ops whose loops carry state from one step to the next (sorts and
scans), built inside te.extern stages: a flat view of a buffer, the loops over the rows of an
axis, and a stable bottom-up merge sort of one row's indices.

That merge sort is the project's one sort kernel: argsort / sort / topk call stable_argsort
per row, and every other sorting kernel goes through `sort_row` (te_search.stable_sort for
unique, invert_permutation and sparse_to_dense; vision/ir_common.argsort_desc for the NMS
family and proposal).

A tensor of shape (outer..., n, inner...) sorted or scanned along its axis is `outer * inner`
rows of n elements at stride `inner`; row (o, i) starts at o * n * inner + i.

The merge sort runs ceil(log2(n)) passes (a fixed 31-iteration loop whose passes past the row
length do nothing), each merging every pair of runs of width w into one of 2w (n steps in all,
two cursors carried from step to step), then copies the merged indices back: O(n log n) per row, stable (a right-run element goes first only when it
is strictly before the left one), with its rows allocated once per kernel. The keys travel
with their indices, so merges read memory sequentially. `before(a, b)` orders NaN after every
number ascending and before every number descending (NaN counts as the largest value).
"""
from ... import te, tir
from ...tir import stmt as S
from ...tir.buffer import Buffer

MAX_PASSES = 31             # rows up to 2**30 elements (2 * w stays an int32)


def flat(buf: Buffer) -> Buffer:
    """A 1-D view of `buf` (same memory, row-major)."""
    return Buffer(buf.name + "_flat", (buf.size(),), buf.dtype, data=buf.data)


def loop(extent, body_fn, name="k", kind="serial"):
    """for k in range(extent): body_fn(k)."""
    var = tir.Var(name, "int32")
    return S.For(var, 0, extent, kind, body_fn(var))


def row_geometry(shape, axis):
    """(outer, n, inner) of `shape` around `axis` (products of PrimExprs)."""
    outer, inner = tir.const(1, "int32"), tir.const(1, "int32")
    for d in shape[:axis]:
        outer = outer * d
    for d in shape[axis + 1:]:
        inner = inner * d
    return outer, shape[axis], inner


def for_each_row(outer, n, inner, body_fn):
    """for o, i over the rows: body_fn(base) with base the row's first flat offset."""
    return loop(outer, lambda o: loop(inner, lambda i: body_fn(o * n * inner + i), "i"), "o")


def before(a, b, descending: bool):
    """Whether key a comes strictly before key b (NaN largest)."""
    first = a > b if descending else a < b
    if a.dtype.startswith("float"):
        nan_a, nan_b = te.isnan(a), te.isnan(b)
        first = first | (nan_a & ~nan_b) if descending else first | (nan_b & ~nan_a)
    return first


def stable_argsort(key, n, bufs, descending: bool):
    """Statements leaving in bufs.order[0:n] the stable sorting permutation of the row whose
    k-th key is `key(k)`. The keys move with their indices (bufs.keys), so every merge reads
    memory in order; bufs (with_sort_buffers) holds the scratch rows and the two cursors."""
    order, keys, scratch, key_scratch, state = bufs
    zero, one = tir.const(0, "int32"), tir.const(1, "int32")
    last = tir.max(n - one, zero)

    def merge_pass(p):
        width = te.shift_left(one, p)
        span = width * tir.const(2, "int32")

        def merge_block(b):
            start = b * span
            mid = tir.min(start + width, n)
            end = tir.min(start + span, n)

            def step(t):
                k = start + t
                i, j, right_first = tir.Var("i", "int32"), tir.Var("j", "int32"), tir.Var("right_first", "bool")
                left, right = keys[tir.min(i, last)], keys[tir.min(j, last)]
                take_right = (j < end) & ((i >= mid) | before(right, left, descending))
                merge = S.seq(
                    S.BufferStore(scratch, te.if_then_else(right_first, order[tir.min(j, last)],
                                                           order[tir.min(i, last)]), [k]),
                    S.BufferStore(key_scratch, te.if_then_else(right_first, right, left), [k]),
                    S.BufferStore(state, i + te.if_then_else(right_first, zero, one), [0]),
                    S.BufferStore(state, j + te.if_then_else(right_first, one, zero), [1]))
                return S.LetStmt(i, state[0], S.LetStmt(j, state[1], S.LetStmt(right_first, take_right, merge)))
            cursors = S.seq(S.BufferStore(state, start, [0]), S.BufferStore(state, mid, [1]))
            return S.seq(cursors, loop(end - start, step, "t"))
        blocks = tir.floordiv(n + span - one, span)
        copy_back = loop(n, lambda k: S.seq(S.BufferStore(order, scratch[k], [k]),
                                            S.BufferStore(keys, key_scratch[k], [k])), "c")
        return S.IfThenElse(width < n, S.seq(loop(blocks, merge_block, "b"), copy_back))

    init = loop(n, lambda k: S.seq(S.BufferStore(order, k, [k]), S.BufferStore(keys, key(k), [k])), "k0")
    return S.seq(init, loop(MAX_PASSES, merge_pass, "p"))


def sort_buffers(n, dtype):
    """The rows stable_argsort works in for up to n keys of `dtype` (indices and keys, twice)
    and its cursors (local), not yet allocated."""
    return (Buffer("sort_order", (n,), "int32"), Buffer("sort_keys", (n,), dtype),
            Buffer("sort_scratch", (n,), "int32"), Buffer("sort_key_scratch", (n,), dtype),
            Buffer("sort_state", (2,), "int32", scope="local"))


def with_sort_buffers(n, dtype, body_fn):
    """Allocate the rows stable_argsort works in (indices and keys, twice) and its cursors
    around body_fn(bufs)."""
    bufs = sort_buffers(n, dtype)
    body = body_fn(bufs)
    for buf in reversed(bufs):
        body = S.Allocate(buf, body, buf.scope)
    return body


def sort_row(key, n, capacity, dtype: str, descending: bool, consume):
    """A statement sorting the row key(0), ..., key(n - 1) (n <= capacity; keys of `dtype`)
    stably, NaN largest, in scratch rows of `capacity` allocated around it, then running
    consume(order, keys): order[p] is the index that sorted to position p, keys[p] its key."""
    def body(bufs):
        return S.seq(stable_argsort(key, n, bufs, descending), consume(bufs[0], bufs[1]))
    return with_sort_buffers(capacity, dtype, body)


__all__ = ["flat", "loop", "row_geometry", "for_each_row", "before", "stable_argsort", "sort_buffers",
           "with_sort_buffers", "sort_row"]
