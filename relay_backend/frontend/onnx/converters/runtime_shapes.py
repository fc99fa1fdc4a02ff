"""Run-time forms of ONNX's shape-like inputs: Pad's pads, Slice's axes, Split's sizes and the
reductions' axes given as graph inputs (known only when the model runs).

The converters read these inputs as constants when they fold to one; otherwise they call the
builders here, which express the node with the dyn ops (dyn.nn.pad, dyn.strided_slice,
dyn.reshape) and ordinary tensor arithmetic on the input values, so the model imports with the
inputs left as graph inputs and runs on the debug interpreter and the VM. Output dims that
depend on the values are Any, so the graph and AOT executors refuse such a model (as TVM's
graph codegen does); bound to constants (DynamicToStatic, or the ONNX Backend's default way of
counting), the same nodes become the static ops again.

What these forms need static is only what decides the output's rank: the length of the axes,
pads or split vector (a 1-D input of static length) and the data's rank. An axis input that only
picks where an op works (CumSum's) selects among the results along every axis.
"""
import numpy as np

from .... import op as _op
from ..common import DynamicInputError, const


def runtime_input(ctx, inputs, k, since=1):
    """inputs[k] when the node's schema has it as an input (from version `since`) and it is only
    known at run time (it does not fold to a constant), else None."""
    if ctx.since < since or len(inputs) <= k or inputs[k] is None:
        return None
    return inputs[k] if ctx.maybe_value(inputs[k]) is None else None


def needs_value(ctx, msg: str, fix: str = "give it as a constant") -> DynamicInputError:
    """The error for a run-time input whose value this node needs at import (it decides the
    output's rank or a static attribute): a DynamicInputError, on which the ONNX backend's
    default way of running imports again with the integer inputs bound."""
    return DynamicInputError(f"{ctx.where()}: {msg}; {fix}")


def static_length(ctx, expr, what: str) -> int:
    """The length of the 1-D input `expr`, which must be static (it decides the output's rank)."""
    shape = ctx.shape(expr)
    if len(shape) != 1 or not isinstance(shape[0], int):
        raise needs_value(ctx, f"{what} has shape {shape} and is known only at run time; it must then be 1-D "
                               f"with a static length")
    return int(shape[0])


def _int64(x):
    return _op.cast(x, "int64")


def positive_axes(ctx, axes, nd: int):
    """Run-time axes (int64) with the negative ones counted from the end of a rank-`nd` tensor;
    constant axes are checked against the rank here."""
    value = ctx.maybe_value(axes)
    if value is not None:
        value = [int(a) for a in np.asarray(value).reshape(-1)]
        if any(not -nd <= a < nd for a in value):
            raise ctx.invalid(f"axes {value} are out of range for an input of rank {nd}")
        return const(np.array([a % nd for a in value], "int64"))
    axes = _int64(axes)
    return _op.where(_op.less(axes, const(np.int64(0))), _op.add(axes, const(np.int64(nd))), axes)


def spread(values, axes, nd: int, filler: int):
    """A length-`nd` int64 vector holding values[j] at position axes[j] (axes: int64, already
    non-negative; a run-time or constant vector) and `filler` everywhere else."""
    base = const(np.full(nd, filler, "int64"))
    return _op.scatter_elements(base, axes, _int64(values), axis=0)


def axis_mask(axes, nd: int):
    """(nd,) bool: whether each axis of a rank-`nd` tensor is one of the (non-negative) `axes`."""
    positions = const(np.arange(nd, dtype="int64").reshape(nd, 1))
    return _op.any(_op.equal(positions, _op.reshape(axes, (1, -1))), axis=1)


def checked_reshape(x, shape, valid):
    """dyn.reshape of `x` to `shape`, or to all zeros when `valid` (a bool scalar) is false, so a
    bad run-time input (repeated or out-of-range axes) stops the run with a reshape error instead
    of giving a differently shaped result."""
    return _op.reshape(x, _op.where(valid, shape, _op.zeros_like(shape)), allowzero=True)


# --- Pad -------------------------------------------------------------------------------------------
def pad_width(ctx, pads, axes, nd: int):
    """The (nd, 2) int64 pad widths of ONNX Pad-11+ from run-time `pads` (begins of the padded axes,
    then their ends) and `axes` (None: every axis; constant or run-time)."""
    count = static_length(ctx, pads, "pads")
    k = nd if axes is None else static_length(ctx, axes, "axes")
    if count != 2 * k:
        raise ctx.invalid(f"pads has {count} values, but {k} padded axes need {2 * k}")
    axes = const(np.arange(nd, dtype="int64")) if axes is None else positive_axes(ctx, axes, nd)
    pads = _int64(pads)
    begin = spread(_op.strided_slice(pads, [0], [k]), axes, nd, 0)
    end = spread(_op.strided_slice(pads, [k], [2 * k]), axes, nd, 0)
    return _op.stack([begin, end], axis=1)


# --- Slice -----------------------------------------------------------------------------------------
def slice_bounds(ctx, x, starts, ends, axes, steps):
    """(begin, end, strides): full-rank int64 vectors for dyn.strided_slice from ONNX Slice-10+
    inputs, any of them known only at run time (axes None: the leading axes; steps None: 1). An
    axis not sliced keeps all of itself."""
    nd = ctx.ndim(x)
    k = static_length(ctx, starts, "starts")
    axes = const(np.arange(k, dtype="int64")) if axes is None else positive_axes(ctx, axes, nd)
    dims = _op.shape_of(x, "int64")
    begin = spread(starts, axes, nd, 0)
    end = _op.scatter_elements(dims, axes, _int64(ends), axis=0)
    strides = spread(const(np.ones(k, "int64")) if steps is None else steps, axes, nd, 1)
    return begin, end, strides


