"""CUDA nn.softmax / nn.log_softmax: one block per row, everything in one kernel.

softmax.cuda / log_softmax.cuda (plevel 15; the ops' own computes):

    for row in blockIdx.x:                                  # every axis but the softmax axis
        max_sh = allreduce_max over threadIdx.x of x[row, k]          (shared, one value)
        sum_sh = allreduce_sum over threadIdx.x of exp(x[row, k] - max_sh)
        for ko: for t in threadIdx.x: out[row, ko*T + t] = exp(x - max_sh) / sum_sh   (or log)

The two reductions are computed at the row loop in shared memory (cross-thread, cuda_lower's
tree); the barriers between them and the output come from cuda_lower.insert_syncs.
"""
from .. import te
from .base import register_strategy
from .common import all_static
from .cuda_common import block_threads, pow2_at_least, schedule_cross_thread
from .cuda_generic import schedule_gpu_generic
from .generic import inline_injective


def schedule_softmax(attrs, outs, target):
    """The one-kernel schedule above (the generic GPU schedule for a 1-d input)."""
    s = te.create_schedule(outs)
    out = outs[0].op
    axis = attrs.axis % len(out.axis)
    rows = [iv for k, iv in enumerate(out.axis) if k != axis]
    if len(outs) != 1 or not rows:
        return schedule_gpu_generic(attrs, outs, target)
    inline_injective(s)
    so = s[out]
    k = out.axis[axis]
    so.reorder(*rows, k)
    row = so.fuse(*rows) if len(rows) > 1 else rows[0]
    threads = pow2_at_least(int(k.dom.extent.value), block_threads(target))
    ko, ki = so.split(k, factor=threads)
    so.bind(row, te.thread_axis("blockIdx.x"))
    so.bind(ki, te.thread_axis("threadIdx.x"))
    for stage in s.stages:
        if stage.op is not out and stage.attach_type == "root" and isinstance(stage.op, te.ComputeOp):
            stage.set_scope("shared")
            stage.compute_at(so, row)
            schedule_cross_thread(stage, target, block_axis=False)
    return s


def _make(op_name):
    def fstrategy(strategy, attrs, inputs, out_type, target):
        from ..op.registry import get as get_op
        if all_static(*inputs):
            strategy.add_implementation(get_op(op_name).compute, schedule_softmax,
                                        f"{op_name.split('.')[-1]}.cuda", 15)
    fstrategy.__name__ = f"{op_name.replace('.', '_')}_strategy_cuda"
    register_strategy(op_name, "cuda", fstrategy)


_make("nn.softmax")
_make("nn.log_softmax")
