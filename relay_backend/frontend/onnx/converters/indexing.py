"""Gather/scatter family ONNX ops (issue 20): GatherElements, GatherND, Scatter, ScatterElements,
ScatterND.

ONNX puts an index tuple on the *last* axis of GatherND/ScatterND indices; Relay's gather_nd and
scatter_nd take it on the first, so those indices are transposed. Indices are used as given
otherwise: negative ones count from the end in both; an out-of-range run-time index, which
ONNX calls an error, follows Relay's rule (reads clamped, writes dropped: op/index_rules.py),
and a constant one is an error when the model is imported.
"""
from .... import op as _op
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
