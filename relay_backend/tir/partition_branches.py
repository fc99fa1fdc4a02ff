"""A loop marked `partition` is split where its variable changes which buffer a Select reads.

Guarantee: a For whose annotations hold {"partition": True} (te's Stage.partition) and whose
min and extent are constants is replaced by consecutive loops of the same kind over sub-ranges
of its iterations, in order, each with its own loop variable and the same body, except that a
Select decided by the piece's range is replaced by the branch it takes. The cut points are the
values of the loop variable at which a Select condition that mentions it, and that has a buffer
read in a branch, can change its truth value (TVM's LoopPartition, for the conditions of a
concatenation's input chooser). On each piece those conditions are decided, so every piece is a
plain loop over one buffer:

    for c in range(0, 10) [partition]:            for c in range(0, 4): out[c, j] = a[c, j]
      out[c, j] = select(c < 4, a[c, j],    ->    for c in range(4, 10): out[c, j] = b[c - 4, j]
                         b[c - 4, j])

The pieces run the same iterations in the same order with the same values, so results are
bit-identical. A condition gives cut points when it compares expressions linear in the loop
variable, or in one floor division of such an expression (a fused loop's outer index), whose
other terms have constant bounds from the loops inside it; other conditions give none (their
Select stays, correct as before). Loops without the mark are left alone; the mark is dropped.
"""
from . import expr as E
from . import stmt as S
from .functor import children, rewrite, substitute, walk
from .prim_func import PrimFunc
from .simplify import const_bound, linear_form, simplify_expr

PARTITION = "partition"
_COMPARISONS = (E.LT, E.LE, E.GT, E.GE, E.EQ, E.NE)


def partition_branching_loops(node):
    """`node` (a PrimFunc or a Stmt) with every loop marked `partition` split into serial
    pieces at its Selects' decision points (see the module doc).

    Parameters
    ----------
    node : PrimFunc or Stmt
        The code to rewrite; it is not modified.

    Returns
    -------
    partitioned : PrimFunc or Stmt
        The same kind of node (the same object when no loop is marked).
    """
    if isinstance(node, PrimFunc):
        body = partition_branching_loops(node.body)
        return node if body is node.body else node.with_body(body)
    if not any(isinstance(n, S.For) and n.annotations.get(PARTITION) for n in walk(node)):
        return node
    return rewrite(node, _partition_loop)


def _partition_loop(node):
    if not (isinstance(node, S.For) and node.annotations.get(PARTITION)):
        return None
    annotations = {k: v for k, v in node.annotations.items() if k != PARTITION}
    if not (isinstance(node.min, E.IntImm) and isinstance(node.extent, E.IntImm)) \
            or node.thread_binding is not None:
        return S.For(node.loop_var, node.min, node.extent, node.kind, node.body,
                     node.thread_binding, annotations)
    lo, hi = node.min.value, node.min.value + node.extent.value
    cuts = sorted({c for c in cut_points(node.body, node.loop_var) if lo < c < hi})
    if not cuts:
        return S.For(node.loop_var, node.min, node.extent, node.kind, node.body, None, annotations)
    bounds = [lo] + cuts + [hi]
    pieces = []
    for a, b in zip(bounds, bounds[1:]):
        var = E.Var(node.loop_var.name, node.loop_var.dtype)     # one loop variable per loop
        body = substitute(_prune_selects(node.body, node.loop_var, a, b - 1), {node.loop_var: var})
        pieces.append(S.For(var, E.const(a, node.min.dtype), E.const(b - a, node.extent.dtype),
                            node.kind, body, None, annotations))
    return S.seq(*pieces)


def _prune_selects(body, var, lo: int, hi: int):
    """`body` with every Select whose condition is decided by var in [lo, hi] replaced by the
    branch it takes, top-down: the branches not taken are never visited (a concatenation of n
    inputs has a chain of n Selects; simplifying every piece bottom-up would cost n * n)."""
    ranges = {id(var): (lo, hi)}

    def branch_taken(n):
        if not isinstance(n, E.Select):
            return None
        cond = simplify_expr(n.condition, ranges)
        if isinstance(cond, E.IntImm):
            return n.true_value if cond.value else n.false_value
        return None

    return rewrite(body, lambda n: None, replace_by_child=branch_taken)


