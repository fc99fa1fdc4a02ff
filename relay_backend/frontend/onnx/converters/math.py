"""Elementwise, broadcasting, activation and matrix-product ONNX ops.

Opset 7+ binary ops broadcast multidirectionally, which relay's broadcast ops already do.
Activations without a relay op of their own (Elu, HardSigmoid, Gelu, ...) are written as short
expressions of existing ops, so they fuse and compile like any other elementwise chain.
"""
import math as _m

import numpy as np

from .... import op as _op
from ....ir.types import is_static
from ....op import nn as _nn
from ..common import const
from .. import bfloat16
from ._registry import converter


def scalar(ctx, value, like):
    """A scalar constant in the dtype of `like`."""
    return const(np.array(value, dtype=ctx.dtype(like)))


# --- unary -------------------------------------------------------------------------------------
_UNARY = {"Relu": _nn.relu, "Sigmoid": _op.sigmoid, "Tanh": _op.tanh, "Erf": _op.erf, "Sqrt": _op.sqrt,
          "Exp": _op.exp, "Log": _op.log, "Abs": _op.abs, "Neg": _op.negative, "Floor": _op.floor,
          "Ceil": _op.ceil, "Round": _op.round, "Sign": _op.sign, "Sin": _op.sin, "Cos": _op.cos,
          "Not": _op.logical_not}


@converter(*_UNARY)
def unary(ctx, inputs):
    return _UNARY[ctx.op](inputs[0])


@converter("Identity")
def identity(ctx, inputs):
    return inputs[0]


@converter("Reciprocal")
def reciprocal(ctx, inputs):
    return _op.divide(scalar(ctx, 1, inputs[0]), inputs[0])


# --- binary ------------------------------------------------------------------------------------
_BINARY = {"Add": _op.add, "Sub": _op.subtract, "Mul": _op.multiply, "Div": _op.divide,
           "Equal": _op.equal, "Less": _op.less, "Greater": _op.greater, "LessOrEqual": _op.less_equal,
           "GreaterOrEqual": _op.greater_equal, "And": _op.logical_and, "Or": _op.logical_or,
           "Xor": _op.not_equal}


@converter(*_BINARY, min_version=7)
def binary(ctx, inputs):
    a, b = inputs
    if ctx.op in ("Add", "Sub", "Mul", "Div"):
        ctx.attrs.get("broadcast")  # opset < 7 only; 7+ always broadcasts
    return _BINARY[ctx.op](a, b)


@converter("Pow", min_version=7)
def power(ctx, inputs):
    """ONNX Pow: the result has the base's type. With an integer base and a float exponent the
    power is computed in float64 and truncated to the base's type (as onnxruntime and the ONNX
    reference do: 3 ** 1.5 -> 5), not with the exponent cast to an integer (3 ** 1 -> 3). So is an
    integer power whose constant integer exponent has a negative value (2 ** -1 -> 0, as onnxruntime),
    which integer arithmetic cannot express."""
    a, b = inputs
    ta, tb = ctx.dtype(a), ctx.dtype(b)
    exponent = ctx.maybe_value(b)
    negative_int_exponent = tb.startswith("int") and exponent is not None and (np.asarray(exponent) < 0).any()
    if ta.startswith(("int", "uint")) and (tb.startswith("float") or negative_int_exponent):
        return _op.cast(_op.power(_op.cast(a, "float64"), _op.cast(b, "float64")), ta)
    if ta == tb:
        return _op.power(a, b)
    return _op.power(a, _op.cast(b, ta))


@converter("Sum", "Mean", "Max", "Min", min_version=6)
def variadic(ctx, inputs):
    fn = {"Sum": _op.add, "Mean": _op.add, "Max": _op.maximum, "Min": _op.minimum}[ctx.op]
    out = inputs[0]
    for x in inputs[1:]:
        out = fn(out, x)
    if ctx.op == "Mean":
        out = _op.divide(out, scalar(ctx, len(inputs), out))
    return out


@converter("Where")
def where(ctx, inputs):
    return _op.where(*inputs)


@converter("Cast")
def cast(ctx, inputs):
    from ..common import onnx_dtype
    ctx.attrs.get("saturate")  # float8 only
    to = ctx.attrs.get("to")
    return _cast(ctx, inputs[0], "bfloat16" if to == bfloat16.BFLOAT16 else onnx_dtype(to, ctx.where()))


