"""Indexing ONNX ops (issue 20): GatherElements, GatherND, Scatter, ScatterElements, ScatterND,
OneHot, Trilu, ReverseSequence, NonZero, Compress, Unique (also along an axis, which TVM's 1-D
unique lacks: the slices are ranked into integer keys first).

ONNX puts an index tuple on the *last* axis of GatherND/ScatterND indices; Relay's gather_nd and
scatter_nd take it on the first, so those indices are transposed. Indices are used as given
otherwise: negative ones count from the end in both; an out-of-range run-time index, which
ONNX calls an error, follows Relay's rule (reads clamped, writes dropped: op/index_rules.py),
and a constant one is an error when the model is imported.
"""
import numpy as np

from .... import op as _op
from ..common import const
from ._registry import converter

# ONNX reduction attribute -> Relay's name for it
_REDUCTIONS = {"none": "update", "add": "add", "mul": "mul", "max": "max", "min": "min"}


def _reduction(ctx):
    name = ctx.attrs.get("reduction", "none")
    name = name.decode() if isinstance(name, bytes) else str(name)
    if name not in _REDUCTIONS:
        raise ctx.invalid(f"reduction={name!r} is not one of {sorted(_REDUCTIONS)}")
    return _REDUCTIONS[name]


def _tuple_axis_first(ctx, indices):
    """ONNX (..., M) indices as Relay's (M, ...)."""
    rank = ctx.ndim(indices)
    if rank < 1:
        raise ctx.invalid("indices must have rank >= 1 (the last dim holds the index tuples)")
    return _op.transpose(indices, [rank - 1] + list(range(rank - 1)))


@converter("GatherElements", min_version=11)
def gather_elements(ctx, inputs):
    data, indices = inputs
    return _op.gather(data, int(ctx.attrs.get("axis", 0)), indices)


@converter("GatherND", min_version=11)
def gather_nd(ctx, inputs):
    data, indices = inputs
    return _op.gather_nd(data, _tuple_axis_first(ctx, indices), batch_dims=int(ctx.attrs.get("batch_dims", 0)))


@converter("Scatter", min_version=9, max_version=10)
def scatter(ctx, inputs):
    data, indices, updates = inputs
    return _op.scatter_elements(data, indices, updates, axis=int(ctx.attrs.get("axis", 0)))


@converter("ScatterElements", min_version=11)
def scatter_elements(ctx, inputs):
    data, indices, updates = inputs
    return _op.scatter_elements(data, indices, updates, axis=int(ctx.attrs.get("axis", 0)),
                                reduction=_reduction(ctx))


@converter("ScatterND", min_version=11)
def scatter_nd(ctx, inputs):
    data, indices, updates = inputs
    return _op.scatter_nd(data, _tuple_axis_first(ctx, indices), updates, mode=_reduction(ctx))


@converter("OneHot", min_version=9)
def one_hot(ctx, inputs):
    """ONNX counts a negative index from the end of the depth axis; Relay's one_hot leaves it
    all off, so negatives are made positive first (float indices and depth truncate, as ONNX
    casts them). A depth known only at run time builds dyn.one_hot (debug and VM executors)."""
    indices, depth, values = inputs
    if not ctx.dtype(indices).startswith("int"):
        indices = _op.cast(indices, "int64")
    itype = ctx.dtype(indices)
    depth_value = ctx.maybe_value(depth)
    if depth_value is not None:
        depth_value = np.asarray(depth_value).reshape(-1)
        if depth_value.size != 1 or int(depth_value[0]) <= 0:
            raise ctx.invalid(f"depth must be one value > 0, got {depth_value.tolist()}")
        depth = int(depth_value[0])
        depth_expr = const(np.array(depth, itype))
    else:
        if ctx.shape(depth) not in ((), (1,)):
            raise ctx.invalid(f"depth must be a scalar or hold one value, got shape {ctx.shape(depth)}")
        depth = _op.cast(_op.reshape(depth, ()), "int64")
        depth_expr = _op.cast(depth, itype)
    indices = _op.where(_op.less(indices, const(np.array(0, itype))), _op.add(indices, depth_expr), indices)
    off, on = (_op.take(values, const(np.array(k, "int32"))) for k in (0, 1))
    return _op.one_hot(indices, on, off, depth, int(ctx.attrs.get("axis", -1)), ctx.dtype(values))


@converter("Trilu", min_version=14)
def trilu(ctx, inputs):
    """k (optional, default 0) stays a tensor: Relay's trilu reads it at run time."""
    data = inputs[0]
    k = inputs[1] if len(inputs) > 1 and inputs[1] is not None else const(np.array(0, "int64"))
    if ctx.shape(k) not in ((), (1,)):
        raise ctx.invalid(f"k must be a scalar or hold one value, got shape {ctx.shape(k)}")
    return _op.trilu(data, _op.reshape(k, ()), upper=bool(ctx.attrs.get("upper", 1)))


@converter("ReverseSequence", min_version=10)
def reverse_sequence(ctx, inputs):
    data, lengths = inputs
    return _op.reverse_sequence(data, lengths, seq_axis=int(ctx.attrs.get("time_axis", 0)),
                                batch_axis=int(ctx.attrs.get("batch_axis", 1)))


