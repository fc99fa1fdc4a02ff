"""Helpers shared by the nn operator files: attr normalization (padding, strides, layouts,
dtypes), error messages that list the argument types, Any-aware output-size arithmetic, and the
strided window view that the conv and pool references are built on.
"""
import numpy as np

from ...errors import AttrsError, OpNotImplemented, TypeInferenceError
from ...ir.attrs import as_int_tuple
from ...ir.dims import dim_to_str, shape_to_str
from ...ir.shape_math import dims_differ, window_out
from ...ir.types import TensorType, type_to_str
from ..accumulation import acc_dtype  # noqa: F401  (re-exported: references and computes share it)
from ..relations import expect_tensor


# --- error messages ------------------------------------------------------------------------------
def describe(**types) -> str:
    """'data: Tensor[(1, 4), float32], weight: Tensor[(16, 8), float32]' for an error message."""
    return ", ".join(f"{name}: {type_to_str(t)}" for name, t in types.items())


def rel_error(op_name: str, msg: str, **types) -> TypeInferenceError:
    """A TypeInferenceError naming the op, the problem and every argument's type."""
    suffix = f" ({describe(**types)})" if types else ""
    return TypeInferenceError(f"{op_name}: {msg}{suffix}")


def tensor_arg(op_name: str, t, what: str) -> TensorType:
    """expect_tensor with the op's name in the message."""
    try:
        return expect_tensor(t, what)
    except TypeInferenceError as err:
        raise TypeInferenceError(f"{op_name}: {err}") from None


def layout_operands(op_name: str, arg_types, rank: int, **layouts) -> dict:
    """The op's leading tensor arguments, named and laid out by `layouts` (name -> layout string,
    in argument order): each must be a tensor of `rank` dims and all must share a dtype. Returns
    {name: TensorType}, which is also the **types every later rel_error of the op lists."""
    types = {name: tensor_arg(op_name, t, name) for t, name in zip(arg_types, layouts)}
    same_dtype(op_name, **types)
    for name, layout in layouts.items():
        expect_rank(op_name, types[name], rank, f"{name} ({layout})", **types)
    return types


def expect_rank(op_name: str, t: TensorType, ranks, what: str, **types) -> None:
    ranks = (ranks,) if isinstance(ranks, int) else tuple(ranks)
    if t.ndim not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise rel_error(op_name, f"{what} must have rank {want}, got rank {t.ndim}", **(types or {what: t}))


def same_dtype(op_name: str, **types) -> str:
    """All tensors must share a dtype; returns it (the fix is an explicit cast)."""
    dtypes = {t.dtype for t in types.values()}
    if len(dtypes) != 1:
        raise rel_error(op_name, f"inputs must have the same dtype, got {sorted(dtypes)}; insert a cast",
                        **types)
    return next(iter(dtypes))


def norm_axis(op_name: str, axis: int, ndim: int, **types) -> int:
    """A single axis in [-ndim, ndim) made non-negative."""
    if not -ndim <= axis < ndim:
        raise rel_error(op_name, f"axis {axis} is out of range for a tensor of rank {ndim}", **types)
    return axis + ndim if axis < 0 else axis


def dim_matches(a, b) -> bool:
    """Two dims agree unless they provably differ (Any matches anything; symbolic dims that
    may be equal are checked again on the concrete shapes at run time, as TVM's AssertEQ)."""
    return not dims_differ(a, b)


def channel_vector(op_name: str, param: TensorType, channels, what: str, **types) -> None:
    """`param` must be a 1-D vector of length `channels` (bias, gamma, alpha, ...)."""
    if param.ndim != 1 or not dim_matches(param.shape[0], channels):
        raise rel_error(op_name, f"{what} must have shape ({dim_to_str(channels)},) to match the data's "
                                 f"channel axis, got {shape_to_str(param.shape)}", **types)


# --- attr normalization ----------------------------------------------------------------------------
def ints(value, length: int, name: str, minimum: int = 0) -> tuple:
    """An int or sequence of `length` ints (a scalar is broadcast), each >= minimum."""
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    out = as_int_tuple(value, length, name)
    if any(v < minimum for v in out):
        raise AttrsError(f"attribute {name}={out} must be >= {minimum} in every position")
    return out


def padding4(value, name: str = "padding") -> tuple:
    """Padding as 1, 2 or 4 ints -> (top, left, bottom, right), as TVM's get_pad_tuple2d."""
    vals = as_int_tuple(value, None, name) if not isinstance(value, int) else (int(value),)
    if len(vals) == 1:
        vals = vals * 4
    elif len(vals) == 2:
        vals = (vals[0], vals[1], vals[0], vals[1])
    elif len(vals) != 4:
        raise AttrsError(f"attribute {name}={tuple(vals)} must have 1, 2 or 4 values "
                         "(all sides; (height, width); or (top, left, bottom, right))")
    if any(v < 0 for v in vals):
        raise AttrsError(f"attribute {name}={tuple(vals)} must be non-negative")
    return tuple(vals)


