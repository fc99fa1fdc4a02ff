"""x86 schedule of nn.contrib_conv2d_winograd_without_weight_transform on NCHW{bi}c data with a
weight packed along its output channels (op/nn/winograd.py's blocked stages): every stage keeps a
channel block innermost, so each transform is whole-register adds of contiguous loads, and the
GEMM is the NCHWc convolution's micro-kernel with tiles in place of pixels:

    pad = zero-padded data (root; parallel over its rows when large)
    for (p, c.outer) in parallel:                           # input transform
        rows[a, l, c.inner] = sum_k B[k, a] d[p][k, l, c.outer, c.inner]  # unrolled a, l
        V[a, b, p, c.outer, c.inner] = sum_l B[l, b] rows[a, l]           # unrolled a, b
    for (a, b, o.outer.outer, p.outer) in parallel:         # alpha^2 GEMMs, register-tiled
        acc[pt, ot][o.inner] = 0                             # pt x ot SIMD registers
        for c.outer, llvm_unrolled(c.inner):                  # Stage.unroll(explicit=False)
            for unrolled(pt): for unrolled(ot):             # one broadcast V[.., p, c] against
                acc[pt, ot] += V[a, b, p, c] * U[a, b, o, c, :]     # the ot weight vectors
        M[a, b, o.outer, p, o.inner] = acc
    for (o.outer, p) in parallel:                           # inverse transform
        rows[i, b, o.inner] = sum_a A[a, i] M[a, b, o.outer, p]           # unrolled i, b
        Y[o.outer, p, i, j, o.inner] = sum_b A[b, j] rows[i, b]           # unrolled i, j
    out[n, o.outer, y, x, o.inner] = epilogue(Y[...])        # schedule_spatial, vectorized o.inner

The GEMM tile (ot, pt) is x86_common.register_tile's over (output channel blocks, tiles): the
tile count is padded to a multiple of TILE_BLOCK, so pt divides it and there is no tail. Each
parallel loop runs only with enough work (parallel_if_large).
"""
from .common import prod, static_shape
from .x86_common import finish_others, parallel_if_large, register_tile
from .x86_winograd import winograd_stages


def _transform_pair(s, first, second, lead_positions) -> None:
    """Schedule a two-pass transform: `second` parallel over its axes at `lead_positions` fused
    (a tile and a channel block), its other axes but the last unrolled and the last (the channel
    block) vectorized; `first` computed at that loop, likewise unrolled and vectorized."""
    stage = s[second]
    axes = list(second.axis)
    lead = [axes[k] for k in lead_positions]
    transform = [axis for axis in axes[:-1] if axis not in lead]
    stage.reorder(*lead, *transform, axes[-1])
    fused = stage.fuse(*lead)
    parallel_if_large(stage, fused, prod(static_shape(second.output(0))) * 4)
    for axis in transform:
        stage.unroll(axis)
    stage.vectorize(axes[-1])
    inner = s[first]
    inner.compute_at(stage, fused)
    first_axes = list(first.axis)
    inner_lead = [first_axes[k] for k in lead_positions]
    for axis in first_axes[:-1]:
        if axis not in inner_lead:
            inner.unroll(axis)
    inner.vectorize(first_axes[-1])


def _schedule_bgemm(s, bgemm) -> None:
    """M[a, b, o.outer, p, o.inner] = sum_c U[a, b, o.outer, c, o.inner] V[a, b, p, c] as the
    register-tiled GEMM of the module docstring."""
    alpha, _, out_blocks, tiles, block = static_shape(bgemm.output(0))
    in_blocks, in_block = (int(r.dom.extent.value) for r in bgemm.reduce_axis)
    col_tile, row_tile = register_tile(tiles, out_blocks, block)
    local = s.cache_write(bgemm.output(0), "local")
    stage = s[bgemm]
    a, b, ko, p, ki = bgemm.axis
    koo, koi = stage.split(ko, factor=col_tile)
    po, pi = stage.split(p, factor=row_tile)
    stage.reorder(a, b, koo, po, pi, koi, ki)
    fused = stage.fuse(a, b, koo, po)
    parallel_if_large(stage, fused, alpha * alpha * out_blocks * block * tiles * in_blocks * in_block)
    stage.unroll(pi)
    stage.unroll(koi)
    stage.vectorize(ki)
    acc = s[local.op]
    acc.compute_at(stage, fused)
    la, lb, lko, lp, lki = local.op.axis
    rco, rci = local.op.reduce_axis
    acc.reorder(rco, rci, la, lb, lp, lko, lki)
    acc.unroll(rci, explicit=False)
    acc.unroll(lp)
    acc.unroll(lko)
    acc.vectorize(lki)


def schedule_winograd_nchwc(attrs, outs, target):
    """The loop nest in the module docstring for a fused blocked Winograd convolution."""
    s, stages, bgemm, pad = winograd_stages(outs)
    if pad is not None:
        n, cb, y, _, ci = pad.axis
        s[pad].vectorize(ci)
        fused = s[pad].fuse(n, cb, y)
        parallel_if_large(s[pad], fused, prod(static_shape(pad.output(0))))
    # (a, b, p, c.outer, c.inner): parallel over (p, c.outer); (o.outer, p, i, j, o.inner): over (o.outer, p)
    _transform_pair(s, stages["winograd_data_rows"], stages["winograd_data_pack"], (2, 3))
    _schedule_bgemm(s, bgemm)
    _transform_pair(s, stages["winograd_inverse_rows"], stages["winograd_inverse"], (0, 1))
    finish_others(s, [t.op for t in outs])
    return s
