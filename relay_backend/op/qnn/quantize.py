"""qnn.quantize, qnn.dequantize and qnn.requantize (TVM v0.18 src/relay/qnn/op/quantize.cc,
dequantize.cc, requantize.cc): the conversions between real and quantized values.

    quantize:   q = clip(round(x / scale) + zero_point)             float32 -> int8/uint8/...
    dequantize: x = (int32(q) - zero_point) * scale                  int -> float32
    requantize: q' = clip(rescale(int32(q) - zp_in, s_in / s_out) + zp_out)

round is half to even (Relay's round, ONNX's QuantizeLinear); requantize's rescale is the
fixed-point integer multiply of fixed_point.py (compute_dtype "int64", the default) or a float
multiply (compute_dtype "float32"/"float64"), each rounding ties UPWARD (the default) or
TONEAREST (away from zero). Scales and zero points are scalars or per-channel vectors along
`axis`. Each op's FTVMQnnCanonicalize rule writes it with the basic ops, which is how the
compiled executors run it (relay.qnn.transform.CanonicalizeOps, in the default pipeline).
"""
import contextlib
import dataclasses

import numpy as np

from ...errors import TypeInferenceError
from ...ir.attrs import Attrs
from ...ir.expr import const
from ...ir.types import TensorType
from .. import tensor as _t
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop, register_op_attr
from . import _common as Q
from .qnn_docs import QNN_PARAMETERS
from .fixed_point import check_rounding, rescale_expr, rescale_ref

CANONICALIZE = "FTVMQnnCanonicalize"
COMPUTE_DTYPES = ("int64", "float32", "float64")


# --- qnn.quantize -------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class QuantizeAttrs(Attrs):
    axis: int = -1
    out_dtype: str = "int8"

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))
        object.__setattr__(self, "out_dtype", Q.check_dtype_attr("qnn.quantize", "out_dtype", self.out_dtype,
                                                                 Q.QUANT_DTYPES))


def _quantize_rel(arg_types, attrs):
    op = "qnn.quantize"
    data = Q.check_data(op, arg_types[0], "data", ("float32",))
    _, channels = Q.axis_channels(op, data, attrs.axis, data=data)
    Q.check_qparam(op, arg_types[1], "output_scale", "float32", channels)
    Q.check_qparam(op, arg_types[2], "output_zero_point", "int32", channels)
    return TensorType(data.shape, attrs.out_dtype)


def quantize_ref(x, scale, zero_point, attrs):
    lo, hi = Q.qrange(attrs.out_dtype)
    scale = Q.np_param(scale, x.ndim, attrs.axis).astype("float32")
    zp = Q.np_param(zero_point, x.ndim, attrs.axis).astype("float32")
    with np.errstate(all="ignore"):
        q = np.round(x / scale) + zp
    return np.clip(q, lo, hi).astype(attrs.out_dtype)


def _quantize_canonical(attrs, args, types):
    data, scale, zp = args
    ndim = types[0].ndim
    scale = Q.param_expr(scale, types[1], ndim, attrs.axis)
    zp = Q.param_expr(zp, types[2], ndim, attrs.axis)
    lo, hi = Q.qrange(attrs.out_dtype)
    q = _t.add(_t.round(_t.divide(data, scale)), _t.cast(zp, "float32"))
    return _t.cast(_t.clip(q, lo, hi), attrs.out_dtype)


def _scale(rng, n=None, low=0.01, high=0.2):
    return Q.random_scale(rng, n, low, high)


def _zp(rng, dtype, n=None):
    return Q.random_zp(rng, dtype, n, spread=20)


