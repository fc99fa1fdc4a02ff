"""x86 schedules of the channel-blocked convolutions (nn.contrib_conv2d_NCHWc,
nn.contrib_depthwise_conv2d_NCHWc), at plevel 20 (above the generic 10). The weights arrive
pre-packed (AlterOpLayout + FoldConstant), so a kernel only reads them.

conv2d_NCHWc.x86: a register-tiled micro-kernel over ot channel blocks x reg_n output pixels
of one row:

    pad = zero-padded data (root, serial; absent without padding)
    for (n, y, oo.outer, x.outer) in parallel:                # or (n, oo.outer, y, x.outer)
        [pad the tile's window here instead, when pad_per_tile]
        acc[ot, reg_n, ob] = 0                                # ot * reg_n SIMD registers
        for icc, kh, kw, llvm_unrolled(ii):                   # the reduction, ii innermost
            w[t] = kernel[oo.outer*ot + t, icc, kh, kw, ii, 0:ob]   # ot vector loads
            for x in unrolled(reg_n):                         # one broadcast input ...
                v = pad[n, icc, y*sh + kh*dh, (x.outer*reg_n + x)*sw + kw*dw, ii]
                for t in unrolled(ot):                        # ... times the ot weight vectors
                    acc[t, x, :] += v * w[t]
        for t, x: for oi in vectorized(ob):
            out[n, oo, y, x, oi] = epilogue(acc[t, x, oi])   # bias / bn / relu / add, then store

The ii loop is unrolled by LLVM (Stage.unroll(ii, explicit=False)), not copied in tir: the same
machine code (ResNet-50's layers within 1% either way), but the code generator emits one step
instead of ob, which took DenseNet-121's cold build from 13.7-15.0 to 9.8-10.2 s.

Pixels run outside channel blocks in the unrolled step: one broadcast input against the ot
weight vectors, which stay live. The other order (each weight vector against every pixel)
keeps the reg_n broadcasts live instead; with a tile over the register budget (2 x 14 on
AVX-512, as an earlier count chose and as tuning may: 28 accumulators) it spilled 12
broadcasts to the stack inside the reduction loop (ResNet-50's 14x14 stage ran at 96 instead
of 156 GFLOP/s; benchmarks/README.md, "pixels outside channel blocks"), where this order
keeps every vector operand in registers.

A 1x1 convolution is the same loop with kh = kw = 1: a GEMM whose M is the pixel tile, N the
channel blocks and K the input channels, with the epilogue in registers. The tile (ot, reg_n)
is x86_common.register_tile's: the most FMAs per cycle (FMA, load, weight-stream and FMA-latency
bounds) among the tiles that divide the width and the channel blocks and whose
tile_registers fit the 16 (AVX2) / 32 (AVX-512) vector registers. That count holds whichever
of the two orders LLVM's scheduler makes of the unrolled step: ot * reg_n accumulators plus
the larger of (the ot weight vectors + one broadcast) and (the reg_n broadcasts + one weight);
one channel block: its weight, the broadcast an AVX-512 memory operand. Rows run outside
channel blocks unless that streams more data from beyond L2 (the weights once per row vs the
input once per channel tile; L2_BYTES).

Small output maps whose weights stream from beyond L2 (the accumulators of one channel tile
over the whole map within 8 KiB, weights over L2_BYTES / 2: ResNet-50's 7x7 stage) run the
K-blocked nest of x86_conv_kblocked instead: the same tile and step, the reduction cut into
chunks of input channels with the rows inside each chunk, so a chunk of weights serves every
row while it is in L1. It is chosen by that rule from the tile, not a knob (the tuning space
and its records are unchanged; row_outer is moot there).

depthwise_conv2d_NCHWc.x86: the same tile; the reduction is the window only, and with a
channel multiplier of 1 each tap is one vector load of the input block times one vector of
taps.

Both are autotvm templates (task names conv2d_NCHWc.x86 / depthwise_conv2d_NCHWc.x86, on the
channel-blocked shapes AlterOpLayout made, which is what extract_from_program sees at opt_level
3) with the tile as knobs: tile_oc (ot, channel blocks per tile), tile_ow (reg_n, output pixels
per tile) and row_outer (the loop order), each defaulting to choose_tile's choice, so the
fallback config is the hand-picked micro-kernel. `schedule_blocked_conv(tag, tile=Tile(...))`
still fixes a tile outside tuning. conv2d_NCHWc.x86 without groups also has the channel blocks
as knobs, block_ic / block_oc (x86_blocks: the layout AlterOpLayout picks from this task's
config); its workload names the default blocking, so a task instantiated with other blocks
measures the kernel on re-blocked inputs (task.reblocked_placeholder), and a build whose
blocks are not the config's uses the default tile. Tile candidates are those of every block
choice, combinations whose channel tile does not divide the channel blocks filtered out.
"""
import dataclasses

