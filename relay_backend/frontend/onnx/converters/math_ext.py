"""ONNX ops served by the issue-20 math and algorithm operators: the inverse trigonometric and
hyperbolic functions, Mod (both fmod modes), BitShift and the bitwise ops, IsNaN / IsInf,
TopK, CumSum, Einsum, DFT, STFT and the random generators (RandomUniform, RandomNormal, their
*Like forms, Multinomial).

Shape-like inputs (TopK's K, CumSum's axis, DFT's dft_length and axis, STFT's frame_step and
frame_length) must fold to constants, as for the shape ops (a model feeding them as graph
inputs is imported again per value by the ONNX backend). The random ops start from the node's
`seed` (0 when absent, so a model gives the same numbers on every run and executor) and thread
no state out: like onnxruntime with a seed, each node draws its own fixed stream.
"""
import numpy as np

from .... import op as _op
from ....op import random as _random
from ..common import const, onnx_dtype
from ._registry import converter
from .runtime_shapes import select_by_axis

_UNARY = {"Acos": _op.acos, "Acosh": _op.acosh, "Asin": _op.asin, "Asinh": _op.asinh, "Atan": _op.atan,
          "Atanh": _op.atanh, "Tan": _op.tan, "Sinh": _op.sinh, "Cosh": _op.cosh, "BitwiseNot": _op.bitwise_not,
          "IsNaN": _op.isnan}
_BITWISE = {"BitwiseAnd": _op.bitwise_and, "BitwiseOr": _op.bitwise_or, "BitwiseXor": _op.bitwise_xor}


def _int(ctx, expr, what):
    values = np.asarray(ctx.value(expr, what)).reshape(-1)
    if values.size != 1:
        raise ctx.invalid(f"{what} must hold one integer, got {values.tolist()}")
    return int(values[0])


@converter(*_UNARY)
def unary(ctx, inputs):
    return _UNARY[ctx.op](inputs[0])


@converter(*_BITWISE, min_version=18)
def bitwise(ctx, inputs):
    return _BITWISE[ctx.op](*inputs)


@converter("BitShift", min_version=11)
def bit_shift(ctx, inputs):
    direction = ctx.attrs.get("direction")
    if isinstance(direction, bytes):
        direction = direction.decode()
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.invalid(f"direction must be LEFT or RIGHT, got {direction!r}")
    return (_op.left_shift if direction == "LEFT" else _op.right_shift)(*inputs)


@converter("Mod", min_version=10)
def mod(ctx, inputs):
    """fmod=1: the remainder takes the dividend's sign (C's fmod, relay trunc_mod); fmod=0:
    the divisor's (Python's %, relay floor_mod)."""
    return (_op.trunc_mod if ctx.attrs.get("fmod", 0) else _op.floor_mod)(*inputs)


@converter("IsInf", min_version=10)
def is_inf(ctx, inputs):
    x = inputs[0]
    negative, positive = ctx.attrs.get("detect_negative", 1), ctx.attrs.get("detect_positive", 1)
    inf = _op.isinf(x)
    if negative and positive:
        return inf
    if not (negative or positive):
        return _op.logical_and(inf, _op.logical_not(inf))          # all False, x's shape
    zero = const(np.array(0, dtype=ctx.dtype(x)))
    sign = _op.greater(x, zero) if positive else _op.less(x, zero)
    return _op.logical_and(inf, sign)


@converter("TopK")
def top_k(ctx, inputs):
    """Values and int64 indices of the K largest (or smallest) along axis; ties go to the lower
    index, as onnxruntime's. `sorted=0` leaves the order unspecified: sorted order is used. A K
    known only at run time builds dyn.topk (debug interpreter and VM)."""
    x = inputs[0]
    if ctx.since >= 10 and ctx.maybe_value(inputs[1]) is None:   # K known at run time: dyn.topk
        if tuple(ctx.shape(inputs[1])) not in ((), (1,)):
            raise ctx.invalid(f"K must hold one integer, got a tensor of shape {ctx.shape(inputs[1])}")
        k = inputs[1]
    else:
        k = int(ctx.attrs.get("k")) if ctx.since < 10 else _int(ctx, inputs[1], "K")
    ctx.attrs.get("sorted")
    largest = ctx.attrs.get("largest", 1)
    values, indices = _op.topk(x, k, axis=int(ctx.attrs.get("axis", -1)), ret_type="both",
                               is_ascend=not largest, dtype="int64")
    return [values, indices]


