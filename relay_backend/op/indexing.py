"""Slicing operators: split, strided_slice and take (re-exported by op/transform.py).

All are INJECTIVE. Slice bounds follow numpy: negative indices count from the end and
out-of-range bounds are clamped, so the relation and the reference agree on every shape.
"""
import dataclasses

import numpy as np

from ..errors import AttrsError, TypeInferenceError
from ..ir import expr as _expr
from ..ir.attrs import Attrs, always_printed, as_int_tuple, check_choice
from ..ir.dims import dim_to_str, is_any, is_static
from ..ir.shape_math import dims_differ, prod
from ..ir.types import Any, TensorType, TupleType, type_to_str
from . import index_math as IM
from . import samples as S
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor
from .static_args import is_dynamic_arg, static_ints


def _fail(op_name, msg, *types):
    suffix = f" (input: {', '.join(type_to_str(t) for t in types)})" if types else ""
    return TypeInferenceError(f"{op_name}: {msg}{suffix}")


def _axis(op_name, axis, ndim, t):
    if not -ndim <= axis < ndim:
        raise _fail(op_name, f"axis {axis} is out of range for rank {ndim}; use -{ndim} <= axis < {ndim}", t)
    return axis + ndim if axis < 0 else axis


# --- split --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SplitAttrs(Attrs):
    """indices_or_sections: an int (equal sections) or a non-decreasing tuple of split points
    (a repeated point, a leading 0 or a point at the axis end gives an empty section, as in
    np.split and ONNX Split with a 0-size part)."""
    indices_or_sections: object = always_printed(1)
    axis: int = 0

    def __post_init__(self):
        ios = self.indices_or_sections
        if isinstance(ios, (int, np.integer)):
            ios = int(ios)
            if ios < 1:
                raise AttrsError(f"split: sections must be >= 1, got {ios}")
        else:
            ios = as_int_tuple(ios, name="indices_or_sections")
            if any(b < a for a, b in zip((0,) + ios, ios)):
                raise AttrsError(f"split: indices {ios} must be >= 0 and non-decreasing (equal "
                                 f"neighbours give an empty section); sort them")
        object.__setattr__(self, "indices_or_sections", ios)
        object.__setattr__(self, "axis", int(self.axis))

    @property
    def num_outputs(self) -> int:
        ios = self.indices_or_sections
        return ios if isinstance(ios, int) else len(ios) + 1


def _split_sizes(data, attrs, dims=None):
    """(axis, section sizes); `dims` gives the compute's input dims (symbolic ones as PrimExprs)."""
    axis = _axis("split", attrs.axis, data.ndim, data)
    dim, ios = (data.shape if dims is None else dims)[axis], attrs.indices_or_sections
    if isinstance(ios, int):
        if IM.is_static(dim) and dim % ios:
            raise _fail("split", f"axis {axis} of size {dim} does not divide into {ios} equal sections", data)
        return axis, [Any() if is_any(dim) else dim // ios] * ios
    if IM.is_static(dim) and ios[-1] > dim:
        raise _fail("split", f"index {ios[-1]} is past the end of axis {axis} of size {dim}; "
                             f"split points must be <= {dim}", data)
    bounds = (0,) + ios
    return axis, [b - a for a, b in zip(bounds, ios)] + [Any() if is_any(dim) else dim - ios[-1]]


def _split_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "split data")
    axis, sizes = _split_sizes(data, attrs)
    fields = []
    for size in sizes:
        shape = list(data.shape)
        shape[axis] = size
        fields.append(TensorType(shape, data.dtype))
    return TupleType(fields)


def _split_compute(attrs, inputs, out_type):
    """One stage per section, each reading its slice at a fixed offset along the axis."""
    x = inputs[0]
    dims = IM.te_dims(x)
    axis, sizes = _split_sizes(IM.probe_type(x), attrs, dims)
    outs, begin = [], 0
    for k, size in enumerate(sizes):
        shape = dims[:axis] + (size,) + dims[axis + 1:]
        outs.append(IM.compute(SPLIT, shape, lambda *i, b=begin: x[i[:axis] + (i[axis] + b,) + i[axis + 1:]],
                               suffix=f"_{k}"))
        begin = begin + size
    return outs


