"""Shape operators: transpose, expand_dims, squeeze, broadcast_to, tile, repeat, reverse,
concatenate and stack. Reshape (op/reshape.py), the slicing ops split, strided_slice and take
(op/indexing.py) and tensor creation (full, zeros, ones, arange; op/creation.py) live in their
own files and are re-exported here.

Each op's te compute is injective: every output element is one load from an index computed
from the output index (op/index_math.py), so schedules can inline it into its consumers.

Every relation is plain Python over shapes that may hold symbolic dims or Any (ir/shape_math.py),
so the VM reuses it as the shape function; an output dim that cannot be known before run time
is Any.
"""
import dataclasses

import numpy as np

from ..errors import AttrsError, TypeInferenceError
from ..ir import expr as _expr
from ..ir.attrs import Attrs, always_printed, as_int_tuple
from ..ir.dims import dim_to_str, is_static, shape_to_str
from ..ir.shape_math import broadcast_dims, dims_differ, merge_dims, prod, total
from ..ir.types import TensorType, type_to_str
from . import samples as S
from . import index_math as IM
from .pattern import OpPattern
from .registry import Sample, defop
from .reshape import RESHAPE, ReshapeAttrs, reshape_shape  # noqa: F401  (reshape's block lives there)
from .relations import expect_tensor, expect_tuple, normalize_axes
from .static_args import is_dynamic_arg, static_ints


def _fail(op_name: str, msg: str, *types) -> TypeInferenceError:
    """A TypeInferenceError naming the op, the problem and the argument types."""
    suffix = f" (input: {', '.join(type_to_str(t) for t in types)})" if types else ""
    return TypeInferenceError(f"{op_name}: {msg}{suffix}")


def _axis(op_name: str, axis: int, ndim: int, t=None) -> int:
    """A single axis in [-ndim, ndim) made non-negative."""
    if not -ndim <= axis < ndim:
        raise _fail(op_name, f"axis {axis} is out of range for rank {ndim}; use -{ndim} <= axis < {ndim}",
                    *([t] if t is not None else []))
    return axis + ndim if axis < 0 else axis


_prod = prod


# --- transpose ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TransposeAttrs(Attrs):
    axes: tuple = always_printed(None)  # None reverses the dims

    def __post_init__(self):
        object.__setattr__(self, "axes", as_int_tuple(self.axes, name="axes"))


def _transpose_axes(data: TensorType, attrs) -> tuple:
    if attrs.axes is None:
        return tuple(reversed(range(data.ndim)))
    perm = tuple(a + data.ndim if a < 0 else a for a in attrs.axes)
    if sorted(perm) != list(range(data.ndim)):
        raise _fail("transpose", f"axes {attrs.axes} is not a permutation of the {data.ndim} dims", data)
    return perm


def _transpose_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "transpose data")
    return TensorType(tuple(data.shape[a] for a in _transpose_axes(data, attrs)), data.dtype)


def _transpose_compute(attrs, inputs, out_type):
    x = inputs[0]
    perm, dims = _transpose_axes(IM.probe_type(x), attrs), IM.te_dims(x)
    inverse = [perm.index(k) for k in range(len(perm))]
    return [IM.compute(TRANSPOSE, [dims[a] for a in perm], lambda *i: x[tuple(i[k] for k in inverse)])]


TRANSPOSE = defop(
    "transpose", inputs=("data",), attrs=TransposeAttrs, rel=_transpose_rel, pattern=OpPattern.INJECTIVE,
    compute=_transpose_compute,
    ref=lambda x, a: np.transpose(x, _transpose_axes(TensorType(x.shape, x.dtype), a)), level=3,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3))], TransposeAttrs()),
                         Sample([S.rand(rng, (2, 3, 4), "int32")], TransposeAttrs((1, 0, 2))),
                         Sample([S.rand(rng, (2, 1, 3, 2), "float64")], TransposeAttrs((-1, 0, -3, 2))),
                         Sample([S.rand(rng, (4,))], TransposeAttrs((0,)))])


