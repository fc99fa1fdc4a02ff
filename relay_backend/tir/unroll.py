"""Explicit unrolling of `unrolled` loops (as TVM's tir.transform.UnrollLoop does for them).

A loop a schedule marks `unrolled` with a static extent is replaced by one copy of its body per
iteration, the loop variable a constant in each, and the constants folded in every copy
(integer arithmetic and comparisons, Selects and IfThenElses on a constant condition: the
simplifier already ran on the body, so its full rules are not needed again). Unrolling before
code generation rather than leaving it to LLVM (a loop carrying `llvm.loop.unroll.full`) matters
where the body branches on the loop variable: a Winograd transform computes row `a` as
`select(a == 0, <row 0's sum>, select(a == 1, ...))`, so every LLVM copy carried all the rows'
loads behind branches until LLVM folded them, and GVN over those bodies took seconds per kernel
(3.6 of 6.8 CPU s for F(4x4) on 256 channels at 14x14). Here each copy keeps only its own row.

Loops are left to LLVM (llvm.loop.unroll.full) when the schedule asked for that
(`Stage.unroll(axis, explicit=False)`: the annotation UNROLL_EXPLICIT is False), when their
body allocates (each copy would get its own buffer) or holds a parallel loop (outlined once
per loop), when the extent or start is not a constant, or when the copies would hold more than
MAX_NODES tir nodes (nested unrolled loops multiply).
"""
from . import expr as E
from . import stmt as S
from .functor import rewrite, var_dependence, walk
from .prim_func import PrimFunc
from .simplify import fold_constant_node

MAX_NODES = 50_000    # no unrolled loop grows into more tir nodes than this
UNROLL_EXPLICIT = "unroll_explicit"     # a For annotation: False leaves the copies to LLVM
NO_UNROLL = "no_unroll"     # a For annotation: True, LLVM keeps the serial loop rolled (Stage.no_unroll)


def _static(e):
    return e.value if isinstance(e, E.IntImm) else None


def _unrollable(loop) -> bool:
    if loop.kind != "unrolled" or loop.thread_binding is not None or loop.annotations.get(UNROLL_EXPLICIT) is False:
        return False
    if _static(loop.min) is None or _static(loop.extent) is None:
        return False
    return not any(isinstance(n, S.Allocate) or (isinstance(n, S.For) and n.kind == "parallel")
                   for n in walk(loop.body))


def _without(body, var) -> list:
    """Ids of the nodes under `body` in which `var` does not occur."""
    varying, order = var_dependence([body], var)
    return [id(node) for node in order if id(node) not in varying]


def _with_constant(body, var, value: int, memo=None):
    """`body` with `var` = value and the constants that makes folded (fold_constant_node);
    `memo` (rewrite's) may hold the rewrites of subtrees without `var`, the same for every
    value."""
    constant = E.IntImm(var.dtype, value)

    def fold(n):
        if n is var:
            return constant
        if isinstance(n, S.IfThenElse) and isinstance(n.condition, E.IntImm):
            chosen = n.then_case if n.condition.value else n.else_case
            return chosen if chosen is not None else S.Evaluate(0)
        return fold_constant_node(n) if isinstance(n, E.PrimExpr) else None
    return rewrite(body, fold, memo)


def unroll_loops(node):
    """`node` (a PrimFunc or a Stmt) with its unrollable `unrolled` loops (module docstring)
    replaced by copies of their bodies, one per iteration, with the constants folded."""
    if isinstance(node, PrimFunc):
        body = unroll_loops(node.body)
        return node if body is node.body else node.with_body(body)

    def expand(n):
        if not isinstance(n, S.For) or not _unrollable(n):
            return None
        start, extent = _static(n.min), _static(n.extent)
        if extent * sum(1 for _ in walk(n.body)) > MAX_NODES:
            return None
        # a subtree without the loop variable rewrites to the same tree in every copy: the
        # first copy's results for those subtrees serve the others
        copies, shared = [], {}
        for k in range(extent):
            memo = dict(shared)
            copies.append(_with_constant(n.body, n.loop_var, start + k, memo))
            if k == 0:
                shared = {key: memo[key] for key in _without(n.body, n.loop_var) if key in memo}
        return S.seq(*copies)

    return rewrite(node, expand)


__all__ = ["MAX_NODES", "unroll_loops"]
