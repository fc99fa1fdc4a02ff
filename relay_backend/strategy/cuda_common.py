"""Shared pieces of the GPU schedules: how many threads a block gets, binding a stage's data
axes to (blockIdx.x, threadIdx.x), and the two ways a reduction stage runs on the GPU.

    thread per output:   for b in blockIdx.x: for t in threadIdx.x:      # one output each
                             acc = init; for k: acc = combine(acc, src); out = acc
    cross-thread:        for b in blockIdx.x:                             # one output per block
                             for t in threadIdx.x: for ko: acc_t = combine(acc_t, src[ko*T + t])
                             out = allreduce(acc_t over t)   (shared-memory tree, cuda_lower.py)

A reduction takes the cross-thread form when it has few outputs and long reductions (a
thread per output would leave the GPU idle), or no output axes at all.
"""
from .. import te
from ..target import as_target
from ..tir import expr as E

BLOCK_THREADS = 256                 # threads per block the schedules aim for
CROSS_THREAD_MIN_REDUCE = 64        # reduce extent from which threads share one output ...
CROSS_THREAD_MAX_OUTPUTS = 2048     # ... when there are at most this many outputs


def block_threads(target, want: int = BLOCK_THREADS) -> int:
    """A power-of-two thread count <= want and <= the target's max_num_threads."""
    limit = min(want, as_target(target).max_num_threads)
    n = 1
    while n * 2 <= limit:
        n *= 2
    return n


def pow2_at_least(n: int, cap: int) -> int:
    """The smallest power of two >= n, capped at `cap` (a power of two)."""
    p = 1
    while p < n and p < cap:
        p *= 2
    return p


def const_extent(ivars):
    """The product of constant IterVar extents, or None when one is symbolic."""
    total = 1
    for iv in ivars:
        ext = iv.dom.extent
        if not isinstance(ext, E.IntImm):
            return None
        total *= int(ext.value)
    return total


def bind_spatial(stage, axes, target):
    """Fuse `axes` (leaf data axes of `stage`, outermost first), split by the block size and bind
    (blockIdx.x, threadIdx.x); returns (block axis, thread axis), or None for no axes."""
    if not axes:
        return None
    fused = stage.fuse(*axes) if len(axes) > 1 else axes[0]
    total = const_extent(stage.op.axis) if list(axes) == list(stage.op.axis) else None
    threads = block_threads(target)
    if total is not None:
        threads = pow2_at_least(total, threads)
    bx, tx = stage.split(fused, factor=threads)
    stage.bind(bx, te.thread_axis("blockIdx.x"))
    stage.bind(tx, te.thread_axis("threadIdx.x"))
    return bx, tx


def cross_thread(op) -> bool:
    """Whether reduction `op` should run one output per block, its threads sharing the sum."""
    if not op.axis:
        return True
    outputs, reduce = const_extent(op.axis), const_extent(op.reduce_axis)
    return (outputs is not None and outputs <= CROSS_THREAD_MAX_OUTPUTS
            and (reduce is None or reduce >= CROSS_THREAD_MIN_REDUCE))


def schedule_cross_thread(stage, target, block_axis=True):
    """The cross-thread form of a reduction stage: its reduce axes fused and split by a power of
    two T, the inner part bound to threadIdx.x; its data axes fused and bound to blockIdx.x
    (block_axis=False leaves them unbound, for a stage computed inside another's block)."""
    op = stage.op
    reduce = list(op.reduce_axis)
    r = stage.fuse(*reduce) if len(reduce) > 1 else reduce[0]
    extent = const_extent(op.reduce_axis)
    threads = block_threads(target)
    if extent is not None:
        threads = pow2_at_least(extent, threads)
    ro, ri = stage.split(r, factor=threads)
    data = list(op.axis)
    stage.reorder(*data, ri, ro)
    if data and block_axis:
        fused = stage.fuse(*data) if len(data) > 1 else data[0]
        stage.bind(fused, te.thread_axis("blockIdx.x"))
    stage.bind(ri, te.thread_axis("threadIdx.x"))


def schedule_reduction(stage, target):
    """A root reduction stage on the GPU: cross-thread or thread per output (see module doc);
    one over no reduce axes (of a 0-d tensor) is a copy, bound like an injective stage."""
    if not stage.op.reduce_axis:
        bind_spatial(stage, list(stage.op.axis), target)
    elif cross_thread(stage.op):
        schedule_cross_thread(stage, target)
    else:
        bind_spatial(stage, list(stage.op.axis), target)