SPLIT = defop(
    "split", inputs=("data",), attrs=SplitAttrs, rel=_split_rel, pattern=OpPattern.INJECTIVE, level=3,
    compute=_split_compute,
    ref=lambda x, a: tuple(np.split(x, a.indices_or_sections if isinstance(a.indices_or_sections, int)
                                    else list(a.indices_or_sections), axis=a.axis)),
    samples=lambda rng: [Sample([S.rand(rng, (4, 3))], SplitAttrs(2)),
                         Sample([S.rand(rng, (2, 6), "int32")], SplitAttrs((1, 4), axis=-1)),
                         Sample([S.rand(rng, (3,), "float64")], SplitAttrs(1)),
                         Sample([S.rand(rng, (2, 5, 2))], SplitAttrs((2,), axis=1)),
                         Sample([S.rand(rng, (4, 3))], SplitAttrs((0, 2, 2, 4)), "empty parts"),
                         Sample([S.rand(rng, (2, 3), "int32")], SplitAttrs((3,), axis=1), "empty last"),
                         Sample([np.zeros((0, 2), "float32")], SplitAttrs(2), "empty input")])


# --- strided_slice ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class StridedSliceAttrs(Attrs):
    begin: tuple = always_printed(())
    end: tuple = always_printed(())
    strides: tuple = always_printed(None)
    axes: tuple = always_printed(None)
    slice_mode: str = "end"

    def __post_init__(self):
        for name in ("begin", "end", "strides", "axes"):
            object.__setattr__(self, name, as_int_tuple(getattr(self, name), name=name))
        check_choice("slice_mode", self.slice_mode, ("end", "size"))
        if self.strides is not None and 0 in self.strides:
            raise AttrsError(f"strided_slice: strides {self.strides} contain 0")
        if len(self.end) != len(self.begin):
            raise AttrsError(f"strided_slice: begin {self.begin} and end {self.end} differ in length")
        if self.axes is not None and len(self.axes) != len(self.begin):
            raise AttrsError(f"strided_slice: axes {self.axes} and begin {self.begin} differ in length")
        if self.strides is not None and len(self.strides) > len(self.begin):
            raise AttrsError(f"strided_slice: more strides {self.strides} than begin values {self.begin}")


def slice_specs(data: TensorType, attrs) -> dict:
    """{axis: (begin, end, stride)} for every sliced axis; end is None for 'to the end'."""
    axes = attrs.axes if attrs.axes is not None else tuple(range(len(attrs.begin)))
    if len(axes) > data.ndim:
        raise _fail("strided_slice", f"{len(axes)} begin values for a tensor of rank {data.ndim}", data)
    strides = tuple(attrs.strides or ()) + (1,) * (len(axes) - len(attrs.strides or ()))
    specs = {}
    for a, b, e, s in zip(axes, attrs.begin, attrs.end, strides):
        a = _axis("strided_slice", a, data.ndim, data)
        if a in specs:
            raise _fail("strided_slice", f"axis {a} is sliced twice (axes={attrs.axes})", data)
        if attrs.slice_mode == "size":
            dim = data.shape[a]
            if b < 0 and is_static(dim):
                b += dim
            # size -1 means "to the end"; so does a negative begin (dynamic dim) whose size reaches it
            e, s = (None if e < 0 or (b < 0 and b + e >= 0) else b + e), 1
        specs[a] = (b, e, s)
    return specs


def _strided_slice_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "strided_slice data")
    shape = list(data.shape)
    for a, (b, e, s) in slice_specs(data, attrs).items():
        if is_static(shape[a]):
            shape[a] = len(range(*slice(b, e, s).indices(shape[a])))
        elif not is_any(shape[a]):     # numpy's clamping written over the size variable
            shape[a] = IM.slice_range(b, e, s, shape[a])[1]
    return TensorType(shape, data.dtype)


def _strided_slice_compute(attrs, inputs, out_type):
    """Output index i along a sliced axis reads begin + i * stride (begin and length normalized
    the way numpy's slice.indices does, symbolically for a dynamic dim)."""
    x = inputs[0]
    shape, start, step = list(IM.te_dims(x)), [0] * x.ndim, [1] * x.ndim
    for a, (b, e, s) in slice_specs(IM.probe_type(x), attrs).items():
        start[a], shape[a] = IM.slice_range(b, e, s, shape[a])
        step[a] = s
    return [IM.compute(STRIDED_SLICE, shape, lambda *i: x[tuple(b + j * s for j, b, s in zip(i, start, step))])]