@converter("CumSum", min_version=11)
def cum_sum(ctx, inputs):
    """Running sums along `axis`; an axis known only at run time selects among the sums along
    every axis (runtime_shapes.select_by_axis)."""
    x, axis = inputs
    reverse = bool(ctx.attrs.get("reverse", 0))
    exclusive = bool(ctx.attrs.get("exclusive", 0))

    def along(a):
        y = _op.reverse(x, a) if reverse else x
        out = _op.cumsum(y, axis=a, exclusive=exclusive)
        return _op.reverse(out, a) if reverse else out
    if ctx.maybe_value(axis) is None:
        return select_by_axis(ctx, axis, ctx.ndim(x), along)
    return along(_int(ctx, axis, "axis"))


@converter("Einsum", min_version=12)
def einsum(ctx, inputs):
    equation = ctx.attrs.get("equation")
    if isinstance(equation, bytes):
        equation = equation.decode()
    return _op.einsum(list(inputs), equation)


def _move_last(x, axis, ndim):
    order = [d for d in range(ndim) if d != axis] + [axis]
    return _op.transpose(x, order), order


@converter("DFT", min_version=17)
def dft(ctx, inputs):
    """The signal's last dim is 1 (real) or 2 (complex); the transform runs along `axis`
    (an attribute up to opset 19, an input from 20, possibly known only at run time:
    runtime_shapes.select_by_axis), padded or cut to dft_length; onesided keeps the first
    n // 2 + 1 bins."""
    signal = inputs[0]
    shape = ctx.static_shape(signal, "input")
    ndim = len(shape)
    inverse, onesided = bool(ctx.attrs.get("inverse", 0)), bool(ctx.attrs.get("onesided", 0))
    dft_length = _int(ctx, inputs[1], "dft_length") if len(inputs) > 1 and inputs[1] is not None else None
    if ctx.since >= 20 and len(inputs) > 2 and inputs[2] is not None and ctx.maybe_value(inputs[2]) is None:
        return select_by_axis(ctx, inputs[2], ndim, lambda a: _dft_along(signal, shape, a, dft_length, inverse,
                                                                          onesided), count=ndim - 1)
    if ctx.since >= 20:
        axis = _int(ctx, inputs[2], "axis") if len(inputs) > 2 and inputs[2] is not None else -2
    else:
        axis = int(ctx.attrs.get("axis", 1))
    axis = axis % ndim
    if axis == ndim - 1:
        raise ctx.invalid("axis is the real/imaginary dim; the transform axis must be another one")
    return _dft_along(signal, shape, axis, dft_length, inverse, onesided)


