"""Accesses that split one value over two adjacent axes, rewritten onto one merged axis.

A loop that te fused and the lowering split again indexes a row-major buffer as

    buf[..., x // c + a, (x % c) * m + b, ...]        shape[d + 1] == c * m

(DenseNet's concatenations: `out[0, f // 14, f % 14, w, i]`; a convolution's tile rows:
`pad[0, 0, t // 2 + ry - 1, (t % 2) * 16 + rx - 1, i]`). Those two axes add
(x // c + a) * c * m + (x % c) * m + b = m * x + shape[d + 1] * a + b elements of their
stride to the address, because x == (x // c) * c + x % c for every integer x (floor division).
So the access reads or writes the same element as

    view[..., m * x + shape[d + 1] * a + b, ...]     (the same memory, axes d and d + 1 merged)

and the code generator emits one linear index instead of a floor division and a floor modulo,
each with its sign fix-up, which LLVM's induction-variable and strength-reduction passes then
had to take apart again in every loop nest.

Guarantee: every BufferLoad / BufferStore addresses the same element as before (the identity
above is exact for all integers, so in-bounds accesses stay in bounds); only accesses of
row-major buffers with static shapes (no explicit strides) whose axis d index holds the floor
division with coefficient 1 (and both indices the numerator's dtype) change; the views share
the buffer's `data`, so allocation, aliasing and read-only analysis, all keyed on `data`, see
the same buffer.
"""
from . import expr as E
from .buffer import Buffer
from .functor import rewrite, walk
from .simplify import from_linear, linear_form, term_key
from .stmt import BufferStore

INT32_MAX = (1 << 31) - 1


def merge_split_axes(body):
    """`body` with each access of the form in the module docstring on its merged view."""
    views = {}

    def visit(node):
        if isinstance(node, (E.BufferLoad, BufferStore)) and _has_floordiv(node.indices):
            merged = _merge(node.buffer, node.indices, views)
            if merged is not None:
                buffer, indices = merged
                if isinstance(node, E.BufferLoad):
                    return E.BufferLoad(buffer, indices)
                return BufferStore(buffer, node.value, indices)
        return None
    return rewrite(body, visit)


def _has_floordiv(indices) -> bool:
    return any(isinstance(n, E.FloorDiv) for index in indices for n in walk(index))


def _static_shape(buffer: Buffer):
    if buffer.strides is not None or not all(isinstance(d, E.IntImm) for d in buffer.shape):
        return None
    return [int(d.value) for d in buffer.shape]


def _merge(buffer, indices, views):
    """(view, indices) with every mergeable adjacent pair merged, or None when none is."""
    shape = _static_shape(buffer)
    if shape is None:
        return None
    indices, changed, d = list(indices), False, 0
    while d + 1 < len(indices):
        merged = _merge_pair(indices[d], indices[d + 1], shape[d + 1])
        if merged is None or shape[d] * shape[d + 1] > INT32_MAX:
            d += 1
            continue
        indices[d:d + 2] = [merged]
        shape[d:d + 2] = [shape[d] * shape[d + 1]]
        changed = True          # stay at d: the merged axis may merge with the next one
    if not changed:
        return None
    key = (id(buffer), tuple(shape))
    if key not in views:
        views[key] = (Buffer(buffer.name, shape, buffer.dtype, data=buffer.data, scope=buffer.scope), buffer)
    return views[key][0], tuple(indices)


def _merge_pair(outer, inner, extent: int):
    """m * x + extent * (outer - x // c) + (inner - m * (x % c)), when `outer` holds x // c with
    coefficient 1 and `inner` holds x % c with a coefficient m such that c * m == extent."""
    outer_terms, outer_const = linear_form(outer)
    inner_terms, inner_const = linear_form(inner)
    for key, (term, coeff) in outer_terms.items():
        if coeff != 1 or not isinstance(term, E.FloorDiv) or not isinstance(term.b, E.IntImm):
            continue
        divisor = int(term.b.value)
        if divisor <= 0 or extent % divisor or not outer.dtype == inner.dtype == term.a.dtype:
            continue
        mod_key = _mod_key(inner_terms, term.a, divisor)
        if mod_key is None or inner_terms[mod_key][1] * divisor != extent:
            continue
        scale = inner_terms[mod_key][1]
        terms = {k: [t, c * extent] for k, (t, c) in outer_terms.items() if k != key}
        for k, (t, c) in inner_terms.items():
            if k != mod_key:
                terms.setdefault(k, [t, 0])[1] += c
        numerator_terms, numerator_const = linear_form(term.a)
        for k, (t, c) in numerator_terms.items():
            terms.setdefault(k, [t, 0])[1] += c * scale
        const = outer_const * extent + inner_const + numerator_const * scale
        terms = {k: tc for k, tc in terms.items() if tc[1] != 0}
        return from_linear(terms, const, outer.dtype)
    return None


def _mod_key(terms, numerator, divisor: int):
    """The key in `terms` of `numerator % divisor` (floor modulo), if it is there."""
    want = term_key(numerator)
    for key, (term, _) in terms.items():
        if isinstance(term, E.FloorMod) and isinstance(term.b, E.IntImm) and int(term.b.value) == divisor \
                and term_key(term.a) == want:
            return key
    return None


__all__ = ["merge_split_axes"]