def cut_points(body, var) -> set:
    """The values v of `var` such that some buffer-choosing Select condition in `body` may
    decide differently for var < v than for var >= v (ranges of the loops inside `body` taken
    into account)."""
    ranges, points = {}, set()
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, S.For):
            lo, _ = const_bound(node.min, ranges)
            _, ext = const_bound(node.extent, ranges)
            ranges[id(node.loop_var)] = (lo, None if lo is None or ext is None else lo + ext - 1)
        if isinstance(node, E.Select) and _reads_buffer(node):
            points |= _condition_cuts(node.condition, var, ranges)
        stack.extend(children(node))
    return points


def _reads_buffer(select) -> bool:
    return any(isinstance(n, E.BufferLoad) for branch in (select.true_value, select.false_value)
               for n in walk(branch))


def _condition_cuts(cond, var, ranges) -> set:
    """Cut points of one condition (And / Or / Not of comparisons of integers)."""
    if isinstance(cond, (E.And, E.Or)):
        return _condition_cuts(cond.a, var, ranges) | _condition_cuts(cond.b, var, ranges)
    if isinstance(cond, E.Not):
        return _condition_cuts(cond.a, var, ranges)
    if not isinstance(cond, _COMPARISONS) or not E.is_int_dtype(cond.a.dtype):
        return set()
    return _comparison_cuts(type(cond), E.Sub(cond.a, cond.b), var, ranges)


def _comparison_cuts(kind, diff, var, ranges) -> set:
    """Cut points of `diff OP 0` (OP the comparison class `kind`): directly when diff is linear
    in var, and through one floor division `a*(x // d) + r` with x linear in var (a fused
    loop's index of an outer axis), whose truth changes only where x crosses t*d for the
    values t at which the comparison changes as a function of x // d."""
    linear = _linear_in(diff, var, ranges)
    if linear is not None:
        return _sign_changes(kind, *linear) if linear[0] else set()
    terms, const = linear_form(diff)
    inner = [(term, k) for term, k in terms.values() if any(n is var for n in walk(term))]
    if len(inner) != 1 or not isinstance(inner[0][0], E.FloorDiv) \
            or not isinstance(inner[0][0].b, E.IntImm) or inner[0][0].b.value <= 0:
        return set()
    (quotient, a), d = inner[0], inner[0][0].b.value
    rest = E.Sub(diff, E.Mul(quotient, E.IntImm(quotient.dtype, a)))
    bounds = _linear_in(rest, var, ranges)
    if bounds is None or a == 0:
        return set()
    points = set()
    for t in _sign_changes(kind, a, bounds[1], bounds[2]):
        points |= _comparison_cuts(E.LT, E.Sub(quotient.a, E.IntImm(quotient.dtype, t * d)), var, ranges)
    return points


def _sign_changes(kind, a, rlo, rhi) -> set:
    """The values v at which `a*v + r OP 0` (r in [rlo, rhi]) may change between v - 1 and v:
    the comparison is rewritten as `a*v + r < 0` (two of them for == and !=), which is true for
    every r where a*v + rhi < 0 and false for every r where a*v + rlo >= 0."""
    if kind is E.LT:                      # d < 0
        forms = [(a, rlo, rhi)]
    elif kind is E.LE:                    # d - 1 < 0
        forms = [(a, rlo - 1, rhi - 1)]
    elif kind is E.GT:                    # -d < 0
        forms = [(-a, -rhi, -rlo)]
    elif kind is E.GE:                    # -d - 1 < 0
        forms = [(-a, -rhi - 1, -rlo - 1)]
    else:                                 # == and !=: d < 0 and -d < 0
        forms = [(a, rlo, rhi), (-a, -rhi, -rlo)]
    points = set()
    for a, rlo, rhi in forms:
        if a > 0:      # true for v < ceil(-rhi / a), false for v >= ceil(-rlo / a)
            points |= {-(rhi // a), -(rlo // a)}
        else:          # true for v > rhi / -a, false for v <= rlo / -a
            points |= {rhi // -a + 1, rlo // -a + 1}
    return points


def _linear_in(expr, var, ranges):
    """(a, rlo, rhi) with expr == a*var + r and r in [rlo, rhi] for every value of the other
    variables in `ranges` (a may be 0); None when `var` is inside a non-linear term or some
    other term has no constant bound."""
    terms, const = linear_form(expr)
    coeff, rlo, rhi = 0, const, const
    for term, k in terms.values():
        if term is var:
            coeff += k
            continue
        if any(n is var for n in walk(term)):
            return None
        tlo, thi = const_bound(term, ranges)
        if tlo is None or thi is None:
            return None
        rlo, rhi = rlo + min(k * tlo, k * thi), rhi + max(k * tlo, k * thi)
    return coeff, rlo, rhi


__all__ = ["PARTITION", "cut_points", "partition_branching_loops"]
