"""x86 schedules of the channel-blocked convolutions (nn.contrib_conv2d_NCHWc,
nn.contrib_depthwise_conv2d_NCHWc), at plevel 20 (above the generic 10). The weights arrive
pre-packed (AlterOpLayout + FoldConstant), so a kernel only reads them.

conv2d_NCHWc.x86: a register-tiled micro-kernel over ot channel blocks x reg_n output pixels
of one row:

    pad = zero-padded data (root, serial; absent without padding)
    for (n, y, oo.outer, x.outer) in parallel:                # or (n, oo.outer, y, x.outer)
        acc[ot, reg_n, ob] = 0                                # ot * reg_n SIMD registers
        for icc, kh, kw, ii:                                  # the reduction, ii innermost
            w[t] = kernel[oo.outer*ot + t, icc, kh, kw, ii, 0:ob]   # ot vector loads
            for t in unrolled(ot): for x in unrolled(reg_n):  # one broadcast input, FMAs
                acc[t, x, :] += pad[n, icc, y*sh + kh*dh, (x.outer*reg_n + x)*sw + kw*dw, ii] * w[t]
        for t, x: for oi in vectorized(ob):
            out[n, oo, y, x, oi] = epilogue(acc[t, x, oi])   # bias / bn / relu / add, then store

A 1x1 convolution is the same loop with kh = kw = 1: a GEMM whose M is the pixel tile, N the
channel blocks and K the input channels, with the epilogue in registers. The tile (ot, reg_n)
is x86_common.register_tile's: most FMAs per load within the 16 (AVX2) / 32 (AVX-512) vector
registers, dividing the width and the channel blocks. Rows run outside channel blocks unless
that streams more data from beyond L2 (the weights once per row vs the input once per
channel tile; L2_BYTES).

depthwise_conv2d_NCHWc.x86: the same tile; the reduction is the window only, and with a
channel multiplier of 1 each tap is one vector load of the input block times one vector of
taps.

Both are autotvm templates (task names conv2d_NCHWc.x86 / depthwise_conv2d_NCHWc.x86, on the
channel-blocked shapes AlterOpLayout made, which is what extract_from_program sees at opt_level
3) with the tile as knobs: tile_oc (ot, channel blocks per tile), tile_ow (reg_n, output pixels
per tile) and row_outer (the loop order), each defaulting to choose_tile's choice, so the
fallback config is the hand-picked micro-kernel. `schedule_blocked_conv(tag, tile=Tile(...))`
still fixes a tile outside tuning; the channel blocks themselves are chosen by AlterOpLayout
(x86_alter_layout.channel_block_limit), not tuned.
"""
from typing import NamedTuple

from .. import te
from ..autotvm.task.topi_integration import register_topi_compute, register_topi_schedule
from ..op.registry import get as get_op
from .base import register_strategy
from .x86_common import (all_static, factors_up_to, find_reduction, find_tagged, finish_others, inline_except,
                         nonempty, option_knob, parallel_if_large, place_anchor, prod, register_tile,
                         split_knob, static_shape)

CONV_TAG = "conv2d_NCHWc"
DEPTHWISE_TAG = "depthwise_conv2d_NCHWc"
PAD_TAG = "injective,pad"
L2_BYTES = 512 * 1024   # per-core L2: data re-read from it each pass is cheap
MAX_OC_TILE = 8         # tuning candidates: at most this many channel blocks per tile
MAX_REG_N = 16          # and this many output pixels


class Tile(NamedTuple):
    """A register tile of `oc_tile` channel blocks x `reg_n` output pixels of one row, and
    whether the parallel loop runs rows outside channel blocks."""
    oc_tile: int
    reg_n: int
    row_outer: bool


def choose_tile(out_shape, in_bytes: int, weight_bytes: int, registers: int = None) -> Tile:
    """The register tile of x86_common.register_tile over (output pixels of a row, channel
    blocks); then the loop order that streams less data from beyond L2: rows outside re-read
    every weight once per row, channel blocks outside re-read the input once per channel tile."""
    _, oc_blocks, oh, ow, block = out_shape
    ot, reg_n = register_tile(ow, oc_blocks, block, registers)
    cost_rows = 0 if weight_bytes <= L2_BYTES // 2 else weight_bytes * oh
    cost_blocks = 0 if in_bytes <= L2_BYTES // 2 else in_bytes * (oc_blocks // ot)
    return Tile(ot, reg_n, cost_rows <= cost_blocks)


def _tile_knobs(cfg, out_shape, data, kernel) -> None:
    """tile_oc / tile_ow / row_outer of a channel-blocked convolution, defaulting to choose_tile."""
    _, oc_blocks, _, ow, _ = out_shape
    default = choose_tile(out_shape, _touched_bytes(data, kernel, out_shape), _bytes(kernel))
    split_knob(cfg, "tile_oc", oc_blocks, factors_up_to(oc_blocks, MAX_OC_TILE), default.oc_tile)
    split_knob(cfg, "tile_ow", ow, factors_up_to(ow, MAX_REG_N), default.reg_n)
    option_knob(cfg, "row_outer", (True, False), default.row_outer)


