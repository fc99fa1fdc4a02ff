"""Shape operators: reshape, transpose, expand_dims, squeeze, broadcast_to, tile, repeat, reverse,
concatenate and stack. Slicing ops (split, strided_slice, take) live in op/indexing.py and tensor
creation (full, zeros, ones, arange) in op/creation.py; both are re-exported here.

Every relation is plain Python over shapes that may hold Any, so the VM reuses it as the shape
function; an output dim that cannot be known before run time is Any.
"""
import dataclasses
import math

import numpy as np

from ..errors import AttrsError, TypeInferenceError
from ..ir import expr as _expr
from ..ir.attrs import Attrs, as_int_tuple
from ..ir.types import Any, TensorType, is_any, shape_to_str, type_to_str
from . import samples as S
from .pattern import OpPattern
from .registry import Sample, defop
from .relations import expect_tensor, expect_tuple, normalize_axes
from .static_args import static_ints


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


def _prod(dims):
    """Product of dims, or Any if one of them is Any."""
    return Any() if any(is_any(d) for d in dims) else math.prod(dims)


# --- reshape ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ReshapeAttrs(Attrs):
    """newshape with Relay's codes: 0 copy a dim, -1 infer, -2 copy the rest, -3 merge two dims,
    -4 split one dim into the next two values (one may be -1). allowzero makes 0 a literal 0."""
    newshape: tuple = ()
    allowzero: bool = False

    def __post_init__(self):
        ns = as_int_tuple(self.newshape, name="newshape")
        object.__setattr__(self, "newshape", ns)
        object.__setattr__(self, "allowzero", bool(self.allowzero))
        i, inferred = 0, 0
        while i < len(ns):
            v = ns[i]
            if v < -4:
                raise AttrsError(f"reshape: newshape {ns} has invalid code {v}; use a size >= 0 or -1..-4")
            if v == -4:
                pair = ns[i + 1:i + 3]
                if len(pair) != 2 or any(p == 0 or p < -1 for p in pair) or pair == (-1, -1):
                    raise AttrsError(f"reshape: -4 in newshape {ns} must be followed by two sizes "
                                     "(positive, at most one of them -1)")
                i += 3
                continue
            inferred += v == -1
            i += 1
        if inferred > 1:
            raise AttrsError(f"reshape: newshape {ns} has more than one -1; only one dim can be inferred")


def reshape_shape(data: TensorType, attrs: ReshapeAttrs) -> tuple:
    """The output shape of reshape (Any where it depends on an Any input dim)."""
    ishape, ns, out = data.shape, attrs.newshape, []
    used_in, used_out, infer_at, src, i = set(), set(), None, 0, 0

    def copy_dim(k):
        if k >= len(ishape):
            raise _fail("reshape", f"newshape {ns} refers to input dim {k}, but the input has rank "
                        f"{len(ishape)}", data)
        used_in.add(k)
        used_out.add(len(out))
        return ishape[k]

    while i < len(ns):
        v = ns[i]
        if v > 0 or (v == 0 and attrs.allowzero):
            out.append(v)
            src += 1
        elif v == 0:
            out.append(copy_dim(src))
            src += 1
        elif v == -1:
            infer_at = len(out)
            out.append(None)
            src += 1
        elif v == -2:
            while src < len(ishape):
                out.append(copy_dim(src))
                src += 1
        elif v == -3:
            a, b = copy_dim(src), copy_dim(src + 1)  # both record the same output slot
            out.append(_prod((a, b)))
            src += 2
        else:  # -4: split one input dim into ns[i+1] * ns[i+2]
            d = copy_dim(src)
            a, b = ns[i + 1], ns[i + 2]
            if -1 in (a, b):
                known = b if a == -1 else a
                if not is_any(d) and d % known:
                    raise _fail("reshape", f"-4 cannot split dim {src} of size {d} by {known}", data)
                rest = Any() if is_any(d) else d // known
                a, b = (rest, b) if a == -1 else (a, rest)
            elif not is_any(d) and a * b != d:
                raise _fail("reshape", f"-4 splits dim {src} of size {d} into {a} x {b} = {a * b}", data)
            used_out.update((len(out), len(out) + 1))
            out.extend((a, b))
            src += 1
            i += 2
        i += 1

    if infer_at is not None:
        old = [d for k, d in enumerate(ishape) if k not in used_in]
        new = [d for k, d in enumerate(out) if k not in used_out and k != infer_at]
        old_size, new_size = _prod(old), _prod(new)
        if is_any(old_size) or is_any(new_size):
            out[infer_at] = Any()
        elif new_size == 0 or old_size % new_size:
            raise _fail("reshape", f"cannot infer the -1 in newshape {ns}: {old_size} elements do not "
                        f"divide into {new_size}", data)
        else:
            out[infer_at] = old_size // new_size
    total_in, total_out = _prod(ishape), _prod(out)
    if not is_any(total_in) and not is_any(total_out) and total_in != total_out:
        raise TypeInferenceError(f"reshape: cannot reshape {type_to_str(data)} to {shape_to_str(ns)}: "
                                 f"{total_in} elements vs {total_out}")
    return tuple(out)


