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
once per row tile; default: columns outside when the weight has more rows than the data,
default_col_outer) and tile_k (K-blocking, default: the whole K, i.e. no
blocking), so the fallback config is the hand-picked kernel. The workload names the default
packing; a task instantiated with another block measures on a re-packed weight, and tile_x
candidates are those of every block (combinations that do not divide are filtered out).

With tile_k = kb < K the reduction is split and its outer part runs between the two tile
axes, so one K-panel of the weight (ct * bn * kb floats) stays in L1 while every row tile
reuses it (col_outer; rows outside: one row panel of the data while every column tile uses
it); the partial sums live in the dense's full-size buffer between panels (re-loaded into the
register tile at each panel) and the epilogue runs after the last panel, as its own pass. The
parallel loop is the outer tile axis, outside the panels: one parallel region per kernel (a
region per panel cost a fork/join each, ~25 us on a 2-core machine shared with other work):

    acc[M, N] = 0
    for j.outer in parallel:                                  # i.outer when rows are outside
        for k.outer:                                          # K / kb panels
            for i.outer:                                      # j.outer when rows are outside
                for k.inner in kb:
                    for r in unrolled(rt): for t in unrolled(ct):
                        acc[i.outer*rt + r, ...bn] += data[.., k] * packed[.., k, 0:bn]
    for i: for j in vectorized: out[i, j] = epilogue(acc[i, j])

