"""Helpers shared by the qnn operator files: the quantized dtypes and their ranges, the checks
every relation makes of a scale / zero-point input (scalar, or one value per channel of an
axis), numpy broadcasting of such parameters in the references, and their Relay counterpart
used by the canonicalizations (TVM's ExpandBiasToMatchAxis).

Quantization parameters are inputs (Relay expressions), as in TVM v0.18: scales are float32,
zero points int32, each either a scalar (per-tensor; a 1-element vector counts as one) or a
vector with one value per index of the op's `axis` (per-channel).
"""
import numpy as np

from ...errors import AttrsError
from ...ir.dims import dim_to_str
from ...ir.expr import Constant, const
from ...ir.types import TensorType
from .. import transform as _transform
from ..nn import _common as C

QUANT_DTYPES = ("int8", "uint8", "int16", "uint16", "int32")
STORAGE_DTYPES = ("int8", "uint8", "int16", "uint16", "int32")


def qrange(dtype: str) -> tuple:
    """(min, max) of an integer dtype, the bounds quantized values are clipped to."""
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def check_dtype_attr(op_name: str, name: str, value, allowed) -> str:
    """A dtype attribute normalized to its numpy name and checked against `allowed`."""
    try:
        dtype = str(np.dtype(value))
    except TypeError as err:
        raise AttrsError(f"{op_name}: attribute {name}={value!r} is not a dtype") from err
    if dtype not in allowed:
        raise AttrsError(f"{op_name}: attribute {name}={dtype} must be one of {list(allowed)}")
    return dtype


def check_data(op_name: str, t, what: str, allowed, **types) -> TensorType:
    """A tensor input whose dtype must be one of `allowed`."""
    t = C.tensor_arg(op_name, t, what)
    if t.dtype not in allowed:
        raise C.rel_error(op_name, f"{what} must have dtype {' or '.join(allowed)}, got {t.dtype}",
                          **(types or {what: t}))
    return t


def check_qparam(op_name: str, t, what: str, dtype: str, channels=None, **types) -> TensorType:
    """A scale (float32) or zero point (int32): a scalar, a 1-element vector, or (when `channels`
    is given) a vector of `channels` values, one per index of the quantization axis."""
    t = C.tensor_arg(op_name, t, what)
    if t.dtype != dtype:
        raise C.rel_error(op_name, f"{what} must be {dtype}, got {t.dtype}; insert a cast",
                          **(types or {what: t}))
    if t.ndim == 0 or (t.ndim == 1 and C.dim_matches(t.shape[0], 1) and not _is_sym(t.shape[0])):
        return t
    if t.ndim == 1 and channels is not None and C.dim_matches(t.shape[0], channels):
        return t
    want = "a scalar" if channels is None else f"a scalar or a vector of {dim_to_str(channels)} values"
    raise C.rel_error(op_name, f"{what} must be {want} (per-tensor or per-channel), got shape "
                               f"{tuple(t.shape)}", **(types or {what: t}))


def _is_sym(d) -> bool:
    return not isinstance(d, (int, np.integer))


def axis_channels(op_name: str, tensor: TensorType, axis: int, **types):
    """(normalized axis, the data's size along it); a rank-0 tensor has one 'channel'."""
    if tensor.ndim == 0:
        return 0, 1
    ax = C.norm_axis(op_name, axis, tensor.ndim, **types)
    return ax, tensor.shape[ax]


# --- numpy side (references) ------------------------------------------------------------------------
def np_param(p, ndim: int, axis: int) -> np.ndarray:
    """A scale / zero point shaped to broadcast against a rank-`ndim` tensor along `axis`."""
    p = np.asarray(p)
    if p.size == 1:
        return p.reshape(())
    shape = [1] * ndim
    shape[axis % ndim] = p.size
    return p.reshape(shape)


# --- samples (the conformance tests' inputs) ------------------------------------------------------------
def random_q(rng, shape, dtype) -> np.ndarray:
    """Quantized values over the whole range of `dtype`."""
    lo, hi = qrange(dtype)
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def random_scale(rng, n=None, low=0.01, high=0.1) -> np.ndarray:
    """A float32 scale (or `n` of them)."""
    return rng.uniform(low, high, size=() if n is None else (n,)).astype("float32")


def random_zp(rng, dtype, n=None, spread=10) -> np.ndarray:
    """An int32 zero point near the middle of `dtype`'s range (or `n` of them)."""
    base = 128 if dtype == "uint8" else 0
    return (base + rng.integers(-spread, spread + 1, size=() if n is None else (n,))).astype("int32")


# --- Relay side (canonicalizations) --------------------------------------------------------------------
def param_expr(p, ptype: TensorType, ndim: int, axis: int):
    """A scale / zero-point expression reshaped to broadcast along `axis` of a rank-ndim tensor:
    a 1-element vector becomes a scalar, a per-channel vector gets trailing unit dims."""
    if ptype.ndim == 0:
        return p
    if (not _is_sym(ptype.shape[0]) and int(ptype.shape[0]) == 1) or ndim == 0:
        shape = ()
    else:
        shape = (-1,) + (1,) * (ndim - (axis % ndim) - 1)
    if isinstance(p, Constant):
        return const_of(p.data.numpy().reshape(shape))
    return _transform.reshape(p, shape) if len(shape) != 1 else p


def constant_value(expr):
    """The numpy value of a Constant, else None (the value is known only at run time)."""
    return expr.data.numpy() if isinstance(expr, Constant) else None


def is_const_scalar(expr, value) -> bool:
    """`expr` is a constant whose every element equals `value` (TVM's IsEqualScalar)."""
    v = constant_value(expr)
    return v is not None and v.size >= 1 and bool(np.all(v == value))


def same_constant(a, b) -> bool:
    """Both constants, holding the same values (scalar or per-channel)."""
    va, vb = constant_value(a), constant_value(b)
    return (va is not None and vb is not None and va.size == vb.size
            and bool(np.all(va.reshape(-1) == vb.reshape(-1))))


def const_of(value):
    """A Constant holding a numpy value with its own dtype (relay.const would make float64
    float32 and int64 int32)."""
    value = np.asarray(value)
    return const(value, dtype=str(value.dtype))
