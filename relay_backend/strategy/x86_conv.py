"""x86 nn.conv2d (NCHW, OIHW, groups=1): direct convolution, output channels blocked.

conv2d_nchw.x86 (plevel 15) computes into a channel-blocked accumulator and copies out to NCHW
(the copy is where a fused bias add / relu runs):

    pad = zero-padded input (root, once)           Wp[O/bo, C, KH, KW, bo] = packed weight
    for (n, oc.outer, oh, ow.outer) in parallel:
        acc[bw, bo] = 0                               # bw x 1 SIMD registers of bo channels
        for c, kh: for kw in unrolled: for ow in unrolled(bw): for oc in vectorized(bo):
            acc[ow, oc] += pad[n, c, oh*sh + kh*dh, ow*sw + kw*dw] * Wp[., c, kh, kw, oc]
        for oc: for ow in vectorized(bw): out[n, oc, oh, ow] = epilogue(acc[ow, oc])

bo is one SIMD register of channels, bw the largest divisor of the output width <= 14 (the
register budget). Grouped and depthwise convolutions (groups > 1) use the op's generic compute
with the row schedule of x86_rows.py (parallel output rows, vectorized output width). Same
semantics as the generic compute: inputs cast to the accumulation dtype, output cast to the
result dtype.

conv2d_nchw.x86 is an autotvm template whose knobs default to the values above: tile_oc (bo,
the channel block of the packed weight and accumulator), tile_ow (bw), tile_oh (output rows
per register tile, 1 = one row) and unroll_kw (unroll the kernel-width loop).

At opt_level 3 AlterOpLayout turns these convolutions into nn.contrib_conv2d_NCHWc, whose
micro-kernel (x86_conv_nchwc.py) is a template declared the same way (register_topi_compute /
register_topi_schedule, knobs from x86_common.split_knob / option_knob with the hand-picked
tile as each default).
"""
from .. import te, tir
from ..autotvm.task.topi_integration import register_topi_compute, register_topi_schedule
from ..op.nn import _te as T
from ..tir import expr as E
from .base import register_strategy
from .x86_common import (all_static, dims_of, divisor_at_most, factors_up_to, finish_others,
                         find_tagged, inline_except, lanes, option_knob, parallel_if_large, prod,
                         same_dims, split_knob, static_product, static_shape)
from .x86_rows import rows_template

CONV_TAG = "conv2d_nchw.x86"
MAX_BW = 14
SYMBOLIC_BW = 8   # output-width block when the width is symbolic
DEPTHWISE_CONV = rows_template("depthwise_conv2d_nchw.x86", "nn.conv2d")
GROUP_CONV = rows_template("group_conv2d_nchw.x86", "nn.conv2d")