# --- expand_dims / squeeze -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ExpandDimsAttrs(Attrs):
    axis: int = always_printed(0)
    num_newaxis: int = 1

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))
        object.__setattr__(self, "num_newaxis", int(self.num_newaxis))
        if self.num_newaxis < 0:
            raise AttrsError(f"expand_dims: num_newaxis must be >= 0, got {self.num_newaxis}")


def _expand_dims_shape(shape, attrs, data=None) -> tuple:
    ndim = len(shape)
    if not -ndim - 1 <= attrs.axis <= ndim:
        raise _fail("expand_dims", f"axis {attrs.axis} is out of range; use {-ndim - 1} <= axis <= {ndim}",
                    *([data] if data is not None else []))
    axis = attrs.axis + ndim + 1 if attrs.axis < 0 else attrs.axis
    return tuple(shape[:axis]) + (1,) * attrs.num_newaxis + tuple(shape[axis:])


def _expand_dims_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "expand_dims data")
    return TensorType(_expand_dims_shape(data.shape, attrs, data), data.dtype)


def _expand_dims_compute(attrs, inputs, out_type):
    x = inputs[0]
    oshape = _expand_dims_shape(IM.te_dims(x), attrs, IM.probe_type(x))
    axis = attrs.axis % (x.ndim + 1)  # the relation has checked the range
    return [IM.compute(EXPAND_DIMS, oshape, lambda *i: x[i[:axis] + i[axis + attrs.num_newaxis:]])]


EXPAND_DIMS = defop(
    "expand_dims", inputs=("data",), is_reshape=True, attrs=ExpandDimsAttrs, rel=_expand_dims_rel, pattern=OpPattern.INJECTIVE,
    compute=_expand_dims_compute,
    ref=lambda x, a: x.reshape(_expand_dims_shape(x.shape, a)), level=3,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3))], ExpandDimsAttrs(1)),
                         Sample([S.rand(rng, (2, 3), "int32")], ExpandDimsAttrs(-1, 2)),
                         Sample([S.rand(rng, ())], ExpandDimsAttrs(0, 3)),
                         Sample([S.rand(rng, (4,), "float64")], ExpandDimsAttrs(-2, 0))])


@dataclasses.dataclass(frozen=True)
class SqueezeAttrs(Attrs):
    axis: tuple = None  # None removes every static dim of size 1

    def __post_init__(self):
        object.__setattr__(self, "axis", as_int_tuple(self.axis, name="axis"))


def _squeeze_axes(data: TensorType, attrs) -> tuple:
    """The axes squeeze removes (axis None: every dim of size 1, which needs every dim static,
    as in TVM: whether a dynamic dim is 1 is known only at run time)."""
    if attrs.axis is None:
        dynamic = [k for k, d in enumerate(data.shape) if not is_static(d)]
        if dynamic:
            raise _fail("squeeze", f"axis must be given when data has dynamic dims (axis {dynamic[0]} is "
                        f"{dim_to_str(data.shape[dynamic[0]])}): squeeze(x, axis=[...]) names the size-1 "
                        f"axes to drop", data)
        return tuple(k for k, d in enumerate(data.shape) if d == 1)
    try:
        axes = normalize_axes(attrs.axis, data.ndim)
    except TypeInferenceError as err:
        raise _fail("squeeze", str(err), data) from None
    for a in axes:
        if is_static(data.shape[a]) and data.shape[a] != 1:
            raise _fail("squeeze", f"cannot squeeze axis {a}: its size is {data.shape[a]}, not 1", data)
    return axes


def _squeeze_shape(data: TensorType, attrs) -> tuple:
    axes = _squeeze_axes(data, attrs)
    return tuple(d for k, d in enumerate(data.shape) if k not in axes)


def _squeeze_compute(attrs, inputs, out_type):
    x = inputs[0]
    axes, dims = _squeeze_axes(IM.probe_type(x), attrs), IM.te_dims(x)
    kept = [k for k in range(x.ndim) if k not in axes]

    def body(*i):
        idx = [0] * x.ndim
        for j, k in enumerate(kept):
            idx[k] = i[j]
        return x[tuple(idx)]
    return [IM.compute(SQUEEZE, [dims[k] for k in kept], body)]


