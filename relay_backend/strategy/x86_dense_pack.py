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

dense_pack_prepacked.x86 is an autotvm template (on the packed shapes AlterOpLayout made, which
is what extract_from_program sees at opt_level 3) whose knobs are the tile: tile_y (rt, rows)
and tile_x (ct, column blocks of bn), each defaulting to register_tile's choice, so the fallback
config is the hand-picked kernel. The packing block bn is AlterOpLayout's, not tuned.
"""
from .. import te
from ..autotvm.task.topi_integration import register_topi_compute, register_topi_schedule
from ..op.nn.dense_pack import DENSE_PACK
from .base import register_strategy
from .x86_common import (all_static, factors_up_to, find_reduction, finish_others, inline_except, nonempty,
                         parallel_if_large, place_anchor, prod, register_tile, split_knob, static_shape)

TASK_NAME = "dense_pack_prepacked.x86"
MAX_ROW_TILE = 16        # tuning candidates: at most this many rows per tile
MAX_COL_TILE = 8         # and this many column blocks


@register_topi_compute(TASK_NAME)
def dense_pack_compute(cfg, attrs, inputs, out_type):
    outs = DENSE_PACK.compute(attrs, inputs, out_type)
    shape = static_shape(outs[0])
    rows, col_blocks = shape[-2] if len(shape) >= 2 else 1, shape[-1] // attrs.block
    ct, rt = register_tile(rows, col_blocks, attrs.block)
    split_knob(cfg, "tile_y", rows, factors_up_to(rows, MAX_ROW_TILE), rt)
    split_knob(cfg, "tile_x", col_blocks, factors_up_to(col_blocks, MAX_COL_TILE), ct)
    return outs


@register_topi_schedule(TASK_NAME)
def dense_pack_schedule(cfg, attrs, outs, target):
    s = te.create_schedule(outs)
    dense = find_reduction(s, DENSE_PACK.tag)
    shape = static_shape(dense.output(0))
    k_ext = int(dense.reduce_axis[0].dom.extent.value)
    bn = attrs.block
    inline_except(s)
    O, R, others = place_anchor(s, outs, dense, shape)
    ct, rt = cfg["tile_x"].size[-1], cfg["tile_y"].size[-1]
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
        strategy.add_implementation(dense_pack_compute, dense_pack_schedule, TASK_NAME, 20,
                                    condition=nonempty)
