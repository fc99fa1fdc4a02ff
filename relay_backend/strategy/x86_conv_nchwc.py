"""x86 schedules of the channel-blocked convolutions (nn.contrib_conv2d_NCHWc,
nn.contrib_depthwise_conv2d_NCHWc) and of nn.contrib_dense_pack, at plevel 20 (above the
generic 10). The weights arrive pre-packed (AlterOpLayout + FoldConstant), so a kernel only
reads them.

conv2d_NCHWc.x86: a register-tiled micro-kernel over reg_n output pixels x one channel block:

    pad = zero-padded data (root, serial; absent without padding)
    for (n, oo, y, x.outer) in parallel:                     # one reg_n x ob output tile
        acc[reg_n, ob] = 0                                    # reg_n SIMD registers
        for icc, kh, kw, ii:                                  # the reduction, ii innermost
            w = kernel[oo, icc, kh, kw, ii, 0:ob]             # one vector load
            for x in unrolled(reg_n):                         # broadcast one input, one FMA
                acc[x, :] += pad[n, icc, y*sh + kh*dh, (x.outer*reg_n + x)*sw + kw*dw, ii] * w
        for x in (reg_n): for oi in vectorized(ob):
            out[n, oo, y, x, oi] = epilogue(acc[x, oi])      # bias / bn / relu / add, then store

A 1x1 convolution is the same loop with kh = kw = 1: a GEMM whose M is the pixel tile, N the
channel block and K the input channels, with the epilogue in registers. `reg_n` is the
largest divisor of the output width up to REG_N_MAX (the accumulators, the weight vector
and the broadcast input must fit the 16 AVX2 registers).

depthwise_conv2d_NCHWc.x86: the same tile; the reduction is the window only, and with a
channel multiplier of 1 each tap is one vector load of the input block times one vector of
taps. dense_pack.x86: the register tile of strategy/x86_dense.py over the packed weight, with
no packing stage.

Knobs (plain parameters with defaults, for tuning): REG_N_MAX, the pixel tile; the channel
blocks themselves are chosen by AlterOpLayout (x86_alter_layout.channel_block_limit).
"""
from typing import NamedTuple

from .. import te
from ..op.nn.dense_pack import DENSE_PACK
from ..op.registry import get as get_op
from .base import register_strategy
from .x86_common import (all_static, finish_others, find_tagged, inline_except, lanes, parallel_if_large,
                         place_anchor, prod, static_shape, vector_bytes)
from .x86_dense import _packed_schedule

CONV_TAG = "conv2d_NCHWc"
DEPTHWISE_TAG = "depthwise_conv2d_NCHWc"
PAD_TAG = "injective,pad"
L2_BYTES = 512 * 1024   # per-core L2: data re-read from it each pass is cheap


def vector_registers() -> int:
    """SIMD registers of this CPU: 32 with AVX-512, else 16."""
    return 32 if vector_bytes() >= 64 else 16


def _reduction(s, tag):
    """The reduction stage tagged `tag` (a cast stage may carry the tag + ",cast")."""
    for stage in s.stages:
        op = stage.op
        if isinstance(op, te.ComputeOp) and op.tag == tag and op.is_reduction:
            return op
    return None


class Tile(NamedTuple):
    """A register tile of `oc_tile` channel blocks x `reg_n` output pixels of one row, and
    whether the parallel loop runs rows outside channel blocks."""
    oc_tile: int
    reg_n: int
    row_outer: bool


def choose_tile(out_shape, in_bytes: int, weight_bytes: int, registers: int = None) -> Tile:
    """The register tile with the most FMAs per load that fits the registers (accumulators +
    one weight vector per block + one broadcast input) and divides the output evenly (a
    guarded tile costs more than a smaller one); then the loop order that streams less data
    from beyond L2: rows outside re-read every weight once per row, channel blocks outside
    re-read the input once per channel tile."""
    _, oc_blocks, oh, ow, block = out_shape
    vecs = max(1, -(-block // lanes("float32")))
    registers = registers or vector_registers()
    best = None
    for ot in (d for d in range(1, oc_blocks + 1) if oc_blocks % d == 0):
        for reg_n in (d for d in range(1, ow + 1) if ow % d == 0):
            if ot * vecs * (reg_n + 1) + 1 > registers:
                continue
            score = (ot * reg_n / (reg_n + ot * vecs), ot * reg_n)
            if best is None or score > best[0]:
                best = (score, ot, reg_n)
    _, ot, reg_n = best if best is not None else (None, 1, 1)
    cost_rows = 0 if weight_bytes <= L2_BYTES // 2 else weight_bytes * oh
    cost_blocks = 0 if in_bytes <= L2_BYTES // 2 else in_bytes * (oc_blocks // ot)
    return Tile(ot, reg_n, cost_rows <= cost_blocks)


def schedule_blocked_conv(tag: str, tile: Tile = None):
    """The schedule of a channel-blocked convolution whose reduction stage carries `tag`:
    the loop nest in the module docstring, with `tile` (default: choose_tile)."""
    def schedule(attrs, outs, target):
        s = te.create_schedule(outs)
        conv = _reduction(s, tag)
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


conv2d_nchwc_schedule = schedule_blocked_conv(CONV_TAG)
depthwise_conv2d_nchwc_schedule = schedule_blocked_conv(DEPTHWISE_TAG)
dense_pack_schedule = _packed_schedule(DENSE_PACK.tag)


def _nonempty(attrs, inputs, out_type):
    return all(d > 0 for t in inputs for d in static_shape(t))


def _register(op_name, schedule, name):
    @register_strategy(op_name, "x86")
    def fstrategy(strategy, attrs, inputs, out_type, target):
        if not all_static(*inputs):
            return
        strategy.add_implementation(get_op(op_name).compute, schedule, name, 20, condition=_nonempty)
    fstrategy.__name__ = f"{op_name.replace('.', '_')}_strategy_x86"
    return fstrategy


_register("nn.contrib_conv2d_NCHWc", conv2d_nchwc_schedule, "conv2d_NCHWc.x86")
_register("nn.contrib_depthwise_conv2d_NCHWc", depthwise_conv2d_nchwc_schedule, "depthwise_conv2d_NCHWc.x86")
_register("nn.contrib_dense_pack", dense_pack_schedule, "dense_pack_prepacked.x86")
