"""x86 nn.dense and nn.batch_matmul: packed weights, register-blocked tiles, parallel tiles.

dense_pack.x86 (plevel 15) packs the weight (N, K) into Wp[N/bn, K, bn] so that the bn
output columns of one tile are contiguous for every k, then computes

    for (i.outer, j.outer) in parallel:                 # one bm x bn tile of the output
        acc[bm, bn] = 0                                  # registers after unrolling
        for k: for i in unrolled(bm): for j in vectorized(bn): acc[i, j] += A[i, k] * Wp[., k, j]
        for i: for j in vectorized(bn): out[i, j] = epilogue(acc[i, j])

(bn = one SIMD register of floats, bm = 8: eight accumulator registers). The packing runs
on every call (the weight is a kernel input), which costs as much as the product itself for a
few rows: dense_dot.x86 (plevel 17, 2..DOT_MAX_ROWS rows) reads the weight unpacked, with
SIMD-wide partial sums along K for a 4 x 4 tile of outputs (16 vector accumulators, 8 loads
per 16 FMAs), then one horizontal sum per output, where the fused epilogue runs too. dense_batch1.x86
(plevel 20, when the data has one row) splits K into SIMD-wide partial sums per output
column and parallelizes over columns: no packing, the weight is read once. batch_matmul
uses the packed tile per batch. Computes match the generic ones: inputs cast to the
accumulation dtype, products summed, cast to the result dtype.

Each implementation is an autotvm template (task name = implementation name) whose knobs
default to the values above: dense_pack / batch_matmul tile_y (bm), tile_x (bn, also the
packing block), tile_k (reduction steps unrolled together, 1 = none); dense_dot tile_y,
tile_x (the output tile) and order (which tile axis is outer); dense_batch1 tile_x (columns
per parallel task).
"""
from .. import te
from ..autotvm.task.topi_integration import register_topi_compute, register_topi_schedule
from ..op.nn import _te as T
from ..tir import expr as E
from .base import register_strategy
from .x86_common import (all_static, dims_of, divisor_at_most, factors_up_to, finish_others,
                         find_tagged, inline_except, lanes, nonempty, option_knob, parallel_if_large,
                         place_anchor, prod, split_knob, static_product, static_shape)

DENSE_TAG = "dense_pack.x86"
DENSE1_TAG = "dense_batch1.x86"
DOT_TAG = "dense_dot.x86"
BMM_TAG = "batch_matmul.x86"
PACK_TAG = "pack.x86"
ROWS = 8          # rows of a register tile
DOT_TILE = 4      # dense_dot: outputs per tile side (4 x 4 vector accumulators)
DOT_MAX_ROWS = 256  # above this the packing cost is amortized and dense_pack is faster


def _zero(dtype):
    return E.const(0, dtype)


