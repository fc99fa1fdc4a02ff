"""x86 layout_transform (plevel 15): the op's own compute with rows kept as serial loops.

The generic injective schedule fuses every outer axis into one parallel loop, so a transform
into or out of a channel-blocked layout decomposes that fused index (divisions by the
extents) once per vector of 8 elements; AlterOpLayout puts one such transform on each side of
a run of NCHWc convolutions. Here the innermost outer axis stays a serial loop:

    for (n, c.outer, h) in parallel:            # NCHW -> NCHW8c
        for w:
            for c.inner in vectorized(8): out[n, c.outer, h, w, c.inner] = in[n, c.outer*8 + c.inner, h, w]

(1x32x112x112 each way: 0.34-0.40 ms -> about 0.18 ms on one core.) Fused elementwise
consumers are inlined into the same loop nest. Into a block that no vector width divides (an
RGB image into NCHW3c, before a network's first convolution) the block is unrolled and the
pixel loop left as a plain serial loop, which LLVM's loop vectorizer turns into interleaving
shuffles (1x3x224x224: 154 -> 34 us; the scalar loop stored one float at a time):

    for (n, c.outer, h) in parallel:            # NCHW -> NCHW3c
        for w:                                  # LLVM vectorizes this loop
            for c.inner in unrolled(3): out[n, c.outer, h, w, c.inner] = in[n, c.outer*3 + c.inner, h, w]

Out of a channel-blocked layout (NCHW16c -> NCHW: the output's C is the input's C and c
apart), each vector of the output gathers one element from each of `w` input pixels, and the
b output rows that read the same input row (its b channels) were b far-apart tasks, each
bringing the row into its core's cache again. Those b rows are one task instead:

    for (n, c.outer) in parallel:               # NCHW16c -> NCHW; (n, c.outer, h) when
        for h:                                  #   there are fewer than MIN_PLANE_TASKS planes
            for c.inner in 16:                  # the 16 rows that read in[n, c.outer, h, :, :]
                for w in vectorized(16): out[n, c.outer*16 + c.inner, h, w] = in[n, c.outer, h, w, c.inner]

Against the row-per-task schedule, interleaved, median us (two threads / one thread), on a
noisy Zen 4: 1x4x56x56x16 155 -> 108 / 189 -> 87; 1x2x112x112x16 214 -> 119 / 378 -> 155;
1x64x14x14x16 81 -> 55 / 185 -> 128; 1x128x7x7x16 57 -> 38 / 128 -> 77.
"""
from .. import te
from ..op.layout import Layout
from ..op.registry import get as get_op
from .base import register_strategy
from .common import all_static, inline_except, prod
from .generic import (PARALLEL_MIN_ELEMS, VECTOR_LANES, const_extent, schedule_spatial, stage_work,
                      vectorize_innermost)


MIN_PLANE_TASKS = 4      # parallel over whole output planes only when there are this many
MAX_ODD_BLOCK = 16       # an innermost block up to this long with no vector width dividing it is unrolled


def unblocked_axis(attrs):
    """(position in the output, block) of the one primal axis that the transform takes out of
    a blocked sub-axis (NCHW16c -> NCHW: (1, 16)), when it is not the output's innermost
    axis; else None."""
    src, dst = Layout(attrs.src_layout), Layout(attrs.dst_layout)
    found = [(dst.index_of(letter), src.block(letter)) for letter in dst.primal
             if src.block(letter) > 1 and dst.block(letter) == 1]
    if len(found) != 1 or found[0][0] == dst.ndim - 1:
        return None
    return found[0]


def _schedule_unblocking(stage, position: int, block: int) -> bool:
    """The loop nest of the module docstring on `stage` (the transform's output, or a fused
    consumer of its shape); False (nothing done) when its axes do not fit."""
    axes = list(stage.op.axis)
    ext = [const_extent(ax) for ax in axes]
    if position >= len(axes) - 1 or None in ext or ext[position] % block:
        return False
    outer, inner = stage.split(axes[position], factor=block)
    rest = axes[:position] + [outer] + axes[position + 1:-1]
    width, vector = vectorize_innermost(stage, axes[-1])     # a width of 7 (7x7) stays scalar
    stage.reorder(*rest, inner, *width, *([vector] if vector is not None else []))
    if stage_work(stage.op) >= PARALLEL_MIN_ELEMS:
        # whole planes per task (the axes up to c.outer) when there are enough of them, else rows
        planes = prod(ext[:position]) * (ext[position] // block)
        par = rest[:position + 1] if planes >= MIN_PLANE_TASKS else rest
        stage.parallel(stage.fuse(*par) if len(par) > 1 else par[0])
    return True


def schedule_layout_transform(attrs, outs, target):
    """Inline the intermediates; each root stage parallel over all but its last outer axis,
    or, out of a blocked layout, the unblocking loop nest (module docstring)."""
    s = te.create_schedule(outs)
    inline_except(s)
    unblocking = unblocked_axis(attrs)
    for stage in s.stages:
        if isinstance(stage.op, te.ComputeOp) and stage.attach_type == "root":
            if unblocking is None or not _schedule_unblocking(stage, *unblocking):
                odd_block = _odd_block(stage)
                if odd_block:
                    stage.unroll(stage.op.axis[-1])
                schedule_spatial(stage, vectorize=not odd_block, serial_inner=2 if odd_block else 1)
    return s


def _odd_block(stage) -> bool:
    """True when the stage's innermost axis is a short block no vector width divides (NCHW3c:
    an RGB image's 3 channels): unrolled, it leaves the pixel loop to LLVM's vectorizer, which
    interleaves the block's planes with shuffles (1x3x224x224 -> NCHW3c: 154 -> 34 us)."""
    extent = const_extent(stage.op.axis[-1])
    return extent is not None and 1 < extent <= MAX_ODD_BLOCK and all(extent % n for n in VECTOR_LANES)


@register_strategy("layout_transform", "x86")
def layout_transform_strategy_x86(strategy, attrs, inputs, out_type, target):
    if not all_static(*inputs):
        return          # symbolic sizes: the generic schedule
    op = get_op("layout_transform")
    strategy.add_implementation(op.compute, schedule_layout_transform, "layout_transform.x86", 15)
