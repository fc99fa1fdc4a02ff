"""Generic schedules: correct for every op on every CPU target, and reasonably fast.

`schedule_default(attrs, outs, target)`:
  1. inline every intermediate stage that is a single-output non-reduction compute
     (fused elementwise/broadcast/injective producers disappear into their consumer);
  2. for every stage left at the root: fuse its outer spatial axes and run them in parallel,
     and vectorize the innermost axis when a lane count divides it (reductions keep their
     reduce loops innermost and are only parallelized).

    for fused_outer in parallel(prod(shape[:-1]) * shape[-1] / lanes):
        for lane in vectorized(lanes):
            out[...] = f(inputs[...])

Every op gets this as its "<kind>.generic" implementation with plevel 10 (see base.py), except
on targets with a key that registered its own generic schedule (the GPU's, cuda_generic.py).
"""
from .. import te
from ..op.pattern import OpPattern
from ..tir import expr as E
from ..target import as_target
from ..op.te_search import NO_INLINE
from .common import inline_except

VECTOR_LANES = (16, 8, 4)
# Below these sizes one thread is faster. The thread pool's caller never waits for a sleeping
# worker (codegen/llvm_thread_pool.py), so a parallel loop costs at most a wake-up signal
# (a few us) over running serially; with a worker awake (the kernels of a model run back to
# back) a 256 KB copy or a 400K multiply-add batch-1 dense already runs ~2x faster on two
# cores (benchmarks/README.md, "thresholds"; under GNU OpenMP they were 4x higher).
PARALLEL_MIN_WORK = 1 << 18   # reductions: output iterations times reduce extent
PARALLEL_MIN_ELEMS = 1 << 16  # injective stages: output elements (memory-bound, cheap each)


def const_extent(iv):
    """The constant extent of an IterVar, or None when symbolic."""
    ext = iv.dom.extent
    return int(ext.value) if isinstance(ext, E.IntImm) else None


def stage_work(op) -> int:
    """Estimated iterations of a stage (symbolic extents count as large): what the parallel
    thresholds above compare against."""
    total = 1
    for iv in list(op.axis) + list(getattr(op, "reduce_axis", [])):
        ext = const_extent(iv)
        total *= ext if ext is not None else 1024
    return total


def inline_injective(s) -> None:
    """compute_inline every intermediate single-output non-reduction compute stage."""
    inline_except(s)


def vectorize_innermost(stage, axis) -> tuple:
    """Vectorize `axis` (a stage's innermost) by the widest of VECTOR_LANES dividing its
    constant extent: whole, or split with the inner part vectorized. Returns (the loop axes
    left outside the vector, outermost first; the vectorized axis): ([], axis) whole,
    ([outer part], inner part) split, ([axis], None) when no width divides it (a symbolic or
    odd extent stays a scalar loop)."""
    ext = const_extent(axis)
    lanes = next((n for n in VECTOR_LANES if ext is not None and ext % n == 0), None)
    if lanes is None:
        return [axis], None
    if ext == lanes:
        stage.vectorize(axis)
        return [], axis
    outer, inner = stage.split(axis, factor=lanes)
    stage.vectorize(inner)
    return [outer], inner


def schedule_spatial(stage, vectorize: bool = True, parallel: bool = True, serial_inner: int = 0) -> None:
    """Parallelize the fused outer axes of a root stage and vectorize its innermost axis;
    the last `serial_inner` of the outer axes stay serial loops inside the parallel one (a
    transpose-like stage then decomposes its parallel index once per row, not per vector)."""
    axes = list(stage.op.axis)
    if not axes:
        return
    outer = axes[:-1]
    if vectorize and not stage.op.is_reduction and not stage.op.attrs.get(NO_INLINE):
        outer += vectorize_innermost(stage, axes[-1])[0]
    else:
        outer.append(axes[-1])
    limit = PARALLEL_MIN_WORK if stage.op.is_reduction else PARALLEL_MIN_ELEMS
    if parallel and outer and stage_work(stage.op) >= limit:
        outer = outer[:max(1, len(outer) - serial_inner)]
        fused = stage.fuse(*outer) if len(outer) > 1 else outer[0]
        stage.parallel(fused)


def schedule_default(attrs, outs, target):
    """Inline injective intermediates; parallelize and vectorize the remaining root stages."""
    s = te.create_schedule(outs)
    inline_injective(s)
    for stage in s.stages:
        if isinstance(stage.op, te.ComputeOp) and stage.attach_type == "root":
            schedule_spatial(stage)
    return s


_KIND = {OpPattern.ELEMWISE: "injective", OpPattern.BROADCAST: "injective",
         OpPattern.INJECTIVE: "injective", OpPattern.COMM_REDUCE: "reduce"}


# target key -> the schedule every op gets there instead of schedule_default (TVM's
# generic_func registrations of schedule_injective / schedule_reduce per key, e.g. "gpu")
_GENERIC_SCHEDULES = {}


def register_generic_schedule(target_key: str, schedule) -> None:
    """Make `schedule(attrs, outs, target)` every op's generic schedule on targets keyed
    `target_key` (strategy/cuda_generic.py registers the GPU one under "gpu")."""
    _GENERIC_SCHEDULES[target_key] = schedule


def generic_schedule(target):
    """The generic schedule of a target (its first key with one registered, else the CPU's)."""
    for key in (as_target(target).keys if target is not None else ()):
        if key in _GENERIC_SCHEDULES:
            return _GENERIC_SCHEDULES[key]
    return schedule_default


def generic_implementation(op, target=None):
    """(compute, schedule, name, plevel) of an op's generic implementation, or None: the op's
    compute with the generic schedule of the first of the target's keys that has one (named
    "<kind>.<key>"), else schedule_default ("<kind>.generic")."""
    if op.compute is None:
        return None
    kind = _KIND.get(op.pattern, op.name.split(".")[-1])
    schedule = getattr(op, "schedule", None)   # relay.op.register_schedule / register_*_schedule
    if isinstance(schedule, str):                # a generic kind: "injective", "broadcast", "reduce"
        kind, schedule = schedule, None
    if callable(schedule):
        return op.compute, schedule, f"{kind}.generic", 10
    for key in (target.keys if target is not None else ()):
        if key in _GENERIC_SCHEDULES:
            return op.compute, _GENERIC_SCHEDULES[key], f"{kind}.{key}", 10
    return op.compute, schedule_default, f"{kind}.generic", 10
