"""x86 transposed convolution by output phase ("sub-pixel" form): nn.conv1d/2d/3d_transpose with
dilation 1 and channel-first layouts (NCW / NCHW / NCDHW, kernel IOW / IOHW / IODHW), plevel 18,
above the window-tile implementation of x86_conv_nd.py.

The generic compute convolves a zero-dilated input, so stride^ndim - 1 of every stride^ndim
multiply-adds read a zero and each load carries a modulo test. Here the output is split by
phase: along an axis with stride s and leading pad P, output y = s * q + r - P, and only the
taps k = r + s * j (j < J = ceil(K / s)) reach it, from input q - j. So, per axis,

    xpad[n, c, J - 1 + i] = data[n, c, i]           (zero-padded once, at the root)
    wp[c, o, r, j] = weight[c, o, r + s * j] or 0    (packed once, at the root)
    for (n, o, phases r..., q... but the last, q_last.outer) in parallel:
        acc[bq] = 0                                  # register tile of the last q axis
        for c in group, j...: for q in vectorized(bq):
            acc[q] += xpad[n, ic, q0 + q - j + J - 1] * wp[ic, o % Og, r, j]
        phase[n, o, r..., q...] = acc
    out[n, o, y...] = phase[n, o, (y + P) % s, (y + P) // s - q0]   (+ the fused epilogue)

where q0 = P // s skips phase cells before the output. Every multiply-add is useful and the
inner loop is a plain vector fused multiply-add. Same results as the generic compute
(accumulation in the same dtype), only the summation order differs.
"""
from .. import te, tir
from ..op.nn import _te as T
from ..op.nn import _window as Wn
from .base import register_strategy
from .common import divisor_at_most, inline_except, prod, static_shape
from .generic import schedule_spatial
from .x86_common import lanes, parallel_if_large

