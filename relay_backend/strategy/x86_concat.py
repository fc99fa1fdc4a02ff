"""x86 concatenate (and what FuseOps fused after it, e.g. DenseNet's pre-activation batch norm
and relu, `relu(concatenate(xs) + shift)`): one loop nest per group of channels, no branches.

The generic schedule fuses every axis into one parallel loop and evaluates the chain of
Selects that picks the input per vector; those Selects read buffers, so they are branches,
and LLVM unswitches the first one or two and leaves the rest as scalar and shuffle code (seen
in the assembly of DenseNet's `concatenate, add, relu`). concatenate.x86 (plevel 15) splits
the concatenation axis into groups of g = gcd(the inputs' extents along it), so that every
group lies inside one input, and unrolls the group loop, which lowering expands in tir
(tir/unroll_branches.py) so that each copy's Selects fold to one plain load:

    for group in unrolled(extent / g):                # expanded: one copy per group
        for (axes before it, ci, outer axes after it):    # fused, e.g. (n, ci, h); ci < g
            for (the last two axes: w, then the vector):   # the last axis vectorized
                out[..., group*g + ci, ...] = epilogue(x_k[..., group*g + ci - offset_k, ...])

Each copy streams one input and one slice of the output in order (rows outside the groups
made 2 * inputs interleaved streams, slower at 56x56). The kernel runs on one thread: it is
memory-bound, and with OMP_NUM_THREADS=2 on the loaded 2-core machine (wall clock, min of
60, load 6) a parallel loop per group (an OpenMP region each) took DenseNet's 28x28
concatenation of 13 inputs to 1.2 ms, the generic one-region schedule ran it in 0.17-0.42 ms
and this serial one in 0.07 ms; at 56x56 serial 0.45-0.49 ms, generic 0.59-0.60 ms.
One thread, thread CPU time, min of 60 (a loaded 2-core machine): the 28x28 concatenation
182-360 us -> 61-132 us; at 56x56 (3.2 MB out) both stay memory-bound (~460 us); the network's
57 concatenation kernels summed 8.4 -> 6.0 ms (benchmarks/README.md, issue 16).

Applies when the shapes are static, the concatenation axis is not the last one, and there are
at most tir.unroll_branches.MAX_COPIES groups; otherwise the generic schedule is used.
"""
import math

from .. import te
from ..op.registry import get as get_op
from ..tir.unroll_branches import MAX_COPIES
from .base import register_strategy
from .common import inline_except, same_dims, dims_of, static_shape
from .generic import VECTOR_LANES, schedule_default

PLEVEL = 15


def concat_groups(extents) -> tuple:
    """(g, groups): the largest group size g such that every input's extent along the
    concatenation axis is a multiple of it, and how many groups the output has."""
    parts = [e for e in extents if e > 0]
    g = math.gcd(*parts) if parts else 1
    return g, (sum(parts) // g if g else 0)


def _applies(attrs, inputs, out_type) -> bool:
    shapes = [static_shape(t) for t in inputs]
    if any(s is None for s in shapes) or not shapes:
        return False
    ndim = len(shapes[0])
    axis = attrs.axis % ndim if ndim else 0
    if ndim < 2 or axis == ndim - 1:
        return False
    _, groups = concat_groups([s[axis] for s in shapes])
    return 1 < groups <= MAX_COPIES and all(d > 0 for s in shapes for d in s)


def schedule_concat(axis: int, group: int):
    """The schedule of a fused function anchored at a concatenation along `axis` whose inputs'
    extents there are multiples of `group` (the loop nest in the module docstring)."""
    def schedule(attrs, outs, target):
        concat_shape = None
        for op in _ops_named(outs, "T_concatenate"):
            concat_shape = static_shape(op.output(0))
        if len(outs) != 1 or concat_shape is None or not same_dims(dims_of(outs[0]), concat_shape):
            return schedule_default(attrs, outs, target)
        s = te.create_schedule(outs)
        inline_except(s)
        out = outs[0].op
        stage = s[out]
        axes = list(out.axis)
        before, after = axes[:axis], axes[axis + 1:]
        inner = after[-2:] if len(after) >= 3 else after[-1:]
        outer = before + after[:len(after) - len(inner)]
        groups, within = stage.split(axes[axis], factor=group)
        outer = before + [within] + after[:len(after) - len(inner)]
        stage.reorder(groups, *outer, *inner)
        last = inner[-1]
        extent = concat_shape[-1]
        lanes = next((n for n in VECTOR_LANES if extent % n == 0), None)
        if lanes is not None:
            if extent == lanes:
                stage.vectorize(last)
            else:
                stage.vectorize(stage.split(last, factor=lanes)[1])
        stage.unroll(groups)
        if len(outer) > 1:
            stage.fuse(*outer)
        return s
    return schedule


def _ops_named(outs, prefix: str) -> list:
    """The compute ops feeding `outs` (outputs included) whose name starts with `prefix`."""
    found, seen, stack = [], set(), [t.op for t in outs]
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        if isinstance(op, te.ComputeOp) and op.name.startswith(prefix):
            found.append(op)
        stack.extend(t.op for t in op.input_tensors())
    return found


@register_strategy("concatenate", "x86")
def concatenate_strategy_x86(strategy, attrs, inputs, out_type, target):
    """concatenate.x86 (see the module doc) where it applies."""
    if not _applies(attrs, inputs, out_type):
        return
    shapes = [static_shape(t) for t in inputs]
    axis = attrs.axis % len(shapes[0])
    group, _ = concat_groups([s[axis] for s in shapes])
    strategy.add_implementation(get_op("concatenate").compute, schedule_concat(axis, group), "concatenate.x86",
                                PLEVEL)