@converter("CastLike")
def cast_like(ctx, inputs):
    ctx.attrs.get("saturate")
    like_bfloat16 = len(ctx.node.input) > 1 and ctx.node.input[1] in ctx.importer.bfloat16_names
    return _cast(ctx, inputs[0], "bfloat16" if like_bfloat16 else ctx.dtype(inputs[1]))


def _cast(ctx, x, dtype):
    """x cast to `dtype`; bfloat16 values (x, or dtype "bfloat16") go through float32 as bits."""
    if ctx.node.input[0] in ctx.importer.bfloat16_names:
        x = bfloat16.to_float32(x)
        if dtype == "bfloat16":
            return bfloat16.from_float32(x)
    if dtype == "bfloat16":
        return bfloat16.from_float32(_op.cast(x, "float32"))
    return _op.cast(x, dtype)


# --- activations ---------------------------------------------------------------------------------
@converter("LeakyRelu")
def leaky_relu(ctx, inputs):
    return _nn.leaky_relu(inputs[0], alpha=float(ctx.attrs.get("alpha", 0.01)))


@converter("PRelu")
def prelu(ctx, inputs):
    x, slope = inputs
    sshape, xshape = ctx.shape(slope), ctx.shape(x)
    if len(xshape) >= 2 and sshape and int(np.prod(sshape)) == xshape[1] and \
            (len(sshape) == 1 or len(sshape) == len(xshape) - 1) and sshape[0] == xshape[1] and xshape[1] != 1:
        return _nn.prelu(x, _op.reshape(slope, (xshape[1],)), axis=1)
    return _op.where(_op.less(x, scalar(ctx, 0, x)), _op.multiply(x, slope), x)


def _elu_part(ctx, x, alpha):
    return _op.multiply(scalar(ctx, alpha, x), _op.subtract(_op.exp(x), scalar(ctx, 1, x)))


@converter("Elu")
def elu(ctx, inputs):
    x = inputs[0]
    alpha = float(ctx.attrs.get("alpha", 1.0))
    return _op.where(_op.less(x, scalar(ctx, 0, x)), _elu_part(ctx, x, alpha), x)


@converter("Selu")
def selu(ctx, inputs):
    x = inputs[0]
    alpha = float(ctx.attrs.get("alpha", 1.67326319217681884765625))
    gamma = float(ctx.attrs.get("gamma", 1.05070102214813232421875))
    inner = _op.where(_op.less_equal(x, scalar(ctx, 0, x)), _elu_part(ctx, x, alpha), x)
    return _op.multiply(scalar(ctx, gamma, x), inner)


@converter("ThresholdedRelu")
def thresholded_relu(ctx, inputs):
    x = inputs[0]
    alpha = float(ctx.attrs.get("alpha", 1.0))
    return _op.where(_op.greater(x, scalar(ctx, alpha, x)), x, scalar(ctx, 0, x))


@converter("Softplus")
def softplus(ctx, inputs):
    x = inputs[0]
    return _op.log(_op.add(_op.exp(x), scalar(ctx, 1, x)))


@converter("Softsign")
def softsign(ctx, inputs):
    x = inputs[0]
    return _op.divide(x, _op.add(_op.abs(x), scalar(ctx, 1, x)))


def _hard_sigmoid(ctx, x, alpha, beta):
    return _op.clip(_op.add(_op.multiply(x, scalar(ctx, alpha, x)), scalar(ctx, beta, x)), 0.0, 1.0)


@converter("HardSigmoid")
def hard_sigmoid(ctx, inputs):
    return _hard_sigmoid(ctx, inputs[0], float(ctx.attrs.get("alpha", 0.2)), float(ctx.attrs.get("beta", 0.5)))


@converter("HardSwish")
def hard_swish(ctx, inputs):
    x = inputs[0]
    return _op.multiply(x, _hard_sigmoid(ctx, x, 1.0 / 6.0, 0.5))


@converter("Gelu")
def gelu(ctx, inputs):
    x = inputs[0]
    approx = ctx.attrs.get("approximate", "none")
    half = _op.multiply(scalar(ctx, 0.5, x), x)
    if approx == "none":
        inner = _op.erf(_op.multiply(x, scalar(ctx, 1.0 / _m.sqrt(2.0), x)))
    elif approx == "tanh":
        cube = _op.multiply(_op.multiply(x, x), x)
        poly = _op.add(x, _op.multiply(scalar(ctx, 0.044715, x), cube))
        inner = _op.tanh(_op.multiply(scalar(ctx, _m.sqrt(2.0 / _m.pi), x), poly))
    else:
        raise ctx.fail(f"approximate={approx!r} is not supported", "use 'none' or 'tanh'")
    return _op.multiply(half, _op.add(scalar(ctx, 1, x), inner))


