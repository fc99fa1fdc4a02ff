"""x86 schedule of nn.contrib_dense_pack (dense on a weight packed as (N/bn, K, bn) at compile
time by AlterOpLayout + FoldConstant), plevel 20:

    for (i.outer, j.outer) in parallel:                      # rt rows x ct column blocks
        acc[rt, ct * bn] = 0                                  # rt * ct SIMD registers
        for k:
            w[t] = packed[j.outer*ct + t, k, 0:bn]            # ct vector loads
            for r in unrolled(rt): for t in unrolled(ct):     # broadcast data[i, k], FMAs
                acc[r, t*bn:(t+1)*bn] += data[i.outer*rt + r, k] * w[t]
        for r: for j in vectorized(ct * bn): out[i, j] = epilogue(acc[r, j])

The tile (ct, rt) is x86_common.register_tile's, as for the NCHWc convolution: most FMAs per
load within the vector registers, dividing the rows and the column blocks.
"""
from .. import te
from ..op.nn.dense_pack import DENSE_PACK
from .base import register_strategy
from .x86_common import (all_static, find_reduction, finish_others, inline_except, nonempty, parallel_if_large,
                         place_anchor, prod, register_tile, static_shape)


def dense_pack_schedule(attrs, outs, target):
    s = te.create_schedule(outs)
    dense = find_reduction(s, DENSE_PACK.tag)
    shape = static_shape(dense.output(0))
    k_ext = int(dense.reduce_axis[0].dom.extent.value)
    bn = attrs.block
    inline_except(s)
    O, R, others = place_anchor(s, outs, dense, shape)
    ct, rt = register_tile(shape[-2], shape[-1] // bn, bn)
    so = s[O]
    *lead, i, j = O.axis
    io, ii = so.split(i, factor=rt)
    jo, ji = so.split(j, factor=ct * bn)
    so.reorder(*lead, io, jo, ii, ji)
    fused = so.fuse(*lead, io, jo)
    parallel_if_large(so, fused, prod(shape) * k_ext)
    so.vectorize(ji)
    sr = s[R]
    sr.compute_at(so, fused)
    *rlead, ri, rj = R.axis
    rjo, rji = sr.split(rj, factor=bn)
    sr.reorder(*R.reduce_axis, *rlead, ri, rjo, rji)
    sr.unroll(ri)
    sr.unroll(rjo)
    sr.vectorize(rji)
    finish_others(s, others)
    return s


@register_strategy("nn.contrib_dense_pack", "x86")
def dense_pack_strategy_x86(strategy, attrs, inputs, out_type, target):
    if all_static(*inputs):
        strategy.add_implementation(DENSE_PACK.compute, dense_pack_schedule, "dense_pack_prepacked.x86", 20,
                                    condition=nonempty)