TAG = "conv_transpose_phase.x86"
MAX_BQ = 14         # output positions per register tile (one accumulator register each)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def phase_compute(attrs, inputs, out_type):
    data, weight = inputs
    nd = attrs.NDIM
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    n, c, *size = static_shape(data)
    _, og, *kernel = static_shape(weight)
    out = [int(d) for d in out_type.shape[2:]]
    strides, pads = attrs.strides, attrs.padding[:nd]
    taps = [_ceil_div(k, s) for k, s in zip(kernel, strides)]
    first = [p // s for p, s in zip(pads, strides)]                          # q0 per axis
    count = [(o - 1 + p) // s - q0 + 1 for o, p, s, q0 in zip(out, pads, strides, first)]
    # xpad must cover indices q0 + q - j + J - 1 for q < count, j < J
    after = [max(q0 + cnt - 1 - (i - 1), 0) for q0, cnt, i in zip(first, count, size)]
    xpad = Wn.pad_stage(data, list(range(2, 2 + nd)), [j - 1 for j in taps], after, 0, name="phase_pad")
    if xpad is data:     # keep a root copy so the reduction's loads stay plain
        xpad = te.compute(data.shape, lambda *i: data[i], name="phase_pad", tag=T.PAD_TAG)
    bo = min(lanes(acc), og * attrs.groups) if attrs.groups == 1 else 1
    o_total = og * attrs.groups
    blocks = _ceil_div(o_total, bo)
    zero = T.const(0, acc)

    def fpack(oo, ch, *rj):
        """wp[oo, c, r..., j..., oi] = weight[c, oo * bo + oi, r + s * j] (0 past the kernel / channels)."""
        r, j, oi = rj[:nd], rj[nd:2 * nd], rj[2 * nd]
        k = [ri + s * ji for ri, s, ji in zip(r, strides, j)]
        oc = oo * bo + oi
        inside = tir.all(oc < o_total, *[kk < K for kk, K in zip(k, kernel)])
        index = (ch, tir.min(oc, o_total - 1) if attrs.groups == 1 else oc % og) + tuple(
            tir.min(kk, K - 1) for kk, K in zip(k, kernel))
        return te.if_then_else(inside, weight[index].astype(acc), zero)
    wp = te.compute((blocks, c) + tuple(strides) + tuple(taps) + (bo,), fpack, name="phase_weight",
                    tag=TAG + ",pack")
    per_group = c // attrs.groups
    rc = te.reduce_axis((0, per_group), "rc")
    rj = [te.reduce_axis((0, j), f"rj{a}") for a, j in enumerate(taps)]

    def fphase(b, oo, *rq):
        r, q, oi = rq[:nd], rq[nd:2 * nd], rq[2 * nd]
        ic = rc.var if attrs.groups == 1 else (oo // og) * per_group + rc.var    # bo == 1 when grouped
        src = [q0 + qq - j.var + (J - 1) for q0, qq, j, J in zip(first, q, rj, taps)]
        return te.sum(xpad[(b, ic) + tuple(src)].astype(acc) * wp[(oo, ic) + tuple(r) + tuple(j.var for j in rj)
                                                                  + (oi,)], axis=[rc] + rj)
    phase = te.compute((n, blocks) + tuple(strides) + tuple(count) + (bo,), fphase, name="phase_acc",
                       tag=TAG + ",acc")

    def fout(b, oc, *y):
        t = [yy + p for yy, p in zip(y, pads)]
        return phase[(b, oc // bo) + tuple(tt % s for tt, s in zip(t, strides))
                     + tuple(tt // s - q0 for tt, s, q0 in zip(t, strides, first)) + (oc % bo,)].astype(dtype)
    return [te.compute((n, o_total) + tuple(out), fout, name=attrs.OP.split(".")[1], tag=TAG)]


def phase_schedule(attrs, outs, target):
    """Pad and packed weight at the root; the phase reduction in register tiles of
    (bq positions x bo channels): channels vectorized, positions unrolled, reduce axes outside;
    the phase-to-output copy and its epilogue generic."""
    s = te.create_schedule(outs)
    ops = {getattr(st.op, "name", ""): st.op for st in s.stages}
    acc, pack, pad = ops["phase_acc"], ops["phase_weight"], ops["phase_pad"]
    inline_except(s, keep=[pack, pad])
    for op in (pack, pad):
        schedule_spatial(s[op], parallel=False)
    shape = static_shape(acc.output(0))
    work = prod(shape) * prod(int(iv.dom.extent.value) for iv in acc.reduce_axis)
    local = s.cache_write(acc.output(0), "local").op
    sa = s[acc]
    *outer, q_last, oi = acc.axis
    bq = divisor_at_most(shape[-2], MAX_BQ, floor=4) if shape[-2] >= 4 else shape[-2]
    qo, qi = sa.split(q_last, factor=bq)
    tile = sa.fuse(*outer, qo)
    parallel_if_large(sa, tile, work)
    sa.reorder(tile, qi, oi)
    sa.vectorize(oi)
    sl = s[local]
    sl.compute_at(sa, tile)
    *l_outer, l_q, l_oi = local.axis
    sl.reorder(*local.reduce_axis, *l_outer, l_q, l_oi)
    sl.unroll(l_q)
    sl.vectorize(l_oi)
    for stage in s.stages:
        if isinstance(stage.op, te.ComputeOp) and stage.attach_type == "root" and stage.op not in (acc, pack, pad):
            schedule_spatial(stage)
    return s


def _applies(attrs, inputs) -> bool:
    nd = attrs.NDIM
    return (all(static_shape(t) is not None for t in inputs) and all(d == 1 for d in attrs.dilation)
            and attrs.data_layout == "NC" + Wn.spatial(nd) and attrs.kernel_layout == "IO" + Wn.spatial(nd)
            and (attrs.out_layout or attrs.data_layout) == attrs.data_layout and any(s > 1 for s in attrs.strides))


def _strategy(strategy, attrs, inputs, out_type, target):
    if _applies(attrs, inputs):
        strategy.add_implementation(phase_compute, phase_schedule, TAG, 18)


for _name in ("nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose"):
    register_strategy(_name, "x86", _strategy)
