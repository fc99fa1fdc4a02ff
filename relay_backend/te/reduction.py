"""Reduction axes and commutative reducers: reduce_axis, comm_reducer, sum, max, min.

A reducer call builds tir Reduce nodes, which must be the whole body of a te.compute.
`comm_reducer` also covers tuple reductions such as argmax (index, value) pairs.
On bool values sum and max combine with logical or, min with logical and, as numpy does
(`True + True` is True), so a bool reduction never reaches codegen as bool arithmetic.
"""
from ..errors import CompileError
from ..tir import expr as E


def reduce_axis(dom, name="rv"):
    """A reduction IterVar over [lo, hi) given as a (lo, hi) pair or a tir Range."""
    if isinstance(dom, E.Range):
        rng = dom
    else:
        lo, hi = dom
        rng = E.Range(lo, E.convert(hi, "int32") - E.convert(lo, "int32"))
        if isinstance(rng.extent, E.BinaryOp):
            from ..tir.simplify import simplify
            rng = E.Range(rng.min, simplify(rng.extent))
    return E.IterVar(rng, E.Var(name, "int32"), "reduce")


def comm_reducer(fcombine, fidentity, name="comm_reduce"):
    """A reducer from fcombine(lhs, rhs) -> result and fidentity(*dtypes) -> identity.

    For a tuple reduction lhs, rhs and the results are tuples of the same length. The
    returned function is called as reducer(expr_or_tuple, axis=[...], where=None); called as
    reducer(a, b) with two expressions it combines them directly.
    """
    def reducer(expr, axis=None, where=None, init=None):
        if axis is not None and isinstance(axis, (E.PrimExpr, int, float)) and \
                not isinstance(expr, tuple):
            a, b = E._match(expr, axis, name)
            return _apply(fcombine, (a,), (b,))[0]
        if axis is None:
            raise CompileError(f"te.{name}: give the reduction axes (axis=[k, ...])")
        if init is not None:
            raise CompileError(f"te.{name}: init= is not supported; add the initial value to "
                               "the result in a following compute")
        axes = [axis] if isinstance(axis, E.IterVar) else list(axis)
        for iv in axes:
            if not isinstance(iv, E.IterVar) or iv.iter_type != "reduce":
                raise CompileError(f"te.{name}: axis {iv!r} is not a te.reduce_axis")
        is_tuple = isinstance(expr, (tuple, list))
        source = tuple(E.convert(x) for x in (expr if is_tuple else (expr,)))
        lhs = tuple(E.Var(f"x{k}", s.dtype) for k, s in enumerate(source))
        rhs = tuple(E.Var(f"y{k}", s.dtype) for k, s in enumerate(source))
        result = _apply(fcombine, lhs, rhs)
        ident = fidentity(*[s.dtype for s in source])
        ident = tuple(ident) if isinstance(ident, (tuple, list)) else (ident,)
        ident = tuple(E.convert(v, s.dtype) for v, s in zip(ident, source))
        if len(result) != len(source) or len(ident) != len(source):
            raise CompileError(f"te.{name}: combine/identity give {len(result)}/{len(ident)} "
                               f"values for {len(source)} reduced expressions")
        for r, s in zip(result, source):
            if r.dtype != s.dtype:
                raise CompileError(f"te.{name}: combine returns {r.dtype} for a {s.dtype} input")
        combiner = E.CommReducer(lhs, rhs, result, ident, name)
        cond = E.convert(where, "bool") if where is not None else None
        reduces = tuple(E.Reduce(combiner, source, axes, cond, k) for k in range(len(source)))
        return reduces if is_tuple else reduces[0]

    reducer.__name__ = name
    reducer.__doc__ = f"The {name} reduction over `axis` (optionally only where `where`)."
    return reducer


def _apply(fcombine, lhs, rhs):
    if len(lhs) == 1:
        out = fcombine(lhs[0], rhs[0])
    else:
        out = fcombine(lhs, rhs)
    out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return tuple(E.convert(o) for o in out)


def _add(x, y):
    return x | y if x.dtype == "bool" else x + y


def _max(x, y):
    return x | y if x.dtype == "bool" else E.Max(x, y)


def _min(x, y):
    return x & y if x.dtype == "bool" else E.Min(x, y)


sum = comm_reducer(_add, lambda t: E.const(0, t), name="sum")  # noqa: A001
max = comm_reducer(_max, E.min_value, name="max")  # noqa: A001
min = comm_reducer(_min, E.max_value, name="min")  # noqa: A001