from typing import NamedTuple

from .. import te
from ..autotvm.task.task import LAYOUT, is_task_argument, reblocked_placeholder
from ..autotvm.task.topi_integration import register_topi_compute, register_topi_schedule
from ..ir.types import TensorType
from ..op.nn.conv_nchwc import blocks
from ..op.registry import get as get_op
from .base import register_strategy
from .x86_blocks import block_candidates, config_blocks, default_block
from .x86_conv_kblocked import k_chunk, schedule_k_blocked
from .x86_common import (all_static, factors_up_to, find_reduction, find_tagged, finish_others, inline_except,
                         nonempty, option_knob, parallel_if_large, place_anchor, prod, register_tile,
                         split_knob, static_shape)

CONV_TAG = "conv2d_NCHWc"
DEPTHWISE_TAG = "depthwise_conv2d_NCHWc"
PAD_TAG = "injective,pad"
L2_BYTES = 512 * 1024   # per-core L2: data re-read from it each pass is cheap
MAX_OC_TILE = 8         # tuning candidates: at most this many channel blocks per tile
MAX_REG_N = 16          # and this many output pixels
PAD_PER_TILE_MAX = 4.0  # pad per register tile when it copies each padded input at most this often


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


def _tile_knobs(cfg, out_shape, data, kernel, channels: int = None) -> None:
    """tile_oc / tile_ow / row_outer of a channel-blocked convolution, defaulting to choose_tile;
    with `channels` (the output channels, when block_oc is a knob) tile_oc's candidates are
    those of every block, and the combinations that do not divide are filtered out."""
    _, oc_blocks, _, ow, _ = out_shape
    default = choose_tile(out_shape, _touched_bytes(data, kernel, out_shape), _bytes(kernel))
    per_block = [channels // b for b in block_candidates(channels)] if channels else [oc_blocks]
    tiles = sorted({t for n in per_block for t in factors_up_to(n, MAX_OC_TILE)})
    split_knob(cfg, "tile_oc", oc_blocks, tiles, default.oc_tile)
    split_knob(cfg, "tile_ow", ow, factors_up_to(ow, MAX_REG_N), default.reg_n)
    option_knob(cfg, "row_outer", (True, False), default.row_outer)
    if channels:
        cfg.multi_filter(lambda e: (channels // e["block_oc"].size[-1]) % e["tile_oc"].size[-1] == 0)


def _has_block_knobs(attrs) -> bool:
    """Plain (ungrouped) blocked convolutions tune their channel blocks."""
    return attrs.groups == 1


def _logical_channels(inputs) -> tuple:
    """(input channels, output channels) of a blocked convolution's data and kernel."""
    data, kernel = static_shape(inputs[0]), static_shape(inputs[1])
    return data[1] * data[4], kernel[0] * kernel[5]


def reblocked_args(attrs, inputs, out_type, ib: int, ob: int, make_tensor) -> tuple:
    """(attrs, [data, kernel], out_type) of the same convolution blocked as ib / ob; the
    tensors come from make_tensor(old tensor, shape, layout)."""
    n, _, h, w, _ = static_shape(inputs[0])
    _, _, kh, kw, _, _ = static_shape(inputs[1])
    channels, out_channels = _logical_channels(inputs)
    _, _, oh, ow, _ = (int(d) for d in out_type.shape)
    layouts = (f"NCHW{ib}c", f"OIHW{ib}i{ob}o", f"NCHW{ob}c")
    attrs = dataclasses.replace(attrs, data_layout=layouts[0], kernel_layout=layouts[1], out_layout=layouts[2])
    data = make_tensor(inputs[0], (n, channels // ib, h, w, ib), layouts[0])
    kernel = make_tensor(inputs[1], (out_channels // ob, channels // ib, kh, kw, ib, ob), layouts[1])
    return attrs, [data, kernel], TensorType((n, out_channels // ob, oh, ow, ob), out_type.dtype)


def _named_tensor(old, shape, layout):
    return te.placeholder(tuple(shape), old.dtype, name=old.op.name)


def default_blocking_args(args) -> tuple:
    """The args that name a blocked convolution's workload: those of its default blocking."""
    attrs, inputs, out_type = args
    if not _has_block_knobs(attrs):
        return args
    channels, out_channels = _logical_channels(inputs)
    return reblocked_args(attrs, inputs, out_type, default_block(channels), default_block(out_channels),
                          _named_tensor)


def _apply_blocks(cfg, attrs, inputs, out_type) -> tuple:
    """(cfg, attrs, inputs, out_type) with the config's channel blocks (x86_blocks.config_blocks:
    a task's own inputs are re-blocked, a build's keep theirs or fall back)."""
    channels, out_channels = _logical_channels(inputs)
    ib, ob = blocks(attrs)
    cfg, chosen = config_blocks(cfg, {"block_ic": (channels, ib), "block_oc": (out_channels, ob)}, inputs)
    if (chosen["block_ic"], chosen["block_oc"]) != (ib, ob):
        attrs, inputs, out_type = reblocked_args(attrs, inputs, out_type, chosen["block_ic"], chosen["block_oc"],
                                                 reblocked_placeholder)
    for tensor, layout in zip(inputs, (attrs.data_layout, attrs.kernel_layout)):
        if is_task_argument(tensor):
            tensor.op.attrs[LAYOUT] = layout      # measurements compare in NCHW / OIHW
    return cfg, attrs, inputs, out_type


def blocked_conv_template(task_name: str, op_name: str, tag: str):
    """(compute, schedule) of tunable task `task_name`: op `op_name`'s own compute with the
    tile knobs (and the channel blocks, see the module doc), and the blocked schedule of
    reduction `tag` reading them."""
    tunes_blocks = op_name == "nn.contrib_conv2d_NCHWc"

    @register_topi_compute(task_name, workload_args=default_blocking_args if tunes_blocks else None)
    def compute(cfg, attrs, inputs, out_type):
        given = cfg
        blocked = tunes_blocks and _has_block_knobs(attrs)
        if blocked:
            cfg, attrs, inputs, out_type = _apply_blocks(cfg, attrs, inputs, out_type)
        outs = get_op(op_name).compute(attrs, inputs, out_type)
        _tile_knobs(cfg, static_shape(outs[0]), inputs[0], inputs[1],
                    _logical_channels(inputs)[1] if blocked else None)
        outs[0].op.attrs[LAYOUT] = attrs.out_layout or attrs.data_layout
        if cfg is not given:
            outs[0].op.attrs["autotvm_config"] = cfg
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
        chunk = k_chunk(shape, static_shape(kernel), chosen.oc_tile, L2_BYTES // 2) if tag == CONV_TAG else None
        if chunk is not None:
            parallel_if_large(so, schedule_k_blocked(so, s[R], O, R, chosen, chunk), work)
            finish_others(s, others)
            return s
        n, oo, y, x, oi = O.axis
        ooo, ooi = so.split(oo, factor=chosen.oc_tile)
        xo, xi = so.split(x, factor=chosen.reg_n)
        outer = (n, y, ooo, xo) if chosen.row_outer else (n, ooo, y, xo)
        so.reorder(*outer, ooi, xi, oi)
        fused = so.fuse(*outer)
        parallel_if_large(so, fused, work)
        so.unroll(ooi)
        so.unroll(xi)
        so.vectorize(oi)
        sr = s[R]
        if pad is not None and pad_per_tile(shape, static_shape(kernel), _bytes(pad.output(0)), attrs, chosen):
            s[pad].compute_at(so, fused)        # the tile's window, copied while it is in L1
        sr.compute_at(so, fused)
        rn, roo, ry, rx, roi = R.axis
        sr.reorder(*R.reduce_axis, rn, ry, rx, roo, roi)    # pixels outside channel blocks
        sr.unroll(R.reduce_axis[-1], explicit=False)    # ii: ot * reg_n * block FMAs per iteration
        sr.unroll(roo)
        sr.unroll(rx)
        sr.vectorize(roi)
        finish_others(s, others)
        return s
    return schedule


def pad_per_tile(out_shape, kernel_shape, padded_bytes: int, attrs, tile: Tile) -> bool:
    """Whether each register tile pads its own window: when the padded input is copied at
    most PAD_PER_TILE_MAX times that way (pad_copies_per_tile) and is larger than half the L2.
    A smaller padded input stays in the core's caches between the root pad and the
    convolution, so there is no memory traffic for the tiles to save and their extra copies
    are pure cost: one thread, interleaved, the root pad ran 2-3% faster than padding per tile
    on 3x3 convolutions of 8-128 channels at 7x7-28x28, and the seed CNN's 3-channel 32x32
    convolution (3-float vectors, 14 KB padded) in 10.1-10.3 instead of 12.0-12.9 us
    (benchmarks/README.md, stop 35)."""
    return padded_bytes > L2_BYTES // 2 and \
        pad_copies_per_tile(out_shape, kernel_shape, attrs, tile) <= PAD_PER_TILE_MAX


def pad_copies_per_tile(out_shape, kernel_shape, attrs, tile: Tile) -> float:
    """How often the padded input would be copied if each register tile padded its own window
    (the pad computed at the tile loop) instead of the whole input once, at the root: once per
    channel tile (every one reads the whole input), times the rows a window spans per output row
    (kh / stride) and the columns per tile's pixels ((reg_n - 1) * stride + kw over reg_n * stride).

    The root pad writes the whole padded input out and reads it back, from beyond L2 for large
    maps (0.13 ms for ResNet-50's 58x58x128 stride-2 input, 8% of that convolution); a per-tile
    window is copied within L1, but as often as this count. Measured in the network (one
    thread, benchmarks/README.md, "Pad per tile"): at 3.4 copies (128 channels at 56x56, stride
    2, a 4 x 4 tile) the convolution ran 12% faster; at 7.5 about the same; at 9-31 (the stem,
    256 channels at 14x14) 5-15% slower. PAD_PER_TILE_MAX sits between."""
    _, oc_blocks, _, _, _ = out_shape
    kh, kw = kernel_shape[2:4]
    (sh, sw), (dh, dw) = (tuple(int(v) for v in pair) for pair in (attrs.strides, attrs.dilation))
    rows = ((kh - 1) * dh + 1) / sh
    cols = ((tile.reg_n - 1) * sw + (kw - 1) * dw + 1) / (tile.reg_n * sw)
    return oc_blocks / tile.oc_tile * rows * cols


def _bytes(t) -> int:
    return prod(static_shape(t)) * 4


def _touched_bytes(data, kernel, out_shape) -> int:
    """Bytes of the input the convolution reads: a strided 1x1 skips rows and columns."""
    _, cc, h, w, ib = static_shape(data)
    kh, kw = static_shape(kernel)[2:4]
    oh, ow = out_shape[2:4]
    return cc * ib * min(h, oh * kh) * min(w, ow * kw) * 4


CONV_TASK = "conv2d_NCHWc.x86"
CONV_TEMPLATE = blocked_conv_template(CONV_TASK, "nn.contrib_conv2d_NCHWc", CONV_TAG)
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
