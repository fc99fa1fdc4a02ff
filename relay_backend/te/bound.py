"""Region inference for compute_at: which part of a producer one consumer iteration reads.

Given the consumer's index expressions (in its leaf loop vars) and the ranges of the loops
inside the attach point, each producer dimension gets a region [lo, lo + extent): lo may
mention the enclosing (fixed) loop vars, extent should be a constant. A dimension whose
extent cannot be made constant falls back to the producer's whole extent.
"""
from ..tir import expr as E
from ..tir.functor import walk
from ..tir.simplify import const_bound, linear_form, simplify


def _sym_bound(e, inner):
    """Symbolic (lo, hi) of `e` over the inner vars' ranges, or None when unknown."""
    terms, const = linear_form(simplify(e))
    lo = hi = E.IntImm(e.dtype, const)
    for term, k in terms.values():
        uses_inner = any(isinstance(n, E.Var) and id(n) in inner for n in walk(term))
        if not uses_inner:
            piece = term * k if k != 1 else term
            lo, hi = lo + piece, hi + piece
            continue
        tlo, thi = const_bound(term, inner)
        if tlo is None or thi is None:
            return None
        a, b = (tlo * k, thi * k) if k > 0 else (thi * k, tlo * k)
        lo, hi = lo + a, hi + b
    return simplify(lo), simplify(hi)


def infer_region(tensors, exprs, inner, full_shape):
    """[(lo, extent)] per dimension of the region of `tensors` that `exprs` read.

    inner: {id(var): (lo, hi)} constant ranges of the loops inside the attach point.
    Returns None when `exprs` read none of `tensors`.
    """
    ids = {id(t) for t in tensors}
    loads = [n for e in exprs for n in walk(e)
             if isinstance(n, E.ProducerLoad) and id(n.producer) in ids]
    if not loads:
        return None
    region = []
    for d, dim in enumerate(full_shape):
        lo = hi = None
        ok = True
        for ld in loads:
            b = _sym_bound(ld.indices[d], inner)
            if b is None:
                ok = False
                break
            if lo is None:
                lo, hi = b
                continue
            dlo, dhi = simplify(b[0] - lo), simplify(b[1] - hi)
            if not (isinstance(dlo, E.IntImm) and isinstance(dhi, E.IntImm)):
                ok = False
                break
            lo = b[0] if dlo.value < 0 else lo
            hi = b[1] if dhi.value > 0 else hi
        if ok:
            ext = simplify(hi - lo + 1)
            if isinstance(ext, E.IntImm):
                region.append((lo, ext, True))
                continue
        region.append((E.IntImm("int32", 0), dim, False))
    return region
