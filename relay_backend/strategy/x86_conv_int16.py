"""x86 nn.conv2d of 8/16-bit integers accumulated in int32 (what qnn.conv2d canonicalizes to:
int16 operands centred on their zero points), as pair products for vpmaddwd.

conv2d_int16_pairs.x86 (plevel 18, above conv2d_nchw.x86's 15; NCHW / OIHW, groups 1, static
shapes, int8 / uint8 / int16 operands, int32 result, AVX2 host) reduces each output over
contiguous runs of 16-bit values:

    wcol[o, kh*RUN + j] = weight[o, c, kh, kw]        j = kw*C + c, RUN = KW*C   (root stage)
    dilation_w 1 and RUN >= RUN_MIN: one run per kernel row, read in place from
        rows[n, yy, xx*C + c] = pad(data)[n, c, yy, xx]           (channel-last, int16, root)
        run(kh)[x, j] = rows[n, y*sh + kh*dh, x*sw*C + j]
    otherwise one run of all KH*RUN taps per pixel, gathered once into a column matrix
        col[n, y, x, kh*RUN + j] = pad(data)[n, c, y*sh + kh*dh, x*sw + kw*dw]
    for (n, y) in parallel:                                         # one output row per task
        for o:
            acc[x] = 0 for every x
            for each run (kernel row), for each chunk of it:         # chunk weights: registers
                for x:
                    for j in vectorized(32 lanes) over the chunk:
                        acc[x] += int32(run[x, j]) * int32(wcol[o, j])
            for x in vectorized: out[n, o, y, x] = epilogue(acc[x])  # bias / requantize, fused

The inner reduction is one dot product of int16 runs, so LLVM's x86 partial-reduction rewrite
turns the widened multiply-add into vpmaddwd (two adjacent 16-bit products summed into one int32
lane, exact) on 16 x 16-bit registers; the vectorization width is pinned to 32 lanes (two
vpmaddwd per step): its cost model would pick 8 int32 lanes, which halves the registers to
xmm. Nothing in the loop nest is AVX2-specific, so the kernel is correct on any target; it is
only *selected* where the host has AVX2 (x86_common.vector_bytes() >= 32), and
conv2d_nchw.x86 (int32 broadcast-multiply) remains the fallback.

The kernel row and the chunk (at most CHUNK_MAX values: 12 ymm) sit *outside* the loop over
the row's pixels: the chunk's weights are loop-invariant there, LLVM keeps them in registers,
and each vpmaddwd loads only its input run (one load per vpmaddwd, instead of a second one for
a weight spilled to the stack when the whole KH*KW*C reduction was innermost); the price is a
horizontal add per pixel and chunk, so a reduction that is one piece (one kernel row of one
chunk, or a short column run) keeps the plain order, reduced innermost into a register. That
took the 1x64x56x56 3x3 convolution of bench_qnn's QLinearConv from about 4.4 to 2.8 ms on one
core (benchmarks/README.md has the whole node against onnxruntime). A register tile reusing a loaded *input* vector
across output channels would make the widened operands multi-use, which the rewrite does not
accept. The column matrix is bounded by COL_BYTES_MAX; larger calls keep conv2d_nchw.x86.
"""
from .. import te, tir
from ..op.nn import _te as T
from ..tir import expr as E
from .base import register_strategy
from .common import all_static, inline_except, prod, static_shape
from .x86_common import finish_others, parallel_if_large, place_anchor, vector_bytes

TAG = "conv2d_int16_pairs.x86"
PLEVEL = 18
VECTOR_WIDTH = 32                  # int32 lanes of the reduction: 2 x ymm vpmaddwd per step
CHUNK_MAX = 192                    # 16-bit values of a run chunk: 12 ymm of weights held in registers
RUN_MIN = 2 * VECTOR_WIDTH         # shorter runs: LLVM unrolls the single vector step and multiplies in int32
OPERAND_DTYPES = ("int8", "uint8", "int16")
COL_BYTES_MAX = 64 * 1024 * 1024


