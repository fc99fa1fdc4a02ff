"""CUDA nn.dense / nn.matmul (2-d) / nn.batch_matmul: shared-memory tiles, register blocking.

dense_tiled.cuda (plevel 15; the ops' own computes, so the results are the generic ones):

    for (by, bx) in blockIdx:                      # a TILE x TILE tile of the output (per batch)
      for (ty, tx) in threadIdx (THREADS x THREADS):
        acc[R, R] = 0                              # local: R = TILE / THREADS rows and columns
        for ko in K / KT:
          A_sh[TILE, KT] = A[tile rows, ko*KT ...]   # shared, loaded cooperatively by all
          B_sh[TILE, KT] = B[tile cols, ko*KT ...]     threads, then __syncthreads()
          for ki, i, j: acc[i, j] += A_sh[ty*R + i, ki] * B_sh[tx*R + j, ki]
        out[...] = epilogue(acc)                   # a fused bias add / relu runs here

Bound inference relaxes the thread loops for the shared stages, so one copy per block covers
what every thread reads; cuda_lower inserts the barriers. Used from 32 rows and columns up:
smaller products run faster on the generic schedule (one block per output).
"""
from .. import te
from .base import register_strategy
from .common import all_static, inline_except, last_reduction, static_shape
from .cuda_generic import schedule_gpu_generic

TILE = 32           # output tile per block (rows and columns)
THREADS = 8         # threads per block along each tile side: 64 threads, 4 x 4 outputs each
KT = 8              # reduction slice staged in shared memory per step
MIN_SIDE = 32       # rows and columns from which the tiled schedule pays off


def _axis(name):
    return te.thread_axis(name)


def schedule_dense_tiled(attrs, outs, target):
    """The tiled schedule above for the (single) output of a fused contraction; anything else
    (several outputs) falls back to the generic GPU schedule."""
    s = te.create_schedule(outs)
    red = last_reduction(s)
    if red is None or len(outs) != 1 or len(red.reduce_axis) != 1:
        return schedule_gpu_generic(attrs, outs, target)
    shape = static_shape(red.output(0))
    out = outs[0].op
    if static_shape(outs[0]) != shape:
        return schedule_gpu_generic(attrs, outs, target)
    inline_except(s)
    if out is red:                               # accumulate in registers, copy out after
        acc = s.cache_write(red.output(0), "local").op
    else:
        acc = red
        s[acc].set_scope("local")
    so = s[out]
    *batch, i, j = out.axis
    io, ii = so.split(i, factor=TILE)
    jo, ji = so.split(j, factor=TILE)
    ty, ri = so.split(ii, nparts=THREADS)
    tx, rj = so.split(ji, nparts=THREADS)
    so.reorder(*batch, io, jo, ty, tx, ri, rj)
    if batch:
        so.bind(so.fuse(*batch) if len(batch) > 1 else batch[0], _axis("blockIdx.z"))
    so.bind(io, _axis("blockIdx.y"))
    so.bind(jo, _axis("blockIdx.x"))
    so.bind(ty, _axis("threadIdx.y"))
    so.bind(tx, _axis("threadIdx.x"))
    sa = s[acc]
    sa.compute_at(so, tx)
    (k,) = acc.reduce_axis
    ko, ki = sa.split(k, factor=KT)
    *_, ci, cj = acc.axis
    sa.reorder(ko, ki, ci, cj)
    sa.unroll(ci)
    sa.unroll(cj)
    for tensor in acc.input_tensors():
        cached = s.cache_read(tensor, "shared", [acc])
        sc = s[cached]
        sc.compute_at(sa, ko)
        fused = sc.fuse(*cached.op.axis)
        rest, lx = sc.split(fused, factor=THREADS)
        _, ly = sc.split(rest, factor=THREADS)
        sc.bind(ly, _axis("threadIdx.y"))
        sc.bind(lx, _axis("threadIdx.x"))
    return s


def _large(attrs, inputs, out_type):
    """Static shapes and at least MIN_SIDE rows and columns of output."""
    if not all_static(*inputs):
        return False
    rows, cols = out_type.shape[-2:]
    return int(rows) >= MIN_SIDE and int(cols) >= MIN_SIDE


def _register(op_name, rank):
    def fstrategy(strategy, attrs, inputs, out_type, target):
        from ..op.registry import get as get_op
        if len(inputs[0].shape) != rank:
            return
        strategy.add_implementation(get_op(op_name).compute, schedule_dense_tiled,
                                    f"{op_name.split('.')[-1]}_tiled.cuda", 15, condition=_large)
    fstrategy.__name__ = f"{op_name.replace('.', '_')}_strategy_cuda"
    register_strategy(op_name, "cuda", fstrategy)


_register("nn.dense", 2)
_register("nn.matmul", 2)
_register("nn.batch_matmul", 3)