def _quantize_samples(rng):
    x = rng.uniform(-3, 3, size=(2, 3, 4)).astype("float32")
    ties = np.array([0.25, 0.75, -0.25, -1.25, 12.0, -40.0], "float32")    # x / 0.5 lands on .5
    return [Sample([x, _scale(rng), _zp(rng, "int8")], QuantizeAttrs()),
            Sample([x, _scale(rng, 3), _zp(rng, "uint8", 3)], QuantizeAttrs(axis=1, out_dtype="uint8"),
                   "per-channel"),
            Sample([x, _scale(rng, 4), np.zeros(4, "int32")], QuantizeAttrs(axis=-1, out_dtype="int16")),
            Sample([ties, np.float32(0.5), np.int32(0)], QuantizeAttrs(), "ties round half to even"),
            Sample([x * 100, _scale(rng), np.int32(3)], QuantizeAttrs(out_dtype="uint8"), "saturates"),
            Sample([np.zeros((0, 3), "float32"), _scale(rng), np.int32(1)], QuantizeAttrs(), "empty")]


QUANTIZE = defop("qnn.quantize", inputs=("data", "output_scale", "output_zero_point"), attrs=QuantizeAttrs,
                 rel=_quantize_rel, pattern=OpPattern.OPAQUE, ref=quantize_ref, level=11,
                 samples=_quantize_samples, doc="q = clip(round(x / scale) + zero_point)")
register_op_attr("qnn.quantize", CANONICALIZE, _quantize_canonical)


@documented(QNN_PARAMETERS, ("result", "relay.Expr", "The quantized tensor, in `out_dtype`."))
def quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8"):
    """relay.qnn.op.quantize: real float32 values to integers of `out_dtype`."""
    return QUANTIZE(data, output_scale, output_zero_point, attrs=QuantizeAttrs(axis, out_dtype))


# --- qnn.dequantize -----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DequantizeAttrs(Attrs):
    axis: int = -1
    out_dtype: str = "float32"

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))
        object.__setattr__(self, "out_dtype", Q.check_dtype_attr("qnn.dequantize", "out_dtype", self.out_dtype,
                                                                 ("float32", "float16")))


def _dequantize_rel(arg_types, attrs):
    op = "qnn.dequantize"
    data = Q.check_data(op, arg_types[0], "data", Q.STORAGE_DTYPES)
    _, channels = Q.axis_channels(op, data, attrs.axis, data=data)
    Q.check_qparam(op, arg_types[1], "input_scale", "float32", channels)
    Q.check_qparam(op, arg_types[2], "input_zero_point", "int32", channels)
    return TensorType(data.shape, attrs.out_dtype)


def dequantize_ref(q, scale, zero_point, attrs):
    scale = Q.np_param(scale, q.ndim, attrs.axis).astype("float32")
    zp = Q.np_param(zero_point, q.ndim, attrs.axis).astype("int32")
    with np.errstate(over="ignore"):
        return ((q.astype("int32") - zp).astype("float32") * scale).astype(attrs.out_dtype)


def _dequantize_canonical(attrs, args, types):
    data, scale, zp = args
    ndim = types[0].ndim
    scale = Q.param_expr(scale, types[1], ndim, attrs.axis)
    zp = Q.param_expr(zp, types[2], ndim, attrs.axis)
    shifted = _t.subtract(_t.cast(data, "int32"), zp)
    out = _t.multiply(_t.cast(shifted, "float32"), scale)
    return out if attrs.out_dtype == "float32" else _t.cast(out, attrs.out_dtype)


def _dequantize_samples(rng):
    q8 = rng.integers(-128, 128, size=(2, 3, 4)).astype("int8")
    qu = rng.integers(0, 256, size=(3, 5)).astype("uint8")
    q32 = rng.integers(-100000, 100000, size=(6,)).astype("int32")
    return [Sample([q8, _scale(rng), _zp(rng, "int8")], DequantizeAttrs()),
            Sample([q8, _scale(rng, 3), _zp(rng, "int8", 3)], DequantizeAttrs(axis=1), "per-channel"),
            Sample([qu, _scale(rng, 5), np.zeros(5, "int32")], DequantizeAttrs(axis=-1)),
            Sample([q32, np.float32(1e-3), np.int32(0)], DequantizeAttrs(), "int32 (a conv's accumulator)"),
            Sample([qu, _scale(rng), np.int32(128)], DequantizeAttrs(out_dtype="float16")),
            Sample([np.zeros((0,), "uint8"), _scale(rng), np.int32(1)], DequantizeAttrs(), "empty")]


