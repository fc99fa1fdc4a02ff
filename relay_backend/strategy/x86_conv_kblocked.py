"""The K-blocked loop nest of conv2d_NCHWc.x86 for small output maps whose weights stream from
beyond L2 (ResNet-50's 7x7 stage: 4-9 MiB of weights for a 7x7 map).

The default nest (x86_conv_nchwc) runs the whole reduction for one register tile (ot channel
blocks x reg_n pixels of one row) before the next row: the first row of a channel tile reads
its weight panel from memory at one weight vector per reg_n FMAs, faster than one core streams
it, and the other rows re-read the panel from L2. Here the reduction is cut into chunks of kc
input-channel blocks and the rows run inside a chunk, so each chunk of weights (kept to half of
L1) comes from memory once and serves every row while it is in L1, and the memory stream
spreads over the whole computation:

    for (n, oo.outer) in parallel:
        acc[ot, OH, OW, ob] = 0                              # the whole map: <= ACC_BYTES
        for icc.outer:                                       # kc input-channel blocks per chunk
            for y, x.outer:
                for icc.inner, kh, kw, llvm_unrolled(ii):    # the default micro-kernel's step
                    w[t] = kernel[oo.outer*ot + t, icc, kh, kw, ii, 0:ob]
                    for x in unrolled(reg_n):
                        v = pad[n, icc, y*sh + kh*dh, (x.outer*reg_n + x)*sw + kw*dw, ii]
                        for t in unrolled(ot): acc[t, y, x, :] += v * w[t]
        for y, x.outer, t, x: for oi in vectorized(ob):
            out[n, oo, y, x, oi] = epilogue(acc[t, y, x, oi])

Within a chunk LLVM keeps the tile's accumulators in registers (loaded and stored once per
chunk and row, a few % of the FMAs) while the whole-map array stays small enough for L1: at
ACC_BYTES (8 KiB) and below the accumulators were promoted; a 2 x 14 tile over a 14x14 map (25
KiB) was not, and ran 1.7x slower than the default nest. Measured on ResNet-50 (one thread,
benchmarks/README.md, "K-blocked nest"): 2048->512 1x1 at 7x7, the stride-2 1024->2048
projection and the stride-2 512ch 3x3 ran 7-15% faster alone, and inside the network, where
their weights come from memory, at 0.91-1.11x onnxruntime's time instead of 1.17-1.29x.
"""
from .x86_common import divisor_at_most, prod

L1_BYTES = 32 * 1024       # per-core L1 data cache (the smallest of the x86 cores we target)
ACC_BYTES = 8 * 1024       # the largest whole-map accumulator block


def k_chunk(out_shape, kernel_shape, oc_tile: int, streamed_bytes: int):
    """Input-channel blocks per chunk of the K-blocked nest for a convolution with this output
    (N, O/ob, OH, OW, ob), packed float32 kernel (O/ob, I/ib, KH, KW, ib, ob) and channel tile,
    or None when the default nest applies: weights of at most `streamed_bytes` (they stay in
    L2), or a map whose accumulators would not stay in L1. The chunk is the largest divisor of
    the input-channel blocks whose weights for one channel tile fit half of L1 (at least one)."""
    _, _, oh, ow, ob = (int(d) for d in out_shape)
    icc = int(kernel_shape[1])
    if prod(kernel_shape) * 4 <= streamed_bytes or oc_tile * oh * ow * ob * 4 > ACC_BYTES:
        return None
    per_block = oc_tile * prod(kernel_shape[2:]) * 4
    return divisor_at_most(icc, max(1, (L1_BYTES // 2) // per_block), floor=1)


def schedule_k_blocked(so, sr, O, R, tile, chunk: int):
    """Arrange output stage `so` (of O) and accumulator stage `sr` (of R) as the module's nest;
    returns the fused outer loop (n, oo.outer), for the caller to parallelize."""
    n, oo, y, x, oi = O.axis
    ooo, ooi = so.split(oo, factor=tile.oc_tile)
    xo, xi = so.split(x, factor=tile.reg_n)
    so.reorder(n, ooo, y, xo, ooi, xi, oi)
    fused = so.fuse(n, ooo)
    so.unroll(ooi)
    so.unroll(xi)
    so.vectorize(oi)
    sr.compute_at(so, fused)
    rn, roo, ry, rx, roi = R.axis
    icc, kh, kw, ii = R.reduce_axis
    ko, ki = sr.split(icc, factor=chunk)
    rxo, rxi = sr.split(rx, factor=tile.reg_n)
    sr.reorder(ko, rn, ry, rxo, ki, kh, kw, ii, rxi, roo, roi)
    sr.unroll(ii, explicit=False)
    sr.unroll(rxi)
    sr.unroll(roo)
    sr.vectorize(roi)
    return fused


__all__ = ["k_chunk", "schedule_k_blocked"]
