"""The qnn ops' references against INDEPENDENT formulations, sample by sample (the conformance
test then holds every executor to the reference).

The independent side is written without the reference's helpers: Python scalars and
fractions.Fraction (exact rational arithmetic) element by element, or "dequantize, compute in
float64, quantize". Tolerances, stated per op in INDEPENDENT: quantize / dequantize are exact
(the same float32 operations in another order of evaluation); ops that requantize through the
31-bit fixed-point multiplier may differ from the exact rational result by 1 (the multiplier's
rounding, or each input rounded separately before a sum); integer products (conv2d, dense) are
exact.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

from relay_backend.op import list_ops

from .nn_ext_independent import ind_conv_transpose as nn_ind_conv_transpose
from .test_nn import ind_conv2d as nn_ind_conv2d

QNN_OPS = [op for op in list_ops() if op.name.startswith("qnn.")]


# --- independent formulations ---------------------------------------------------------------------
def _flat_param(p, x, axis):
    """Per-element parameter values (a list aligned with x.flat) of a scalar or per-axis p."""
    p = np.asarray(p).reshape(-1)
    if p.size == 1 or x.ndim == 0:
        return [p[0]] * x.size
    ax = axis % x.ndim
    return [p[idx[ax]] for idx in np.ndindex(*x.shape)]


def _range(dtype):
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def _saturate(values, dtype, shape):
    lo, hi = _range(dtype)
    return np.array([min(max(int(v), lo), hi) for v in values], dtype=dtype).reshape(shape)


def _round_half_even(v: Fraction) -> int:
    return round(v)   # Python rounds a Fraction half to even


def _round_upward(v: Fraction) -> int:
    return math.floor(v + Fraction(1, 2))


def _round_away(v: Fraction) -> int:
    return int(math.copysign(math.floor(abs(v) + Fraction(1, 2)), v))


def ind_quantize(x, scale, zp, a):
    scales, zps = _flat_param(scale, x, a.axis), _flat_param(zp, x, a.axis)
    # the division is the float32 one (the op's definition); the rounding and the sum are exact
    vals = [_round_half_even(Fraction(float(np.float32(v) / np.float32(s)))) + int(z)
            for v, s, z in zip(x.flat, scales, zps)]
    return _saturate(vals, a.out_dtype, x.shape)


def ind_dequantize(q, scale, zp, a):
    scales, zps = _flat_param(scale, q, a.axis), _flat_param(zp, q, a.axis)
    vals = [np.float32(int(v) - int(z)) * np.float32(s) for v, s, z in zip(q.flat, scales, zps)]
    return np.array(vals, dtype="float32").reshape(q.shape).astype(a.out_dtype)


def _exact_requantize(values, in_scales, in_zps, out_scale, out_zp, rounding):
    """Exact rational requantization: (q - zp_in) * s_in / s_out rounded, + zp_out."""
    rnd = _round_upward if rounding == "UPWARD" else _round_away
    return [rnd((int(v) - int(zi)) * Fraction(float(si)) / Fraction(float(so))) + int(zo)
            for v, si, zi, so, zo in zip(values, in_scales, in_zps, out_scale, out_zp)]


def ind_requantize(q, si, zi, so, zo, a):
    flat = [_flat_param(p, q, a.axis) for p in (si, zi, so, zo)]
    vals = _exact_requantize(list(q.flat), *flat, a.rounding)
    return _saturate(vals, a.out_dtype, q.shape)


def _real(q, scale, zp, axis):
    """Dequantized values as exact Fractions, broadcastable later via an object array."""
    scales, zps = _flat_param(scale, q, axis), _flat_param(zp, q, axis)
    return np.array([(int(v) - int(z)) * Fraction(float(s)) for v, s, z in zip(q.flat, scales, zps)],
                    dtype=object).reshape(q.shape)


def _binary(fn):
    def ind(lhs, rhs, ls, lz, rs, rz, os_, oz, a):
        real = fn(_real(lhs, ls, lz, a.lhs_axis), _real(rhs, rs, rz, a.rhs_axis))
        vals = [_round_upward(v / Fraction(float(os_))) + int(oz) for v in np.asarray(real).flat]
        return _saturate(vals, lhs.dtype, np.shape(real))
    return ind


def _centred(x, zp, axis=0):
    """x - zp as float64 (exact for these integers), zp scalar or per index of `axis`."""
    zp = np.asarray(zp, dtype="float64").reshape(-1)
    shape = [1] * x.ndim
    if zp.size > 1:
        shape[axis] = zp.size
    return x.astype("float64") - (zp.reshape(shape) if zp.size > 1 else zp[0])


def _int_result(values, a):
    return np.rint(values).astype(a.out_dtype or "int32")


def ind_conv2d(x, w, izp, kzp, iscale, kscale, a):
    out = nn_ind_conv2d(_centred(x, izp), _centred(w, kzp, a.kernel_layout.index("O")), a)
    return _int_result(out, a)


def ind_conv2d_transpose(x, w, izp, kzp, iscale, kscale, a):
    out = nn_ind_conv_transpose(_centred(x, izp), _centred(w, kzp, a.kernel_layout.index("O")), a)
    return _int_result(out, a)


def ind_dense(x, w, izp, kzp, iscale, kscale, a):
    xc, wc = _centred(x, izp), _centred(w, kzp, 0)
    out = np.array([[sum(float(xr[k]) * float(wr[k]) for k in range(xr.size)) for wr in wc]
                    for xr in xc.reshape(-1, x.shape[-1])]).reshape(x.shape[:-1] + (w.shape[0],))
    return _int_result(out, a)


def ind_batch_matmul(x, y, xzp, yzp, xs, ys, a):
    xc, yc = _centred(x, xzp), _centred(y, yzp)
    batch = max(x.shape[0], y.shape[0])
    out = np.array([xc[b % x.shape[0]] @ yc[b % y.shape[0]].T for b in range(batch)])
    return _int_result(out, a)


def ind_concatenate(data, scales, zps, out_scale, out_zp, a):
    parts = []
    for x, s, z in zip(data, scales, zps):
        vals = _exact_requantize(list(x.flat), [s] * x.size, [z] * x.size, [out_scale] * x.size,
                                 [out_zp] * x.size, "UPWARD")
        parts.append(_saturate(vals, x.dtype, x.shape))
    return np.concatenate(parts, axis=a.axis)


_MATH = {"rsqrt": lambda v: 1 / math.sqrt(v), "sigmoid": lambda v: 1 / (1 + math.exp(-v)), "tanh": math.tanh,
         "exp": math.exp, "erf": math.erf, "sqrt": math.sqrt, "log": math.log, "abs": abs,
         "hardswish": lambda v: v * min(max(v + 3, 0), 6) / 6}


def _unary(fn):
    """Dequantize exactly, the function in float64 (Python's math), quantize half to even."""
    def ind(x, s, z, os_, oz, a):
        real = [float(v) for v in _real(x, s, z, -1).flat]
        vals = [_round_half_even(Fraction(fn(v)) / Fraction(float(os_))) + int(oz) for v in real]
        return _saturate(vals, x.dtype, x.shape)
    return ind


def ind_leaky_relu(x, s, z, os_, oz, a):
    real = _real(x, s, z, -1)
    vals = [_round_upward((v if v >= 0 else v * Fraction(a.alpha)) / Fraction(float(os_))) + int(oz)
            for v in real.flat]
    return _saturate(vals, x.dtype, x.shape)


def ind_avg_pool2d(x, s, z, os_, oz, a):
    """Each input requantized exactly (ties upward), window sums over NCHW loops, the integer
    mean rounded down, as the op defines it."""
    req = np.array(_exact_requantize(list(x.flat), [s] * x.size, [z] * x.size, [os_] * x.size, [oz] * x.size,
                                     "UPWARD"), dtype=object).reshape(x.shape)
    (kh, kw), (sh, sw), (top, left, bottom, right) = a.pool_size, a.strides, a.padding
    n, c, h, w = x.shape
    oh, ow = (h + top + bottom - kh) // sh + 1, (w + left + right - kw) // sw + 1
    out = np.zeros((n, c, oh, ow), dtype=object)
    for b, ch, i, j in np.ndindex(n, c, oh, ow):
        cells = [(i * sh + p - top, j * sw + q - left) for p in range(kh) for q in range(kw)]
        inside = [(r, col) for r, col in cells if 0 <= r < h and 0 <= col < w]
        count = len(cells) if a.count_include_pad else max(len(inside), 1)
        out[b, ch, i, j] = sum(req[b, ch, r, col] for r, col in inside) // count
    return _saturate(list(out.flat), x.dtype, out.shape)


_SQNN_RANGES = {1: (-128, 127), 2: (0, 255), 3: (-2 ** 31, 2 ** 31 - 1)}


def _per_element(p, x, axis):
    p = np.asarray(p).reshape(-1)
    if x.ndim == 0:
        return [p[0]]
    ax = axis % x.ndim
    return [p[idx[ax] % p.size] for idx in np.ndindex(*x.shape)]


def ind_simulated_quantize(x, code, scale, zp, a):
    if int(code) not in _SQNN_RANGES:
        return x.copy()
    lo, hi = _SQNN_RANGES[int(code)]
    t = x.dtype.type
    vals = [min(max(float(round(t(v) / t(s))) + float(z), lo), hi)
            for v, s, z in zip(x.flat, _per_element(scale, x, a.axis), _per_element(zp, x, a.axis))]
    return np.array(vals, dtype=x.dtype).reshape(x.shape)


def ind_simulated_dequantize(x, code, scale, zp, a):
    if int(code) not in _SQNN_RANGES:
        return x.copy()
    t = x.dtype.type
    vals = [(t(v) - t(z)) * t(s) for v, s, z in zip(x.flat, _per_element(scale, x, a.axis),
                                                       _per_element(zp, x, a.axis))]
    return np.array(vals, dtype=x.dtype).reshape(x.shape)


def ind_softmax(x, s, z, os_, oz, a):
    """The float64 softmax of the dequantized input, quantized (the op approximates exp with
    integers: within 4 steps of 1/256)."""
    real = (x.astype("float64") - float(z)) * float(s)
    e = np.exp(real - real.max(axis=a.axis, keepdims=True))
    probs = e / e.sum(axis=a.axis, keepdims=True)
    return np.clip(np.round(probs / float(os_)) + int(oz), -128, 127).astype("int8")


# op name -> (independent function, tolerance in quantized steps)
INDEPENDENT = {
    "qnn.quantize": (ind_quantize, 0),
    "qnn.dequantize": (ind_dequantize, 0),
    "qnn.requantize": (ind_requantize, 1),
    "qnn.add": (_binary(lambda a, b: a + b), 1),
    "qnn.subtract": (_binary(lambda a, b: a - b), 1),
    "qnn.mul": (_binary(lambda a, b: a * b), 1),
    "qnn.conv2d": (ind_conv2d, 0),
    "qnn.conv2d_transpose": (ind_conv2d_transpose, 0),
    "qnn.dense": (ind_dense, 0),
    "qnn.batch_matmul": (ind_batch_matmul, 0),
    "qnn.concatenate": (ind_concatenate, 1),
    "qnn.leaky_relu": (ind_leaky_relu, 1),
    "qnn.avg_pool2d": (ind_avg_pool2d, 1),
    "qnn.simulated_quantize": (ind_simulated_quantize, 0),
    "qnn.softmax": (ind_softmax, 4),
    "qnn.simulated_dequantize": (ind_simulated_dequantize, 0),
    **{f"qnn.{name}": (_unary(fn), 1) for name, fn in _MATH.items()},
}

CASES = [(op, i, s) for op in QNN_OPS for i, s in enumerate(op.samples(np.random.default_rng(3)))]


def test_every_qnn_op_has_an_independent_reference():
    assert sorted(INDEPENDENT) == sorted(op.name for op in QNN_OPS)


@pytest.mark.parametrize("op,i,sample", CASES, ids=[f"{op.name}-{i}" for op, i, _ in CASES])
def test_reference_matches_independent(op, i, sample):
    fn, tol = INDEPENDENT[op.name]
    got = op.ref(*sample.inputs, sample.attrs)
    want = fn(*sample.inputs, sample.attrs)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(got, want)
    else:
        diff = np.abs(got.astype("int64") - want.astype("int64"))
        assert diff.size == 0 or diff.max() <= tol, f"{op.name}: off by {diff.max()} (allowed {tol})"
