"""x86 nn.conv2d of 8/16-bit integers accumulated in int32 (what qnn.conv2d canonicalizes to:
int16 operands centred on their zero points), as pair products for vpmaddwd.

conv2d_int16_pairs.x86 (plevel 18, above conv2d_nchw.x86's 15; NCHW / OIHW, groups 1, static
shapes, int8 / uint8 / int16 operands, int32 result, AVX2 host) gathers every window once into
a column matrix of 16-bit values and reduces each output over one contiguous run:

    padded[n, yy, xx, c] = pad(data)[n, c, yy, xx]                     (channel-last, int16)
    col[n, y, x, r] = padded[n, y*sh + kh*dh, x*sw + kw*dw, c]        r = (kh*KW + kw)*C + c
    wcol[o, r]      = weight[o, c, kh, kw]                (root stages, rows in parallel)
    for (n, y) in parallel:                                             # one output row per task
        for o:
            for x:
                acc[x] = 0
                for r in vectorized(32 lanes):                          # KH*KW*C terms
                    acc[x] += int32(col[n, y, x, r]) * int32(wcol[o, r])
            for x in vectorized: out[n, o, y, x] = epilogue(acc[x])     # bias / requantize

The reduction is one dot product of int16 runs, so LLVM's x86 partial-reduction rewrite turns
the widened multiply-add into vpmaddwd (two adjacent 16-bit products summed into one int32
lane, exact) on 16 x 16-bit registers; the vectorization width is pinned to 32 lanes (two
vpmaddwd per step): its cost model would pick 8 int32 lanes, which halves the registers to
xmm. Nothing in the loop nest is AVX2-specific, so the kernel is correct on any target; it is
only *selected* where the host has AVX2 (x86_common.vector_bytes() >= 32), and
conv2d_nchw.x86 (int32 broadcast-multiply) remains the fallback.

A register tile reusing a loaded vector across outputs would make the widened operands
multi-use, which that rewrite does not accept, so outputs are reduced one at a time and the
column matrix (read from L2 once per output channel of the row) does the reuse. Its size is
bounded by COL_BYTES_MAX; larger calls keep conv2d_nchw.x86.
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
OPERAND_DTYPES = ("int8", "uint8", "int16")
COL_BYTES_MAX = 64 * 1024 * 1024


def conv2d_int16_pairs_compute(attrs, inputs, out_type):
    """The column matrix, the flattened weight and the int32 dot product (module docstring)."""
    data, weight = inputs
    n, c, h, w = static_shape(data)
    o, _, kh, kw = static_shape(weight)
    (sh, sw), (dh, dw) = attrs.strides, attrs.dilation
    top, left, bottom, right = attrs.padding
    oh = T.window_out(h, kh, sh, dh, top, bottom)
    ow = T.window_out(w, kw, sw, dw, left, right)
    taps = kh * kw * c
    zero = E.const(0, "int16")

    def fpad(b, yy, xx, ch):           # channel-last, zero-padded, 16-bit: one transpose
        value = data[b, ch, yy - top, xx - left].astype("int16")
        if not any(attrs.padding):
            return value
        return te.if_then_else(tir.all(yy >= top, yy < top + h, xx >= left, xx < left + w), value, zero)
    padded = te.compute((n, h + top + bottom, w + left + right, c), fpad, name="conv_pad_nhwc",
                        tag=TAG + ",pad")

    def fcol(b, y, x, r):              # runs of C channels: contiguous copies of the padded rows
        tap = r // c
        return padded[b, y * sh + (tap // kw) * dh, x * sw + (tap % kw) * dw, r % c]
    col = te.compute((n, oh, ow, taps), fcol, name="conv_col", tag=TAG + ",col")
    wcol = te.compute((o, taps), lambda oc, r: weight[oc, r % c, (r // c) // kw, (r // c) % kw].astype("int16"),
                      name="conv_wcol", tag=TAG + ",wcol")
    red = te.reduce_axis((0, taps), "r")
    acc = te.compute((n, o, oh, ow), lambda b, oc, y, x: te.sum(
        col[b, y, x, red].astype("int32") * wcol[oc, red].astype("int32"), axis=[red]),
        name="conv2d", tag=TAG)
    return [T.cast_to(acc, T.out_dtype(out_type), TAG + ",cast", "conv2d_cast")]


def conv2d_int16_pairs_schedule(attrs, outs, target):
    """Rows in parallel; per output channel of a row, each pixel's dot product vectorized at
    VECTOR_WIDTH lanes, then the fused epilogue vectorized over the row."""
    s = te.create_schedule(outs)
    acc = next(st.op for st in s.stages if getattr(st.op, "tag", "") == TAG)
    col, wcol, padded = (next(st.op for st in s.stages if getattr(st.op, "tag", "") == TAG + suffix)
                         for suffix in (",col", ",wcol", ",pad"))
    shape = static_shape(acc.output(0))
    work = prod(shape) * int(acc.reduce_axis[0].dom.extent.value)
    inline_except(s, keep=[col, wcol, padded])
    for stage_op in (padded, col, wcol):
        st = s[stage_op]
        parallel_if_large(st, st.fuse(*stage_op.axis[:-1]) if len(stage_op.axis) > 2 else stage_op.axis[0],
                          prod(static_shape(stage_op.output(0))))
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
    sr.reorder(rb, roc, ry, rx, *R.reduce_axis)
    sr.vectorize(R.reduce_axis[0], VECTOR_WIDTH)
    finish_others(s, others)
    return s


def applies(attrs, inputs, out_type) -> bool:
    """NCHW / OIHW, groups 1, static non-empty shapes, 8/16-bit integer operands summed into
    int32, and a column matrix within COL_BYTES_MAX."""
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
    return n * oh * ow * kh * kw * c * 2 <= COL_BYTES_MAX


@register_strategy("nn.conv2d", "x86")
def conv2d_int16_pairs_strategy_x86(strategy, attrs, inputs, out_type, target):
    if vector_bytes() < 32 or not applies(attrs, inputs, out_type):
        return          # no AVX2 here: conv2d_nchw.x86 (or the generic schedule)
    strategy.add_implementation(conv2d_int16_pairs_compute, conv2d_int16_pairs_schedule, TAG, PLEVEL)