def _conv_knobs(cfg, o: int, oh, ow, acc: str) -> int:
    """tile_oc / tile_ow / tile_oh / unroll_kw (no tile_ow / tile_oh for a symbolic width /
    height: the schedule then uses SYMBOLIC_BW / one row); returns bo (the channel block)."""
    width = lanes(acc)
    bo = split_knob(cfg, "tile_oc", o, {min(v, o) for v in (width // 2, width, 2 * width)}, min(width, o))
    if isinstance(ow, int):
        split_knob(cfg, "tile_ow", ow, factors_up_to(ow, 2 * MAX_BW),
                   divisor_at_most(ow, MAX_BW, floor=4) if ow >= 4 else ow)
    if isinstance(oh, int):
        split_knob(cfg, "tile_oh", oh, factors_up_to(oh, 4), 1)
    option_knob(cfg, "unroll_kw", (False,), True)
    return bo


@register_topi_compute(CONV_TAG)
def conv2d_nchw_compute(cfg, attrs, inputs, out_type):
    data, weight = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    n, c, h, w = dims_of(data)           # batch, height and width may be symbolic
    o, _, kh, kw = static_shape(weight)
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    top, left, bottom, right = attrs.padding
    oh = T.window_out(h, kh, sh, dh, top, bottom)
    ow = T.window_out(w, kw, sw, dw, left, right)
    bo = _conv_knobs(cfg, o, oh, ow, acc)
    zero = E.const(0, acc)

    def fpad(b, ch, y, x):
        value = data[b, ch, y - top, x - left].astype(acc)
        if not any(attrs.padding) and isinstance(ow, int):
            return data[b, ch, y, x].astype(acc)
        inside = tir.all(y >= top, y < top + h, x >= left, x < left + w)
        return te.if_then_else(inside, value, zero)
    # a symbolic width: the accumulator covers whole SYMBOLIC_BW blocks (the schedule's block),
    # reading zeros past the padded input, so only the final store needs a bounds guard
    acc_w = ow if isinstance(ow, int) else (ow + (SYMBOLIC_BW - 1)) // SYMBOLIC_BW * SYMBOLIC_BW
    pad_w = w + left + right if isinstance(ow, int) else \
        tir.max(w + left + right, (acc_w - 1) * sw + (kw - 1) * dw + 1)
    pad = te.compute((n, c, h + top + bottom, pad_w), fpad, name="conv_pad", tag=CONV_TAG + ",pad")

    def fpack(oo, ch, p, q, oi):
        value = weight[oo * bo + oi, ch, p, q].astype(acc)
        if o % bo == 0:
            return value
        return te.if_then_else(oo * bo + oi < o, value, zero)
    wp = te.compute(((o + bo - 1) // bo, c, kh, kw, bo), fpack, name="conv_weight_pack",
                    tag=CONV_TAG + ",pack")
    rc = te.reduce_axis((0, c), "rc")
    rh = te.reduce_axis((0, kh), "rh")
    rw = te.reduce_axis((0, kw), "rw")
    blk = te.compute(
        (n, (o + bo - 1) // bo, oh, acc_w, bo),
        lambda b, oo, y, x, oi: te.sum(pad[b, rc, y * sh + rh.var * dh, x * sw + rw.var * dw]
                                       * wp[oo, rc, rh, rw, oi], axis=[rc, rh, rw]),
        name="conv_acc", tag=CONV_TAG + ",acc")
    out = te.compute((n, o, oh, ow), lambda b, oc, y, x: blk[b, oc // bo, y, x, oc % bo].astype(dtype),
                     name="conv2d", tag=CONV_TAG)
    return [out]


@register_topi_schedule(CONV_TAG)
def conv2d_nchw_schedule(cfg, attrs, outs, target):
    s = te.create_schedule(outs)
    out = find_tagged(s, CONV_TAG)
    blk = find_tagged(s, CONV_TAG + ",acc")
    pad = find_tagged(s, CONV_TAG + ",pad")
    pack = find_tagged(s, CONV_TAG + ",pack")
    shape = dims_of(out.output(0))
    bshape = dims_of(blk.output(0))
    blocks = static_product(bshape)
    work = None if blocks is None else blocks * prod(int(iv.dom.extent.value) for iv in blk.reduce_axis)
    keep = [pack] + ([pad] if any(attrs.padding) else [])   # an unpadded "pad" is inlined
    inline_except(s, keep=keep)
    for st in keep:
        s[st].vectorize(st.axis[-1])    # serial, at the root: one parallel region per kernel
    out_ops = [t.op for t in outs]
    if len(outs) == 1 and same_dims(dims_of(outs[0]), shape):
        O, others = out_ops[0], []
    else:   # several outputs: accumulate at the root, the rest generic
        sb = s[blk]
        b, oo, y, x, oi = blk.axis
        sb.reorder(b, oo, y, *blk.reduce_axis, x, oi)
        sb.vectorize(oi)
        parallel_if_large(sb, sb.fuse(b, oo, y), work)
        finish_others(s, [op for op in out_ops if s[op].attach_type == "root"])
        return s
    bo = bshape[-1]
    bw = cfg["tile_ow"].size[-1] if "tile_ow" in cfg else SYMBOLIC_BW   # symbolic width: no knob
    bh = cfg["tile_oh"].size[-1] if "tile_oh" in cfg else 1
    so = s[O]
    b, oc, y, x = O.axis
    oco, oci = so.split(oc, factor=bo)
    yo, yi = so.split(y, factor=bh) if bh > 1 else (y, None)
    xo, xi = so.split(x, factor=bw)
    so.reorder(b, oco, yo, xo, oci, *([yi] if bh > 1 else []), xi)
    fused = so.fuse(b, oco, yo, xo)
    parallel_if_large(so, fused, work)
    so.vectorize(xi)
    sb = s[blk]
    sb.compute_at(so, fused)
    b, oo, yb, xb, oi = blk.axis
    rc, rh, rw = blk.reduce_axis
    sb.reorder(rc, rh, rw, b, oo, yb, xb, oi)
    if cfg["unroll_kw"].val:
        sb.unroll(rw)
    if bh > 1:
        sb.unroll(yb)
    sb.unroll(xb)
    sb.vectorize(oi)
    finish_others(s, others)
    return s


def _plain_groups(attrs, inputs, out_type):
    return attrs.groups == 1


@register_strategy("nn.conv2d", "x86")
def conv2d_strategy_x86(strategy, attrs, inputs, out_type, target):
    data, weight = inputs
    if not all_static(weight) or attrs.data_layout != "NCHW" or attrs.kernel_layout != "OIHW":
        return
    if not isinstance(dims_of(data)[1], int):
        return
    if attrs.groups == 1:       # N, H and W may be symbolic: one kernel for every size
        strategy.add_implementation(conv2d_nchw_compute, conv2d_nchw_schedule, CONV_TAG, 15,
                                    condition=_plain_groups)
        return
    if not all_static(data):
        return
    # grouped / depthwise: few channels per output, so no channel block to vectorize; the
    # generic compute with the row schedule (parallel rows, vectorized output width)
    compute, schedule, name = DEPTHWISE_CONV if attrs.groups == static_shape(data)[1] else GROUP_CONV
    strategy.add_implementation(compute, schedule, name, 15)