def _strided_slice_ref(x, attrs):
    index = [slice(None)] * x.ndim
    for a, spec in slice_specs(TensorType(x.shape, x.dtype), attrs).items():
        index[a] = slice(*spec)
    return np.ascontiguousarray(x[tuple(index)])


def _ss(begin, end, strides=None, axes=None, slice_mode="end"):
    return StridedSliceAttrs(begin, end, strides, axes, slice_mode)


STRIDED_SLICE = defop(
    "strided_slice", inputs=("data",), attrs=StridedSliceAttrs, rel=_strided_slice_rel,
    pattern=OpPattern.INJECTIVE, ref=_strided_slice_ref, level=4, compute=_strided_slice_compute,
    samples=lambda rng: [
        Sample([S.rand(rng, (4, 5))], _ss((1, 0), (3, 5))),
        Sample([S.rand(rng, (6, 4), "int32")], _ss((-1, 3), (-7, 0), (-2, -1))),
        Sample([S.rand(rng, (3, 4, 5), "float64")], _ss((0,), (100,), (2,), axes=(2,))),
        Sample([S.rand(rng, (3, 4))], _ss((1, -3), (2, -1), slice_mode="size")),
        Sample([S.rand(rng, (5,))], _ss((-100,), (100,))),
        Sample([S.rand(rng, (4, 3))], _ss((3,), (1,))),  # empty result
    ])


# --- take -------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TakeAttrs(Attrs):
    axis: int = None  # None takes from the flattened data
    batch_dims: int = 0
    mode: str = "clip"

    def __post_init__(self):
        if self.axis is not None:
            object.__setattr__(self, "axis", int(self.axis))
        object.__setattr__(self, "batch_dims", int(self.batch_dims))
        check_choice("mode", self.mode, ("clip", "wrap", "fast"))


def _static_size(shape):
    """The element count of `shape` when it is known: 0 as soon as one static dim is 0,
    None when a dynamic dim leaves it open."""
    size = prod(shape)
    return int(size) if is_static(size) else None


def _check_axis_not_empty(data, indices, axis):
    """Any mode indexes out of bounds on an empty axis (clip clamps to -1, wrap divides by 0,
    fast trusts the index), so a non-empty take from a statically empty axis is an error."""
    n = _static_size(data.shape if axis is None else (data.shape[axis],))
    if n == 0 and (_static_size(indices.shape) or 0) > 0:
        where = "the flattened data is empty" if axis is None else f"axis {axis} has size 0"
        raise _fail("take", f"cannot index an empty axis: {where} but the indices are non-empty",
                    data, indices)


def _take_layout(data, indices, attrs):
    """(axis, batch_dims) made non-negative and checked against both ranks."""
    if not indices.dtype.startswith(("int", "uint")):
        raise _fail("take", f"indices must be an integer tensor, got dtype {indices.dtype}", data, indices)
    if attrs.axis is None:
        if attrs.batch_dims:
            raise _fail("take", "batch_dims needs an explicit axis", data, indices)
        _check_axis_not_empty(data, indices, None)
        return None, 0
    axis = _axis("take", attrs.axis, data.ndim, data)
    _check_axis_not_empty(data, indices, axis)
    bd = attrs.batch_dims + indices.ndim if attrs.batch_dims < 0 else attrs.batch_dims
    if not 0 <= bd <= min(axis, indices.ndim):
        raise _fail("take", f"batch_dims {attrs.batch_dims} must be in [0, min(axis={axis}, "
                    f"indices rank={indices.ndim})]", data, indices)
    for k in range(bd):
        d, i = data.shape[k], indices.shape[k]
        if dims_differ(d, i):
            raise _fail("take", f"batch dim {k} differs: data has {dim_to_str(d)}, indices have "
                        f"{dim_to_str(i)}", data, indices)
    return axis, bd


def _take_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "take data")
    indices = expect_tensor(arg_types[1], "take indices")
    axis, bd = _take_layout(data, indices, attrs)
    if axis is None:
        return TensorType(indices.shape, data.dtype)
    return TensorType(data.shape[:axis] + indices.shape[bd:] + data.shape[axis + 1:], data.dtype)


