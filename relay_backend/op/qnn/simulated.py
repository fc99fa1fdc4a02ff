"""qnn.simulated_quantize and qnn.simulated_dequantize (TVM v0.18 src/relay/qnn/op/
simulated_quantize.cc, simulated_dequantize.cc, topi/nn/qnn.py): quantization simulated in
float, for calibration and quantization-aware training. The dtype is a run-time input (an int32
scalar code: 0 disable, 1 int8, 2 uint8, 3 int32, TVM's SQNN_DTYPE_TO_CODE), so one compiled
kernel serves every choice; the output keeps the input's float dtype:

    simulated_quantize:   clip(round(x / scale[c]) + zero_point[c], dtype min, dtype max)
    simulated_dequantize: (x - zero_point[c]) * scale[c]

with c the index along `axis` modulo the parameters' length (one value = per-tensor). Unlike the
other qnn ops these have a compute of their own (as in TVM, where they are topi kernels).
"""
import dataclasses

import numpy as np

from ... import te, tir
from ...errors import AttrsError
from ...ir.attrs import Attrs
from ...ir.expr import const
from ...ir.types import TensorType
from .. import transform as _transform
from ..constructor_docs import documented
from ..pattern import OpPattern
from ..registry import Sample, defop
from . import _common as Q
from .qnn_docs import QNN_PARAMETERS

SQNN_DTYPE_TO_CODE = {"disable": 0, "int8": 1, "uint8": 2, "int32": 3}
SQNN_CODE_TO_DTYPE = {v: k for k, v in SQNN_DTYPE_TO_CODE.items()}
FLOATS = ("float32", "float64")


@dataclasses.dataclass(frozen=True)
class SimulatedQuantizeAttrs(Attrs):
    axis: int = -1

    def __post_init__(self):
        object.__setattr__(self, "axis", int(self.axis))


def _rel(op_name, scale_name, zp_name):
    def rel(arg_types, attrs):
        data = Q.check_data(op_name, arg_types[0], "data", FLOATS)
        code = Q.check_data(op_name, arg_types[1], "dtype code", ("int32",))
        if code.ndim != 0:
            raise Q.C.rel_error(op_name, f"the dtype code must be an int32 scalar, got {code}", code=code)
        _, channels = Q.axis_channels(op_name, data, attrs.axis, data=data)
        for t, what in ((arg_types[2], scale_name), (arg_types[3], zp_name)):
            t = Q.C.tensor_arg(op_name, t, what)
            if t.ndim != 1 or t.dtype not in ("float32", "int32"):
                raise Q.C.rel_error(op_name, f"{what} must be a 1-D tensor (one value, or one per channel), "
                                             f"got {t}", **{what: t})
        return TensorType(data.shape, data.dtype)
    return rel


def _channel(p, x, axis):
    """p's value for every element of x: p[index along axis % len(p)]."""
    p = np.asarray(p).reshape(-1)
    if x.ndim == 0:
        return p[0]
    idx = np.arange(x.shape[axis % x.ndim]) % p.size
    shape = [1] * x.ndim
    shape[axis % x.ndim] = -1
    return p[idx].reshape(shape)


def _sim_quantize_ref(x, code, scale, zp, attrs):
    dtype = SQNN_CODE_TO_DTYPE.get(int(code))
    if dtype in (None, "disable"):
        return x.copy()
    s = _channel(scale, x, attrs.axis).astype(x.dtype)
    z = _channel(zp, x, attrs.axis).astype(x.dtype)
    lo, hi = Q.qrange(dtype)
    with np.errstate(all="ignore"):
        return np.clip(np.round(x / s) + z, lo, hi).astype(x.dtype)


def _sim_dequantize_ref(x, code, scale, zp, attrs):
    if SQNN_CODE_TO_DTYPE.get(int(code)) in (None, "disable"):
        return x.copy()
    s = _channel(scale, x, attrs.axis).astype(x.dtype)
    z = _channel(zp, x, attrs.axis).astype(x.dtype)
    return ((x - z) * s).astype(x.dtype)


def _param(p, index, axis, dtype):
    i = index[axis] if index else 0
    return p[tir.floormod(i, p.shape[0])].astype(dtype) if index else p[0].astype(dtype)


def _sim_quantize_compute(attrs, inputs, out_type):
    data, code, scale, zp = inputs
    ax = attrs.axis % data.ndim if data.ndim else 0
    dtype = data.dtype

    def body(*i):
        value = data[i]
        rounded = te.round(value / _param(scale, i, ax, dtype)) + _param(zp, i, ax, dtype)
        out = value
        for name in ("int32", "uint8", "int8"):
            lo, hi = Q.qrange(name)
            clipped = te.min(te.max(rounded, tir.const(lo, dtype)), tir.const(hi, dtype))
            out = te.if_then_else(code[()] == SQNN_DTYPE_TO_CODE[name], clipped, out)
        return out
    return [te.compute(data.shape, body, name="simulated_quantize", tag="elemwise")]