def _reshape_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "reshape data")
    return TensorType(reshape_shape(data, attrs), data.dtype)


def _reshape_ref(x, attrs):
    return x.reshape(reshape_shape(TensorType(x.shape, x.dtype), attrs))


def _reshape_samples(rng):
    cases = [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((2, 3, 4), (4, 0, 2)), ((2, 3, 4), (0, -1)),
             ((2, 3, 4), (-2,)), ((2, 3, 4), (2, -2)), ((2, 3, 4), (-3, 4)), ((2, 3, 4, 5), (-3, -3)),
             ((2, 3, 4), (-4, 1, 2, -2)), ((6, 4), (-4, -1, 3, 0)), ((2, 3), (3, 2)), ((), (1, 1)),
             ((5,), (5, 1))]
    return [Sample([S.rand(rng, shape, ("float32", "int32", "float64")[k % 3])], ReshapeAttrs(ns))
            for k, (shape, ns) in enumerate(cases)]


RESHAPE = defop("reshape", inputs=("data",), attrs=ReshapeAttrs, rel=_reshape_rel, pattern=OpPattern.INJECTIVE,
                ref=_reshape_ref, samples=_reshape_samples, level=3)


# --- transpose ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TransposeAttrs(Attrs):
    axes: tuple = None  # None reverses the dims

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


TRANSPOSE = defop(
    "transpose", inputs=("data",), attrs=TransposeAttrs, rel=_transpose_rel, pattern=OpPattern.INJECTIVE,
    ref=lambda x, a: np.transpose(x, _transpose_axes(TensorType(x.shape, x.dtype), a)), level=3,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3))], TransposeAttrs()),
                         Sample([S.rand(rng, (2, 3, 4), "int32")], TransposeAttrs((1, 0, 2))),
                         Sample([S.rand(rng, (2, 1, 3, 2), "float64")], TransposeAttrs((-1, 0, -3, 2))),
                         Sample([S.rand(rng, (4,))], TransposeAttrs((0,)))])


# --- expand_dims / squeeze -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ExpandDimsAttrs(Attrs):
    axis: int = 0
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


EXPAND_DIMS = defop(
    "expand_dims", inputs=("data",), attrs=ExpandDimsAttrs, rel=_expand_dims_rel, pattern=OpPattern.INJECTIVE,
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


def _squeeze_shape(data: TensorType, attrs) -> tuple:
    if attrs.axis is None:
        return tuple(d for d in data.shape if is_any(d) or d != 1)
    try:
        axes = normalize_axes(attrs.axis, data.ndim)
    except TypeInferenceError as err:
        raise _fail("squeeze", str(err), data) from None
    for a in axes:
        if not is_any(data.shape[a]) and data.shape[a] != 1:
            raise _fail("squeeze", f"cannot squeeze axis {a}: its size is {data.shape[a]}, not 1", data)
    return tuple(d for k, d in enumerate(data.shape) if k not in axes)


def _squeeze_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "squeeze data")
    return TensorType(_squeeze_shape(data, attrs), data.dtype)