def _take_ref(x, idx, attrs):
    axis, bd = _take_layout(TensorType(x.shape, x.dtype), TensorType(idx.shape, idx.dtype), attrs)
    if axis is None:
        x, axis = x.reshape(-1), 0
    n = x.shape[axis]
    idx = idx.astype("int64")
    idx = np.mod(idx, n) if attrs.mode == "wrap" else np.clip(idx, 0, n - 1) if attrs.mode == "clip" else idx
    if bd == 0:
        return np.take(x, idx, axis=axis)
    batch = x.shape[:bd]
    parts = [np.take(x[b], idx[b], axis=axis - bd) for b in np.ndindex(*batch)]
    out_tail = x.shape[bd:axis] + idx.shape[bd:] + x.shape[axis + 1:]
    return np.stack(parts).reshape(batch + out_tail) if parts else np.empty(batch + out_tail, x.dtype)


def _take_samples(rng):
    def ids(shape, low, high, dtype="int32"):
        return rng.integers(low, high, size=shape).astype(dtype)
    return [Sample([S.rand(rng, (4, 3)), ids((2,), 0, 4)], TakeAttrs(0)),
            Sample([S.rand(rng, (4, 3), "int32"), ids((2, 2), -5, 6, "int64")], TakeAttrs(1, mode="clip")),
            Sample([S.rand(rng, (5,), "float64"), ids((3,), -7, 9)], TakeAttrs(0, mode="wrap")),
            Sample([S.rand(rng, (2, 3)), ids((4,), 0, 6)], TakeAttrs(None, mode="fast")),
            Sample([S.rand(rng, (2, 4, 3)), ids((2, 3), 0, 4)], TakeAttrs(1, batch_dims=1)),
            Sample([S.rand(rng, (3, 4)), ids((), 0, 4)], TakeAttrs(-1))]


def _take_compute(attrs, inputs, out_type):
    """Each output element loads one index, makes it valid by `mode` (clip clamps, wrap takes it
    modulo the axis size, fast trusts it) and loads the data element it names."""
    x, idx = inputs
    axis, bd = _take_layout(IM.probe_type(x), IM.probe_type(idx), attrs)
    dims, idims = IM.te_dims(x), IM.te_dims(idx)

    def valid(j, n):
        n = IM.dim_expr(n).astype(j.dtype)
        j = IM.clamp(j, 0, n - 1) if attrs.mode == "clip" else j % n if attrs.mode == "wrap" else j
        return j.astype("int32")
    if axis is None:
        n = IM.prod_dims(dims)
        return [IM.compute(TAKE, idims, lambda *i: x[tuple(IM.unravel(valid(idx[i], n), dims))])]
    k = len(idims) - bd  # output dims taken from the indices

    def body(*i):
        j = valid(idx[i[:bd] + i[axis:axis + k]], dims[axis])
        return x[i[:axis] + (j,) + i[axis + k:]]
    return [IM.compute(TAKE, dims[:axis] + idims[bd:] + dims[axis + 1:], body)]


TAKE = defop("take", inputs=("data", "indices"), attrs=TakeAttrs, rel=_take_rel, pattern=OpPattern.INJECTIVE,
             ref=_take_ref, samples=_take_samples, level=3, compute=_take_compute)


# --- Python constructors with tvm.relay's names --------------------------------------------------------------
def split(data, indices_or_sections, axis=0):
    """Split `data` into several tensors along one axis.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    indices_or_sections : int or tuple of int
        An int n cuts the axis into n equal parts (its length must divide by n); a tuple of
        increasing indices cuts the axis just before each of them, as numpy.split.
    axis : int, optional
        The axis to split; negative values count from the last axis. Defaults to 0.

    Returns
    -------
    result : relay.TupleWrapper
        The parts, as a tuple expression that can be indexed and unpacked.
    """
    if not isinstance(indices_or_sections, (int, np.integer)):
        indices_or_sections = static_ints(indices_or_sections, "split", "indices_or_sections")
    attrs = SplitAttrs(indices_or_sections, axis)
    return _expr.TupleWrapper(SPLIT(data, attrs=attrs), attrs.num_outputs)


