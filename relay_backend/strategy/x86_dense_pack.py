"""x86 schedule of nn.contrib_dense_pack (dense on a weight packed as (N/bn, K, bn) at compile
time by AlterOpLayout + FoldConstant), plevel 20:

    for (i.outer, j.outer) in parallel:                      # rt rows x ct column blocks
        acc[rt, ct * bn] = 0                                  # rt * ct SIMD registers
        for k:
            w[t] = packed[j.outer*ct + t, k, 0:bn]            # ct vector loads
            for r in unrolled(rt): for t in unrolled(ct):     # broadcast data[i, k], FMAs
                acc[r, t*bn:(t+1)*bn] += data[i.outer*rt + r, k] * w[t]
        for r: for j in vectorized(ct * bn): out[i, j] = epilogue(acc[r, j])

The tile (ct, rt) is x86_common.register_tile's, as for the NCHWc convolution: the most FMAs
per cycle of its cost model among the tiles that fit the vector registers and divide the rows
and the column blocks.

dense_pack_prepacked.x86 is an autotvm template (on the packed shapes AlterOpLayout made, which
is what extract_from_program sees at opt_level 3) whose knobs are the packing block block_n (bn:
AlterOpLayout reads it from this task's config to pack the weight, x86_blocks) and the tile:
tile_y (rt, rows) and tile_x (ct, column blocks of bn), each defaulting to the hand-picked
choice, and col_outer (the tiles' order: column blocks outside rows keeps one slice of the
weight in the inner caches while every row tile uses it, instead of streaming the whole weight
once per row tile; default rows outside), so the fallback config is the hand-picked kernel. The workload names the default
packing; a task instantiated with another block measures on a re-packed weight, and tile_x
candidates are those of every block (combinations that do not divide are filtered out).
"""
import dataclasses

from .. import te
from ..autotvm.task.config_space import ConfigEntity
from ..autotvm.task.task import LAYOUT, is_task_argument, reblocked_placeholder
from ..autotvm.task.topi_integration import register_topi_compute, register_topi_schedule
from ..op.nn.dense_pack import DENSE_PACK
from .base import register_strategy
from .x86_blocks import block_candidates, config_blocks, default_block
from .x86_common import (all_static, factors_up_to, find_reduction, finish_others, inline_except, nonempty,
                         option_knob, parallel_if_large, place_anchor, prod, register_tile, split_knob,
                         static_shape)

TASK_NAME = "dense_pack_prepacked.x86"
MAX_ROW_TILE = 16        # tuning candidates: at most this many rows per tile
MAX_COL_TILE = 8         # and this many column blocks


def repacked_args(attrs, inputs, block: int, make_tensor) -> tuple:
    """(attrs, [data, weight]) of the same dense with the weight packed in blocks of `block`;
    the weight comes from make_tensor(old weight, shape, layout)."""
    no, k, bn = static_shape(inputs[1])
    layout = f"NC{block}n"
    weight = make_tensor(inputs[1], ((no * bn) // block, k, block), layout)
    return dataclasses.replace(attrs, weight_layout=layout), [inputs[0], weight]


def _same_tensor(old, shape, layout):
    return te.placeholder(tuple(shape), old.dtype, name=old.op.name)


def default_packing_args(args) -> tuple:
    """The args that name the workload: those of the default packing block."""
    attrs, inputs, out_type = args
    no, _, bn = static_shape(inputs[1])
    return (*repacked_args(attrs, inputs, default_block(no * bn), _same_tensor), out_type)


@register_topi_compute(TASK_NAME, workload_args=default_packing_args)
def dense_pack_compute(cfg, attrs, inputs, out_type):
    given = cfg
    units = static_shape(inputs[1])[0] * attrs.block
    cfg, chosen = config_blocks(cfg, {"block_n": (units, attrs.block)}, inputs[1:])
    if chosen["block_n"] != attrs.block:
        attrs, inputs = repacked_args(attrs, inputs, chosen["block_n"], reblocked_placeholder)
    if is_task_argument(inputs[1]):
        inputs[1].op.attrs[LAYOUT] = attrs.weight_layout      # measurements compare it as (N, K)
    outs = DENSE_PACK.compute(attrs, inputs, out_type)
    shape = static_shape(outs[0])
    rows, col_blocks = shape[-2] if len(shape) >= 2 else 1, shape[-1] // attrs.block
    ct, rt = register_tile(rows, col_blocks, attrs.block)
    split_knob(cfg, "tile_y", rows, factors_up_to(rows, MAX_ROW_TILE), rt)
    tiles = sorted({t for b in block_candidates(units) for t in factors_up_to(units // b, MAX_COL_TILE)})
    split_knob(cfg, "tile_x", col_blocks, tiles, ct)
    if not isinstance(cfg, ConfigEntity) or "col_outer" in cfg:      # a record from before the knob has none
        option_knob(cfg, "col_outer", (False, True), False)
    cfg.multi_filter(lambda e: (units // e["block_n"].size[-1]) % e["tile_x"].size[-1] == 0)
    if cfg is not given:
        outs[0].op.attrs["autotvm_config"] = cfg
    return outs


@register_topi_schedule(TASK_NAME)
def dense_pack_schedule(cfg, attrs, outs, target):
    s = te.create_schedule(outs)
    dense = find_reduction(s, DENSE_PACK.tag)
    shape = static_shape(dense.output(0))
    k_ext = int(dense.reduce_axis[0].dom.extent.value)
    bn = cfg["block_n"].size[-1]
    inline_except(s)
    O, R, others = place_anchor(s, outs, dense, shape)
    ct, rt = cfg["tile_x"].size[-1], cfg["tile_y"].size[-1]
    so = s[O]
    *lead, i, j = O.axis
    io, ii = so.split(i, factor=rt)
    jo, ji = so.split(j, factor=ct * bn)
    outer = (jo, io) if _col_outer(cfg) else (io, jo)
    so.reorder(*lead, *outer, ii, ji)
    fused = so.fuse(*lead, *outer)
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


def _col_outer(cfg) -> bool:
    """Whether the tiles run column blocks outside rows (a record from before the knob: no)."""
    return bool(cfg["col_outer"].val) if "col_outer" in cfg else False


@register_strategy("nn.contrib_dense_pack", "x86")
def dense_pack_strategy_x86(strategy, attrs, inputs, out_type, target):
    if all_static(*inputs):
        strategy.add_implementation(dense_pack_compute, dense_pack_schedule, TASK_NAME, 20,
                                    condition=nonempty)