tile_y also offers row tiles that do not divide the rows (PAD_ROW_TILES: 24 accumulators as
6 x 4 where powers of two allow only 16 as 4 x 4): the compute then pads the rows to a multiple
of rt and reads the data from a row panel made first, panel[M'/rt, K, rt] (zero rows past M),
so the tile loop has no tail and its rt broadcasts per k come from one contiguous rt-float
group; the dense runs on M' rows and the epilogue stores the first M (only its last tile is
guarded). A config whose tile divides the rows (the default always does) computes as before.
"""
import dataclasses

from .. import te
from ..autotvm.task.config_space import ConfigEntity
from ..autotvm.task.task import LAYOUT, is_task_argument, reblocked_placeholder
from ..autotvm.task.topi_integration import register_topi_compute, register_topi_schedule
from ..op.nn.dense_pack import DENSE_PACK
from .base import register_strategy
from .generic import schedule_spatial
from .x86_blocks import block_candidates, config_blocks, default_block
from .x86_common import (all_static, factors_up_to, find_reduction, finish_others, inline_except, nonempty,
                         option_knob, parallel_if_large, place_anchor, prod, register_tile, split_knob,
                         static_shape)

TASK_NAME = "dense_pack_prepacked.x86"
PANEL_TAG = "dense_pack_panel"
MAX_ROW_TILE = 16        # tuning candidates: at most this many rows per tile
MAX_COL_TILE = 8         # and this many column blocks
PAD_ROW_TILES = (3, 6, 12)   # row tiles offered beside the divisors (padded rows; 2-D data only)
K_TILES = (8, 256)       # K-blocking candidates: the divisors of K in this range (and K: none)


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
    shape = static_shape(inputs[0])[:-1] + (static_shape(inputs[1])[0] * attrs.block,)
    rows, col_blocks = shape[-2] if len(shape) >= 2 else 1, shape[-1] // attrs.block
    ct, rt = register_tile(rows, col_blocks, attrs.block)
    padded = [t for t in PAD_ROW_TILES if t < rows and rows % t] if len(shape) == 2 else []
    chosen_rt = split_knob(cfg, "tile_y", rows, factors_up_to(rows, MAX_ROW_TILE) + padded, rt)
    if rows % chosen_rt:
        outs = _padded_compute(attrs, inputs, out_type, chosen_rt)
    else:
        outs = DENSE_PACK.compute(attrs, inputs, out_type)
    tiles = sorted({t for b in block_candidates(units) for t in factors_up_to(units // b, MAX_COL_TILE)})
    split_knob(cfg, "tile_x", col_blocks, tiles, ct)
    if not isinstance(cfg, ConfigEntity) or "col_outer" in cfg:      # a record from before the knob has none
        option_knob(cfg, "col_outer", (False, True), default_col_outer(prod(shape[:-1]), shape[-1]))
    k_ext = static_shape(inputs[0])[-1]
    if not isinstance(cfg, ConfigEntity) or "tile_k" in cfg:         # a record from before the knob has none
        lo, hi = K_TILES
        split_knob(cfg, "tile_k", k_ext, [d for d in factors_up_to(k_ext, hi) if d >= lo], k_ext)
    cfg.multi_filter(lambda e: (units // e["block_n"].size[-1]) % e["tile_x"].size[-1] == 0)
    if cfg is not given:
        outs[0].op.attrs["autotvm_config"] = cfg
    return outs


@register_topi_schedule(TASK_NAME)
def dense_pack_schedule(cfg, attrs, outs, target):
    s = te.create_schedule(outs)
    dense = find_reduction(s, DENSE_PACK.tag)
    k_ext = int(dense.reduce_axis[0].dom.extent.value)
    bn = cfg["block_n"].size[-1]
    panel = next((t.op for t in dense.input_tensors() if getattr(t.op, "tag", "") == PANEL_TAG), None)
    inline_except(s, keep=[panel] if panel is not None else [])
    if panel is not None:                        # padded rows: the tiles are those of the real rows
        schedule_spatial(s[panel])
        rows_op = next(st.op for st in s.stages if st.op.tag == DENSE_PACK.tag + ",cast")
        shape = static_shape(rows_op.output(0))
    else:
        shape = static_shape(dense.output(0))
    O, R, others = place_anchor(s, outs, dense, shape)
    ct, rt = cfg["tile_x"].size[-1], cfg["tile_y"].size[-1]
    kb = int(cfg["tile_k"].size[-1]) if "tile_k" in cfg else k_ext
    if kb < k_ext:
        _k_blocked(s, O, R, static_shape(R.output(0)), k_ext, (rt, ct, bn, kb), _col_outer(cfg))
        finish_others(s, others)
        return s
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


def _padded_compute(attrs, inputs, out_type, rt: int) -> list:
    """The dense on rows padded to a multiple of `rt`, reading a row panel (module doc)."""
    data, weight = inputs
    rows, k_ext = static_shape(data)
    no, _, bn = static_shape(weight)
    dtype = out_type.dtype
    acc = "float32" if dtype == "float16" else dtype
    tiles = -(-rows // rt)
    zero = te.const(0, data.dtype)
    panel = te.compute((tiles, k_ext, rt),
                       lambda io, k, ii: te.if_then_else(io * rt + ii < rows, data[io * rt + ii, k], zero),
                       name="dense_pack_panel", tag=PANEL_TAG)
    k = te.reduce_axis((0, k_ext), "k")
    full = te.compute((tiles * rt, no * bn),
                      lambda i, j: te.sum(panel[i // rt, k, i % rt].astype(acc) * weight[j // bn, k, j % bn].astype(acc),
                                          axis=k), name="dense_pack", tag=DENSE_PACK.tag)
    out = te.compute((rows, no * bn), lambda i, j: full[i, j].astype(dtype), name="dense_pack_rows",
                     tag=DENSE_PACK.tag + ",cast")
    return [out]


def _k_blocked(s, O, R, shape, k_ext, tile, col_outer) -> None:
    """The K-blocked nest of the module doc: the reduction R a root stage with the K panels
    outside its register tiles, the epilogue O a plain vectorized pass after it."""
    rt, ct, bn, kb = tile
    sr = s[R]
    *lead, i, j = R.axis
    ko, ki = sr.split(R.reduce_axis[0], factor=kb)
    io, ii = sr.split(i, factor=rt)
    jo, jt = sr.split(j, factor=ct * bn)
    jto, ji = sr.split(jt, factor=bn)
    first, second = (jo, io) if col_outer else (io, jo)
    sr.reorder(*lead, first, ko, second, ki, ii, jto, ji)
    fused = sr.fuse(*lead, first) if lead else first
    parallel_if_large(sr, fused, prod(shape) * k_ext)
    sr.unroll(ii)
    sr.unroll(jto)
    sr.vectorize(ji)
    if O is not R:
        schedule_spatial(s[O])


def default_col_outer(rows: int, units: int) -> bool:
    """The hand-picked tile order: column blocks outside rows when the weight has more rows than
    the data (units > rows; both are K wide). The outer tile axis is the parallel one, so each
    thread then streams only its share of the larger operand (the weight) and reads all of the
    smaller one: at 64 rows x 784 -> 512 each of 2 cores streams 0.8 MB of weight instead of
    1.6 MB (2-4% faster per call here, interleaved with onnxruntime, benchmarks/README.md)."""
    return units > rows


def _col_outer(cfg) -> bool:
    """Whether the tiles run column blocks outside rows (a record from before the knob: no)."""
    return bool(cfg["col_outer"].val) if "col_outer" in cfg else False


@register_strategy("nn.contrib_dense_pack", "x86")
def dense_pack_strategy_x86(strategy, attrs, inputs, out_type, target):
    if all_static(*inputs):
        strategy.add_implementation(dense_pack_compute, dense_pack_schedule, TASK_NAME, 20,
                                    condition=nonempty)