def _squeeze_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "squeeze data")
    return TensorType(_squeeze_shape(data, attrs), data.dtype)


SQUEEZE = defop(
    "squeeze", inputs=("data",), is_reshape=True, attrs=SqueezeAttrs, rel=_squeeze_rel, pattern=OpPattern.INJECTIVE,
    compute=_squeeze_compute,
    ref=lambda x, a: x.reshape(_squeeze_shape(TensorType(x.shape, x.dtype), a)), level=3,
    samples=lambda rng: [Sample([S.rand(rng, (1, 3, 1, 2))], SqueezeAttrs()),
                         Sample([S.rand(rng, (1, 3, 1), "int32")], SqueezeAttrs((0,))),
                         Sample([S.rand(rng, (2, 1, 1), "float64")], SqueezeAttrs((-1, 1))),
                         Sample([S.rand(rng, (1,))], SqueezeAttrs())])


# --- broadcast_to / tile / repeat / reverse ---------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ShapeAttrs(Attrs):
    shape: tuple = always_printed(())

    def __post_init__(self):
        object.__setattr__(self, "shape", as_int_tuple(self.shape, name="shape"))
        if any(d < 0 for d in self.shape):
            raise AttrsError(f"shape {self.shape} has a negative dim")


def _broadcast_to_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "broadcast_to data")
    target = attrs.shape
    if data.ndim > len(target):
        raise _fail("broadcast_to", f"cannot broadcast rank {data.ndim} to the lower rank shape {target}", data)
    for d, t in zip(data.shape, target[len(target) - data.ndim:]):
        if broadcast_dims(d, t) is None:
            raise _fail("broadcast_to", f"cannot broadcast to {shape_to_str(target)}: a dim of size "
                        f"{dim_to_str(d)} meets {t} (a dim must equal the target or be 1)", data)
    return TensorType(target, data.dtype)


def _broadcast_to_compute(attrs, inputs, out_type):
    x = inputs[0]
    lead = len(attrs.shape) - x.ndim
    return [IM.compute(BROADCAST_TO, attrs.shape,
                       lambda *i: x[IM.broadcast_index(i[lead:], IM.te_dims(x))])]


BROADCAST_TO = defop(
    "broadcast_to", inputs=("data",), attrs=ShapeAttrs, rel=_broadcast_to_rel, pattern=OpPattern.BROADCAST,
    compute=_broadcast_to_compute,
    ref=lambda x, a: np.array(np.broadcast_to(x, a.shape)), level=4,
    samples=lambda rng: [Sample([S.rand(rng, (3,))], ShapeAttrs((2, 3))),
                         Sample([S.rand(rng, (2, 1), "int32")], ShapeAttrs((4, 2, 5))),
                         Sample([S.rand(rng, (), "float64")], ShapeAttrs((2, 2))),
                         Sample([S.rand(rng, (1, 3))], ShapeAttrs((1, 3)))])


@dataclasses.dataclass(frozen=True)
class TileAttrs(Attrs):
    reps: tuple = always_printed(())

    def __post_init__(self):
        object.__setattr__(self, "reps", as_int_tuple(self.reps, name="reps"))
        if any(r < 0 for r in self.reps):
            raise AttrsError(f"tile: reps {self.reps} must be >= 0")


def _tile_shape(shape, reps) -> tuple:
    """numpy.tile: the shorter of shape and reps is padded with leading 1s."""
    n = max(len(shape), len(reps))
    shape = (1,) * (n - len(shape)) + tuple(shape)
    reps = (1,) * (n - len(reps)) + reps
    return tuple(0 if r == 0 else d if r == 1 else _prod((d, r)) for d, r in zip(shape, reps))


def _tile_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "tile data")
    return TensorType(_tile_shape(data.shape, attrs.reps), data.dtype)