SQUEEZE = defop(
    "squeeze", inputs=("data",), attrs=SqueezeAttrs, rel=_squeeze_rel, pattern=OpPattern.INJECTIVE,
    ref=lambda x, a: x.reshape(_squeeze_shape(TensorType(x.shape, x.dtype), a)), level=3,
    samples=lambda rng: [Sample([S.rand(rng, (1, 3, 1, 2))], SqueezeAttrs()),
                         Sample([S.rand(rng, (1, 3, 1), "int32")], SqueezeAttrs((0,))),
                         Sample([S.rand(rng, (2, 1, 1), "float64")], SqueezeAttrs((-1, 1))),
                         Sample([S.rand(rng, (1,))], SqueezeAttrs())])


# --- broadcast_to / tile / repeat / reverse ---------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ShapeAttrs(Attrs):
    shape: tuple = ()

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
        if not (is_any(d) or d == t or d == 1):
            raise _fail("broadcast_to", f"cannot broadcast to {shape_to_str(target)}: a dim of size {d} "
                        f"meets {t} (a dim must equal the target or be 1)", data)
    return TensorType(target, data.dtype)


BROADCAST_TO = defop(
    "broadcast_to", inputs=("data",), attrs=ShapeAttrs, rel=_broadcast_to_rel, pattern=OpPattern.BROADCAST,
    ref=lambda x, a: np.array(np.broadcast_to(x, a.shape)), level=4,
    samples=lambda rng: [Sample([S.rand(rng, (3,))], ShapeAttrs((2, 3))),
                         Sample([S.rand(rng, (2, 1), "int32")], ShapeAttrs((4, 2, 5))),
                         Sample([S.rand(rng, (), "float64")], ShapeAttrs((2, 2))),
                         Sample([S.rand(rng, (1, 3))], ShapeAttrs((1, 3)))])


@dataclasses.dataclass(frozen=True)
class TileAttrs(Attrs):
    reps: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "reps", as_int_tuple(self.reps, name="reps"))
        if any(r < 0 for r in self.reps):
            raise AttrsError(f"tile: reps {self.reps} must be >= 0")


def _tile_rel(arg_types, attrs):
    """numpy.tile: the shorter of shape and reps is padded with leading 1s."""
    data = expect_tensor(arg_types[0], "tile data")
    n = max(data.ndim, len(attrs.reps))
    shape = (1,) * (n - data.ndim) + data.shape
    reps = (1,) * (n - len(attrs.reps)) + attrs.reps
    return TensorType(tuple(0 if r == 0 else d if r == 1 else _prod((d, r)) for d, r in zip(shape, reps)),
                      data.dtype)


TILE = defop(
    "tile", inputs=("data",), attrs=TileAttrs, rel=_tile_rel, pattern=OpPattern.INJECTIVE,
    ref=lambda x, a: np.tile(x, a.reps), level=3,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3))], TileAttrs((2, 1))),
                         Sample([S.rand(rng, (3,), "int32")], TileAttrs((2, 2))),
                         Sample([S.rand(rng, (2, 1, 2), "float64")], TileAttrs((3,)))])


@dataclasses.dataclass(frozen=True)
class RepeatAttrs(Attrs):
    repeats: int = 1
    axis: int = 0

    def __post_init__(self):
        object.__setattr__(self, "repeats", int(self.repeats))
        object.__setattr__(self, "axis", int(self.axis))
        if self.repeats < 1:
            raise AttrsError(f"repeat: repeats must be >= 1, got {self.repeats}")


def _repeat_rel(arg_types, attrs):
    data = expect_tensor(arg_types[0], "repeat data")
    axis = _axis("repeat", attrs.axis, data.ndim, data)
    shape = list(data.shape)
    shape[axis] = _prod((shape[axis], attrs.repeats))
    return TensorType(shape, data.dtype)


