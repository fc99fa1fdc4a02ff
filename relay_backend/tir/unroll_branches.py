"""Unrolled loops that pick which buffer to read are expanded in tir, so each copy's branch folds.

A schedule marks a loop `unrolled` and the LLVM / C backends unroll it themselves, which is
enough when the body is straight-line code. When the loop variable decides a Select whose
branches read buffers (the input chooser of a concatenate split by input groups, a padded
border), those Selects are emitted as control flow (codegen/lazy_select.py), and LLVM's loop
vectorizer gives up on the loops inside them. Expanding such a loop here, one copy per
iteration with the variable a constant (what TVM's UnrollLoop pass does for every unrolled loop),
lets the range-aware simplifier decide each copy's conditions from the remaining loop ranges:
the branches disappear and every copy is a plain loop nest over one buffer.

    for g in unrolled(0, 3):                      for ci in range(4): ... x0[..., ci, ...]
      for ci in range(4):                ->       for ci in range(4): ... x1[..., ci, ...]
        out[.., g*4+ci, ..] = select(g*4+ci < 4,   for ci in range(4): ... x2[..., ci, ...]
              x0[..], select(g*4+ci < 8, x1[..], x2[..]))

Only loops with a constant extent of at most MAX_COPIES are expanded; others keep the backend's
unrolling.
"""
from . import expr as E
from . import stmt as S
from .functor import rewrite, substitute, walk
from .prim_func import PrimFunc

MAX_COPIES = 64


def expand_branching_unrolled(node):
    """`node` (a PrimFunc or a Stmt) with every unrolled loop whose variable decides a
    buffer-reading Select replaced by one copy of its body per iteration (see the module doc).

    Parameters
    ----------
    node : PrimFunc or Stmt
        The code to rewrite; it is not modified.

    Returns
    -------
    expanded : PrimFunc or Stmt
        The same kind of node, expanded where the rule applies (the same object when nowhere).
    """
    if isinstance(node, PrimFunc):
        body = expand_branching_unrolled(node.body)
        return node if body is node.body else node.with_body(body)
    return rewrite(node, _expand_loop)


def _expand_loop(node):
    if not (isinstance(node, S.For) and node.kind == "unrolled" and node.thread_binding is None
            and isinstance(node.min, E.IntImm) and isinstance(node.extent, E.IntImm)
            and 1 < node.extent.value <= MAX_COPIES and _decides_buffer_select(node.body, node.loop_var)):
        return None
    lo, var = node.min.value, node.loop_var
    return S.seq(*[substitute(node.body, {var: E.const(lo + k, var.dtype)}) for k in range(node.extent.value)])


def _decides_buffer_select(body, var) -> bool:
    """Whether some Select in `body` has `var` in its condition and a buffer read in a branch."""
    for n in walk(body):
        if isinstance(n, E.Select) and _mentions(n.condition, var) \
                and (_reads_buffer(n.true_value) or _reads_buffer(n.false_value)):
            return True
    return False


def _mentions(expr, var) -> bool:
    return any(n is var for n in walk(expr))


def _reads_buffer(expr) -> bool:
    return any(isinstance(n, E.BufferLoad) for n in walk(expr))
