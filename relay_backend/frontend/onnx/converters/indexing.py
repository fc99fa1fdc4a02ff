"""Indexing ONNX ops (issue 20): GatherElements, GatherND, Scatter, ScatterElements, ScatterND,
OneHot, Trilu, ReverseSequence, NonZero, Compress, Unique.

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


@converter("Unique", min_version=11)
def unique(ctx, inputs):
    """Relay's unique pads its results to the input's length and gives their count; ONNX's are
    cut to that count (a run-time size, so VM only). Indices, inverse indices and counts are
    int64 in ONNX. Only the flattened form (no axis, or axis 0 of a 1-D input) is supported."""
    x = inputs[0]
    axis = ctx.attrs.get("axis")
    if axis is not None and not (ctx.ndim(x) == 1 and int(axis) in (0, -1)):
        raise ctx.fail(f"axis={axis} (unique slices along an axis) is not supported; only the flattened "
                       f"form (no axis) is")
    flat = _op.reshape(x, (-1,))
    parts = _op.unique(flat, is_sorted=bool(ctx.attrs.get("sorted", 1)), return_counts=True)
    count = _op.cast(parts[3], "int64")

    def cut(values):
        return _op.strided_slice(values, const(np.array([0], "int64")), count, const(np.array([1], "int64")))
    outputs = [cut(parts[0]), _op.cast(cut(parts[1]), "int64"), _op.cast(parts[2], "int64"),
               _op.cast(cut(parts[4]), "int64")]
    return outputs[:len(ctx.node.output)]