def _packed(w, n_ext, k_ext, bn, load, name):
    """Wp[..., no, k, ni] = load(..., no*bn + ni, k), zero past the last column."""
    def f(*idx):
        *lead, no, k, ni = idx
        j = no * bn + ni
        value = load(tuple(lead), j, k)
        if n_ext % bn == 0:
            return value
        return te.if_then_else(j < n_ext, value, _zero(value.dtype))
    lead = list(w.shape[:-2]) if w.ndim == 3 else []
    return te.compute(lead + [(n_ext + bn - 1) // bn, k_ext, bn], f, name=name, tag=PACK_TAG)


# --- nn.dense, packed ------------------------------------------------------------------------
def _pack_knobs(cfg, rows, cols: int, k_ext: int, acc: str) -> int:
    """tile_y / tile_x / tile_k of a packed product (no tile_y for symbolic rows: the schedule
    then uses ROWS); returns bn (the packing block)."""
    if isinstance(rows, int):
        split_knob(cfg, "tile_y", rows, factors_up_to(rows, 16),
                   divisor_at_most(rows, ROWS, floor=4) if rows >= 4 else rows)
    width = lanes(acc)
    bn = split_knob(cfg, "tile_x", cols, (width // 2, width, 2 * width), width)
    split_knob(cfg, "tile_k", k_ext, factors_up_to(k_ext, 8), 1)
    return bn


@register_topi_compute(DENSE_TAG)
def dense_pack_compute(cfg, attrs, inputs, out_type):
    data, weight = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    n_ext, k_ext = static_shape(weight)
    rows = dims_of(data)[-2] if data.ndim >= 2 else 1
    bn = _pack_knobs(cfg, rows, n_ext, k_ext, acc)
    wp = _packed(weight, n_ext, k_ext, bn, lambda lead, j, k: weight[j, k].astype(acc), "weight_pack")
    k = te.reduce_axis((0, k_ext), "k")
    lead = list(data.shape[:-1])

    def f(*idx):
        *rows, j = idx
        return te.sum(data[tuple(rows) + (k,)].astype(acc) * wp[j // bn, k, j % bn], axis=k)
    out = te.compute(lead + [n_ext], f, name="dense", tag=DENSE_TAG)
    return [T.cast_to(out, dtype, DENSE_TAG + ",cast", "dense_cast")]


def _packed_schedule(cfg, attrs, outs, anchor_tag):
    """The schedule of a packed-weight product whose reduction stage carries `anchor_tag`:
    keep the weight packing as its own stage, tile rows x columns of the (fused) output."""
    s = te.create_schedule(outs)
    anchor = find_tagged(s, anchor_tag)
    pack = find_tagged(s, PACK_TAG)
    shape = dims_of(anchor.output(0))          # leading (row) dims may be symbolic
    rows_cols = static_product(shape)
    work = None if rows_cols is None else rows_cols * int(anchor.reduce_axis[0].dom.extent.value)
    inline_except(s, keep=[pack])
    O, R, others = place_anchor(s, outs, anchor, shape)
    _tile_rows_cols(cfg, s, O, R, shape, work)
    _schedule_pack(s, pack)
    finish_others(s, others)
    return s


@register_topi_schedule(DENSE_TAG)
def dense_pack_schedule(cfg, attrs, outs, target):
    return _packed_schedule(cfg, attrs, outs, DENSE_TAG)


def _tile_rows_cols(cfg, s, O, R, shape, work):
    """Tile O's last two axes (rows, columns) into tile_y x tile_x register tiles, parallel
    over the outer tiles (and any leading axes); R accumulates one tile at O's tile loop,
    tile_k reduction steps unrolled together."""
    so = s[O]
    axes = list(O.axis)
    *lead, i, j = axes
    bn = min(cfg["tile_x"].size[-1], shape[-1])
    bm = cfg["tile_y"].size[-1] if "tile_y" in cfg else ROWS   # symbolic rows: no knob, full
                                                                # tiles plus a guarded last one
    io, ii = so.split(i, factor=bm)
    jo, ji = so.split(j, factor=bn)
    so.reorder(*lead, io, jo, ii, ji)
    fused = so.fuse(*lead, io, jo)
    parallel_if_large(so, fused, work)
    so.vectorize(ji)
    sr = s[R]
    sr.compute_at(so, fused)
    *rlead, ic, jc = R.axis
    k_axes = list(R.reduce_axis)
    kf = cfg["tile_k"].size[-1]
    if kf > 1:
        ko, ki = sr.split(k_axes[-1], factor=kf)
        k_axes[-1:] = [ko, ki]
    sr.reorder(*k_axes, *rlead, ic, jc)
    if kf > 1:
        sr.unroll(k_axes[-1])
    sr.unroll(ic)
    sr.vectorize(jc)


def _schedule_pack(s, pack):
    """Packing runs once per call at the root: serial (one parallel region per kernel keeps a
    2-thread pool from waiting on a busy core twice), innermost axis vectorized."""
    if pack is None or s[pack].attach_type != "root":
        return
    s[pack].vectorize(pack.axis[-1])


# --- nn.dense, one row -------------------------------------------------------------------------
@register_topi_compute(DENSE1_TAG)
def dense_batch1_compute(cfg, attrs, inputs, out_type):
    data, weight = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    n_ext, k_ext = static_shape(weight)
    split_knob(cfg, "tile_x", n_ext, (4, 8, 16, 32, 64), 16)
    kb = min(lanes(acc), k_ext)
    ko = te.reduce_axis((0, (k_ext + kb - 1) // kb), "ko")
    lead = list(data.shape[:-1])

    def part(*idx):
        *rows, j, ki = idx
        k = ko.var * kb + ki
        prod_ = data[tuple(rows) + (k,)].astype(acc) * weight[j, k].astype(acc)
        cond = None if k_ext % kb == 0 else k < k_ext
        return te.sum(prod_, axis=ko, where=cond)
    partial = te.compute(lead + [n_ext, kb], part, name="dense_partial", tag=DENSE1_TAG + ",partial")
    ki = te.reduce_axis((0, kb), "ki")
    out = te.compute(lead + [n_ext], lambda *idx: te.sum(partial[idx + (ki,)], axis=ki),
                     name="dense", tag=DENSE1_TAG)
    return [T.cast_to(out, dtype, DENSE1_TAG + ",cast", "dense_cast")]


@register_topi_schedule(DENSE1_TAG)
def dense_batch1_schedule(cfg, attrs, outs, target):
    s = te.create_schedule(outs)
    anchor = find_tagged(s, DENSE1_TAG)
    partial = find_tagged(s, DENSE1_TAG + ",partial")
    shape = static_shape(anchor.output(0))
    inline_except(s)
    out_ops = [t.op for t in outs]
    if len(outs) == 1 and static_shape(outs[0]) == shape:
        O, others = out_ops[0], []
    else:
        O, others = anchor, [op for op in out_ops if op is not anchor]
    so = s[O]
    fused = so.fuse(*O.axis) if len(O.axis) > 1 else O.axis[0]
    jo, ji = so.split(fused, factor=cfg["tile_x"].size[-1])
    parallel_if_large(so, jo, prod(shape) * int(partial.reduce_axis[0].dom.extent.value) * 16)
    if O is not anchor:
        s[anchor].compute_at(so, ji)
        s[partial].compute_at(s[anchor], anchor.axis[-1])
    else:
        s[partial].compute_at(so, ji)
    s[partial].reorder(partial.reduce_axis[0], partial.axis[-1])   # ko outside, lanes inside
    s[partial].vectorize(partial.axis[-1])
    finish_others(s, others)
    return s


# --- nn.dense, a few rows: unpacked weight ------------------------------------------------------
def _tree_sum(terms):
    """Pairwise sum (a balanced tree: independent adds, short dependency chain)."""
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    return terms[0]


@register_topi_compute(DOT_TAG)
def dense_dot_compute(cfg, attrs, inputs, out_type):
    """partial[..., j, ki] = sum_ko A[..., ko*kb + ki] * W[j, ko*kb + ki], then an injective
    dense[..., j] = sum of the kb lanes written out as an add tree: with no reduction after
    the partial sums, the fused epilogue inlines into the same stage (no temporary)."""
    data, weight = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    n_ext, k_ext = static_shape(weight)
    rows = dims_of(data)[-2] if data.ndim >= 2 else 1
    split_knob(cfg, "tile_y", rows, factors_up_to(rows, 8), divisor_at_most(rows, DOT_TILE))
    split_knob(cfg, "tile_x", n_ext, factors_up_to(n_ext, 8), divisor_at_most(n_ext, DOT_TILE))
    option_knob(cfg, "order", ("rows_outer",), "cols_outer")
    kb = min(lanes(acc), k_ext)
    ko = te.reduce_axis((0, (k_ext + kb - 1) // kb), "ko")
    lead = list(data.shape[:-1])

    def part(*idx):
        *rows, j, ki = idx
        k = ko.var * kb + ki
        prod_ = data[tuple(rows) + (k,)].astype(acc) * weight[j, k].astype(acc)
        return te.sum(prod_, axis=ko, where=None if k_ext % kb == 0 else k < k_ext)
    partial = te.compute(lead + [n_ext, kb], part, name="dense_partial", tag=DOT_TAG + ",partial")
    out = te.compute(lead + [n_ext], lambda *idx: _tree_sum([partial[idx + (t,)] for t in range(kb)]).astype(dtype),
                     name="dense", tag=DOT_TAG)
    return [out]


@register_topi_schedule(DOT_TAG)
def dense_dot_schedule(cfg, attrs, outs, target):
    """for (j.outer, i.outer) in parallel:           # a 4 x 4 tile of outputs
           partial[4, 4, kb] = 0                      # 16 SIMD accumulators
           for ko: for i, j in unrolled: for ki in vectorized: partial += A[i, k] * W[j, k]
           for i, j: out[i, j] = epilogue(sum of partial[i, j, :])
    The weight tile (4 rows of K) stays in L1 while the row tiles stream past it."""
    s = te.create_schedule(outs)
    dense = find_tagged(s, DOT_TAG)
    partial = find_tagged(s, DOT_TAG + ",partial")
    shape = static_shape(dense.output(0))
    single = len(outs) == 1 and static_shape(outs[0]) == shape
    inline_except(s, keep=[] if single else [dense])
    O = outs[0].op if single else dense
    so = s[O]
    *lead, i, j = O.axis
    io, ii = so.split(i, factor=cfg["tile_y"].size[-1])
    jo, ji = so.split(j, factor=cfg["tile_x"].size[-1])
    outer = (jo, io) if cfg["order"].val == "cols_outer" else (io, jo)
    so.reorder(*lead, *outer, ii, ji)
    fused = so.fuse(*lead, *outer)
    parallel_if_large(so, fused, prod(shape) * int(partial.reduce_axis[0].dom.extent.value) * 16)
    sp = s[partial]
    sp.compute_at(so, fused)
    *plead, pi, pj, pk = partial.axis
    sp.reorder(*partial.reduce_axis, *plead, pi, pj, pk)
    sp.unroll(pi)
    sp.unroll(pj)
    sp.vectorize(pk)
    finish_others(s, [t.op for t in outs if t.op is not O])
    return s


# --- nn.batch_matmul ---------------------------------------------------------------------------
@register_topi_compute(BMM_TAG)
def batch_matmul_compute(cfg, attrs, inputs, out_type):
    a, b = inputs
    dtype = T.out_dtype(out_type)
    acc = T.acc_dtype(dtype)
    (ba, a1, a2), (bb, b1, b2) = static_shape(a), static_shape(b)
    m, k_ext = (a2, a1) if attrs.transpose_a else (a1, a2)
    n = b1 if attrs.transpose_b else b2
    batch = bb if ba == 1 else ba
    bn = _pack_knobs(cfg, m, n, k_ext, acc)
    if attrs.transpose_b:
        load_b = lambda lead, j, k: b[lead[0], j, k].astype(acc)  # noqa: E731
    else:
        load_b = lambda lead, j, k: b[lead[0], k, j].astype(acc)  # noqa: E731
    bp = _packed(b, n, k_ext, bn, load_b, "b_pack")
    k = te.reduce_axis((0, k_ext), "k")
    ia = (lambda x: 0) if ba == 1 else (lambda x: x)  # noqa: E731
    ib = (lambda x: 0) if bb == 1 else (lambda x: x)  # noqa: E731

    def f(bi, i, j):
        av = a[ia(bi), k, i] if attrs.transpose_a else a[ia(bi), i, k]
        return te.sum(av.astype(acc) * bp[ib(bi), j // bn, k, j % bn], axis=k)
    out = te.compute((batch, m, n), f, name="batch_matmul", tag=BMM_TAG)
    return [T.cast_to(out, dtype, BMM_TAG + ",cast", "batch_matmul_cast")]


@register_topi_schedule(BMM_TAG)
def batch_matmul_schedule(cfg, attrs, outs, target):
    return _packed_schedule(cfg, attrs, outs, BMM_TAG)


# --- registration ----------------------------------------------------------------------------
def _one_row(attrs, inputs, out_type):
    return nonempty(attrs, inputs, out_type) and prod(static_shape(inputs[0])[:-1]) == 1


def _few_rows(attrs, inputs, out_type):
    """2..DOT_MAX_ROWS rows and whole 4 x 4 tiles (other tile shapes measured slower than
    dense_pack: LLVM re-vectorizes small unrolled bodies badly)."""
    rows, cols = prod(static_shape(inputs[0])[:-1]), static_shape(inputs[1])[0]
    return (nonempty(attrs, inputs, out_type) and 2 <= rows <= DOT_MAX_ROWS and rows % DOT_TILE == 0 and cols % DOT_TILE == 0
            and cols >= 4 * DOT_TILE)


@register_strategy("nn.dense", "x86")
def dense_strategy_x86(strategy, attrs, inputs, out_type, target):
    data, weight = inputs
    if not all_static(weight) or not isinstance(dims_of(data)[-1], int):
        return
    # rows (a batch) may be symbolic: one packed kernel serves every batch size
    strategy.add_implementation(dense_pack_compute, dense_pack_schedule, DENSE_TAG, 15,
                                condition=nonempty)
    if not all_static(data):
        return
    strategy.add_implementation(dense_dot_compute, dense_dot_schedule, DOT_TAG, 17,
                                condition=_few_rows)
    strategy.add_implementation(dense_batch1_compute, dense_batch1_schedule, DENSE1_TAG, 20,
                                condition=_one_row)


@register_strategy("nn.batch_matmul", "x86")
def batch_matmul_strategy_x86(strategy, attrs, inputs, out_type, target):
    if not all_static(*inputs):
        return
    strategy.add_implementation(batch_matmul_compute, batch_matmul_schedule, BMM_TAG, 15)