# --- Split -----------------------------------------------------------------------------------------
def split_parts(ctx, x, sizes, axis: int, n_out: int):
    """The `n_out` parts of `x` along `axis` with run-time part `sizes`: dyn.strided_slice from the
    running sum of the sizes. Sizes that are negative or do not add up to the axis length make
    the parts' shapes all zeros, so the run stops with a reshape error."""
    nd = ctx.ndim(x)
    if static_length(ctx, sizes, "split") != n_out:
        raise ctx.invalid(f"split has {static_length(ctx, sizes, 'split')} sizes for {n_out} outputs; give "
                          f"one size per output")
    sizes = _int64(sizes)
    ends = _op.cumsum(sizes, axis=0)
    starts = _op.subtract(ends, sizes)
    dims = _op.shape_of(x, "int64")
    valid = _op.logical_and(_op.all(_op.greater_equal(sizes, const(np.int64(0)))),
                            _op.equal(_op.take(ends, const(np.int64(n_out - 1))), _op.take(dims, const(np.int64(axis)))))
    at_axis = const(np.eye(nd, dtype=bool)[axis])
    zeros, ones = const(np.zeros(nd, "int64")), const(np.ones(nd, "int64"))
    parts = []
    for j in range(n_out):
        pick = const(np.int64(j))
        begin = _op.where(at_axis, _op.take(starts, pick), zeros)
        end = _op.where(at_axis, _op.take(ends, pick), dims)
        part = _op.strided_slice(x, begin, end, ones)
        parts.append(checked_reshape(part, _op.shape_of(part, "int64"), valid))
    return parts


# --- reductions ------------------------------------------------------------------------------------
def reduce_over(ctx, x, axes, keepdims: bool, reducer):
    """`reducer(x, axis)` (a keepdims reduction over one static axis) applied over the run-time
    `axes` of `x`: for each axis of x in turn, the reduced and the unreduced tensor are joined
    along that axis and dyn.strided_slice keeps the part the mask picks (the reduced one's single
    row when the axis is one of `axes`), which also holds for zero-length axes. Without keepdims,
    dyn.reshape then drops the reduced axes (their count is the static length of `axes`).
    Repeated or out-of-range axes stop the run with a reshape error."""
    nd = ctx.ndim(x)
    k = static_length(ctx, axes, "axes")
    if k > nd:
        raise ctx.invalid(f"{k} axes given for an input of rank {nd}; each axis may be reduced once")
    axes = positive_axes(ctx, axes, nd)
    mask = axis_mask(axes, nd)
    in_range = _op.logical_and(_op.all(_op.greater_equal(axes, const(np.int64(0)))),
                               _op.all(_op.less(axes, const(np.int64(nd)))))
    valid = _op.logical_and(in_range, _op.equal(_op.sum(_op.cast(mask, "int64")), const(np.int64(k))))
    ones = const(np.ones(nd, "int64"))
    for i in range(nd):
        at_axis = const(np.eye(nd, dtype=bool)[i])
        joined = _op.concatenate([reducer(x, i), x], axis=i)
        dims = _op.shape_of(joined, "int64")
        here = _op.logical_and(at_axis, mask)
        begin = _op.cast(_op.logical_and(at_axis, _op.logical_not(mask)), "int64")
        end = _op.where(here, ones, dims)
        x = _op.strided_slice(joined, begin, end, ones)
    dims = _op.shape_of(x, "int64")
    if not keepdims:   # the kept axes' dims, in order: a stable sort puts the unmasked axes first
        kept = _op.strided_slice(_op.argsort(_op.cast(mask, "int32"), axis=0, dtype="int64"), [0], [nd - k])
        dims = _op.take(dims, kept, axis=0)
    return checked_reshape(x, dims, valid)


# --- an axis chosen at run time --------------------------------------------------------------------
def select_by_axis(ctx, axis, rank: int, along, count=None):
    """`along(a)` for the run-time scalar `axis` of a rank-`rank` input (negative counts from the
    end), which may name one of the first `count` axes (default: all): every such axis's result is
    computed and the one asked for is selected, so their static shapes must agree. An axis out
    of range stops the run with a reshape error."""
    count = rank if count is None else count
    if tuple(ctx.shape(axis)) not in ((), (1,)):
        raise ctx.invalid(f"axis must hold one integer, got a tensor of shape {ctx.shape(axis)}")
    results = [along(a) for a in range(count)]
    shapes = {tuple(ctx.shape(r)) for r in results}
    if len(shapes) > 1:
        raise needs_value(ctx, f"with the axis known only at run time, the output shape would depend on it "
                               f"({sorted(shapes)})", "give the axis as a constant")
    axis = _op.reshape(_int64(axis), ())
    axis = _op.where(_op.less(axis, const(np.int64(0))), _op.add(axis, const(np.int64(rank))), axis)
    valid = _op.logical_and(_op.greater_equal(axis, const(np.int64(0))), _op.less(axis, const(np.int64(count))))
    out = results[-1]
    for a in range(count - 2, -1, -1):
        out = _op.where(_op.equal(axis, const(np.int64(a))), results[a], out)
    return checked_reshape(out, _op.shape_of(out, "int64"), valid)
