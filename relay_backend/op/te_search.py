"""te building blocks for ops that count and search (argwhere, searchsorted, ...), written with
te.compute alone (te has no scan):

  * `materialize`: a stage that every schedule keeps as its own buffer (marked no_inline, which
    strategy/common.py's inline_except respects), so a later stage that reads it several times
    reads memory instead of re-evaluating it;
  * `inclusive_prefix_sum`: Hillis-Steele, ceil(log2 n) materialized stages of n additions each
    (O(n log n) work, no quadratic loop);
  * `lower_bound`: the first position of a non-decreasing sequence whose value reaches a target,
    by binary lifting in one expression (O(log n) loads; tir Lets keep it linear in size);
  * `stable_sort`: values and their source positions sorted by a bottom-up merge sort whose
    passes find each output's source by a binary search (O(n log^2 n), NaN last as numpy's).
"""
from .. import te, tir
from ..tir import expr as E

MAX_SEARCH_BITS = 31   # int32 positions: enough steps for any size when it is not static


NO_INLINE = "no_inline"   # te.compute attrs key strategy/common.py's inline_except respects


def materialize(shape, fcompute, name: str, tag: str):
    """te.compute(shape, fcompute) kept as its own stage (never inlined by a schedule)."""
    return te.compute(shape, fcompute, name=name, tag=tag, attrs={NO_INLINE: True})


def _static(n):
    """n as a Python int when it is a constant, else None."""
    if isinstance(n, int):
        return n
    return n.value if isinstance(n, E.IntImm) else None


def _scan_steps(n) -> int:
    """Doubling steps until the shift covers every earlier position: 2**steps >= n."""
    size = _static(n)
    return max(size - 1, 0).bit_length() if size is not None else MAX_SEARCH_BITS


def _search_bits(n) -> int:
    """Bits of a position in [0, n): -1 + (2**bits - 1) reaches n - 1."""
    size = _static(n)
    return size.bit_length() if size is not None else MAX_SEARCH_BITS


def inclusive_prefix_sum(values, n, name: str, tag: str):
    """out[i] = values[0] + ... + values[i] for a 1-D te tensor of length n (int or PrimExpr)."""
    current = values
    for step in range(_scan_steps(n)):
        shift = 1 << step

        def body(i, prev=current, shift=shift):
            earlier = te.if_then_else(i >= shift, prev[tir.max(i - shift, 0)], tir.const(0, prev.dtype))
            return prev[i] + earlier
        current = materialize((n,), body, f"{name}_scan{step}", tag)
    return current


def lower_bound(load, n, reaches, max_n=None):
    """The smallest p in [0, n] with reaches(load(p)) true (n when none), for a `load(p)` of a
    sequence that `reaches` turns from false to true at most once (non-decreasing values).
    An int32 expression; `load` is only called on positions inside [0, n). `max_n`, a static
    bound on n, shortens the search when n itself is an expression."""
    bits = _search_bits(n if max_n is None else max_n)
    n = E.convert(n, "int32") if isinstance(n, int) else n
    below = tir.const(-1, "int32")          # the last position known not to reach
    bindings = []
    for bit in reversed(range(bits)):
        candidate = below + (1 << bit)
        step = E.Var(f"lb{bit}", "int32")
        inside = te.if_then_else(reaches(load(candidate)), below, candidate)
        bindings.append((step, te.if_then_else(candidate < n, inside, below)))
        below = step
    result = below + 1
    for var, value in reversed(bindings):
        result = E.Let(var, value, result)
    return result




def greater(a, b):
    """a > b in numpy's sort order: NaN after every number (and not after another NaN)."""
    if not a.dtype.startswith(("float", "bfloat")):
        return a > b
    return (a > b) | ((a != a) & (b == b))


def stable_sort(values, n, name: str, tag: str):
    """(sorted values, their source positions) of a 1-D te tensor of static length n: a bottom-up
    merge sort of ceil(log2 n) passes. Each output position of a pass finds how many of its
    elements come from the left run by a binary search (the merge-path co-rank), so a pass costs
    O(n log n) and the sort O(n log^2 n). Equal values keep their order (the left run goes
    first), so the positions of a value are ascending, as a stable argsort's."""
    current = te.compute((n,), lambda i: values[i], name=f"{name}_copy", tag=tag)   # 0 or 1 element: sorted
    source = te.compute((n,), lambda i: i, name=f"{name}_iota", tag=tag)
    for step in range(_scan_steps(n)):
        run = 1 << step
        current, source = _merge_pass(current, source, n, run, f"{name}_merge{step}", tag)
    return current, source


def _merge_pass(values, source, n, run, name, tag):
    """One merge pass: runs of length `run` merged pairwise into runs of 2 * run."""
    def layout(p):
        start_a = tir.floordiv(p, 2 * run) * (2 * run)
        len_a = tir.min(tir.max(n - start_a, 0), run)
        start_b = start_a + run
        len_b = tir.min(tir.max(n - start_b, 0), run)
        return start_a, len_a, start_b, len_b, p - start_a

    def corank(p):
        start_a, len_a, start_b, len_b, q = layout(p)
        lo = tir.max(q - len_b, 0)
        hi = tir.min(q, len_a)

        def from_left_enough(t):        # A[k] > B[q - k - 1] at k = lo + t: the co-rank is <= k
            k = lo + t
            a = values[start_a + tir.min(k, run - 1)]
            b = values[start_b + tir.max(q - k - 1, 0)]
            return greater(a, b)
        return lo + lower_bound(lambda t: t, hi - lo, from_left_enough, max_n=run)
    taken = materialize((n,), corank, f"{name}_corank", tag)

    def pick(array):
        def body(p):
            start_a, len_a, start_b, len_b, q = layout(p)
            k = taken[p]
            j = q - k
            a = array[start_a + tir.min(k, run - 1)]
            b = array[start_b + tir.min(tir.max(j, 0), run - 1)]
            va = values[start_a + tir.min(k, run - 1)]
            vb = values[start_b + tir.min(tir.max(j, 0), run - 1)]
            use_a = (k < len_a) & ((j >= len_b) | te.if_then_else(k < len_a, te.if_then_else(
                j < len_b, tir.Not(greater(va, vb)), True), False))
            return te.if_then_else(use_a, a, b)
        return body
    return (materialize((n,), pick(values), f"{name}_values", tag),
            materialize((n,), pick(source), f"{name}_source", tag))


__all__ = ["materialize", "inclusive_prefix_sum", "lower_bound", "greater", "stable_sort"]