DEQUANTIZE = defop("qnn.dequantize", inputs=("data", "input_scale", "input_zero_point"), attrs=DequantizeAttrs,
                   rel=_dequantize_rel, pattern=OpPattern.OPAQUE, ref=dequantize_ref, level=11,
                   samples=_dequantize_samples, doc="x = (q - zero_point) * scale")
register_op_attr("qnn.dequantize", CANONICALIZE, _dequantize_canonical)


@documented(QNN_PARAMETERS, ("result", "relay.Expr", "The real values, in `out_dtype`."))
def dequantize(data, input_scale, input_zero_point, axis=-1, out_dtype="float32"):
    """relay.qnn.op.dequantize: quantized integers back to real values."""
    return DEQUANTIZE(data, input_scale, input_zero_point, attrs=DequantizeAttrs(axis, out_dtype))


# --- qnn.requantize -----------------------------------------------------------------------------------
_CONFIG = [{"rounding": "UPWARD", "compute_dtype": "int64"}]


@contextlib.contextmanager
def requantize_config(**kwargs):
    """relay.qnn.op.requantize_config: `with requantize_config(rounding="TONEAREST"):` sets the
    defaults requantize calls built inside the block take for rounding / compute_dtype."""
    unknown = set(kwargs) - {"rounding", "compute_dtype"}
    if unknown:
        raise TypeError(f"requantize_config: unknown option(s) {sorted(unknown)}; "
                        "valid: rounding, compute_dtype")
    _CONFIG.append({**_CONFIG[-1], **{k: v for k, v in kwargs.items() if v not in (None, "None")}})
    try:
        yield
    finally:
        _CONFIG.pop()


def current_requantize_config() -> dict:
    """The rounding and compute_dtype a requantize built now defaults to."""
    return dict(_CONFIG[-1])


@dataclasses.dataclass(frozen=True)
class RequantizeAttrs(Attrs):
    axis: int = -1
    rounding: str = "UPWARD"
    compute_dtype: str = "int64"
    out_dtype: str = "int8"

    def __post_init__(self):
        op = "qnn.requantize"
        cfg = _CONFIG[-1]
        rounding = cfg["rounding"] if self.rounding in (None, "None") else self.rounding
        compute = cfg["compute_dtype"] if self.compute_dtype in (None, "None") else self.compute_dtype
        object.__setattr__(self, "axis", int(self.axis))
        object.__setattr__(self, "rounding", check_rounding(op, rounding))
        object.__setattr__(self, "compute_dtype", Q.check_dtype_attr(op, "compute_dtype", compute,
                                                                     COMPUTE_DTYPES))
        object.__setattr__(self, "out_dtype", Q.check_dtype_attr(op, "out_dtype", self.out_dtype,
                                                                 Q.QUANT_DTYPES))


def _requantize_rel(arg_types, attrs):
    op = "qnn.requantize"
    data = Q.check_data(op, arg_types[0], "data", Q.STORAGE_DTYPES)
    _, channels = Q.axis_channels(op, data, attrs.axis, data=data)
    for i, (what, dtype) in enumerate((("input_scale", "float32"), ("input_zero_point", "int32"),
                                       ("output_scale", "float32"), ("output_zero_point", "int32"))):
        Q.check_qparam(op, arg_types[i + 1], what, dtype, channels)
    return TensorType(data.shape, attrs.out_dtype)


def _round_half(y, rounding):
    """Float rounding of requantize's float compute path: ties UPWARD or away from zero."""
    if rounding == "UPWARD":
        return np.floor(y + y.dtype.type(0.5))
    return np.sign(y) * np.floor(np.abs(y) + y.dtype.type(0.5))


def requantize_values(x, in_scale, in_zp, out_scale, out_zp, axis, rounding, compute_dtype, out_dtype):
    """The requantize reference on numpy values: parameters per-tensor or along `axis`."""
    nd = x.ndim
    izp, ozp = (Q.np_param(v, nd, axis).astype("int32") for v in (in_zp, out_zp))
    with np.errstate(over="ignore"):
        shifted = x.astype("int32") - izp
    mult = scale_ratio(Q.np_param(in_scale, nd, axis), Q.np_param(out_scale, nd, axis))
    return rescale_values(shifted, mult, ozp, rounding, compute_dtype, out_dtype)


