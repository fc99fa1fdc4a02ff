"""Loop unswitching: a Select whose condition does not change inside a loop becomes an
IfThenElse around two copies of the loop, each with the Select resolved.

Backends evaluate both sides of a Select, so a concatenation's kernel (a Select chain over the
offsets along the concatenated axis) loads from every input for every element. When the
concatenated axis is outside the inner loops (NCHW / NCHW{b}c along C), the conditions only
involve outer loop variables: unswitched, each inner loop copies from one input with one load
per element, and vectorizes as a plain copy.

    for i: for j: out[i, j] = select(i < 4, a[i, j], b[i - 4, j])
    ->  for i: if (i < 4) { for j: out[i, j] = a[i, j] } else { for j: out[i, j] = b[i - 4, j] }

Only conditions that read no buffer and mention an enclosing loop's variable are moved (a
condition on shape variables alone would copy the whole kernel for nothing), never at a
GPU-thread-bound loop, and at most MAX_BRANCHES times per function (code size).
"""
from . import expr as E
from . import stmt as S
from .functor import copy_with, rewrite, walk
from .prim_func import PrimFunc
from .simplify import simplify

MAX_BRANCHES = 32


def _bound_inside(node) -> set:
    """ids of the Vars a loop, let or let-expression binds below `node`."""
    out = set()
    for n in walk(node):
        if isinstance(n, S.For):
            out.add(id(n.loop_var))
        elif isinstance(n, (S.LetStmt, E.Let)):
            out.add(id(n.var))
    return out


def _invariant_condition(loop: S.For, loop_vars: set):
    """The condition of the first (outermost) Select in `loop` that is invariant in it and
    worth moving out, or None."""
    inside = _bound_inside(loop)
    for n in walk(loop.body):
        if not isinstance(n, E.Select) or isinstance(n.condition, E.IntImm):
            continue
        nodes = list(walk(n.condition))
        variables = {id(v) for v in nodes if isinstance(v, E.Var)}
        if variables & inside or any(isinstance(v, (E.BufferLoad, E.ProducerLoad, E.Call)) for v in nodes):
            continue
        if variables & loop_vars:
            return n.condition
    return None


def _resolve(node, condition, value: bool):
    """`node` with every Select on `condition` (the same object) replaced by one side."""
    def fn(n):
        if isinstance(n, E.Select) and n.condition is condition:
            return n.true_value if value else n.false_value
        return None
    return rewrite(node, fn)


class _Unswitcher:
    def __init__(self, max_branches: int):
        self.left = max_branches

    def stmt(self, s, loop_vars: frozenset):
        if isinstance(s, S.For):
            if s.thread_binding is None and self.left > 0:
                cond = _invariant_condition(s, loop_vars)
                if cond is not None:
                    self.left -= 1
                    then = simplify(_resolve(s, cond, True))
                    other = simplify(_resolve(s, cond, False))
                    return S.IfThenElse(cond, self.stmt(then, loop_vars), self.stmt(other, loop_vars))
            return copy_with(s, body=self.stmt(s.body, loop_vars | {id(s.loop_var)}))
        if isinstance(s, S.SeqStmt):
            return S.SeqStmt([self.stmt(c, loop_vars) for c in s.seq])
        if isinstance(s, S.IfThenElse):
            other = None if s.else_case is None else self.stmt(s.else_case, loop_vars)
            return copy_with(s, then_case=self.stmt(s.then_case, loop_vars), else_case=other)
        if isinstance(s, (S.Allocate, S.LetStmt)):
            return copy_with(s, body=self.stmt(s.body, loop_vars))
        return s


def unswitch_loops(func: PrimFunc, max_branches: int = MAX_BRANCHES) -> PrimFunc:
    """`func` with loop-invariant Selects moved out of their loops (see the module docstring)."""
    return copy_with(func, body=_Unswitcher(max_branches).stmt(func.body, frozenset()))