def _tile_compute(attrs, inputs, out_type):
    """Output index i along a tiled dim d reads i mod d."""
    x = inputs[0]
    dims = IM.te_dims(x)
    oshape = _tile_shape(dims, attrs.reps)
    lead = len(oshape) - x.ndim
    return [IM.compute(TILE, oshape, lambda *i: x[tuple(IM.wrap_index(j, d) for j, d in zip(i[lead:], dims))])]


TILE = defop(
    "tile", inputs=("data",), attrs=TileAttrs, rel=_tile_rel, pattern=OpPattern.INJECTIVE, compute=_tile_compute,
    ref=lambda x, a: np.tile(x, a.reps), level=3,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3))], TileAttrs((2, 1))),
                         Sample([S.rand(rng, (3,), "int32")], TileAttrs((2, 2))),
                         Sample([S.rand(rng, (2, 1, 2), "float64")], TileAttrs((3,)))])


@dataclasses.dataclass(frozen=True)
class RepeatAttrs(Attrs):
    repeats: int = always_printed(1)
    axis: int = always_printed(0)      # Relay's default is "none": any int differs

    def __post_init__(self):
        object.__setattr__(self, "repeats", int(self.repeats))
        object.__setattr__(self, "axis", int(self.axis))
        if self.repeats < 1:
            raise AttrsError(f"repeat: repeats must be >= 1, got {self.repeats}")


def _repeat_shape(data: TensorType, attrs, dims=None):
    """(axis, output shape); `dims` gives the compute's (possibly symbolic) input dims."""
    axis = _axis("repeat", attrs.axis, data.ndim, data)
    shape = list(data.shape if dims is None else dims)
    shape[axis] = _prod((shape[axis], attrs.repeats))
    return axis, shape


def _repeat_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "repeat data")
    return TensorType(_repeat_shape(data, attrs)[1], data.dtype)


def _repeat_compute(attrs, inputs, out_type):
    x = inputs[0]
    axis, oshape = _repeat_shape(IM.probe_type(x), attrs, IM.te_dims(x))
    return [IM.compute(REPEAT, oshape,
                       lambda *i: x[i[:axis] + (i[axis] // attrs.repeats,) + i[axis + 1:]])]


REPEAT = defop(
    "repeat", inputs=("data",), attrs=RepeatAttrs, rel=_repeat_rel, pattern=OpPattern.INJECTIVE,
    compute=_repeat_compute,
    ref=lambda x, a: np.repeat(x, a.repeats, axis=a.axis), level=3,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3))], RepeatAttrs(2, 1)),
                         Sample([S.rand(rng, (3, 2), "int32")], RepeatAttrs(3, -2))])


@dataclasses.dataclass(frozen=True)
class AxisAttrs(Attrs):
    axis: int = 0

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))


def _reverse_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "reverse data")
    _axis("reverse", attrs.axis, data.ndim, data)
    return data


def _reverse_compute(attrs, inputs, out_type):
    x = inputs[0]
    axis, dims = _axis("reverse", attrs.axis, x.ndim, IM.probe_type(x)), IM.te_dims(x)
    return [IM.compute(REVERSE, dims, lambda *i: x[i[:axis] + (dims[axis] - 1 - i[axis],) + i[axis + 1:]])]


REVERSE = defop(
    "reverse", inputs=("data",), attrs=AxisAttrs, rel=_reverse_rel, pattern=OpPattern.INJECTIVE,
    compute=_reverse_compute,
    ref=lambda x, a: np.flip(x, a.axis).copy(), level=3,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3))], AxisAttrs(1)),
                         Sample([S.rand(rng, (4, 2), "int32")], AxisAttrs(-2))])


# --- concatenate / stack (one input of TupleType) -------------------------------------------------------
def _merge_dim(op_name, a, b, k, types):
    """Two dims that must agree: an error only when they provably differ (TVM's AssertEQ; the
    VM checks the concrete shapes at run time); the first that is not Any is kept."""
    if dims_differ(a, b):
        raise _fail(op_name, f"dim {k} differs between inputs ({dim_to_str(a)} vs {dim_to_str(b)})", *types)
    return merge_dims(a, b)