def scale_ratio(in_scale, out_scale) -> np.ndarray:
    """The float64 multiplier in_scale / out_scale of float32 scales (as TVM: double division)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.asarray(in_scale).astype("float32").astype("float64")
                          / np.asarray(out_scale).astype("float32").astype("float64"))


def rescale_values(shifted, mult, out_zp, rounding="UPWARD", compute_dtype="int64", out_dtype="int8"):
    """int32 `shifted` (zero point already subtracted) times `mult`, plus `out_zp`, saturated to
    out_dtype: the numpy core every requantizing reference shares (all arguments broadcast)."""
    with np.errstate(all="ignore"):
        if compute_dtype == "int64":
            out = rescale_ref(shifted, mult, rounding) + np.asarray(out_zp, "int32")
        else:
            y = (np.asarray(shifted).astype(compute_dtype) * np.asarray(mult).astype(compute_dtype)
                 + np.asarray(out_zp).astype(compute_dtype))
            out = _round_half(np.asarray(y), rounding).astype("int32")
    if out_dtype == "int32":
        return np.asarray(out, "int32")
    return np.clip(out, *Q.qrange(out_dtype)).astype(out_dtype)


def requantize_ref(x, in_scale, in_zp, out_scale, out_zp, attrs):
    return requantize_values(x, in_scale, in_zp, out_scale, out_zp, attrs.axis, attrs.rounding,
                             attrs.compute_dtype, attrs.out_dtype)


def _float_rounding(y, rounding, dtype):
    half = const(0.5, dtype)
    if rounding == "UPWARD":
        return _t.floor(_t.add(y, half))
    return _t.multiply(_t.sign(y), _t.floor(_t.add(_t.abs(y), half)))


def requantize_expr(data, ndim, params, types, axis=-1, rounding="UPWARD", compute_dtype="int64",
                    out_dtype="int8"):
    """The canonical form of requantize: `params` the (input scale, input zero point, output
    scale, output zero point) expressions, `types` their types, `ndim` the data's rank."""
    in_scale, in_zp, out_scale, out_zp = (Q.param_expr(p, t, ndim, axis) for p, t in zip(params, types))
    shifted = _t.cast(data, "int32")
    if not Q.is_const_scalar(in_zp, 0):
        shifted = _t.subtract(shifted, in_zp)
    return rescale_to_expr(shifted, scale_ratio_expr(in_scale, out_scale), out_zp, rounding, compute_dtype,
                           out_dtype)


def scale_ratio_expr(in_scale, out_scale):
    """scale_ratio of two (shaped) scale expressions: a numpy value when both are constants
    (then the fixed-point parts become constants), else a float64 expression."""
    si, so = Q.constant_value(in_scale), Q.constant_value(out_scale)
    if si is not None and so is not None:
        if np.any(so == 0):
            raise _zero_scale_error()
        return scale_ratio(si, so)
    return _t.divide(_t.cast(in_scale, "float64"), _t.cast(out_scale, "float64"))


def rescale_to_expr(shifted, mult, out_zp, rounding="UPWARD", compute_dtype="int64", out_dtype="int8"):
    """The Relay form of rescale_values (`mult` a numpy value or a float64 expression)."""
    if compute_dtype == "int64":
        out = rescale_expr(shifted, mult, rounding)
        if not Q.is_const_scalar(out_zp, 0):
            out = _t.add(out, out_zp)
    else:
        m = const(mult, dtype=compute_dtype) if isinstance(mult, np.ndarray) else _t.cast(mult, compute_dtype)
        y = _t.add(_t.multiply(_t.cast(shifted, compute_dtype), m), _t.cast(out_zp, compute_dtype))
        out = _t.cast(_float_rounding(y, rounding, compute_dtype), "int32")
    if out_dtype == "int32":
        return out
    return _t.cast(_t.clip(out, *Q.qrange(out_dtype)), out_dtype)