REPEAT = defop(
    "repeat", inputs=("data",), attrs=RepeatAttrs, rel=_repeat_rel, pattern=OpPattern.INJECTIVE,
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


REVERSE = defop(
    "reverse", inputs=("data",), attrs=AxisAttrs, rel=_reverse_rel, pattern=OpPattern.INJECTIVE,
    ref=lambda x, a: np.flip(x, a.axis).copy(), level=3,
    samples=lambda rng: [Sample([S.rand(rng, (2, 3))], AxisAttrs(1)),
                         Sample([S.rand(rng, (4, 2), "int32")], AxisAttrs(-2))])


# --- concatenate / stack (one input of TupleType) -------------------------------------------------------
def _merge_dim(op_name, a, b, k, types):
    """Two dims that must agree: static wins over Any; two different statics are an error."""
    if is_any(a):
        return b
    if is_any(b) or a == b:
        return a
    raise _fail(op_name, f"dim {k} differs between inputs ({a} vs {b})", *types)


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
    sizes = [f.shape[axis] for f in fields]
    shape[axis] = Any() if any(is_any(d) for d in sizes) else sum(sizes)
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


CONCATENATE = defop(
    "concatenate", inputs=("data",), attrs=AxisAttrs, rel=_concatenate_rel, pattern=OpPattern.INJECTIVE,
    ref=lambda xs, a: np.concatenate(list(xs), axis=a.axis), level=1,
    samples=_list_samples([([(2, 3), (4, 3)], 0, "float32"), ([(2, 1), (2, 3), (2, 2)], -1, "int32"),
                           ([(5,)], 0, "float64"), ([(1, 2, 2), (1, 3, 2)], 1, "float32")]))
STACK = defop(
    "stack", inputs=("data",), attrs=AxisAttrs, rel=_stack_rel, pattern=OpPattern.INJECTIVE,
    ref=lambda xs, a: np.stack(list(xs), axis=a.axis), level=3,
    samples=_list_samples([([(2, 3), (2, 3)], 0, "float32"), ([(3,), (3,), (3,)], -1, "int32"),
                           ([(), ()], 0, "float64"), ([(2, 2)] * 2, 2, "float32")]))


# --- Python constructors with tvm.relay's names --------------------------------------------------------------
def reshape(data, newshape, allowzero=False):
    """relay.reshape: codes 0 (copy), -1 (infer), -2 (copy rest), -3 (merge two), -4 (split one)."""
    return RESHAPE(data, attrs=ReshapeAttrs(static_ints(newshape, "reshape", "newshape"), allowzero))


def transpose(data, axes=None):
    """relay.transpose: permute dims by `axes` (None reverses them)."""
    return TRANSPOSE(data, attrs=TransposeAttrs(axes))


def expand_dims(data, axis, num_newaxis=1):
    """relay.expand_dims: insert `num_newaxis` size-1 dims at `axis`."""
    return EXPAND_DIMS(data, attrs=ExpandDimsAttrs(axis, num_newaxis))


def squeeze(data, axis=None):
    """relay.squeeze: drop size-1 dims (all of them when axis is None)."""
    return SQUEEZE(data, attrs=SqueezeAttrs(axis))


def broadcast_to(data, shape):
    """relay.broadcast_to: numpy-style broadcast to a static `shape`."""
    return BROADCAST_TO(data, attrs=ShapeAttrs(static_ints(shape, "broadcast_to", "shape")))


def tile(data, reps):
    """relay.tile: repeat the whole tensor `reps` times along each dim (numpy.tile)."""
    return TILE(data, attrs=TileAttrs(static_ints(reps, "tile", "reps")))


def repeat(data, repeats, axis):
    """relay.repeat: repeat each element `repeats` times along `axis` (numpy.repeat)."""
    return REPEAT(data, attrs=RepeatAttrs(repeats, axis))


def reverse(data, axis):
    """relay.reverse: flip along `axis`."""
    return REVERSE(data, attrs=AxisAttrs(axis))


def _as_tuple_expr(op_name, data):
    if isinstance(data, _expr.Expr):
        return data
    data = list(data)
    if not data:
        raise AttrsError(f"relay.{op_name} requires data to be non-empty")
    return _expr.Tuple(data)


def concatenate(data, axis):
    """relay.concatenate: join a list (or tuple expr) of tensors along an existing `axis`."""
    return CONCATENATE(_as_tuple_expr("concatenate", data), attrs=AxisAttrs(axis))


def stack(data, axis):
    """relay.stack: join a list (or tuple expr) of same-shaped tensors along a new `axis`."""
    return STACK(_as_tuple_expr("stack", data), attrs=AxisAttrs(axis))


from .indexing import *  # noqa: E402,F401,F403  (split, strided_slice, take)
from .indexing import __all__ as _indexing_all  # noqa: E402
from .creation import *  # noqa: E402,F401,F403  (full, zeros, ones, arange)
from .creation import __all__ as _creation_all  # noqa: E402

__all__ = ["reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "tile", "repeat", "reverse",
           "concatenate", "stack"] + _indexing_all + _creation_all