def blocked_conv_template(task_name: str, op_name: str, tag: str):
    """(compute, schedule) of tunable task `task_name`: op `op_name`'s own compute with the
    tile knobs, and the blocked schedule of reduction `tag` reading them."""
    @register_topi_compute(task_name)
    def compute(cfg, attrs, inputs, out_type):
        outs = get_op(op_name).compute(attrs, inputs, out_type)
        _tile_knobs(cfg, static_shape(outs[0]), inputs[0], inputs[1])
        return outs

    @register_topi_schedule(task_name)
    def schedule(cfg, attrs, outs, target):
        tile = Tile(cfg["tile_oc"].size[-1], cfg["tile_ow"].size[-1], cfg["row_outer"].val)
        return schedule_blocked_conv(tag, tile)(attrs, outs, target)
    return compute, schedule


def schedule_blocked_conv(tag: str, tile: Tile = None):
    """The schedule of a channel-blocked convolution whose reduction stage carries `tag`.

    Parameters
    ----------
    tag : str
        The tag of the convolution's reduction stage (CONV_TAG or DEPTHWISE_TAG).
    tile : Tile, optional
        The register tile and loop order. Defaults to None (choose_tile's).

    Returns
    -------
    schedule : callable
        schedule(attrs, outs, target): the loop nest in the module docstring.
    """
    def schedule(attrs, outs, target):
        s = te.create_schedule(outs)
        conv = find_reduction(s, tag)
        pad = find_tagged(s, PAD_TAG)
        pad = pad if pad is not None and pad in [t.op for t in conv.input_tensors()] else None
        shape = static_shape(conv.output(0))
        work = prod(shape) * prod(int(iv.dom.extent.value) for iv in conv.reduce_axis)
        data = pad.input_tensors()[0] if pad is not None else conv.input_tensors()[0]
        kernel = next(t for t in conv.input_tensors() if len(t.shape) == 6)
        chosen = tile or choose_tile(shape, _touched_bytes(data, kernel, shape), _bytes(kernel))
        inline_except(s, keep=[pad] if pad is not None else [])
        if pad is not None:
            s[pad].vectorize(pad.axis[-1])      # serial, at the root: one parallel region
        O, R, others = place_anchor(s, outs, conv, shape)
        so = s[O]
        n, oo, y, x, oi = O.axis
        ooo, ooi = so.split(oo, factor=chosen.oc_tile)
        xo, xi = so.split(x, factor=chosen.reg_n)
        outer = (n, y, ooo, xo) if chosen.row_outer else (n, ooo, y, xo)
        so.reorder(*outer, ooi, xi, oi)
        fused = so.fuse(*outer)
        parallel_if_large(so, fused, work)
        so.vectorize(oi)
        sr = s[R]
        sr.compute_at(so, fused)
        rn, roo, ry, rx, roi = R.axis
        sr.reorder(*R.reduce_axis, rn, roo, ry, rx, roi)
        sr.unroll(roo)
        sr.unroll(rx)
        sr.vectorize(roi)
        finish_others(s, others)
        return s
    return schedule


def _bytes(t) -> int:
    return prod(static_shape(t)) * 4


def _touched_bytes(data, kernel, out_shape) -> int:
    """Bytes of the input the convolution reads: a strided 1x1 skips rows and columns."""
    _, cc, h, w, ib = static_shape(data)
    kh, kw = static_shape(kernel)[2:4]
    oh, ow = out_shape[2:4]
    return cc * ib * min(h, oh * kh) * min(w, ow * kw) * 4


CONV_TEMPLATE = blocked_conv_template("conv2d_NCHWc.x86", "nn.contrib_conv2d_NCHWc", CONV_TAG)
DEPTHWISE_TEMPLATE = blocked_conv_template("depthwise_conv2d_NCHWc.x86", "nn.contrib_depthwise_conv2d_NCHWc",
                                           DEPTHWISE_TAG)


def _register(op_name, template, name):
    @register_strategy(op_name, "x86")
    def fstrategy(strategy, attrs, inputs, out_type, target):
        if not all_static(*inputs) or get_op(op_name).compute is None:
            return
        strategy.add_implementation(*template, name, 20, condition=nonempty)
    fstrategy.__name__ = f"{op_name.replace('.', '_')}_strategy_x86"
    return fstrategy


_register("nn.contrib_conv2d_NCHWc", CONV_TEMPLATE, "conv2d_NCHWc.x86")
_register("nn.contrib_depthwise_conv2d_NCHWc", DEPTHWISE_TEMPLATE, "depthwise_conv2d_NCHWc.x86")
