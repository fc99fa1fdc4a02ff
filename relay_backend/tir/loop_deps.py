"""Whether the iterations of a loop are independent: each writes its own elements and reads
back only the elements it wrote, so they may run in any order or side by side in SIMD lanes.

The C backend marks such vectorized loops `#pragma omp simd`, which GCC then vectorizes before
unrolling the loops around them (a register-tiled micro-kernel keeps its accumulators in vector
registers instead of being scalarized). The check is conservative: one loop body without inner
loops or allocations; every store's index is `loop_var + (terms without it)` in one dimension
and free of the loop var in the others (distinct elements per iteration); a buffer the loop
stores to is read only at exactly a stored index (a reduction update acc[x] = acc[x] + ...).
"""
from . import expr as E
from . import stmt as S
from .functor import mentions, walk
from .simplify import _key, linear_form


def _injective_in(indices, var) -> bool:
    """One index is var + (something without var), the others do not mention var."""
    hits = 0
    for e in indices:
        if not mentions(e, var):
            continue
        terms, _ = linear_form(e)
        with_var = [(t, k) for t, k in terms.values() if mentions(t, var)]
        if len(with_var) != 1 or with_var[0][0] is not var or abs(with_var[0][1]) != 1:
            return False
        hits += 1
    return hits == 1


def iterations_independent(loop: S.For) -> bool:
    """True when no iteration of `loop` reads or writes an element another iteration writes."""
    nodes = list(walk(loop.body))
    if any(isinstance(n, (S.For, S.Allocate)) for n in nodes):
        return False
    stores = [n for n in nodes if isinstance(n, S.BufferStore)]
    loads = [n for n in nodes if isinstance(n, E.BufferLoad)]
    return accesses_independent(stores, loads, loop.loop_var)


def accesses_independent(stores, loads, var) -> bool:
    """iterations_independent for a loop body without inner loops or allocations given as
    its BufferStores and every BufferLoad in it (for a caller that already walked it)."""
    if not stores or not all(_injective_in(st.indices, var) for st in stores):
        return False
    written = {}
    for st in stores:
        written.setdefault(id(st.buffer.data), set()).add(tuple(_key(i) for i in st.indices))
    for ld in loads:
        keys = written.get(id(ld.buffer.data))
        if keys is not None and tuple(_key(i) for i in ld.indices) not in keys:
            return False
    return True
