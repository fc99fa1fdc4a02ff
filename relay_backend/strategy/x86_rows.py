"""x86 row schedules for NCHW sliding-window reductions that use the op's own compute (pools,
grouped and depthwise conv2d), as tunable templates.

    for (n, c, oh) in parallel:                     # one output row per task
        for ow.outer:                               # tile_ow: the row in chunks (one by default)
            acc[tile_ow] = identity
            for kh: for kw (unrolled when unroll_kw): for ow.inner in vectorized:
                acc[ow] = combine(acc[ow], window load)
            for ow.inner in vectorized: out[n, c, oh, ow] = epilogue(acc[ow])

The window reduction is computed at the row (or row-chunk) loop of the final output, with the
reduction axes outside the output width, so the width is the vectorized innermost loop; a
chunk of a few registers keeps the accumulators in registers for a long row. Channel-blocked
NCHW{b}c data (AlterOpLayout's pools) vectorize the channel block instead: per output pixel,
the window outside the block. The defaults (the whole row, kw not unrolled) are the schedule
these ops had before tuning existed.
"""
from .. import te
from ..autotvm.task.topi_integration import register_topi_compute, register_topi_schedule
from ..op.registry import get as get_op
from .common import inline_except, last_reduction, prod, static_shape
from .x86_common import finish_others, lanes, option_knob, parallel_if_large, split_knob

UNROLL_KW_MAX = 16


def _row_knobs(cfg, outs) -> None:
    """tile_ow (chunk of the output width) and unroll_kw for the reduction feeding `outs`."""
    red = last_reduction(te.create_schedule(outs))
    if red is None:
        return
    shape = static_shape(red.output(0))
    if len(shape) not in (4, 5):
        return
    width = shape[3]                 # W of NCHW and of NCHW{b}c
    step = lanes(red.output(0).dtype) if len(shape) == 4 else 2   # pixels per vector / per chunk
    split_knob(cfg, "tile_ow", width, [v for v in (step, 2 * step, 4 * step) if v < width], width)
    kw = int(red.reduce_axis[-1].dom.extent.value)
    option_knob(cfg, "unroll_kw", (True,) if kw <= UNROLL_KW_MAX else (), False)


def rows_template(task_name: str, op_name: str):
    """(compute, schedule, task_name) of tunable task `task_name`: op `op_name`'s own compute
    with the row knobs, and schedule_rows reading them."""
    @register_topi_compute(task_name)
    def compute(cfg, attrs, inputs, out_type):
        outs = get_op(op_name).compute(attrs, inputs, out_type)
        _row_knobs(cfg, outs)
        return outs

    @register_topi_schedule(task_name)
    def schedule(cfg, attrs, outs, target):
        return schedule_rows(attrs, outs, target, cfg)
    return compute, schedule, task_name


def schedule_rows(attrs, outs, target, cfg=None):
    """Row-parallel, width-vectorized schedule for an NCHW sliding-window reduction plus its
    fused epilogue (for channel-blocked NCHW{b}c data the block is the vector); `cfg`
    (tile_ow, unroll_kw) refines it when given."""
    s = te.create_schedule(outs)
    red = last_reduction(s)
    if red is None:              # nothing to reduce (not expected): plain spatial schedule
        inline_except(s)
        finish_others(s, [t.op for t in outs])
        return s
    shape = static_shape(red.output(0))
    work = prod(shape) * prod(int(iv.dom.extent.value) for iv in red.reduce_axis)
    inline_except(s)
    out_ops = [t.op for t in outs]
    if len(outs) == 1 and static_shape(outs[0]) == shape and len(shape) in (4, 5):
        if out_ops[0] is red:
            R = s.cache_write(red.output(0), "local").op
            O = red
        else:
            O, R = out_ops[0], red
        so = s[O]
        n, c, y, x, *block = O.axis
        row = so.fuse(n, c, y)
        parallel_if_large(so, row, work)
        chunk = cfg["tile_ow"].size[-1] if cfg is not None and "tile_ow" in cfg else shape[3]
        at = row
        if chunk < shape[3]:
            at, x = so.split(x, factor=chunk)
        vector = (block or [x])[0]
        if shape[-1] > 1:
            so.vectorize(vector)
        sr = s[R]
        sr.compute_at(so, at)
        rn, rc, ry, rx, *rblock = R.axis
        if not rblock:              # NCHW: the width is the vector, the window outside it
            sr.reorder(*R.reduce_axis, rn, rc, ry, rx)
        else:                       # NCHW{b}c: per pixel, the window outside the channel block
            sr.reorder(rn, rc, ry, rx, *R.reduce_axis, rblock[0])
        if cfg is not None and "unroll_kw" in cfg and cfg["unroll_kw"].val:
            sr.unroll(R.reduce_axis[-1])
        if shape[-1] > 1:
            sr.vectorize((rblock or [rx])[0])
        return s
    # several outputs (or an unexpected shape): reduction rows at the root, the rest generic
    sr = s[red]
    axes = list(red.axis)
    sr.reorder(*axes[:-1], *red.reduce_axis, axes[-1])
    parallel_if_large(sr, sr.fuse(*axes[:-1]) if len(axes) > 2 else axes[0], work)
    finish_others(s, [op for op in out_ops if op is not red and s[op].attach_type == "root"])
    return s
