"""Shape and data-movement ONNX ops: Reshape, Flatten, Transpose, Concat, Split, Squeeze, Unsqueeze,
Gather, Slice, Expand, Tile, Pad, Shape, Size, Constant, ConstantOfShape, Range.

Inputs that describe shapes (Reshape's shape, Slice's starts, Pad's pads, ...) are read as
constants when they fold to one (the importer folds Shape-of-static-input subgraphs, so exported
models with static input shapes import as static ops). Computed at run time, Reshape's shape,
Slice's starts/ends/axes/steps, Squeeze's and Unsqueeze's axes, Expand's shape, Tile's repeats,
Pad's pads/axes/value, Split's sizes, ConstantOfShape's shape and Range's limits become the dyn
ops (runtime_shapes.py; shape_of for Shape/Size of a dynamic input), which the debug interpreter
and the VM run.
"""
import math as _m

import numpy as np

from .... import op as _op
from ....op import nn as _nn
from ....runtime.limits import check_tensor_size
from ..common import const
from ..tensors import tensor_to_array
from ._registry import converter
from .runtime_shapes import checked_reshape, pad_width, runtime_input, slice_bounds, split_parts


def _ints(ctx, expr, what):
    return [int(v) for v in np.asarray(ctx.value(expr, what)).reshape(-1)]


@converter("Reshape", min_version=5)
def reshape(ctx, inputs):
    x, shape = inputs
    allowzero = bool(ctx.attrs.get("allowzero", 0))
    if ctx.maybe_value(shape) is None:  # computed at run time: dyn.reshape (0 copies a dim unless allowzero)
        return _op.reshape(x, _op.cast(shape, "int64"), allowzero=allowzero)
    newshape = _ints(ctx, shape, "shape")
    if not allowzero:  # ONNX 0 copies the input dim (relay's code 0 too); resolve it here
        have = ctx.shape(x)
        newshape = [have[i] if v == 0 and i < len(have) else v for i, v in enumerate(newshape)]
    return _op.reshape(x, newshape, allowzero=allowzero)


@converter("Flatten")
def flatten(ctx, inputs):
    x = inputs[0]
    shape = ctx.static_shape(x, "input")
    axis = int(ctx.attrs.get("axis", 1))
    axis = axis + len(shape) if axis < 0 else axis
    return _op.reshape(x, (int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))))


@converter("Transpose")
def transpose(ctx, inputs):
    perm = ctx.attrs.ints("perm")
    return _op.transpose(inputs[0], list(perm) if perm is not None else None)


@converter("Concat")
def concat(ctx, inputs):
    return _op.concatenate(list(inputs), axis=int(ctx.attrs.get("axis")))


@converter("Split")
def split(ctx, inputs):
    x = inputs[0]
    shape = ctx.static_shape(x, "input")
    axis = int(ctx.attrs.get("axis", 0))
    if not -len(shape) <= axis < len(shape):
        raise ctx.invalid(f"axis={axis} is out of range for an input of rank {len(shape)}")
    axis %= len(shape)
    if runtime_input(ctx, inputs, 1, since=13) is not None:
        return split_parts(ctx, x, inputs[1], axis, len(ctx.node.output))
    if ctx.since >= 13:
        sizes = _ints(ctx, inputs[1], "split") if len(inputs) > 1 and inputs[1] is not None else None
    else:
        sizes = ctx.attrs.ints("split")
    num_outputs = ctx.attrs.get("num_outputs")
    sizes = _split_sizes(ctx, shape[axis], axis, list(sizes or ()), num_outputs)
    indices = list(np.cumsum(sizes)[:-1])
    parts = _op.split(x, [int(i) for i in indices], axis=axis)
    return [parts[i] for i in range(len(sizes))]


