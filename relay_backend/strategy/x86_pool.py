"""x86 pooling (nn.max_pool2d, nn.avg_pool2d, nn.global_max_pool2d, nn.global_avg_pool2d):
the op's own compute (so the semantics are the generic ones by construction) with the row
schedule of x86_rows.py:

    for (n, c, oh) in parallel:                     # one output row per task
        acc[ow] = identity
        for kh: for kw: for ow in vectorized: acc[ow] = combine(acc[ow], window load)
        for ow in vectorized: out[n, c, oh, ow] = epilogue(acc[ow])   # avg: / count, fused ops

The window reduction is computed at the row loop of the final output, with the reduction
axes outside the output width so the width is the vectorized innermost loop (channel-blocked
NCHW{b}c pools: per output pixel, the window outside the vectorized channel block). Global pools
reduce a whole plane per (n, c) and are parallel over (n, c). Each is a tunable template named
like its implementation ("max_pool2d.x86", ...; knobs tile_ow, unroll_kw).
"""
from ..op.nn.layout_view import block_of
from ..op.registry import get as get_op
from .base import register_strategy
from .x86_common import all_static
from .x86_rows import rows_template

POOL_OPS = ("nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d")
POOL_TEMPLATES = {name: rows_template(name.split(".")[-1] + ".x86", name) for name in POOL_OPS}


def _make_strategy(op_name):
    def fstrategy(strategy, attrs, inputs, out_type, target):
        if get_op(op_name).compute is None or not all_static(*inputs) \
                or not (attrs.layout == "NCHW" or block_of(attrs.layout)):
            return      # the row schedule is written for NCHW and NCHW{b}c; NHWC uses the generic one
        strategy.add_implementation(*POOL_TEMPLATES[op_name], 15)
    fstrategy.__name__ = f"{op_name.replace('.', '_')}_strategy_x86"
    return fstrategy


for _name in POOL_OPS:
    register_strategy(_name, "x86", _make_strategy(_name))
