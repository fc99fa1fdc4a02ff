"""x86 implementations of the issue-20 sliding-window ops: nn.conv1d, nn.conv3d and the
transposed convolutions nn.conv1d/2d/3d_transpose (plevel 15, above the generic 10). Each is the
op's own compute (the semantics are the generic ones by construction) with a register-tiled
window schedule instead of the generic one, which keeps the reduction innermost and scalar:

    for (every output axis but the last, last.outer) in parallel:   # one tile per task
        acc[bw] = 0                                                  # bw: a few SIMD registers
        for each reduce axis (input channel, kernel taps; the innermost unrolled when short):
            for w in vectorized(bw): acc[w] += data[window load] * weight[tap]
        for w in vectorized(bw): out[..., tile * bw + w] = epilogue(acc[w])

The innermost output axis (W for channel-first layouts, C for channel-last) is the vectorized
one. Padded and zero-dilated input stages are injective, so they are inlined into the loads.
`schedule_window_tiles` is shared with the channel-last (NHWC) conv2d of x86_conv_layouts.py.
"""
from .. import te
from ..op.registry import get as get_op
from .base import register_strategy
from .common import divisor_at_most, inline_except, last_reduction, prod, static_shape
from .generic import schedule_spatial
from .x86_common import lanes, parallel_if_large

UNROLL_MAX = 7          # unroll an innermost kernel-tap loop up to this extent
BLOCK_REGISTERS = 4     # output elements per tile: this many SIMD registers of accumulators


def _block(width: int, dtype: str) -> int:
    """Output elements per tile along the innermost axis: a divisor of `width` near
    BLOCK_REGISTERS vectors (the whole axis when it is short)."""
    lane = lanes(dtype)
    if width <= BLOCK_REGISTERS * lane:
        return width
    return divisor_at_most(width, BLOCK_REGISTERS * lane, floor=lane)


def schedule_window_tiles(attrs, outs, target):
    """Tile the last reduction (a convolution-like window sum) at the final output's tile loop,
    its reduce axes outside the vectorized innermost output axis (see the module doc)."""
    s = te.create_schedule(outs)
    red = last_reduction(s)
    inline_except(s)
    out_ops = [t.op for t in outs]
    shape = None if red is None else static_shape(red.output(0))
    if red is None or shape is None or len(outs) != 1 or static_shape(outs[0]) != shape:
        for stage in s.stages:       # several outputs or a reshaped epilogue: the generic layout
            if isinstance(stage.op, te.ComputeOp) and stage.attach_type == "root":
                schedule_spatial(stage)
        return s
    work = prod(shape) * prod(int(iv.dom.extent.value) for iv in red.reduce_axis)
    if out_ops[0] is red:            # no epilogue: accumulate in a local copy of the tile
        R, O = s.cache_write(red.output(0), "local").op, red
    else:
        O, R = out_ops[0], red
    tile_reduction(s, O, R, shape, outs[0].dtype, work)
    return s


def tile_reduction(s, O, R, shape, dtype: str, work) -> None:
    """Tile O (of `shape`) over all axes but the innermost block (parallel), vectorize the
    block, and compute reduction R inside each tile with its reduce axes outside the block."""
    so = s[O]
    axes = list(O.axis)
    xo, xi = so.split(axes[-1], factor=_block(shape[-1], dtype))
    tile = so.fuse(*axes[:-1], xo)
    parallel_if_large(so, tile, work)
    so.vectorize(xi)
    sr = s[R]
    sr.compute_at(so, tile)
    reduce_axes = list(R.reduce_axis)
    sr.reorder(*reduce_axes, *R.axis)
    if reduce_axes and int(reduce_axes[-1].dom.extent.value) <= UNROLL_MAX:
        sr.unroll(reduce_axes[-1])
    sr.vectorize(R.axis[-1])


WINDOW_OPS = ("nn.conv1d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose")


def _make_strategy(op_name):
    def fstrategy(strategy, attrs, inputs, out_type, target):
        op = get_op(op_name)
        if op.compute is None or any(static_shape(t) is None for t in inputs):
            return      # symbolic shapes keep the generic schedule
        strategy.add_implementation(op.compute, schedule_window_tiles, op_name.split(".")[-1] + ".x86", 15)
    fstrategy.__name__ = f"{op_name.replace('.', '_')}_strategy_x86"
    return fstrategy


for _name in WINDOW_OPS:
    register_strategy(_name, "x86", _make_strategy(_name))
