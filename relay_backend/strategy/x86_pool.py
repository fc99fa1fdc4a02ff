"""x86 pooling (nn.max_pool2d, nn.avg_pool2d, nn.global_max_pool2d, nn.global_avg_pool2d):
the op's own compute (so the semantics are the generic ones by construction) with a row schedule:

    for (n, c, oh) in parallel:                     # one output row per task
        acc[ow] = identity
        for kh: for kw: for ow in vectorized: acc[ow] = combine(acc[ow], window load)
        for ow in vectorized: out[n, c, oh, ow] = epilogue(acc[ow])   # avg: / count, fused ops

The window reduction is computed at the row loop of the final output, with the reduction
axes outside the output width so the width is the vectorized innermost loop (channel-blocked
NCHW{b}c pools: per output pixel, the window outside the vectorized channel block). Global pools
reduce a whole plane per (n, c) and are parallel over (n, c).
"""
from ..op.nn.layout_view import block_of
from ..op.registry import get as get_op
from .base import register_strategy
from .x86_common import all_static, schedule_rows

POOL_OPS = ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d")


pool_schedule = schedule_rows


def _make_strategy(op_name):
    def fstrategy(strategy, attrs, inputs, out_type, target):
        op = get_op(op_name)
        if op.compute is None or not all_static(*inputs) or not (attrs.layout == "NCHW" or block_of(attrs.layout)):
            return      # the row schedule is written for NCHW and NCHW{b}c; NHWC uses the generic one
        strategy.add_implementation(op.compute, pool_schedule, op_name.split(".")[-1] + ".x86", 15)
    fstrategy.__name__ = f"{op_name.replace('.', '_')}_strategy_x86"
    return fstrategy


for _name in POOL_OPS:
    register_strategy(_name, "x86", _make_strategy(_name))
