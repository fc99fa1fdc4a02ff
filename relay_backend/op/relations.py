"""Shared type relations: identity (and its float-only / no-bool variants), broadcast,
broadcast-compare and reduce. All handle symbolic and Any dims (ir/shape_math.py rules).

A relation maps the argument types (and attrs) to the output type or raises TypeInferenceError.
Because it is plain Python over shapes, the VM also calls it on concrete shapes at run time.
"""
from ..errors import TypeInferenceError
from ..ir.dims import dim_to_str, is_static, shape_to_str
from ..ir.shape_math import broadcast_shapes
from ..ir.types import TensorType, TupleType, type_to_str


def expect_tensor(t, what: str = "argument") -> TensorType:
    if not isinstance(t, TensorType):
        raise TypeInferenceError(f"expected a tensor for {what}, got {type_to_str(t)}")
    return t


def expect_tuple(t, what: str = "argument") -> TupleType:
    if not isinstance(t, TupleType):
        raise TypeInferenceError(f"expected a tuple of tensors for {what}, got {type_to_str(t)}")
    for i, f in enumerate(t.fields):
        expect_tensor(f, f"{what} field {i}")
    return t


def identity_rel(arg_types, attrs=None) -> TensorType:
    """Output has the first input's type; every other input must match it (unary ops)."""
    first = expect_tensor(arg_types[0], "argument 0")
    for i, t in enumerate(arg_types[1:], start=1):
        expect_tensor(t, f"argument {i}")
        if t.dtype != first.dtype or len(t.shape) != len(first.shape):
            raise TypeInferenceError(f"argument {i} has type {type_to_str(t)}, expected {type_to_str(first)}")
    return first


def is_float_dtype(dtype: str) -> bool:
    return dtype.startswith("float") or dtype.startswith("bfloat")


def float_rel(op_name: str):
    """identity_rel for ops defined on floating-point tensors only (exp, log, sigmoid, ...):
    on an int or bool tensor numpy would compute in float and the op would have to truncate,
    so the call is rejected with the cast that fixes it."""
    def rel(arg_types, attrs=None) -> TensorType:
        t = identity_rel(arg_types, attrs)
        if not is_float_dtype(t.dtype):
            raise TypeInferenceError(f"{op_name} expects a floating-point tensor, got {t.dtype}; "
                                     f'cast it first (relay.cast(x, "float32"))')
        return t
    rel.__name__ = rel.__qualname__ = f"float_rel[{op_name}]"
    return rel


def no_bool_rel(op_name: str, base=identity_rel, hint: str = ""):
    """`base` for numeric ops that are meaningless on bool tensors (negative, subtract, divide,
    ...): a bool input is rejected, naming the logical op or cast to use instead."""
    def rel(arg_types, attrs=None) -> TensorType:
        out = base(arg_types, attrs)
        bools = [type_to_str(t) for t in arg_types if isinstance(t, TensorType) and t.dtype == "bool"]
        if bools:
            fix = hint or 'cast to a numeric type first (relay.cast(x, "int32"))'
            raise TypeInferenceError(f"{op_name} is not defined on bool tensors (got {', '.join(bools)}); {fix}")
        return out
    rel.__name__ = rel.__qualname__ = f"no_bool_rel[{op_name}]"
    return rel


