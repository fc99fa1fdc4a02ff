"""x86 concatenate (and what FuseOps fused after it, e.g. DenseNet's pre-activation batch norm
and relu, `relu(concatenate(xs) * scale + shift)`): one loop nest per input, no branches.

The generic schedule fuses every axis into one parallel loop and evaluates the chain of
Selects that picks the input per vector; those Selects read buffers, so they are branches,
and LLVM unswitches the first one or two and leaves the rest as scalar and shuffle code (seen
in the assembly of DenseNet's `concatenate, add, relu`). concatenate.x86 (plevel 15) marks the
concatenation axis' loop `partition` (te Stage.partition): lowering splits it where the input
changes (tir/partition_branches.py), so each input gets its own loop nest, whose Selects fold
away. The axes after the concatenation axis but the last are the rows:

    for (axes before it):                                # fused; extent 1 at batch 1
      for k, input x_k at offset o_k along the axis:     # one loop nest per input
        for f in range(o_k * H, (o_k + n_k) * H):        # the axis fused with the first row axis
          for (the other row axes, e.g. W of NCHW{b}c):
            for v in vectorized(last axis, or lanes of it):
              out[f / H, f % H, ..., v] = epilogue(x_k[f / H - o_k, f % H, ..., v])

Each loop nest streams one input and its slice of the output in order, with the epilogue
applied to the loaded vector (one pass over memory, as a copy). The last axis is vectorized by
the largest lane count of VECTOR_LANES that divides it, or whole when it is at most
MAX_WHOLE_VECTOR (NCHW rows 7 and 14 wide), else left to LLVM. The earlier schedule split the
axis into groups of gcd(extents) channels and expanded each group into its own copy of the same
inner loops: DenseNet-121 had 1043 loop nests in its 58 concatenation kernels, this one has 593
(one per input), and their LLVM time fell 9.7 -> 4.2 CPU s in NCHW (opt_level 2) and
9.1-9.3 -> 5.6-6.3 s in NCHW16c (opt_level 3) (benchmarks/README.md, issue 16). In NCHW16c,
fusing every row axis into the input's loop costs LLVM only 2.5-3.2 s but three divisions per
16-float vector (the kernels ran 15% slower with cold caches), and keeping the block loop
outside one fused row loop 4.9-5.6 s but ran 5-8% slower in the network; the shape kept here is
the earlier kernels' inner loops, which ran as fast as before.

The loops of each nest carry Stage.no_unroll: LLVM's heuristic unrolling had copied every
7-56 column row loop whole, which doubled these kernels' LLVM time (DenseNet-121's 57
`concatenate, add, relu` kernels: 7.4 -> 3.8 CPU s) and bought nothing at run time (the 58
concatenation kernels 1.70 vs 1.72 ms, the network 28.5 vs 28.5 ms, interleaved).

The kernel runs on one thread: it is memory-bound, and with OMP_NUM_THREADS=2 on the loaded
2-core machine (wall clock, min of 60, load 6) a parallel loop took DenseNet's 28x28
concatenation of 13 inputs to 1.2 ms where a serial one ran in 0.07 ms.

Applies when the shapes are static, the concatenation axis is not the last one, and there are
at most MAX_PIECES inputs; otherwise the generic schedule is used.
"""
from .. import te
from ..op.registry import get as get_op
from .base import register_strategy
from .common import inline_except, same_dims, dims_of, static_shape
from .generic import VECTOR_LANES, schedule_default

PLEVEL = 15
MAX_PIECES = 64            # inputs, each its own loop nest
MAX_WHOLE_VECTOR = 16     # a last axis this short with no lane count dividing it: one vector


def _applies(attrs, inputs, out_type) -> bool:
    shapes = [static_shape(t) for t in inputs]
    if any(s is None for s in shapes) or not shapes:
        return False
    ndim = len(shapes[0])
    axis = attrs.axis % ndim if ndim else 0
    if ndim < 2 or axis == ndim - 1:
        return False
    return 1 < len(shapes) <= MAX_PIECES and all(d > 0 for s in shapes for d in s)


def schedule_concat(axis: int):
    """The schedule of a fused function anchored at a concatenation along `axis` (the loop nest
    in the module docstring)."""
    def schedule(attrs, outs, target):
        concat_shape = None
        for op in _ops_named(outs, "T_concatenate"):
            concat_shape = static_shape(op.output(0))
        if len(outs) != 1 or concat_shape is None or not same_dims(dims_of(outs[0]), concat_shape):
            return schedule_default(attrs, outs, target)
        s = te.create_schedule(outs)
        inline_except(s)
        stage = s[outs[0].op]
        axes = list(outs[0].op.axis)
        before, cat, after = axes[:axis], axes[axis], axes[axis + 1:]
        extent = concat_shape[-1]
        lanes = next((n for n in VECTOR_LANES if extent % n == 0), None)
        if lanes is None and extent <= MAX_WHOLE_VECTOR:
            lanes = extent              # a short odd row (7, 14) as one vector
        inner, split = after[-1], []
        rows = after[:-1]
        if lanes is not None and extent != lanes:
            outer, inner = stage.split(inner, factor=lanes)
            split = [outer]
        stage.reorder(*before, cat, *rows, *split, inner)
        if lanes is not None:
            stage.vectorize(inner)
        if len(before) > 1:
            stage.fuse(*before)
        piece = stage.fuse(cat, rows[0]) if rows else cat
        stage.partition(piece)
        for loop in [piece, *rows[1:], *split]:
            stage.no_unroll(loop)
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
    axis = attrs.axis % len(inputs[0].shape)
    strategy.add_implementation(get_op("concatenate").compute, schedule_concat(axis), "concatenate.x86",
                                PLEVEL)
