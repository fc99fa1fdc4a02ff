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
# the register tile's cost model (register_tile): one x86 core since Haswell / Zen 2
FMA_PORTS = 2             # FMAs a core issues per cycle (Haswell and later, Zen 2 and later)
LOAD_PORTS = 2            # vector loads it issues per cycle
FMA_LATENCY = 5           # cycles from an FMA to the next FMA on its accumulator, with the load before it
L2_BYTES_PER_CYCLE = 32   # what a core streams from its L2 per cycle, sustained


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


def embedded_broadcast() -> bool:
    """Whether an FMA can take a broadcast scalar as its memory operand (AVX-512's {1to16})."""
    return vector_bytes() >= 64


def tile_registers(col_tile: int, row_tile: int, vecs: int) -> int:
    """Vector registers the register tile's unrolled reduction step may hold live: the budget
    register_tile fits to the vector_registers.

    The step is col_tile * vecs weight vectors times row_tile broadcast inputs, into
    col_tile * vecs * row_tile accumulators. Its two orders keep different operands live:
      rows outside column blocks (what the x86 schedules emit: one broadcast input times the
        weight vectors): the col_tile * vecs weights stay live, one broadcast at a time;
      column blocks outside rows (one block's vecs weights times every input): the row_tile
        broadcasts stay live, vecs weights at a time.
    LLVM's scheduler reorders the unrolled step (the two orders compile to nearly the same
    instructions), so a tile must fit either: it is counted by the larger of the two sets,
    accumulators + max(col_tile * vecs + 1, row_tile + vecs). With one column block both orders
    are the same loop: accumulators + the block's vecs weights + one broadcast; with one weight
    vector that broadcast feeds a single FMA, so it is the FMA's memory operand with AVX-512's
    embedded broadcast (no register). Counting only the emitted order's set admitted AVX-512
    tiles of 2 x 11 to 2 x 14, which ran slower (benchmarks/README.md, "One register model")."""
    weights = col_tile * vecs
    accumulators = weights * row_tile
    if weights == 1:
        return accumulators + 1 + (0 if embedded_broadcast() else 1)
    if col_tile == 1:
        return accumulators + vecs + 1
    return accumulators + max(weights + 1, row_tile + vecs)


def tile_cycles(col_tile: int, row_tile: int, vecs: int) -> float:
    """Cycles of one reduction step of the tile, the slowest of: its FMAs on FMA_PORTS; its loads
    (col_tile * vecs weight vectors, row_tile broadcasts) on LOAD_PORTS; the weight vectors
    streamed from L2 (a weight is reused only by the tile's row_tile inputs, and the weights of
    a layer rarely fit L1); and FMA_LATENCY, the time each accumulator's chain needs per step."""
    weights = col_tile * vecs
    return max(weights * row_tile / FMA_PORTS, (weights + row_tile) / LOAD_PORTS,
               weights * vector_bytes() / L2_BYTES_PER_CYCLE, FMA_LATENCY)


def register_tile(rows: int, col_blocks: int, block: int, registers: int = None) -> tuple:
    """(col_tile, row_tile) of a register-blocked product out[rows, col_blocks * block]: per
    reduction step, col_tile weight vectors are loaded and each of row_tile inputs is
    broadcast against them, accumulating row_tile x col_tile blocks in registers. Among the
    tiles that divide both extents (a guarded tile costs more than a smaller one) and whose
    tile_registers fit the registers, picks the most FMAs per cycle of tile_cycles. Ties go to
    the larger tile when it is bound by its FMAs (more accumulators hide the FMA latency
    better), to the smaller one when it is bound by its loads or the weight stream (more
    registers buy nothing there, and LLVM's scheduler fills them with hoisted loads), then to
    more rows (fewer weight loads)."""
    vecs = max(1, -(-block // lanes("float32")))
    registers = registers or vector_registers()
    best = (None, 1, 1)
    for ct in (d for d in range(1, col_blocks + 1) if col_blocks % d == 0):
        for rt in (d for d in range(1, rows + 1) if rows % d == 0):
            if tile_registers(ct, rt, vecs) > registers:
                continue
            fmas = ct * vecs * rt
            cycles = tile_cycles(ct, rt, vecs)
            score = (fmas / cycles, fmas if fmas / FMA_PORTS >= cycles else -fmas, rt)
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