def _tuple_fields(op_name, t):
    fields = expect_tuple(t, f"{op_name} data").fields
    if not fields:
        raise _fail(op_name, "needs at least one tensor")
    dtypes = {f.dtype for f in fields}
    if len(dtypes) != 1 or len({f.ndim for f in fields}) != 1:
        raise _fail(op_name, "all inputs must have the same rank and dtype", *fields)
    return fields


def _concatenate_rel(arg_types, attrs):
    fields = _tuple_fields("concatenate", arg_types[0])
    ndim = fields[0].ndim
    if ndim == 0:
        raise _fail("concatenate", "cannot concatenate 0-d tensors; use stack", *fields)
    axis = _axis("concatenate", attrs.axis, ndim, fields[0])
    shape = list(fields[0].shape)
    for f in fields[1:]:
        for k in range(ndim):
            if k != axis:
                shape[k] = _merge_dim("concatenate", shape[k], f.shape[k], k, fields)
    shape[axis] = total(f.shape[axis] for f in fields)
    return TensorType(shape, fields[0].dtype)


def _stack_rel(arg_types, attrs):
    fields = _tuple_fields("stack", arg_types[0])
    shape = list(fields[0].shape)
    for f in fields[1:]:
        shape = [_merge_dim("stack", a, b, k, fields) for k, (a, b) in enumerate(zip(shape, f.shape))]
    out = _expand_dims_shape(tuple(shape), ExpandDimsAttrs(attrs.axis), fields[0])
    axis = attrs.axis + len(shape) + 1 if attrs.axis < 0 else attrs.axis
    return TensorType(out[:axis] + (len(fields),) + out[axis + 1:], fields[0].dtype)


def _list_samples(shapes_axis_dtype):
    def gen(rng):
        return [Sample([[S.rand(rng, s, dtype) for s in shapes]], AxisAttrs(axis))
                for shapes, axis, dtype in shapes_axis_dtype]
    return gen


def _concatenate_compute(attrs, inputs, out_type):
    """A Select chain over the axis offsets; every load index is clamped into its own input, since
    a backend may evaluate every branch of a Select."""
    axis = _axis("concatenate", attrs.axis, inputs[0].ndim, IM.probe_type(inputs[0]))
    dims = [IM.te_dims(t) for t in inputs]
    oshape = [next((d[k] for d in dims if IM.is_static(d[k])), dims[0][k]) for k in range(len(dims[0]))]
    oshape[axis] = sum(d[axis] for d in dims)
    parts = [(t, d[axis]) for t, d in zip(inputs, dims) if not (IM.is_static(d[axis]) and d[axis] == 0)]

    def body(*i):
        cases, offset = [], 0
        for t, size in parts:
            j = IM.clamp(i[axis] - offset, 0, IM.dim_expr(size) - 1)
            cases.append((i[axis] < offset + size, t[i[:axis] + (j,) + i[axis + 1:]]))
            offset = offset + size
        return IM.select_chain(cases)
    return [IM.compute(CONCATENATE, oshape, body)]


def _stack_compute(attrs, inputs, out_type):
    ndim = inputs[0].ndim
    _expand_dims_shape(IM.te_dims(inputs[0]), ExpandDimsAttrs(attrs.axis), IM.probe_type(inputs[0]))
    axis = attrs.axis % (ndim + 1)  # checked just above
    dims = IM.te_dims(inputs[0])
    oshape = dims[:axis] + (len(inputs),) + dims[axis:]

    def body(*i):
        rest = i[:axis] + i[axis + 1:]
        return IM.select_chain([(i[axis] == k, t[rest]) for k, t in enumerate(inputs)])
    return [IM.compute(STACK, oshape, body)]


CONCATENATE = defop(
    "concatenate", inputs=("data",), attrs=AxisAttrs, rel=_concatenate_rel, pattern=OpPattern.INJECTIVE,
    compute=_concatenate_compute,
    ref=lambda xs, a: np.concatenate(list(xs), axis=a.axis), level=1,
    samples=_list_samples([([(2, 3), (4, 3)], 0, "float32"), ([(2, 1), (2, 3), (2, 2)], -1, "int32"),
                           ([(5,)], 0, "float64"), ([(1, 2, 2), (1, 3, 2)], 1, "float32")]))
