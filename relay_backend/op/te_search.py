"""te building blocks for ops that count and search (argwhere, searchsorted, ...), written with
te.compute alone (te has no scan):

  * `materialize`: a stage that every schedule keeps as its own buffer (marked no_inline, which
    strategy/common.py's inline_except respects), so a later stage that reads it several times
    reads memory instead of re-evaluating it;
  * `inclusive_prefix_sum`: Hillis-Steele, ceil(log2 n) materialized stages of n additions each
    (O(n log n) work, no quadratic loop);
  * `lower_bound`: the first position of a non-decreasing sequence whose value reaches a target,
    by binary lifting in one expression (O(log n) loads; tir Lets keep it linear in size).
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


def lower_bound(load, n, reaches):
    """The smallest p in [0, n] with reaches(load(p)) true (n when none), for a `load(p)` of a
    sequence that `reaches` turns from false to true at most once (non-decreasing values).
    An int32 expression; `load` is only called on positions inside [0, n)."""
    n = E.convert(n, "int32") if isinstance(n, int) else n
    below = tir.const(-1, "int32")          # the last position known not to reach
    bindings = []
    for bit in reversed(range(_search_bits(n))):
        candidate = below + (1 << bit)
        step = E.Var(f"lb{bit}", "int32")
        inside = te.if_then_else(reaches(load(candidate)), below, candidate)
        bindings.append((step, te.if_then_else(candidate < n, inside, below)))
        below = step
    result = below + 1
    for var, value in reversed(bindings):
        result = E.Let(var, value, result)
    return result


__all__ = ["materialize", "inclusive_prefix_sum", "lower_bound"]