def broadcast_shape(lhs_shape, rhs_shape, lhs=None, rhs=None) -> tuple:
    """numpy-style right-aligned broadcast of two shapes with TVM's rules for symbolic dims
    (shape_math.broadcast_dims): 1 or Any meets d gives d, n meets n gives n, and dims that
    cannot be proven equal (n vs m, n vs 3) are an error, as in TVM's BroadcastRel."""
    out, bad = broadcast_shapes(lhs_shape, rhs_shape)
    if bad is None:
        return out
    ndim = max(len(lhs_shape), len(rhs_shape))
    x = lhs_shape[bad - ndim] if bad - ndim >= -len(lhs_shape) else 1
    y = rhs_shape[bad - ndim] if bad - ndim >= -len(rhs_shape) else 1
    lt = type_to_str(lhs) if lhs is not None else shape_to_str(lhs_shape)
    rt = type_to_str(rhs) if rhs is not None else shape_to_str(rhs_shape)
    fix = ("" if is_static(x) and is_static(y) else
           "; symbolic dims broadcast only when they are provably equal or one of them is 1 "
           "(use the same size variable, or relay.Any() for a size known at run time)")
    raise TypeInferenceError(
        f"Incompatible broadcast type {lt} and {rt}: dimension {bad} (from the right: "
        f"{ndim - bad}) is {dim_to_str(x)} vs {dim_to_str(y)}{fix}")


def broadcast_rel(arg_types, attrs=None) -> TensorType:
    """Binary broadcast: dtypes must match; output dtype is the inputs' dtype."""
    lhs = expect_tensor(arg_types[0], "lhs")
    rhs = expect_tensor(arg_types[1], "rhs")
    if lhs.dtype != rhs.dtype:
        raise TypeInferenceError(
            f"data types {lhs.dtype} and {rhs.dtype} do not match in BroadcastRel "
            f"(lhs: {type_to_str(lhs)}, rhs: {type_to_str(rhs)}); insert a cast")
    return TensorType(broadcast_shape(lhs.shape, rhs.shape, lhs, rhs), lhs.dtype)


def broadcast_comp_rel(arg_types, attrs=None) -> TensorType:
    """Binary broadcast comparison: like broadcast_rel but the output is bool."""
    return TensorType(broadcast_rel(arg_types, attrs).shape, "bool")


def normalize_axes(axis, ndim: int, what: str = "axis") -> tuple:
    """Turn None / int / sequence (negative allowed) into sorted unique non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise TypeInferenceError(f"{what} {a} is out of range for a tensor of rank {ndim}")
        a = a + ndim if a < 0 else a
        if a in out:
            raise TypeInferenceError(f"{what} {a} is repeated in {axes}")
        out.append(a)
    return tuple(sorted(out))


def reduce_axes(attrs, ndim: int) -> tuple:
    """The axes a reduce op with (axis, exclude) attrs reduces over (axis None: all, as in TVM)."""
    if attrs.axis is None:
        return tuple(range(ndim))
    axes = normalize_axes(attrs.axis, ndim)
    if getattr(attrs, "exclude", False):
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


def reduce_shape(shape, axes, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def reduce_rel(arg_types, attrs) -> TensorType:
    """Reduction over attrs.axis (None = all) with keepdims/exclude; dtype preserved."""
    data = expect_tensor(arg_types[0], "data")
    axes = reduce_axes(attrs, data.ndim)
    return TensorType(reduce_shape(data.shape, axes, attrs.keepdims), data.dtype)


def arg_reduce_rel(op_name: str):
    """argmax/argmin: like reduce_rel but the output is int32 indices. An empty reduction has
    no index to return (numpy raises; compiled code would return its identity's index), so a
    reduced axis of size 0 is rejected here: at compile time for static shapes, and at run time
    for Any dims through the VM's shape check, which replays this relation."""
    def rel(arg_types, attrs) -> TensorType:
        data = expect_tensor(arg_types[0], "data")
        axes = reduce_axes(attrs, data.ndim)
        empty = [a for a in axes if is_static(data.shape[a]) and int(data.shape[a]) == 0]
        if empty:
            raise TypeInferenceError(
                f"{op_name}: axis {empty[0]} of data {type_to_str(data)} has size 0, so there is no index to "
                f"return; reduce over non-empty axes (axis={list(axes)} was asked for)")
        return TensorType(reduce_rel(arg_types, attrs).shape, "int32")
    rel.__name__ = rel.__qualname__ = f"arg_reduce_rel[{op_name}]"
    return rel