def _dft_along(signal, shape, axis, dft_length, inverse, onesided):
    """The DFT of `signal` (static `shape`, last dim 1 or 2) along the non-negative `axis`."""
    ndim = len(shape)
    length = shape[axis] if dft_length is None else dft_length
    re = _op.take(signal, const(np.array(0, "int64")), axis=ndim - 1)
    im = (_op.take(signal, const(np.array(1, "int64")), axis=ndim - 1) if shape[-1] == 2 else _op.zeros_like(re))
    parts = []
    for part in (re, im):
        if length < shape[axis]:
            part = _op.strided_slice(part, [0], [length], axes=[axis])
        elif length > shape[axis]:
            pads = [(0, 0)] * (ndim - 1)
            pads[axis] = (0, length - shape[axis])
            part = _op.nn.pad(part, pads)
        parts.append(_move_last(part, axis, ndim - 1)[0])
    out_re, out_im = _op.dft(parts[0], parts[1], inverse)
    out = _op.stack([out_re, out_im], axis=-1)
    _, order = _move_last(re, axis, ndim - 1)
    back = [order.index(d) for d in range(ndim - 1)] + [ndim - 1]
    out = _op.transpose(out, back)
    if onesided:
        out = _op.strided_slice(out, [0], [length // 2 + 1], axes=[axis])
    return out


@converter("STFT", min_version=17)
def stft(ctx, inputs):
    """signal (batch, length, 1) real, frame_step, window, frame_length -> (batch, frames,
    bins, 2): relay stft with n_fft = win_length = frame_length."""
    signal, step = inputs[0], inputs[1]
    window = inputs[2] if len(inputs) > 2 else None
    frame_length = inputs[3] if len(inputs) > 3 else None
    shape = ctx.static_shape(signal, "signal")
    if len(shape) != 3 or shape[2] != 1:
        raise ctx.fail(f"STFT of a complex or unbatched signal {shape} is not supported", "give (batch, length, 1)")
    hop = _int(ctx, step, "frame_step")
    if frame_length is not None:
        n_fft = _int(ctx, frame_length, "frame_length")
    elif window is not None:
        n_fft = ctx.static_shape(window, "window")[0]
    else:
        raise ctx.invalid("STFT needs a window or a frame_length")
    if window is None:
        window = const(np.ones((n_fft,), ctx.dtype(signal)))
    data = _op.reshape(signal, (shape[0], shape[1]))
    out = _op.stft(data, n_fft, hop, n_fft, _op.cast(window, ctx.dtype(signal)), False,
                   bool(ctx.attrs.get("onesided", 1)))
    return _op.transpose(out, (0, 2, 1, 3))


# --- random ------------------------------------------------------------------------------------
def _seed(ctx):
    seed = ctx.attrs.get("seed")
    return 0 if seed is None else int(np.float32(seed).view("uint32"))


def _random_dtype(ctx, like=None):
    if "dtype" in ctx.attrs:
        return onnx_dtype(ctx.attrs.get("dtype"), ctx.where())
    return ctx.dtype(like) if like is not None else "float32"


def _draw(ctx, shape, dtype, normal):
    """uniform(low, high) or normal(mean, scale) values of `shape` in `dtype` (computed in
    float64 for float64, else float32 and cast)."""
    compute = "float64" if dtype == "float64" else "float32"
    key = _random.threefry_key(_seed(ctx))
    if normal:
        _, values = _random.normal(key, shape, compute, float(ctx.attrs.get("mean", 0.0)),
                                   float(ctx.attrs.get("scale", 1.0)))
    else:
        _, values = _random.uniform(key, shape, compute, float(ctx.attrs.get("low", 0.0)),
                                    float(ctx.attrs.get("high", 1.0)))
    return values if compute == dtype else _op.cast(values, dtype)


@converter("RandomUniform", "RandomNormal")
def random_values(ctx, inputs):
    shape = tuple(int(d) for d in ctx.attrs.ints("shape"))
    return _draw(ctx, shape, _random_dtype(ctx), ctx.op == "RandomNormal")


@converter("RandomUniformLike", "RandomNormalLike")
def random_like(ctx, inputs):
    like = inputs[0]
    return _draw(ctx, ctx.static_shape(like, "input"), _random_dtype(ctx, like), ctx.op == "RandomNormalLike")


@converter("Multinomial", min_version=7)
def multinomial(ctx, inputs):
    """input: (batch, classes) unnormalized log-probabilities; sample_size draws per row."""
    x = inputs[0]
    dtype = onnx_dtype(ctx.attrs.get("dtype"), ctx.where()) if "dtype" in ctx.attrs else "int32"
    probs = _op.exp(_op.cast(x, "float32"))
    _, indices = _random.multinomial(_random.threefry_key(_seed(ctx)), probs, int(ctx.attrs.get("sample_size", 1)))
    return indices if dtype == "int32" else _op.cast(indices, dtype)
