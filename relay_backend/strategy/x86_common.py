"""Shared pieces of the x86 schedules: vector width of this CPU, tile-size choice, and the
"anchor + epilogue" placement every tiled x86 schedule uses.

A fused primitive function reaches a schedule as the outputs of the whole function, e.g.
relu(conv2d(x, w) + b). The x86 schedules all arrange it the same way:

    for tile in parallel(outer tiles of the final output O):
        anchor.local = the reduction over this tile (register-blocked, vectorized)
        for (inner tile axes, innermost vectorized): O[...] = epilogue(anchor.local[...])

`place_anchor` finds O, inlines the injective stages between the anchor and O, and (when the
anchor is itself the output) splits it into a local accumulator plus a copy-out stage with
cache_write, so every op file only says how to tile O and how to order the reduction.
"""
import functools

from ..autotvm.task.space import OtherOptionEntity, SplitEntity
from .common import (all_static, dims_of, divisor_at_most, find_reduction, find_tagged,  # noqa: F401
                     inline_except, last_reduction, nonempty, ops_of, prod, same_dims, static_product,
                     static_shape)
from .generic import PARALLEL_MIN_WORK, schedule_spatial

VECTOR_BYTES_FALLBACK = 16


@functools.lru_cache(maxsize=None)
def vector_bytes() -> int:
    """Bytes in one SIMD register of this CPU: 64 with AVX-512, 32 with AVX2, else 16."""
    try:
        from ..codegen import llvm_target
        if llvm_target.host_has_feature("avx512f"):
            return 64
        if llvm_target.host_has_feature("avx2") or llvm_target.host_has_feature("avx"):
            return 32
    except Exception:  # noqa: BLE001  (no LLVM target: a conservative width still works)
        pass
    return VECTOR_BYTES_FALLBACK


def vector_registers() -> int:
    """SIMD registers of this CPU: 32 with AVX-512, else 16."""
    return 32 if vector_bytes() >= 64 else 16


def register_tile(rows: int, col_blocks: int, block: int, registers: int = None) -> tuple:
    """(col_tile, row_tile) of a register-blocked product out[rows, col_blocks * block]: per
    reduction step, col_tile weight vectors are loaded and each of row_tile inputs is
    broadcast against them, accumulating row_tile x col_tile blocks in registers. Picks the
    tile with the most FMAs per load that fits the registers (accumulators + weight vectors
    + one broadcast) and divides both extents (a guarded tile costs more than a smaller one)."""
    vecs = max(1, -(-block // lanes("float32")))
    registers = registers or vector_registers()
    best = (None, 1, 1)
    for ct in (d for d in range(1, col_blocks + 1) if col_blocks % d == 0):
        for rt in (d for d in range(1, rows + 1) if rows % d == 0):
            if ct * vecs * (rt + 1) + 1 > registers:
                continue
            score = (ct * rt / (rt + ct * vecs), ct * rt)
            if best[0] is None or score > best[0]:
                best = (score, ct, rt)
    return best[1], best[2]


def lanes(dtype: str) -> int:
    """Elements of `dtype` per SIMD register (16 float32 on AVX-512)."""
    bits = int("".join(ch for ch in dtype if ch.isdigit()) or 32)
    return max(1, vector_bytes() * 8 // max(bits, 8))


# --- tuning knobs ------------------------------------------------------------------------------
# Every tunable x86 schedule declares its knobs with these two helpers: the space holds the
# candidates plus the hand-picked value, and the fallback config (no tuning record) is exactly
# the hand-picked value, so an untuned build is the schedule as it was before tuning existed.
def split_knob(cfg, name: str, length: int, inner_sizes, default: int) -> int:
    """Knob `name`: split an axis of `length` by one inner factor from `inner_sizes` (a
    non-divisor leaves a tail, which lowering guards); returns the chosen inner factor."""
    sizes = sorted({int(v) for v in inner_sizes if v >= 1} | {int(default)})
    cfg.define_split(name, length, num_outputs=2, policy="candidate", candidate=[[-1, v] for v in sizes])
    if cfg.is_fallback:
        cfg[name] = SplitEntity([-1, int(default)])
    return int(cfg[name].size[-1])


def option_knob(cfg, name: str, values, default):
    """Knob `name`: one of `values` (the default included); returns the chosen value."""
    cfg.define_knob(name, list(dict.fromkeys([*values, default])))
    if cfg.is_fallback:
        cfg[name] = OtherOptionEntity(default)
    return cfg[name].val


def factors_up_to(n: int, limit: int) -> list:
    """The divisors of n that are <= limit."""
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


def place_anchor(s, outs, anchor, result_shape):
    """Choose the stage that holds the tile loops for reduction `anchor`.

    Returns (O, R, others): O is the op whose loops are tiled (the single fused output when its
    shape is `result_shape`, else the anchor's result itself, made an output-like copy stage
    by cache_write), R the reduction op to compute_at O's tile loop, others the remaining
    root stages that get the generic spatial schedule.
    """
    out_ops = [t.op for t in outs]
    single = len(outs) == 1 and same_dims(dims_of(outs[0]), tuple(result_shape))
    if single and out_ops[0] is not anchor:
        return out_ops[0], anchor, []
    # the anchor is an output (or the outputs are several): accumulate in a local cache stage
    cached = s.cache_write(anchor.output(0), "local")
    others = [op for op in out_ops if op is not anchor]
    return anchor, cached.op, others


def finish_others(s, others) -> None:
    """Generic spatial schedule for root stages that are not part of the tiled anchor."""
    for op in others:
        stage = s[op]
        if stage.attach_type == "root":
            schedule_spatial(stage)


def parallel_if_large(stage, axis, work) -> None:
    """Mark `axis` parallel when the stage does enough work for threads to pay off (`work` None:
    a symbolic size, known only at run time, is assumed large)."""
    if work is None or work >= PARALLEL_MIN_WORK:
        stage.parallel(axis)