STACK = defop(
    "stack", inputs=("data",), attrs=AxisAttrs, rel=_stack_rel, pattern=OpPattern.INJECTIVE, compute=_stack_compute,
    ref=lambda xs, a: np.stack(list(xs), axis=a.axis), level=3,
    samples=_list_samples([([(2, 3), (2, 3)], 0, "float32"), ([(3,), (3,), (3,)], -1, "int32"),
                           ([(), ()], 0, "float64"), ([(2, 2)] * 2, 2, "float32")]))


# --- Python constructors with tvm.relay's names --------------------------------------------------------------
def _dyn():
    """The dyn.* constructors (op/dyn builds on this module's ops, so it is imported on use)."""
    from .dyn import transform as dyn_transform
    return dyn_transform


def reshape(data, newshape, allowzero=False):
    """Give `data` a new shape holding the same elements in the same order.

    Besides plain sizes, `newshape` may hold Relay's special codes: 0 copies the input's
    dimension at that position, -1 is inferred from the remaining elements (at most one),
    -2 copies all the remaining input dimensions, -3 merges two consecutive input dimensions
    into one, and -4 splits one input dimension into the two sizes that follow it (one of
    which may be -1).

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    newshape : int or tuple of int or relay.Expr
        The target shape, with the codes above. A Relay expression that is not a constant
        (a shape known only at run time) builds dyn.reshape instead.
    allowzero : bool, optional
        If True, a 0 in `newshape` means a dimension of size zero rather than "copy the
        input's dimension". Defaults to False.

    Returns
    -------
    result : relay.Expr
        The reshaped tensor.
    """
    if is_dynamic_arg(newshape):
        return _dyn().reshape(data, newshape, allowzero)
    return RESHAPE(data, attrs=ReshapeAttrs(static_ints(newshape, "reshape", "newshape"), allowzero))


def transpose(data, axes=None):
    """Permute the axes of `data`.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    axes : None or list of int, optional
        The new order of the axes: output axis i is input axis axes[i]; negative values count
        from the last axis. None (the default) reverses the axes.

    Returns
    -------
    result : relay.Expr
        The transposed tensor.
    """
    return TRANSPOSE(data, attrs=TransposeAttrs(axes))


def expand_dims(data, axis, num_newaxis=1):
    """Insert new axes of length 1 into the shape of `data`.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    axis : int or relay.Expr
        Where the new axes go, in -ndim-1 .. ndim (negative values count from the end).
        A non-constant Relay expression builds dyn.expand_dims.
    num_newaxis : int, optional
        How many axes to insert at `axis`. Defaults to 1.

    Returns
    -------
    result : relay.Expr
        The tensor with `num_newaxis` more dimensions.
    """
    if is_dynamic_arg(axis):
        return _dyn().expand_dims(data, axis, num_newaxis)
    axis = static_ints(axis, "expand_dims", "axis")[0] if not isinstance(axis, int) else axis
    return EXPAND_DIMS(data, attrs=ExpandDimsAttrs(axis, num_newaxis))


def squeeze(data, axis=None):
    """Remove axes of length 1 from the shape of `data`.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    axis : None or list of int or relay.Expr, optional
        The axes to remove; each must have length 1. None (the default) removes every axis of
        length 1. A non-constant Relay expression builds dyn.squeeze.

    Returns
    -------
    result : relay.Expr
        The tensor without those axes.
    """
    if is_dynamic_arg(axis):
        return _dyn().squeeze(data, axis)
    if axis is not None and not isinstance(axis, (int, list, tuple)):
        axis = static_ints(axis, "squeeze", "axis")
    return SQUEEZE(data, attrs=SqueezeAttrs(axis))