@converter("Clip")
def clip(ctx, inputs):
    x = inputs[0]
    if ctx.since < 11:
        lo, hi = ctx.attrs.get("min", -3.4028234663852886e38), ctx.attrs.get("max", 3.4028234663852886e38)
        return _op.clip(x, lo, hi)
    lo = inputs[1] if len(inputs) > 1 else None
    hi = inputs[2] if len(inputs) > 2 else None
    for name, bound in (("min", lo), ("max", hi)):
        if bound is not None and any(is_static(d) and int(d) != 1 for d in ctx.shape(bound)):
            raise ctx.invalid(f"{name} must be a scalar, not a tensor of shape {ctx.shape(bound)}")
    lo_v = None if lo is None else ctx.maybe_value(lo)
    hi_v = None if hi is None else ctx.maybe_value(hi)
    if (lo is None or lo_v is not None) and (hi is None or hi_v is not None):
        info = np.finfo if ctx.dtype(x).startswith("float") else np.iinfo
        lo_f = float(lo_v) if lo is not None else float(info(ctx.dtype(x)).min)
        hi_f = float(hi_v) if hi is not None else float(info(ctx.dtype(x)).max)
        if ctx.dtype(x).startswith("float"):
            return _op.clip(x, lo_f, hi_f)
    out = x
    if lo is not None:
        out = _op.maximum(out, lo)
    if hi is not None:
        out = _op.minimum(out, hi)
    return out


# --- matrix products -----------------------------------------------------------------------------
@converter("Gemm")
def gemm(ctx, inputs):
    a, b = inputs[0], inputs[1]
    c = inputs[2] if len(inputs) > 2 else None
    alpha, beta = float(ctx.attrs.get("alpha", 1.0)), float(ctx.attrs.get("beta", 1.0))
    trans_a, trans_b = ctx.attrs.get("transA", 0), ctx.attrs.get("transB", 0)
    ctx.attrs.get("broadcast")  # opset < 7
    if trans_a:
        a = _op.transpose(a, (1, 0))
    if not trans_b:
        b = _op.transpose(b, (1, 0))
    out = _nn.dense(a, b)
    if alpha != 1.0:
        out = _op.multiply(out, scalar(ctx, alpha, out))
    if c is not None:
        if beta != 1.0:
            c = _op.multiply(c, scalar(ctx, beta, c))
        out = _op.add(out, c)
    return out


@converter("MatMul")
def matmul(ctx, inputs):
    a, b = inputs
    sa, sb = ctx.shape(a), ctx.shape(b)
    if len(sa) == 1 or len(sb) == 1:  # numpy rules: a vector gains a dim, removed again after
        a2 = _op.expand_dims(a, 0) if len(sa) == 1 else a
        b2 = _op.expand_dims(b, 1) if len(sb) == 1 else b
        out = _matmul_nd(ctx, a2, b2)
        if len(sb) == 1:
            out = _op.squeeze(out, axis=[ctx.ndim(out) - 1])
        if len(sa) == 1:
            out = _op.squeeze(out, axis=[ctx.ndim(out) - 2 if len(sb) != 1 else ctx.ndim(out) - 1])
        return out
    return _matmul_nd(ctx, a, b)


def _matmul_nd(ctx, a, b):
    if ctx.ndim(a) == 2 and ctx.ndim(b) == 2:  # one dense; its dims may be symbolic
        return _nn.dense(a, _op.transpose(b, (1, 0)))
    sa, sb = ctx.static_shape(a, "A"), ctx.static_shape(b, "B")
    if len(sb) == 2:  # (..., M, K) x (K, N): one dense over the flattened rows
        if len(sa) == 2:
            return _nn.dense(a, _op.transpose(b, (1, 0)))
        flat = _op.reshape(a, (-1, sa[-1]))
        out = _nn.dense(flat, _op.transpose(b, (1, 0)))
        return _op.reshape(out, sa[:-1] + (sb[-1],))
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    bsize = int(np.prod(batch)) if batch else 1
    a3 = _op.reshape(_broadcast(a, batch + sa[-2:], sa), (bsize,) + sa[-2:])
    b3 = _op.reshape(_broadcast(b, batch + sb[-2:], sb), (bsize,) + sb[-2:])
    out = _nn.batch_matmul(a3, b3, transpose_b=False)
    return _op.reshape(out, batch + (sa[-2], sb[-1]))


def _broadcast(x, shape, have):
    return x if tuple(have) == tuple(shape) else _op.broadcast_to(x, shape)