def _zero_scale_error():
    return TypeInferenceError("qnn.requantize: the output scale is 0; a quantized tensor needs a "
                              "positive scale")


def _requantize_canonical(attrs, args, types):
    return requantize_expr(args[0], types[0].ndim, args[1:], types[1:], axis=attrs.axis,
                           rounding=attrs.rounding, compute_dtype=attrs.compute_dtype,
                           out_dtype=attrs.out_dtype)


def _requantize_samples(rng):
    acc = rng.integers(-5000, 5000, size=(2, 3, 4)).astype("int32")
    q8 = rng.integers(-128, 128, size=(3, 5)).astype("int8")
    halves = np.array([1, 3, 5, -1, -3, -5, 7, -7], "int32")        # x * 0.5 lands on a tie
    return [Sample([acc, _scale(rng, low=1e-4, high=1e-3), np.int32(0), _scale(rng), _zp(rng, "int8")],
                   RequantizeAttrs()),
            Sample([acc, _scale(rng, 3, 1e-4, 1e-3), np.zeros(3, "int32"), _scale(rng), np.int32(10)],
                   RequantizeAttrs(axis=1, out_dtype="uint8"), "per-channel input scale"),
            Sample([q8, _scale(rng), _zp(rng, "int8"), _scale(rng), _zp(rng, "uint8")],
                   RequantizeAttrs(rounding="TONEAREST", out_dtype="uint8")),
            Sample([halves, np.float32(0.5), np.int32(0), np.float32(1.0), np.int32(0)],
                   RequantizeAttrs(rounding="UPWARD", out_dtype="int32"), "ties upward"),
            Sample([halves, np.float32(0.5), np.int32(0), np.float32(1.0), np.int32(0)],
                   RequantizeAttrs(rounding="TONEAREST", out_dtype="int32"), "ties away from zero"),
            Sample([q8, np.float32(3.0), np.int32(1), np.float32(0.02), np.int32(-3)],
                   RequantizeAttrs(out_dtype="int16"), "a multiplier above 1 (left shift)"),
            Sample([np.zeros((0, 2), "int32"), np.float32(0.1), np.int32(0), np.float32(0.2), np.int32(0)],
                   RequantizeAttrs(), "empty")]


REQUANTIZE = defop("qnn.requantize",
                   inputs=("data", "input_scale", "input_zero_point", "output_scale", "output_zero_point"),
                   attrs=RequantizeAttrs, rel=_requantize_rel, pattern=OpPattern.OPAQUE, ref=requantize_ref,
                   level=11, samples=_requantize_samples,
                   doc="q' = clip(rescale(q - zp_in, s_in / s_out) + zp_out), fixed point")
register_op_attr("qnn.requantize", CANONICALIZE, _requantize_canonical)


@documented(QNN_PARAMETERS, ("result", "relay.Expr", "The tensor in the output's quantization, in "
                                                   "`out_dtype`."))
def requantize(data, input_scale, input_zero_point, output_scale, output_zero_point, axis=-1,
               rounding="None", compute_dtype="None", out_dtype="int8"):
    """relay.qnn.op.requantize: integers of one (scale, zero point) to another; rounding and
    compute_dtype "None" take requantize_config's (UPWARD, int64 unless set).

    Parameters
    ----------
    rounding : str, optional
        How a value halfway between two integers rounds: "UPWARD" (towards +infinity) or
        "TONEAREST" (away from zero); "None" takes the enclosing requantize_config's, UPWARD
        unless set. Defaults to 'None'.
    compute_dtype : str, optional
        How the scale ratio is applied: "int64" by a fixed-point integer multiply, "float32" or
        "float64" by a float multiply; "None" takes the enclosing requantize_config's, int64
        unless set. Defaults to 'None'.
    """
    return REQUANTIZE(data, input_scale, input_zero_point, output_scale, output_zero_point,
                      attrs=RequantizeAttrs(axis, rounding, compute_dtype, out_dtype))


__all__ = ["quantize", "dequantize", "requantize", "requantize_config", "current_requantize_config",
           "QuantizeAttrs", "DequantizeAttrs", "RequantizeAttrs"]