def broadcast_to(data, shape):
    """Broadcast `data` to a larger shape, as numpy.broadcast_to.

    Parameters
    ----------
    data : relay.Expr
        The input tensor; each of its dimensions must be 1 or equal the target's.
    shape : tuple of int or relay.Expr
        The target shape. A non-constant Relay expression builds dyn.broadcast_to.

    Returns
    -------
    result : relay.Expr
        The broadcast tensor.
    """
    if is_dynamic_arg(shape):
        return _dyn().broadcast_to(data, shape)
    return BROADCAST_TO(data, attrs=ShapeAttrs(static_ints(shape, "broadcast_to", "shape")))


def tile(data, reps):
    """Repeat the whole of `data` along each axis, as numpy.tile.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    reps : tuple of int or relay.Expr
        How many copies to lay side by side along each axis; when it is longer than the rank
        of `data`, `data` gets leading axes of length 1 first. A non-constant Relay
        expression builds dyn.tile.

    Returns
    -------
    result : relay.Expr
        The tiled tensor.
    """
    if is_dynamic_arg(reps):
        return _dyn().tile(data, reps)
    return TILE(data, attrs=TileAttrs(static_ints(reps, "tile", "reps")))


def repeat(data, repeats, axis):
    """Repeat each element of `data` along one axis, as numpy.repeat.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    repeats : int
        How many times each element is repeated (at least 1).
    axis : int
        The axis along which to repeat; negative values count from the last axis.

    Returns
    -------
    result : relay.Expr
        The tensor with axis `axis` `repeats` times longer.
    """
    return REPEAT(data, attrs=RepeatAttrs(repeats, axis))


def reverse(data, axis):
    """Reverse the order of the elements of `data` along one axis.

    Parameters
    ----------
    data : relay.Expr
        The input tensor.
    axis : int
        The axis to flip; negative values count from the last axis.

    Returns
    -------
    result : relay.Expr
        The flipped tensor, of data's shape.
    """
    return REVERSE(data, attrs=AxisAttrs(axis))


def _as_tuple_expr(op_name, data):
    if isinstance(data, _expr.Expr):
        return data
    data = list(data)
    if not data:
        raise AttrsError(f"relay.{op_name} requires data to be non-empty")
    return _expr.Tuple(data)


def concatenate(data, axis):
    """Join tensors along an existing axis.

    Parameters
    ----------
    data : list of relay.Expr or relay.Expr
        The tensors to join (a non-empty list, or an expression of tuple type); they must
        agree in rank, dtype and every dimension but `axis`.
    axis : int
        The axis to join along; negative values count from the last axis.

    Returns
    -------
    result : relay.Expr
        The joined tensor.
    """
    return CONCATENATE(_as_tuple_expr("concatenate", data), attrs=AxisAttrs(axis))


def stack(data, axis):
    """Join tensors of one shape along a new axis.

    Parameters
    ----------
    data : list of relay.Expr or relay.Expr
        The tensors to stack (a non-empty list, or an expression of tuple type), all of one
        shape and dtype.
    axis : int
        Where the new axis goes in the result, in -ndim-1 .. ndim.

    Returns
    -------
    result : relay.Expr
        The stacked tensor, one dimension more than each input.
    """
    return STACK(_as_tuple_expr("stack", data), attrs=AxisAttrs(axis))


from .indexing import *  # noqa: E402,F401,F403  (split, strided_slice, take)
from .indexing import __all__ as _indexing_all  # noqa: E402
from .creation import *  # noqa: E402,F401,F403  (full, zeros, ones, arange)
from .creation import __all__ as _creation_all  # noqa: E402
from .shape_query import ndarray_size, shape_of  # noqa: E402,F401  (relay.op.transform's, as TVM)

__all__ = ["reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "tile", "repeat", "reverse",
           "concatenate", "stack"] + _indexing_all + _creation_all + ["shape_of", "ndarray_size"]

from .transform_more import *  # noqa: E402,F401,F403  (issue 20's shape/indexing ops, as tvm.relay.op.transform)
from .transform_more import __all__ as _more_all  # noqa: E402

__all__ += _more_all