def strided_slice(data, begin, end, strides=None, axes=None, slice_mode="end"):
    """Take a strided slice of `data`, as data[begin:end:strides] in numpy.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    begin : list of int or relay.Expr
        Where the slice starts on each sliced axis; negative values count from the end.
    end : list of int or relay.Expr
        Where it stops (exclusive) on each sliced axis, or the sizes when slice_mode="size".
    strides : None or list of int or relay.Expr, optional
        The step on each sliced axis (may be negative); None (the default) steps by 1.
    axes : None or list of int, optional
        The axes that begin/end/strides refer to; None (the default) means the leading axes.
    slice_mode : str, optional
        "end" (the default) reads `end` as stop positions; "size" reads it as the number of
        elements to take on each axis (-1: through the end) and ignores `strides`.

    Returns
    -------
    result : relay.Expr
        The slice. When begin, end or strides is a non-constant Relay expression the call is
        dyn.strided_slice, whose shape is known at run time.
    """
    if any(is_dynamic_arg(v) for v in (begin, end, strides)):
        return _dynamic_strided_slice(data, begin, end, strides, axes, slice_mode)

    def ints(v, name):
        return None if v is None else static_ints(v, "strided_slice", name)
    begin, end = ints(begin, "begin"), ints(end, "end")
    return STRIDED_SLICE(data, attrs=StridedSliceAttrs(begin, end, ints(strides, "strides"), ints(axes, "axes"),
                                                       slice_mode))


def _dynamic_strided_slice(data, begin, end, strides, axes, slice_mode):
    """dyn.strided_slice for begin/end/strides given as Relay expressions (static ones become
    int64 constants; strides default to ones), as tvm.relay.strided_slice builds it."""
    from .dyn import transform as dyn_transform     # op/dyn builds on this module's ops
    if axes is not None:
        raise AttrsError("strided_slice: `axes` cannot be combined with begin/end/strides given as "
                         "Relay expressions (dyn.strided_slice slices the leading axes)")

    def tensor(v, name):
        if isinstance(v, _expr.Expr):
            return v
        return _expr.const(np.array(static_ints(v, "strided_slice", name), dtype="int64"))
    begin = tensor(begin, "begin")
    if strides is None:
        strides = _expr.const(np.ones(_length(begin), dtype="int64"))
    return dyn_transform.strided_slice(data, begin, tensor(end, "end"), tensor(strides, "strides"), slice_mode)


def _length(expr) -> int:
    """The static length of a 1-D shape expression whose type is known (for default strides)."""
    ty = getattr(expr, "_checked_type_", None) or getattr(expr, "type_annotation", None)
    if isinstance(ty, TensorType) and ty.ndim == 1 and is_static(ty.shape[0]):
        return int(ty.shape[0])
    raise AttrsError("strided_slice: pass `strides` explicitly when `begin` is a Relay expression whose "
                     "length is not known yet (run InferType first, or annotate it)")


def take(data, indices, axis=None, batch_dims=0, mode="clip"):
    """Gather elements of `data` at `indices` along an axis, as numpy.take.

    Parameters
    ----------
    data : relay.Expr
        The tensor to read from.
    indices : relay.Expr
        An integer tensor of positions along `axis`.
    axis : None or int, optional
        The axis to index; None (the default) indexes the flattened `data`.
    batch_dims : int, optional
        The number of leading axes that `data` and `indices` share as batch axes, gathered
        batch by batch. Defaults to 0.
    mode : str, optional
        What an out-of-range index does: "clip" (the default) clamps it to the valid range,
        "wrap" takes it modulo the axis length, "fast" assumes every index is in range (so constant indices out of
        range are an InputError here).

    Returns
    -------
    result : relay.Expr
        The gathered tensor: data's shape with `axis` replaced by the shape of `indices`.
    """
    if mode == "fast":
        from .index_rules import check_constant_indices, constant_value, known_shape
        values, shape = constant_value(indices), known_shape(data)
        if values is not None and shape is not None and (axis is None or -len(shape) <= int(axis) < len(shape)):
            size = int(np.prod(shape)) if axis is None else shape[int(axis)]
            where = "the flattened data" if axis is None else f"axis {int(axis) % len(shape)}"
            check_constant_indices("take", np.asarray(values), size, where)
    return TAKE(data, indices, attrs=TakeAttrs(axis, batch_dims, mode))


__all__ = ["split", "strided_slice", "take"]
