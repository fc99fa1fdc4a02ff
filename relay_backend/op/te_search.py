"""te building blocks for ops that count and search (argwhere, searchsorted, ...), written with
te.compute (te has no scan), and a sort stage for them:

  * `materialize`: a stage that every schedule keeps as its own buffer (marked no_inline, which
    strategy/common.py's inline_except respects), so a later stage that reads it several times
    reads memory instead of re-evaluating it;
  * `inclusive_prefix_sum`: Hillis-Steele, ceil(log2 n) materialized stages of n additions each
    (O(n log n) work, no quadratic loop);
  * `lower_bound`: the first position of a non-decreasing sequence whose value reaches a target,
    by binary lifting in one expression (O(log n) loads; tir Lets keep it linear in size);
  * `stable_sort`: values and their source positions sorted ascending, stable, NaN last (as
    numpy's), in one extern stage running op/algorithm/loops.py's merge sort (O(n log n)).
"""
from .. import te, tir
from ..tir import expr as E
from ..tir import stmt as S
from .algorithm import loops as L

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
    """(sorted values, their source positions as int32) of a 1-D te tensor of length n (an int
    or a PrimExpr): one extern stage sorting with loops.sort_row, ascending. Equal values keep
    their order, so the positions of a value are ascending, as a stable argsort's."""
    def build(ins, outs):
        data, ordered, source = ins[0], outs[0], outs[1]
        length = ordered.shape[0]

        def emit(order, keys):
            return L.loop(length, lambda p: S.seq(S.BufferStore(ordered, keys[p], [p]),
                                                  S.BufferStore(source, order[p], [p])), "p")
        return L.sort_row(lambda k: data[k], length, length, values.dtype, False, emit)
    ordered, source = te.extern([(n,), (n,)], [values], build, name=name, tag=tag, dtype=[values.dtype, "int32"])
    return ordered, source


__all__ = ["materialize", "inclusive_prefix_sum", "lower_bound", "greater", "stable_sort"]
