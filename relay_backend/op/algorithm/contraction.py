"""einsum (TVM's relay.einsum, EinsumAttrs.equation): a sum of products over a tuple of
tensors described by a subscript equation, numpy's convention.

"ij,jk->ik" multiplies and sums over j; a label repeated in one operand takes its diagonal
("ii->i"); without "->" the output is the labels used once, in alphabetical order; "..."
stands for the leading dims of an operand, broadcast across operands (a dim of 1 stretches)
and placed first in an implicit output. The compute is one te stage whose reduce axes are the
labels missing from the output; float16 adds up in float32 (op/accumulation.py).
"""
import dataclasses
import string

import numpy as np

from ... import te, tir
from ...errors import AttrsError, TypeInferenceError
from ...ir.attrs import Attrs, always_printed
from ...ir.dims import is_static
from ...ir.expr import Tuple
from ...ir.types import TensorType, type_to_str
from .. import samples as S
from ..accumulation import acc_dtype
from ..compute_common import cast as te_cast
from ..pattern import OpPattern
from ..registry import Sample, defop
from ..relations import expect_tuple

_LETTERS = set(string.ascii_letters)


@dataclasses.dataclass(frozen=True)
class EinsumAttrs(Attrs):
    equation: str = always_printed("")

    def __post_init__(self):
        if not isinstance(self.equation, str) or not self.equation.replace(" ", ""):
            raise AttrsError(f"einsum: equation must be a non-empty string, got {self.equation!r}")
        object.__setattr__(self, "equation", self.equation.replace(" ", ""))


def _terms(equation):
    lhs, arrow, rhs = equation.partition("->")
    return lhs.split(","), (rhs if arrow else None)


def _labels(term, rank, what):
    """The labels of one subscript term for an operand of `rank`: letters, and "...k" for the
    k-th dim from the right of the ellipsis."""
    if term.count("...") > 1:
        raise TypeInferenceError(f"einsum: {what} {term!r} has more than one ellipsis")
    head, dots, tail = term.partition("...")
    bad = sorted(set(head + tail) - _LETTERS)
    if bad:
        raise TypeInferenceError(f"einsum: {what} {term!r} holds {bad}; subscripts are letters and '...'")
    if not dots:
        if len(term) != rank:
            raise TypeInferenceError(f"einsum: {what} {term!r} has {len(term)} subscripts for an operand of rank {rank}")
        return list(term)
    extra = rank - len(head) - len(tail)
    if extra < 0:
        raise TypeInferenceError(f"einsum: {what} {term!r} has more subscripts than the operand's rank {rank}")
    return list(head) + [f"...{k}" for k in range(extra - 1, -1, -1)] + list(tail)


def plan(equation, shapes):
    """(labels per operand, output labels, size per label) of `equation` on operands of
    `shapes`; raises TypeInferenceError for a malformed equation or mismatched sizes."""
    terms, out_term = _terms(equation)
    if len(terms) != len(shapes):
        raise TypeInferenceError(f"einsum: equation {equation!r} has {len(terms)} operand terms for "
                                 f"{len(shapes)} operands")
    labels = [_labels(t, len(s), f"operand {k} subscripts") for k, (t, s) in enumerate(zip(terms, shapes))]
    sizes = {}
    for k, (names, shape) in enumerate(zip(labels, shapes)):
        for name, dim in zip(names, shape):
            seen = sizes.get(name)
            if seen is None or (is_static(seen) and int(seen) == 1 and name.startswith("...")):
                sizes[name] = dim
            elif is_static(dim) and is_static(seen) and int(dim) != int(seen) and not (
                    name.startswith("...") and int(dim) == 1):
                raise TypeInferenceError(f"einsum: subscript {name!r} has size {dim} in operand {k} but {seen} "
                                         f"elsewhere (equation {equation!r})")
    dots = sorted((n for n in sizes if n.startswith("...")), key=lambda n: -int(n[3:]))
    if out_term is None:
        counts = {}
        for names in labels:
            for n in names:
                counts[n] = counts.get(n, 0) + 1
        out = dots + sorted(n for n in sizes if not n.startswith("...") and counts[n] == 1)
    else:
        head, ellipsis, tail = out_term.partition("...")
        bad = sorted(set(head + tail) - _LETTERS)
        if bad or "..." in tail:
            raise TypeInferenceError(f"einsum: output subscripts {out_term!r} hold {bad or ['...']}; "
                                     "use letters and at most one '...'")
        out = list(head) + (dots if ellipsis else []) + list(tail)
        missing = [n for n in out if n not in sizes]
        if missing or len(set(out)) != len(out):
            raise TypeInferenceError(f"einsum: output subscripts {out_term!r} must be distinct labels of the "
                                     f"operands (equation {equation!r})")
    return labels, out, sizes