@converter("NonZero", min_version=9)
def non_zero(ctx, inputs):
    """ONNX wants (rank, count) int64 coordinates; Relay's argwhere gives (count, rank) int32.
    The count is known only at run time: the VM runs it, the graph executor cannot."""
    return _op.transpose(_op.cast(_op.argwhere(inputs[0]), "int64"), (1, 0))


@converter("Compress", min_version=9)
def compress(ctx, inputs):
    """The slices along `axis` (of the flattened input without one) where condition is true:
    take at argwhere(condition) (a run-time count, so VM only)."""
    data, condition = inputs
    axis = ctx.attrs.get("axis")
    if axis is None:
        data, axis = _op.reshape(data, (-1,)), 0
    axis = int(axis)
    rank = ctx.ndim(data)
    if not -rank <= axis < rank:
        raise ctx.invalid(f"axis={axis} is out of range for an input of rank {rank}")
    if ctx.ndim(condition) != 1:
        raise ctx.invalid(f"condition must be 1-D, got rank {ctx.ndim(condition)}")
    positions = _op.reshape(_op.argwhere(condition), (-1,))
    return _op.take(data, positions, axis=axis % rank, mode="clip")


def _dense_column_ranks(columns, rows: int, width: int):
    """Each column of the (rows, width) `columns` with its values replaced by their dense rank in
    that column (equal values share a rank, ranks ascend with the values; NaN last, each NaN its
    own rank), int64, every column at once: a stable argsort along axis 0, a running count of
    where the sorted values change, scattered back to the unsorted positions."""
    order = _op.argsort(columns, axis=0, dtype="int64")
    ordered = _op.gather(columns, 0, order)
    previous = _op.concatenate([_op.strided_slice(ordered, [0], [1], axes=[0]),
                                _op.strided_slice(ordered, [0], [rows - 1], axes=[0])], axis=0)
    changes = _op.cumsum(_op.cast(_op.not_equal(ordered, previous), "int64"), axis=0)
    return _op.scatter_elements(_op.zeros((rows, width), "int64"), order, changes, axis=0)


def _slice_keys(x, axis: int, shape: tuple):
    """One int64 key per slice of `x` along `axis`: equal slices get equal keys and the keys
    ascend in the slices' lexicographic order. The slices are flattened into columns, ranked per
    column, and neighbouring columns are merged pairwise (rank * rows + next rank, re-ranked, so
    keys stay below `rows`) until one is left: log2(width) rounds of one sort each."""
    rows = shape[axis]
    width = int(np.prod(shape, dtype=np.int64)) // rows if rows else 0
    if rows == 0 or width == 0:                       # no slices, or every slice empty (all equal)
        return _op.zeros((rows,), "int64")
    order = [axis] + [a for a in range(len(shape)) if a != axis]
    keys = _dense_column_ranks(_op.reshape(_op.transpose(x, order), (rows, width)), rows, width)
    while width > 1:
        if width % 2:                                   # an odd column out pairs with a constant one
            keys = _op.concatenate([keys, _op.zeros((rows, 1), "int64")], axis=1)
            width += 1
        high = _op.strided_slice(keys, [0], [width], [2], axes=[1])
        low = _op.strided_slice(keys, [1], [width], [2], axes=[1])
        width //= 2
        keys = _dense_column_ranks(_op.add(_op.multiply(high, const(np.array(rows, "int64"))), low), rows, width)
    return _op.reshape(keys, (rows,))


@converter("Unique", min_version=11)
def unique(ctx, inputs):
    """Relay's unique pads its results to the input's length and gives their count; ONNX's are
    cut to that count (a run-time size, so VM only). Indices, inverse indices and counts are
    int64 in ONNX. Without an axis the input is flattened. With one (TVM's unique is 1-D only,
    its converter refuses it) each slice along the axis becomes one integer key (_slice_keys),
    relay.unique runs on the keys, and the unique slices are taken at their first indices."""
    x = inputs[0]
    axis = ctx.attrs.get("axis")
    is_sorted = bool(ctx.attrs.get("sorted", 1))
    if axis is None:
        parts = _op.unique(_op.reshape(x, (-1,)), is_sorted=is_sorted, return_counts=True)
    else:
        shape = ctx.static_shape(x)
        axis = int(axis)
        if not -len(shape) <= axis < len(shape):
            raise ctx.invalid(f"axis={axis} is out of range for an input of rank {len(shape)}",
                              f"use an axis in [{-len(shape)}, {len(shape) - 1}]")
        axis %= len(shape)
        parts = _op.unique(_slice_keys(x, axis, shape), is_sorted=is_sorted, return_counts=True)
    count = _op.cast(parts[3], "int64")

    def cut(values):
        return _op.strided_slice(values, const(np.array([0], "int64")), count, const(np.array([1], "int64")))
    first = cut(parts[1])
    values = cut(parts[0]) if axis is None else _op.take(x, first, axis=axis)
    outputs = [values, _op.cast(first, "int64"), _op.cast(parts[2], "int64"), _op.cast(cut(parts[4]), "int64")]
    return outputs[:len(ctx.node.output)]