def conv2d_int16_pairs_compute(attrs, inputs, out_type):
    """The channel-last padded rows (or the column matrix), the flattened weight and the int32
    dot product over (kernel row, run) (module docstring)."""
    data, weight = inputs
    n, c, h, w = static_shape(data)
    o, _, kh, kw = static_shape(weight)
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    top, left, bottom, right = attrs.padding
    oh = T.window_out(h, kh, sh, dh, top, bottom)
    ow = T.window_out(w, kw, sw, dw, left, right)
    run = kw * c                       # the taps of one kernel row
    zero = E.const(0, "int16")

    def fpad(b, yy, xx, ch):           # channel-last, zero-padded, 16-bit: one transpose
        value = data[b, ch, yy - top, xx - left].astype("int16")
        if not any(attrs.padding):
            return value
        return te.if_then_else(tir.all(yy >= top, yy < top + h, xx >= left, xx < left + w), value, zero)
    hp, wp = h + top + bottom, w + left + right
    wcol = te.compute((o, kh * run), lambda oc, r: weight[oc, r % c, (r // c) // kw, (r // c) % kw].astype("int16"),
                      name="conv_wcol", tag=TAG + ",wcol")
    if dw == 1 and run >= RUN_MIN:     # a kernel row's taps are contiguous in the padded row: read in place
        rows = te.compute((n, hp, wp * c), lambda b, yy, j: fpad(b, yy, j // c, j % c), name="conv_pad_rows",
                          tag=TAG + ",pad", attrs={"channels": c})
        row_axis, run_axis = te.reduce_axis((0, kh), "kr"), te.reduce_axis((0, run), "r")
        acc = te.compute((n, o, oh, ow), lambda b, oc, y, x: te.sum(
            rows[b, y * sh + row_axis.var * dh, x * sw * c + run_axis.var].astype("int32")
            * wcol[oc, row_axis.var * run + run_axis.var].astype("int32"), axis=[row_axis, run_axis]),
            name="conv2d", tag=TAG)
        return [T.cast_to(acc, T.out_dtype(out_type), TAG + ",cast", "conv2d_cast")]
    # dilated along the width, or short kernel rows: gather every window's taps into one run
    padded = te.compute((n, hp, wp, c), fpad, name="conv_pad_nhwc", tag=TAG + ",pad")
    col = te.compute((n, oh, ow, kh * run), lambda b, y, x, r: padded[
        b, y * sh + ((r // c) // kw) * dh, x * sw + ((r // c) % kw) * dw, r % c], name="conv_col", tag=TAG + ",col")
    tap_axis = te.reduce_axis((0, kh * run), "r")
    acc = te.compute((n, o, oh, ow), lambda b, oc, y, x: te.sum(
        col[b, y, x, tap_axis].astype("int32") * wcol[oc, tap_axis].astype("int32"), axis=[tap_axis]),
        name="conv2d", tag=TAG)
    return [T.cast_to(acc, T.out_dtype(out_type), TAG + ",cast", "conv2d_cast")]


def chunk_length(run: int) -> int:
    """The length of the run's chunks: the run itself when it fits CHUNK_MAX, else its largest
    divisor from RUN_MIN to CHUNK_MAX (whole chunks: no guard in the vectorized loop), else
    the whole run (its weights then stay in memory)."""
    if run <= CHUNK_MAX:
        return run
    fitting = [d for d in range(RUN_MIN, CHUNK_MAX + 1) if run % d == 0]
    return max(fitting) if fitting else run


def conv2d_int16_pairs_schedule(attrs, outs, target):
    """Rows in parallel; per output channel of a row, per kernel row and run chunk, each pixel's
    partial dot product vectorized at VECTOR_WIDTH lanes, then the fused epilogue vectorized over
    the row."""
    s = te.create_schedule(outs)
    acc = next(st.op for st in s.stages if getattr(st.op, "tag", "") == TAG)
    roots = [st.op for st in s.stages if getattr(st.op, "tag", "") in (TAG + ",pad", TAG + ",col", TAG + ",wcol")]
    shape = static_shape(acc.output(0))
    work = prod(shape) * prod(int(axis.dom.extent.value) for axis in acc.reduce_axis)
    inline_except(s, keep=roots)
    for stage_op in roots:
        st = s[stage_op]
        parallel_if_large(st, st.fuse(*stage_op.axis[:-1]) if len(stage_op.axis) > 2 else stage_op.axis[0],
                          prod(static_shape(stage_op.output(0))))
        channels = (getattr(stage_op, "attrs", None) or {}).get("channels")
        if channels:   # the padded rows: pixel by pixel, the bounds test invariant over a pixel's channels
            _, inner = st.split(stage_op.axis[-1], factor=channels)
            st.vectorize(inner)
        else:
            st.vectorize(stage_op.axis[-1])
    O, R, others = place_anchor(s, outs, acc, shape)
    so = s[O]
    b, oc, y, x = O.axis
    so.reorder(b, y, oc, x)
    row = so.fuse(b, y)
    parallel_if_large(so, row, work)
    so.vectorize(x)
    sr = s[R]
    sr.compute_at(so, oc)
    rb, roc, ry, rx = R.axis
    *kernel_row, run_axis = R.reduce_axis                      # (kernel row, run) or the column's taps
    run = int(run_axis.dom.extent.value)
    pieces = prod(int(axis.dom.extent.value) for axis in kernel_row) * (run // chunk_length(run))
    if pieces == 1:   # one piece: reduced innermost into a register, one store per pixel
        sr.reorder(rb, roc, ry, rx, run_axis)
        sr.vectorize(run_axis, VECTOR_WIDTH)
    else:             # a piece's weights stay in registers over the row's pixels
        chunk, lane = sr.split(run_axis, factor=chunk_length(run))
        sr.reorder(rb, roc, ry, *kernel_row, chunk, rx, lane)
        sr.vectorize(lane, VECTOR_WIDTH)
    finish_others(s, others)
    return s


def applies(attrs, inputs, out_type) -> bool:
    """NCHW / OIHW, groups 1, static non-empty shapes, 8/16-bit integer operands summed into
    int32, and (where the runs are gathered) a column matrix within COL_BYTES_MAX."""
    data, weight = inputs
    if attrs.data_layout != "NCHW" or attrs.kernel_layout != "OIHW" or attrs.out_layout not in ("", "NCHW"):
        return False
    if attrs.groups != 1 or not all_static(data, weight) or T.out_dtype(out_type) != "int32":
        return False
    if data.dtype not in OPERAND_DTYPES or weight.dtype not in OPERAND_DTYPES:
        return False
    if any(d == 0 for d in static_shape(data) + static_shape(weight)):
        return False
    n, _, h, w = static_shape(data)
    _, c, kh, kw = static_shape(weight)
    (sh, sw), (dh, dw), pads = attrs.strides, attrs.dilation, attrs.padding
    oh = T.window_out(h, kh, sh, dh, pads[0], pads[2])
    ow = T.window_out(w, kw, sw, dw, pads[1], pads[3])
    reads_rows_in_place = dw == 1 and kw * c >= RUN_MIN
    return reads_rows_in_place or n * oh * ow * kh * kw * c * 2 <= COL_BYTES_MAX


@register_strategy("nn.conv2d", "x86")
def conv2d_int16_pairs_strategy_x86(strategy, attrs, inputs, out_type, target):
    if vector_bytes() < 32 or not applies(attrs, inputs, out_type):
        return          # no AVX2 here: conv2d_nchw.x86 (or the generic schedule)
    strategy.add_implementation(conv2d_int16_pairs_compute, conv2d_int16_pairs_schedule, TAG, PLEVEL)