def _split_sizes(ctx, dim, axis, sizes, num_outputs):
    """The part sizes of a Split along an axis of length `dim`, checked against the ONNX rules: given
    sizes are one per output, non-negative and sum to `dim`; without them the axis splits into one
    equal part per output (divisible before opset 18; from 18 the last part may be smaller)."""
    n_out = len(ctx.node.output)
    if sizes:
        if len(sizes) != n_out:
            raise ctx.invalid(f"{len(sizes)} split sizes {sizes} for {n_out} outputs; give one size per output")
        if any(s < 0 for s in sizes):
            raise ctx.invalid(f"split sizes {sizes} include a negative size; axis {axis} has length {dim}")
        if sum(sizes) != dim:
            raise ctx.invalid(f"split sizes {sizes} sum to {sum(sizes)}, but axis {axis} has length {dim}")
        return sizes
    if num_outputs is not None and int(num_outputs) != n_out:
        raise ctx.invalid(f"num_outputs={num_outputs}, but the node has {n_out} outputs")
    if ctx.since < 18:
        if dim % n_out:
            raise ctx.invalid(f"axis {axis} has length {dim}, which does not split into {n_out} equal parts",
                              "give the split sizes")
        return [dim // n_out] * n_out
    chunk = -(-dim // n_out)
    sizes = [min(chunk, dim - i * chunk) for i in range(n_out)]
    if any(s < 0 for s in sizes):
        raise ctx.invalid(f"axis {axis} has length {dim}, which does not split into {n_out} parts of {chunk}")
    return sizes


def _axes(ctx, inputs, version_with_input=13):
    if ctx.since >= version_with_input:
        return _ints(ctx, inputs[1], "axes") if len(inputs) > 1 and inputs[1] is not None else None
    axes = ctx.attrs.ints("axes")
    return list(axes) if axes is not None else None


@converter("Squeeze")
def squeeze(ctx, inputs):
    axes = runtime_input(ctx, inputs, 1, since=13)
    if axes is not None:  # dyn.squeeze, negative axes made positive here (the rank is static)
        axes = _op.cast(axes, "int64")
        nd = const(np.int64(ctx.ndim(inputs[0])))
        return _op.squeeze(inputs[0], _op.where(_op.less(axes, const(np.int64(0))), _op.add(axes, nd), axes))
    axes = _axes(ctx, inputs)
    return _op.squeeze(inputs[0], axis=axes)


@converter("Unsqueeze")
def unsqueeze(ctx, inputs):
    x = inputs[0]
    if runtime_input(ctx, inputs, 1, since=13) is not None:
        return _runtime_unsqueeze(ctx, x, inputs[1])
    axes = _axes(ctx, inputs)
    out_nd = ctx.ndim(x) + len(axes)
    for a in sorted(a % out_nd for a in axes):
        x = _op.expand_dims(x, a)
    return x


def _runtime_unsqueeze(ctx, x, axes):
    """Unsqueeze with axes known at run time: dyn.reshape to the output shape computed from them
    (output position i is a new 1 when it is one of the axes, else the input dim i - #axes before
    i). Axes that are out of range or repeated make the shape all zeros, so the reshape fails at
    run time instead of giving a differently shaped result."""
    count = ctx.shape(axes)
    if len(count) != 1 or not isinstance(count[0], int):
        raise ctx.fail_shape(f"axes has shape {count}; a run-time Unsqueeze needs a 1-D axes of static length")
    nd = ctx.ndim(x)
    rank = nd + int(count[0])
    axes = _op.reshape(_op.cast(axes, "int64"), (1, -1))
    axes = _op.where(_op.less(axes, const(np.int64(0))), _op.add(axes, const(np.int64(rank))), axes)
    position = const(np.arange(rank, dtype="int64").reshape(rank, 1))
    is_new = _op.sum(_op.cast(_op.equal(position, axes), "int64"), axis=1)            # (rank,)
    before = _op.sum(_op.cast(_op.less(axes, position), "int64"), axis=1)             # new axes before i
    source = _op.where(_op.greater(is_new, const(np.int64(0))), const(np.int64(nd)),
                       _op.subtract(const(np.arange(rank, dtype="int64")), before))
    dims = _op.concatenate([_op.shape_of(x, "int64"), const(np.ones(1, "int64"))], 0)  # dims[nd] = 1
    shape = _op.take(dims, source, axis=0, mode="clip")
    in_range = _op.logical_and(_op.greater_equal(axes, const(np.int64(0))), _op.less(axes, const(np.int64(rank))))
    valid = _op.logical_and(_op.equal(_op.sum(is_new), const(np.int64(int(count[0])))),
                            _op.all(in_range))
    return checked_reshape(x, shape, valid)


@converter("Gather")
def gather(ctx, inputs):
    """ONNX indices lie in [-n, n-1] (negatives wrap once); anything else is an error.

    Constant indices are checked here (OpNotImplemented naming the node and the bad index) and then
    read with mode="fast". Run-time indices have their negatives made positive and are read with
    mode="clip": an out-of-range run-time index is clamped to the nearest valid row instead of
    raising (onnxruntime raises), because a compiled kernel cannot raise; it never reads out of
    bounds. When the axis length is itself dynamic, mode="wrap" (exact for every valid index).
    """
    from ....ir.types import is_static
    x, idx = inputs
    nd = ctx.ndim(x)
    axis = int(ctx.attrs.get("axis", 0))
    if not -nd <= axis < nd:
        raise ctx.fail(f"axis={axis} is out of range for data of rank {nd}")
    axis %= nd
    dim = ctx.shape(x)[axis]
    if not is_static(dim):
        return _op.take(x, idx, axis=axis, mode="wrap")
    dim = int(dim)
    value = ctx.maybe_value(idx)
    if value is not None:  # constant indices: check the range, make negatives positive here
        value = np.asarray(value)
        bad = (value < -dim) | (value >= dim)
        if bad.any():
            first = value[bad].reshape(-1)[0]
            raise ctx.fail(f"index {int(first)} is out of range for axis {axis} of length {dim} "
                           f"(valid indices are in [{-dim}, {dim - 1}]; {int(bad.sum())} bad index(es) "
                           f"in all)")
        return _op.take(x, const(np.where(value < 0, value + dim, value).astype(value.dtype)), axis=axis,
                        mode="fast")
    itype = ctx.dtype(idx)
    if not itype.startswith("uint"):
        zero = const(np.array(0, itype))
        idx = _op.where(_op.less(idx, zero), _op.add(idx, const(np.array(dim, itype))), idx)
    return _op.take(x, idx, axis=axis, mode="clip")


@converter("Slice")
def slice_(ctx, inputs):
    x = inputs[0]
    if ctx.since >= 10 and any(ctx.maybe_value(e) is None for e in inputs[1:5] if e is not None):
        given = [inputs[k] if len(inputs) > k else None for k in range(1, 5)]   # dyn.strided_slice
        return _op.strided_slice(x, *slice_bounds(ctx, x, *given))
    shape = ctx.static_shape(x, "data")
    if ctx.since < 10:
        starts, ends = list(ctx.attrs.ints("starts")), list(ctx.attrs.ints("ends"))
        axes = ctx.attrs.ints("axes")
        steps = None
    else:
        starts, ends = _ints(ctx, inputs[1], "starts"), _ints(ctx, inputs[2], "ends")
        axes = _ints(ctx, inputs[3], "axes") if len(inputs) > 3 and inputs[3] is not None else None
        steps = _ints(ctx, inputs[4], "steps") if len(inputs) > 4 and inputs[4] is not None else None
    axes = list(axes) if axes is not None else list(range(len(starts)))
    steps = steps or [1] * len(starts)
    axes = [a % len(shape) for a in axes]
    # clamp to [-dim - 1, dim]: Python slice semantics (= ONNX's) without int64 extremes
    starts = [max(-d - 1, min(d, s)) for s, d in zip(starts, (shape[a] for a in axes))]
    ends = [max(-d - 1, min(d, e)) for e, d in zip(ends, (shape[a] for a in axes))]
    return _op.strided_slice(x, starts, ends, strides=steps, axes=axes)


@converter("Expand", min_version=8)
def expand(ctx, inputs):
    x, shape = inputs
    if runtime_input(ctx, inputs, 1) is not None:
        return _runtime_expand(ctx, x, shape)
    target = tuple(_ints(ctx, shape, "shape"))
    have = tuple(ctx.static_shape(x, "input"))
    if any(d < 0 for d in target):
        raise ctx.invalid(f"the shape {list(target)} has a negative dimension")
    try:
        out = tuple(np.broadcast_shapes(have, target))
    except ValueError:
        raise ctx.invalid(f"the input of shape {have} cannot be broadcast to the shape {list(target)}") from None
    return _op.broadcast_to(x, out)


def _runtime_expand(ctx, x, shape):
    """Expand to a run-time shape: ONNX broadcasts both ways (a 1 in `shape` keeps the input's dim),
    so the target is the elementwise max of the two shapes aligned at the right, then
    dyn.broadcast_to (which checks the dims at run time)."""
    count = ctx.shape(shape)
    if len(count) != 1 or not isinstance(count[0], int):
        raise ctx.fail_shape(f"shape has shape {count}; a run-time Expand needs a 1-D shape of static length")
    count, nd = int(count[0]), ctx.ndim(x)
    have, want = _op.shape_of(x, "int64"), _op.cast(shape, "int64")
    if count > nd:
        have = _op.concatenate([const(np.ones(count - nd, "int64")), have], 0)
    elif nd > count:
        want = _op.concatenate([const(np.ones(nd - count, "int64")), want], 0)
    return _op.broadcast_to(x, _op.maximum(have, want))


@converter("Tile", min_version=6)
def tile(ctx, inputs):
    if runtime_input(ctx, inputs, 1) is not None:
        return _op.tile(inputs[0], _op.cast(inputs[1], "int64"))  # dyn.tile
    return _op.tile(inputs[0], _ints(ctx, inputs[1], "repeats"))


@converter("Pad")
def pad(ctx, inputs):
    x = inputs[0]
    nd = ctx.ndim(x)
    mode = ctx.attrs.get("mode", "constant")
    if ctx.since < 11:
        pads, value = list(ctx.attrs.ints("pads") or ctx.attrs.ints("paddings")), ctx.attrs.get("value", 0.0)
        axes = list(range(nd))
    else:
        value = inputs[2] if len(inputs) > 2 and inputs[2] is not None else 0
        if runtime_input(ctx, inputs, 1) is not None or runtime_input(ctx, inputs, 3) is not None:
            return _runtime_pad(ctx, inputs, mode, value)
        pads = _ints(ctx, inputs[1], "pads")
        axes = _ints(ctx, inputs[3], "axes") if len(inputs) > 3 and inputs[3] is not None else list(range(nd))
    k = len(axes)
    if len(pads) != 2 * k:
        raise ctx.invalid(f"pads {pads} has {len(pads)} values, but {k} padded axes need {2 * k}")
    if any(not -nd <= a < nd for a in axes):
        raise ctx.invalid(f"axes {axes} are out of range for an input of rank {nd}")
    width = [[0, 0] for _ in range(nd)]
    for i, a in enumerate(axes):
        width[a % nd] = [pads[i], pads[i + k]]
    if any(v < 0 for p in width for v in p):
        raise ctx.fail(f"negative pads {pads} are not supported")
    _check_pad_mode(ctx, mode)
    return _nn.pad(x, tuple(tuple(p) for p in width), _pad_value(ctx, x, value), pad_mode=mode)


def _check_pad_mode(ctx, mode):
    if mode not in ("constant", "edge", "reflect"):
        raise ctx.fail(f"mode={mode!r} is not supported", "use constant, edge or reflect")


def _pad_value(ctx, x, value):
    """The scalar pad value: a constant from a Python number, else the run-time input (shape () or (1,))."""
    if isinstance(value, (int, float)):
        return const(np.asarray(value, dtype=ctx.dtype(x)).reshape(()))
    return _op.reshape(value, ()) if ctx.shape(value) != () else value


def _runtime_pad(ctx, inputs, mode, value):
    """Pad-11+ whose pads or axes are known only at run time: dyn.nn.pad with the (rank, 2) widths
    built from them. Negative pads (cropping) stop the run with an error."""
    x = inputs[0]
    _check_pad_mode(ctx, mode)
    axes = inputs[3] if len(inputs) > 3 else None
    width = pad_width(ctx, inputs[1], axes, ctx.ndim(x))
    return _nn.pad(x, width, _pad_value(ctx, x, value), pad_mode=mode)


@converter("Shape")
def shape(ctx, inputs):
    """A constant for a static shape; shape_of (read at run time) when some dim is dynamic."""
    from ....ir.types import is_static
    x = inputs[0]
    start, end = ctx.attrs.get("start", 0), ctx.attrs.get("end")
    dims = ctx.shape(x)
    if all(is_static(d) for d in dims):
        return const(np.array([int(d) for d in dims[slice(start, end)]], dtype="int64"))
    picked = range(len(dims))[slice(start, end)]
    whole = _op.shape_of(x, "int64")
    if len(picked) == len(dims):
        return whole
    return _op.strided_slice(whole, [picked.start], [picked.stop])


@converter("Size")
def size(ctx, inputs):
    from ....ir.types import is_static
    dims = ctx.shape(inputs[0])
    if all(is_static(d) for d in dims):
        return const(np.array(int(np.prod([int(d) for d in dims])), dtype="int64"))
    return _op.ndarray_size(inputs[0], "int64")


@converter("Constant")
def constant(ctx, inputs):
    a = ctx.attrs
    if "value" in a:
        return const(tensor_to_array(a.get("value"), f"{ctx.where()}: attribute 'value'"))
    for name, dtype in (("value_float", "float32"), ("value_floats", "float32"), ("value_int", "int64"),
                        ("value_ints", "int64")):
        if name in a:
            return const(np.array(a.get(name), dtype=dtype))
    for name in ("sparse_value", "value_string", "value_strings"):
        a.get(name)
    raise ctx.fail("only dense numeric values are supported (not sparse_value or strings)")


@converter("ConstantOfShape")
def constant_of_shape(ctx, inputs):
    t = ctx.attrs.get("value")
    value = tensor_to_array(t, f"{ctx.where()}: attribute 'value'").reshape(-1) if t is not None \
        else np.zeros(1, "float32")
    if value.size != 1:
        raise ctx.invalid(f"attribute 'value' must hold one element, not {value.size}")
    if runtime_input(ctx, inputs, 0) is not None:  # dyn.full: the VM sizes it at run time
        return _op.full(const(value.reshape(())), _op.cast(inputs[0], "int64"), str(value.dtype))
    dims = _ints(ctx, inputs[0], "input")
    if any(d < 0 for d in dims):
        raise ctx.invalid(f"the shape {dims} has a negative dimension")
    check_tensor_size(dims, value.dtype, ctx.where())
    return const(np.full(dims, value[0], dtype=value.dtype))


@converter("Range")
def range_(ctx, inputs):
    """ONNX Range: max(ceil((limit - start) / delta), 0) elements start, start + delta, ...; the
    length is checked (delta 0, non-finite bounds, a size past the tensor limit) before numpy runs.
    Limits known only at run time build dyn.arange (the VM computes the length when it runs)."""
    if any(ctx.maybe_value(e) is None for e in inputs):
        scalars = [_op.reshape(e, ()) if ctx.shape(e) else e for e in inputs]
        return _op.arange(*scalars, dtype=ctx.dtype(inputs[0]))
    start, limit, delta = (np.asarray(ctx.value(e, w)) for e, w in zip(inputs, ("start", "limit", "delta")))
    for name, v in (("start", start), ("limit", limit), ("delta", delta)):
        if v.size != 1:
            raise ctx.invalid(f"{name} must be a scalar, not a tensor of shape {v.shape}")
        if v.dtype.kind == "f" and not np.isfinite(v).all():
            raise ctx.invalid(f"start, limit and delta must be finite; {name} is {v.reshape(-1)[0]}")
    if delta.reshape(-1)[0] == 0:
        raise ctx.invalid("delta is 0, so the range never reaches its limit")
    start, limit, delta = (v.reshape(-1)[0] for v in (start, limit, delta))  # a scalar, or one value
    if start.dtype.kind == "f":
        count = _m.ceil((float(limit) - float(start)) / float(delta))
    else:
        count = -((int(start) - int(limit)) // int(delta))
    check_tensor_size((max(count, 0),), start.dtype, ctx.where())
    return const(np.arange(start, limit, delta).astype(start.dtype))
