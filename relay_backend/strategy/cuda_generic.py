"""The generic GPU schedule: every op's implementation on targets keyed "gpu" (cuda).

TVM registers schedule_injective / schedule_reduce for the "cuda"/"gpu" keys; here one schedule
covers every pattern, so an op without a GPU-specific implementation still runs correctly:

    inline the injective intermediates (as the CPU schedule does)
    for every stage left at the root (each becomes one kernel, in order):
        injective -> fuse all axes, split by the block size: (blockIdx.x, threadIdx.x)
        reduction -> thread per output, or cross-thread for few long reductions (cuda_common)
        0-d       -> one thread

Registered with strategy.generic.register_generic_schedule("gpu", ...); specialised GPU
implementations (cuda_dense.py, cuda_conv.py, cuda_softmax.py) add higher plevels.
"""
from .. import te
from .cuda_common import bind_spatial, schedule_reduction
from .generic import inline_injective, register_generic_schedule


def schedule_gpu_generic(attrs, outs, target):
    """Inline injective intermediates; bind every root stage to GPU blocks and threads."""
    s = te.create_schedule(outs)
    inline_injective(s)
    for stage in s.stages:
        if isinstance(stage.op, te.ComputeOp) and stage.attach_type == "root":
            if stage.op.is_reduction:
                schedule_reduction(stage, target)
            else:
                bind_spatial(stage, list(stage.op.axis), target)
    return s


register_generic_schedule("gpu", schedule_gpu_generic)