def optional_int(value, name: str):
    """None or a positive int (e.g. units, channels)."""
    if value is None:
        return None
    try:
        v = int(value)
    except (TypeError, ValueError) as err:
        raise AttrsError(f"attribute {name} must be an int or None, got {value!r}") from err
    if v <= 0:
        raise AttrsError(f"attribute {name}={v} must be positive")
    return v


def normalize_conv_window(attrs, ndim: int, normalize_padding) -> None:
    """Normalize, in place on a frozen attrs dataclass, the fields every convolution-like op shares:
    strides and dilation (`ndim` ints, each >= 1), padding (by `normalize_padding(value)`, e.g.
    padding4 or an ndim-D padding_nd), groups (>= 1), channels (None or positive), kernel_size
    (None kept, else `ndim` ints >= 1) and out_dtype. One place, so conv2d, conv1d/3d, the
    transposed, deformable and backward-weight convolutions validate these alike."""
    def set_(name, value):
        object.__setattr__(attrs, name, value)
    set_("strides", ints(attrs.strides, ndim, "strides", minimum=1))
    set_("padding", normalize_padding(attrs.padding))
    set_("dilation", ints(attrs.dilation, ndim, "dilation", minimum=1))
    set_("groups", ints(attrs.groups, 1, "groups", minimum=1)[0])
    set_("channels", optional_int(attrs.channels, "channels"))
    if attrs.kernel_size is not None:
        set_("kernel_size", ints(attrs.kernel_size, ndim, "kernel_size", minimum=1))
    set_("out_dtype", out_dtype(attrs.out_dtype))


def normalize_pool_window(attrs, ndim: int, normalize_padding) -> None:
    """Normalize, in place on a frozen attrs dataclass, the window fields every sliding-window
    pool shares: pool_size, strides and dilation (`ndim` ints, each >= 1), padding (by
    `normalize_padding(value)`), ceil_mode and, where the attrs have it, count_include_pad (bools).
    One place, so the 1-D, 2-D and 3-D pools validate their windows alike."""
    def set_(name, value):
        object.__setattr__(attrs, name, value)
    set_("pool_size", ints(attrs.pool_size, ndim, "pool_size", minimum=1))
    set_("strides", ints(attrs.strides, ndim, "strides", minimum=1))
    set_("dilation", ints(attrs.dilation, ndim, "dilation", minimum=1))
    set_("padding", normalize_padding(attrs.padding))
    set_("ceil_mode", bool(attrs.ceil_mode))
    if hasattr(attrs, "count_include_pad"):
        set_("count_include_pad", bool(attrs.count_include_pad))


def out_dtype(value) -> str:
    """'' (same as the input) or a canonical numpy dtype name."""
    if value is None or value == "":
        return ""
    try:
        return str(np.dtype(value))
    except TypeError as err:
        raise AttrsError(f"attribute out_dtype={value!r} is not a dtype") from err


def check_layout(op_name: str, name: str, value: str, supported) -> None:
    """Layouts other than `supported` are not implemented (say so, and how to get there)."""
    if value not in supported:
        raise OpNotImplemented(
            f"{op_name}: {name}={value!r} is not supported (supported: {list(supported)}); "
            "insert a transpose to the supported layout before the op")


# --- shape arithmetic -----------------------------------------------------------------------------
def window_out_dim(size, kernel, stride: int, dilation: int, pad_before: int, pad_after: int,
                   ceil_mode: bool = False):
    """Output length of a sliding window (shape_math.window_out): symbolic sizes give a
    simplified expression, Any gives Any, and None means a static size fits no window.

    ceil_mode counts a partial last window too, but (PyTorch/TVM rule) it must start inside the
    input or its leading padding, never entirely in the trailing padding.
    """
    return window_out(size, kernel, stride, dilation, pad_before, pad_after, ceil_mode)


def result_dtype(attr_out_dtype: str, data_dtype: str) -> str:
    return attr_out_dtype or data_dtype


# --- reference helpers -----------------------------------------------------------------------------
def windows(x: np.ndarray, kernel, stride, dilation, out_hw) -> np.ndarray:
    """A read-only strided view (N, C, OH, OW, KH, KW) of the windows of an already padded NCHW
    array: view[n, c, i, j, p, q] = x[n, c, i*sh + p*dh, j*sw + q*dw]. No copy is made."""
    n, c = x.shape[:2]
    sn, sc, sh, sw = x.strides
    shape = (n, c, out_hw[0], out_hw[1], kernel[0], kernel[1])
    strides = (sn, sc, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1])
    return np.lib.stride_tricks.as_strided(x, shape=shape, strides=strides, writeable=False)


def pad_hw(x: np.ndarray, pads4, value=0) -> np.ndarray:
    """Pad the last two axes of an NCHW array by (top, left, bottom, right) with `value`."""
    top, left, bottom, right = pads4
    if not any(pads4):
        return x
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), mode="constant", constant_values=value)