def _einsum_rel(arg_types, attrs):
    data = expect_tuple(arg_types[0], "einsum data")
    if not data.fields:
        raise TypeInferenceError("einsum: needs at least one operand")
    dtypes = {t.dtype for t in data.fields}
    if len(dtypes) != 1:
        raise TypeInferenceError(f"einsum: operands must share a dtype, got {type_to_str(data)}")
    _, out, sizes = plan(attrs.equation, [t.shape for t in data.fields])
    return TensorType(tuple(sizes[n] for n in out), data.fields[0].dtype)


def _einsum_ref(data, attrs):
    dtype = data[0].dtype
    wide = "float64" if dtype.kind == "f" else dtype
    return np.asarray(np.einsum(attrs.equation, *[x.astype(wide) for x in data])).astype(dtype)


def _einsum_compute(attrs, inputs, out_type):
    labels, out, sizes = plan(attrs.equation, [tuple(x.shape) for x in inputs])
    dtype = inputs[0].dtype
    acc = acc_dtype(dtype)
    summed = [n for n in sizes if n not in out]
    raxes = {n: te.reduce_axis((0, sizes[n]), f"r_{n.replace('...', 'e')}") for n in summed}

    def element(*index):
        where = dict(zip(out, index))
        where.update({n: iv.var for n, iv in raxes.items()})
        product = None
        for x, names in zip(inputs, labels):
            # a broadcast (size-1) ellipsis dim reads index 0
            idx = tuple(tir.const(0, "int32") if n.startswith("...") and is_static(d) and int(d) == 1
                        and not (is_static(sizes[n]) and int(sizes[n]) == 1) else where[n]
                        for n, d in zip(names, x.shape))
            term = te_cast(x[idx], acc)
            product = term if product is None else product * term
        if not raxes:
            return te_cast(product, dtype)
        return te.sum(product, axis=list(raxes.values()))
    shape = [sizes[n] for n in out]
    total = te.compute(shape, element, name="T_einsum", tag="einsum")
    if not raxes or acc == dtype:
        return [total]
    return [te.compute(shape, lambda *i: te_cast(total[i], dtype), name="T_einsum_cast", tag="einsum")]


def _samples(rng):
    return [Sample([[S.rand(rng, (2, 3)), S.rand(rng, (3, 4))]], EinsumAttrs("ij,jk->ik")),
            Sample([[S.rand(rng, (3, 3))]], EinsumAttrs("ii->i")),
            Sample([[S.rand(rng, (3, 3), "float64")]], EinsumAttrs("ii")),
            Sample([[S.rand(rng, (2, 3, 4)), S.rand(rng, (2, 4, 5))]], EinsumAttrs("bij,bjk->bik")),
            Sample([[S.rand(rng, (4,), "int32", -5, 5), S.rand(rng, (3,), "int32", -5, 5)]], EinsumAttrs("i,j")),
            Sample([[S.rand(rng, (2, 1, 3)), S.rand(rng, (4, 3))]], EinsumAttrs("...j,kj->...k")),
            Sample([[S.rand(rng, (2, 3, 4))]], EinsumAttrs("...ij->...ji")),
            Sample([[S.rand(rng, (5,)), S.rand(rng, (5,)), S.rand(rng, (5,))]], EinsumAttrs("i,i,i->")),
            Sample([[S.rand(rng, (0, 3)), S.rand(rng, (3, 2))]], EinsumAttrs("ij,jk")),
            Sample([[S.rand(rng, (S.FLOAT16_REDUCTION_TERMS,), "float16", 0.5, 1.0),
                     S.rand(rng, (S.FLOAT16_REDUCTION_TERMS,), "float16", 0.5, 1.0)]], EinsumAttrs("i,i->"))]


EINSUM = defop("einsum", inputs=("data",), attrs=EinsumAttrs, rel=_einsum_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
               ref=_einsum_ref, compute=_einsum_compute, level=10, samples=_samples,
               doc="sum of products over a tuple of tensors by a subscript equation (numpy's einsum)")


def einsum(data, equation):
    """relay.einsum: numpy's einsum of the tensors `data` (a list, tuple or Tuple).

    Parameters
    ----------
    data : list of relay.Expr or relay.Expr
        The operands (a list, a tuple or a Tuple expression).
    equation : str
        The subscripts in numpy's convention, e.g. "ij,jk->ik"; without "->" the output takes
        the labels used once, in alphabetical order.
    Returns
    -------
    result : relay.Expr
        The sum of products.
    """
    if isinstance(data, (list, tuple)):
        data = Tuple(list(data))
    return EINSUM(data, attrs=EinsumAttrs(equation))


__all__ = ["einsum", "EinsumAttrs"]
