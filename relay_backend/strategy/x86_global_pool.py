"""x86 global pools over NCHW data (nn.global_avg_pool2d, nn.global_max_pool2d): columns first.

The row schedule (x86_rows.py, plevel 15) reduces each (n, c) plane straight into one scalar:
its output is one pixel wide, so nothing is vectorized and the plane's H*W additions form one
dependency chain (a 32x32 plane: 1024 dependent adds of ~4 cycles; the seed CNN's 16 planes
took 13 us, more than its convolution). global_pool_columns.x86 (plevel 20) reduces the rows
first, one vector lane per column, then the W column results:

    for (n, c) in parallel (when large):
        for w.outer:                                   # W in vectors of `lanes` columns
            col[w.inner] = identity                    # one register
            for ry: for w.inner in vectorized: col[w] = combine(col[w], data[n, c, ry, w])
        acc = identity
        for rx: acc = combine(acc, col[rx])
        out[n, c, 0, 0] = epilogue(acc)                # avg: / (H * W), then the fused ops

The average adds the same terms in another order (in float32 for float16 data, as the op's own
compute); the maximum combines with the same `te.max`, so NaN handling is the op's. Applies to
static NCHW shapes at least MIN_WIDTH wide with one fused output of the pool's shape;
channel-blocked NCHW{b}c pools already vectorize their block in the row schedule.
"""
from .. import te
from ..op.nn._te import acc_dtype, const, dims
from ..op.registry import get as get_op
from .base import register_strategy
from .common import inline_except, prod, same_dims, dims_of, static_shape
from .generic import VECTOR_LANES, schedule_default
from .x86_common import parallel_if_large

PLEVEL = 20
MIN_WIDTH = 4             # narrower planes: the row schedule's chain is short anyway
MAX_WHOLE_VECTOR = 16     # a width this short with no lane count dividing it: one vector
OPS = ("nn.global_avg_pool2d", "nn.global_max_pool2d")


def columns_compute(reduce_max: bool):
    """The op's result in two reductions: column sums (or maxima) over H, then over W."""
    op = get_op("nn.global_max_pool2d" if reduce_max else "nn.global_avg_pool2d")

    def compute(attrs, inputs, out_type):
        data, = inputs
        n, c, h, w = dims(data)
        ry, rx = te.reduce_axis((0, h), "ry"), te.reduce_axis((0, w), "rx")
        shape = [n, c, 1, 1]
        if reduce_max:
            cols = te.compute([n, c, w], lambda b, ch, x: te.max(data[b, ch, ry, x], axis=ry),
                              name="global_max_pool2d_columns")
            return [te.compute(shape, lambda b, ch, y, x: te.max(cols[b, ch, rx], axis=rx),
                               name="global_max_pool2d", tag=op.tag)]
        acc = acc_dtype(data.dtype)
        cols = te.compute([n, c, w], lambda b, ch, x: te.sum(data[b, ch, ry, x].astype(acc), axis=ry),
                          name="global_avg_pool2d_columns")
        total = te.compute(shape, lambda b, ch, y, x: te.sum(cols[b, ch, rx], axis=rx),
                           name="global_avg_pool2d_sum", tag=op.tag)
        area = const(1, acc) * (h * w)
        return [te.compute(shape, lambda *i: (total[i] / area).astype(data.dtype),
                           name="global_avg_pool2d", tag=op.tag)]
    return compute


def _vector_lanes(width: int):
    """Columns per vector: the largest lane count dividing `width`, else the whole short row."""
    lanes = next((k for k in VECTOR_LANES if width % k == 0), None)
    return width if lanes is None and width <= MAX_WHOLE_VECTOR else lanes


def schedule_columns(attrs, outs, target):
    """The loop nest of the module docstring; any other output arrangement gets the default."""
    s = te.create_schedule(outs)
    reductions = [st.op for st in s.stages if isinstance(st.op, te.ComputeOp) and st.op.is_reduction]
    if len(outs) != 1 or len(reductions) != 2:
        return schedule_default(attrs, outs, target)
    cols, total = reductions
    result_shape = static_shape(total.output(0))
    if not same_dims(dims_of(outs[0]), result_shape):
        return schedule_default(attrs, outs, target)
    inline_except(s)
    out = outs[0].op
    if out is total:         # the maximum is its own output: reduce into a local copy
        total = s.cache_write(total.output(0), "local").op
    so = s[out]
    plane = so.fuse(*out.axis[:2])
    height, width = static_shape(cols.input_tensors()[0])[2:]
    parallel_if_large(so, plane, prod(result_shape[:2]) * height * width)
    s[total].compute_at(so, plane)
    sc = s[cols]
    sc.compute_at(so, plane)
    column = sc.op.axis[2]
    lanes = _vector_lanes(width)
    if lanes is not None:
        if lanes != width:
            outer, column = sc.split(column, factor=lanes)
            sc.reorder(outer, *sc.op.reduce_axis, column)
        else:
            sc.reorder(*sc.op.reduce_axis, column)
        sc.vectorize(column)
    return s


def _applies(attrs, inputs) -> bool:
    shape = static_shape(inputs[0])
    return attrs.layout == "NCHW" and shape is not None and len(shape) == 4 \
        and shape[3] >= MIN_WIDTH and all(d > 0 for d in shape)


def _make_strategy(op_name: str):
    def fstrategy(strategy, attrs, inputs, out_type, target):
        if _applies(attrs, inputs):
            strategy.add_implementation(columns_compute(op_name == "nn.global_max_pool2d"), schedule_columns,
                                        "global_pool_columns.x86", PLEVEL)
    fstrategy.__name__ = f"{op_name.replace('.', '_')}_columns_strategy_x86"
    fstrategy.__doc__ = f"global_pool_columns.x86 for {op_name} where it applies (see the module doc)."
    return fstrategy


for _name in OPS:
    register_strategy(_name, "x86", _make_strategy(_name))
