"""x86 schedule of nn.contrib_conv2d_winograd_without_weight_transform (op/nn/winograd.py), plevel
20: the four stages of the algorithm, each vectorized over TILE_BLOCK consecutive tiles p (the
tile count is padded to a multiple of it, so there is no tail):

    pad = zero-padded data (root, serial; absent without padding)
    for (c, p.outer) in parallel:                       # input transform
        rows[a, l, p.inner] = sum_k B[k, a] d[k, l]     # unrolled a, l; vectorized p.inner
        V[a, b, c, p] = sum_l B[l, b] rows[a, l]
    for (a, b, k.outer, p.outer) in parallel:           # alpha^2 GEMMs, register-tiled
        acc[rt, ct * 8] = 0                              # as dense_pack: rt x ct SIMD registers
        for c: acc[r, :] += U[a, b, k.outer*rt + r, c] * V[a, b, c, p.outer*ct*8 : +ct*8]
        M[a, b, k, p] = acc
    for (k, p.outer) in parallel:                       # inverse transform
        rows[i, b, p.inner] = sum_a A[a, i] M[a, b, k, p]
        Y[k, i, j, p] = sum_b A[b, j] rows[i, b]
    for (n, k, y) in parallel: for x:                    # the result, with the fused epilogue
        out[n, k, y, x] = epilogue(Y[k, y % m, x % m, tile(n, y // m, x // m)])

The GEMM tile (ct, rt) is x86_common.register_tile's over (output channels, tile blocks). Each
parallel loop runs only with enough work (parallel_if_large). Importing registers the
implementation "conv2d_winograd.x86", and "conv2d_winograd_nchwc.x86" (x86_winograd_nchwc) for
channel-blocked data.
"""
from .. import te
from ..op.nn.winograd import TILE_BLOCK, WINOGRAD_CONV
from ..op.registry import get as get_op
from .base import register_strategy
from .x86_common import (all_static, find_reduction, find_tagged, finish_others, inline_except, nonempty,
                         parallel_if_large, prod, register_tile, static_shape)

PAD_NAME = "winograd_pad"


def _transform_pair(s, first, second, batch: int, work_per_element: int) -> None:
    """Schedule a two-pass transform whose axes are (transform..., p) with the batch axis (the
    channel) at index `batch` of both stages: `second` parallel over (channel, block of
    TILE_BLOCK tiles), its transform axes unrolled and the tiles vectorized; `first` computed
    per block at that loop, likewise."""
    stage = s[second]
    *lead, p = second.axis
    po, pi = stage.split(p, factor=TILE_BLOCK)
    transform = [axis for k, axis in enumerate(lead) if k != batch]
    stage.reorder(lead[batch], po, *transform, pi)
    fused = stage.fuse(lead[batch], po)
    parallel_if_large(stage, fused, prod(static_shape(second.output(0))) * work_per_element)
    for axis in transform:
        stage.unroll(axis)
    stage.vectorize(pi)
    inner = s[first]
    inner.compute_at(stage, fused)
    *first_lead, first_p = first.axis
    for k, axis in enumerate(first_lead):
        if k != batch:
            inner.unroll(axis)
    inner.vectorize(first_p)


def _schedule_bgemm(s, bgemm) -> None:
    """M[a, b, k, p] = sum_c U[a, b, k, c] V[a, b, c, p] as a register-tiled GEMM per (a, b)."""
    alpha, _, channels, tiles = static_shape(bgemm.output(0))
    reduce_ext = int(bgemm.reduce_axis[0].dom.extent.value)
    col_tile, row_tile = register_tile(channels, tiles // TILE_BLOCK, TILE_BLOCK)
    local = s.cache_write(bgemm.output(0), "local")
    stage = s[bgemm]
    a, b, k, p = bgemm.axis
    ko, ki = stage.split(k, factor=row_tile)
    po, pi = stage.split(p, factor=col_tile * TILE_BLOCK)
    stage.reorder(a, b, ko, po, ki, pi)
    fused = stage.fuse(a, b, ko, po)
    parallel_if_large(stage, fused, alpha * alpha * channels * tiles * reduce_ext)
    stage.vectorize(pi)
    acc = s[local.op]
    acc.compute_at(stage, fused)
    ra, rb, rk, rp = local.op.axis
    rpo, rpi = acc.split(rp, factor=TILE_BLOCK)
    acc.reorder(*local.op.reduce_axis, ra, rb, rk, rpo, rpi)
    acc.unroll(rk)
    acc.unroll(rpo)
    acc.vectorize(rpi)


def winograd_stages(outs):
    """(schedule, {tag: transform stage}, the batched GEMM, the padding stage or None) of a fused
    Winograd convolution (either layout), every other stage inlined."""
    s = te.create_schedule(outs)
    stages = {tag: find_tagged(s, tag) for tag in ("winograd_data_rows", "winograd_data_pack",
                                                     "winograd_inverse_rows", "winograd_inverse")}
    bgemm = find_reduction(s, "winograd_bgemm")
    pad = next((op for op in (find_tagged(s, "injective,pad"),) if op is not None and op.name == PAD_NAME), None)
    inline_except(s, keep=list(stages.values()) + ([pad] if pad is not None else []))
    return s, stages, bgemm, pad


def schedule_winograd(attrs, outs, target):
    """The loop nest in the module docstring for a fused Winograd convolution."""
    s, stages, bgemm, pad = winograd_stages(outs)
    if pad is not None:
        s[pad].vectorize(pad.axis[-1])          # serial, at the root: one parallel region
    alpha = static_shape(stages["winograd_data_pack"].output(0))[0]
    _transform_pair(s, stages["winograd_data_rows"], stages["winograd_data_pack"], 2, alpha)
    _schedule_bgemm(s, bgemm)
    _transform_pair(s, stages["winograd_inverse_rows"], stages["winograd_inverse"], 0, alpha)
    finish_others(s, [t.op for t in outs])
    return s


@register_strategy(WINOGRAD_CONV.name, "x86")
def winograd_strategy_x86(strategy, attrs, inputs, out_type, target):
    if not all_static(*inputs) or get_op(WINOGRAD_CONV.name).compute is None:
        return
    if attrs.blocks()[0]:
        from .x86_winograd_nchwc import schedule_winograd_nchwc      # it imports winograd_stages from here
        strategy.add_implementation(WINOGRAD_CONV.compute, schedule_winograd_nchwc, "conv2d_winograd_nchwc.x86",
                                    20, condition=nonempty)
    else:
        strategy.add_implementation(WINOGRAD_CONV.compute, schedule_winograd, "conv2d_winograd.x86", 20,
                                    condition=nonempty)