def _sim_dequantize_compute(attrs, inputs, out_type):
    data, code, scale, zp = inputs
    ax = attrs.axis % data.ndim if data.ndim else 0
    dtype = data.dtype

    def body(*i):
        value = data[i]
        dq = (value - _param(zp, i, ax, dtype)) * _param(scale, i, ax, dtype)
        return te.if_then_else(code[()] == 0, value, dq)
    return [te.compute(data.shape, body, name="simulated_dequantize", tag="elemwise")]


def _samples(quantizing):
    def samples(rng):
        x = (rng.uniform(-3, 3, (2, 3, 4)) if quantizing else rng.integers(-100, 100, (2, 3, 4))).astype("float32")
        s3 = rng.uniform(0.01, 0.1, 3).astype("float32")
        return [Sample([x, np.int32(code), s3, rng.integers(-5, 5, 3).astype("int32")],
                       SimulatedQuantizeAttrs(axis=1), f"code {code}, per-channel")
                for code in (0, 1, 2, 3)] + [
            Sample([x.astype("float64"), np.int32(1), np.array([0.05], "float32"), np.array([2], "int32")],
                   SimulatedQuantizeAttrs(), "float64, per-tensor")]
    return samples


SIMULATED_QUANTIZE = defop("qnn.simulated_quantize", inputs=("data", "out_dtype", "output_scale",
                                                            "output_zero_point"),
                           attrs=SimulatedQuantizeAttrs, pattern=OpPattern.ELEMWISE,
                           rel=_rel("qnn.simulated_quantize", "output_scale", "output_zero_point"),
                           ref=_sim_quantize_ref, compute=_sim_quantize_compute, level=11, samples=_samples(True),
                           doc="quantization simulated in float, the dtype a run-time code")
SIMULATED_DEQUANTIZE = defop("qnn.simulated_dequantize", inputs=("data", "in_dtype", "input_scale",
                                                                "input_zero_point"),
                             attrs=SimulatedQuantizeAttrs, pattern=OpPattern.ELEMWISE,
                             rel=_rel("qnn.simulated_dequantize", "input_scale", "input_zero_point"),
                             ref=_sim_dequantize_ref, compute=_sim_dequantize_compute, level=11,
                             samples=_samples(False), doc="dequantization simulated in float")


def _code(dtype):
    if isinstance(dtype, str):
        if dtype not in SQNN_DTYPE_TO_CODE:
            raise AttrsError(f"simulated quantization supports {list(SQNN_DTYPE_TO_CODE)}, got {dtype!r}")
        return const(np.int32(SQNN_DTYPE_TO_CODE[dtype]))
    return dtype


SIMULATED = ("result", "relay.Expr", "The simulated values, in the float dtype of `data`.")


@documented(QNN_PARAMETERS, SIMULATED)
def simulated_quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8"):
    """relay.qnn.op.simulated_quantize: `out_dtype` a dtype name or an int32 code expression.

    Parameters
    ----------
    out_dtype : str or relay.Expr, optional
        The integer dtype whose range the values are clipped to: "int8", "uint8", "int32", or
        "disable" (returned unchanged), or an int32 scalar expression holding its code in
        SQNN_DTYPE_TO_CODE, which then picks it at run time. Defaults to 'int8'.
    """
    return SIMULATED_QUANTIZE(data, _code(out_dtype), _transform.reshape(output_scale, (-1,)),
                              _transform.reshape(output_zero_point, (-1,)), attrs=SimulatedQuantizeAttrs(axis))


@documented(QNN_PARAMETERS, SIMULATED)
def simulated_dequantize(data, input_scale, input_zero_point, axis=-1, in_dtype="int8"):
    """relay.qnn.op.simulated_dequantize: `in_dtype` a dtype name or an int32 code expression.

    Parameters
    ----------
    in_dtype : str or relay.Expr, optional
        The integer dtype the values are taken to be quantized in: "int8", "uint8", "int32", or
        "disable" (returned unchanged), or an int32 scalar expression holding its code in
        SQNN_DTYPE_TO_CODE, which then picks it at run time. Defaults to 'int8'.
    """
    return SIMULATED_DEQUANTIZE(data, _code(in_dtype), _transform.reshape(input_scale, (-1,)),
                                _transform.reshape(input_zero_point, (-1,)), attrs=SimulatedQuantizeAttrs(axis))


__all__ = ["simulated_quantize", "simulated_dequantize", "SQNN_DTYPE_TO_CODE"]
