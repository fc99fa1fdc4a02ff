"""ONNX ops that generate a tensor from shapes and scalars rather than transform data: EyeLike,
the window functions (HannWindow, HammingWindow, BlackmanWindow) and MelWeightMatrix.

EyeLike needs its input's static shape and MelWeightMatrix constant scalars (their outputs are
constants then). A window's size may be known only at run time: the window is then computed from
dyn.arange, which the debug interpreter and the VM run. Windows are evaluated in float64 and cast
to output_datatype (float32 by default), as ONNX's reference does.
"""
import numpy as np

from .... import op as _op
from ....runtime.limits import check_tensor_size
from ..common import const, onnx_dtype
from ._registry import converter


def _out_dtype(ctx, default):
    code = ctx.attrs.get("output_datatype", ctx.attrs.get("dtype"))
    return default if code is None else onnx_dtype(code, f"{ctx.where()}: the output dtype")


@converter("EyeLike", min_version=9)
def eye_like(ctx, inputs):
    """Ones on the k-th diagonal of a matrix shaped like the (2-D) input, zeros elsewhere."""
    x = inputs[0]
    shape = ctx.static_shape(x, "input")
    if len(shape) != 2:
        raise ctx.invalid(f"the input must be 2-D, got shape {shape}")
    dtype = _out_dtype(ctx, ctx.dtype(x))
    check_tensor_size(shape, dtype, f"{ctx.where()}: the output")
    return const(np.eye(shape[0], shape[1], k=int(ctx.attrs.get("k", 0)), dtype=dtype))


# window -> [(coefficient, multiple of 2 pi n / N in the cosine)]: w[n] = sum coefficient * cos(...)
_WINDOWS = {
    "HannWindow": [(0.5, 0), (-0.5, 1)],
    "HammingWindow": [(25.0 / 46.0, 0), (-21.0 / 46.0, 1)],
    "BlackmanWindow": [(0.42, 0), (-0.5, 1), (0.08, 2)],
}


@converter(*_WINDOWS, min_version=17)
def window(ctx, inputs):
    """w[n] for n in [0, size): the cosine sum of the window over N = size (periodic=1, the default)
    or size - 1 (periodic=0, the symmetric window)."""
    size = inputs[0]
    dtype = _out_dtype(ctx, "float32")
    if int(np.prod([int(d) for d in ctx.static_shape(size, "size")], dtype=np.int64)) != 1:
        raise ctx.invalid(f"size must be a scalar, got shape {ctx.shape(size)}")
    periodic = int(ctx.attrs.get("periodic", 1))
    known = ctx.maybe_value(size)
    if known is not None:
        length = int(np.asarray(known).reshape(-1)[0])
        if length < 0:
            raise ctx.invalid(f"size must not be negative, got {length}")
        check_tensor_size((length,), dtype, f"{ctx.where()}: the window")
        n = const(np.arange(length, dtype="float64"))
    else:
        length = _op.cast(_op.reshape(size, ()), "float64")
        n = _op.arange(length, dtype="float64")
    span = _op.subtract(_op.cast(_op.reshape(size, ()), "float64"), const(np.array(1 - periodic, "float64")))
    phase = _op.divide(_op.multiply(n, const(np.array(2 * np.pi, "float64"))), span)
    out = None
    for coefficient, multiple in _WINDOWS[ctx.op]:
        term = (const(np.array(coefficient, "float64")) if multiple == 0 else
                _op.multiply(const(np.array(coefficient, "float64")),
                             _op.cos(_op.multiply(phase, const(np.array(float(multiple), "float64"))))))
        out = term if out is None else _op.add(out, term)
    return _op.cast(_op.multiply(out, _op.ones_like(n)), dtype)


def _mel(hertz):
    """Hertz -> mel (2595 log10(1 + f / 700)), on float64 Relay expressions."""
    return _op.multiply(_f64(2595.0), _op.log10(_op.add(_f64(1.0), _op.divide(hertz, _f64(700.0)))))


def _hertz(mel):
    return _op.multiply(_f64(700.0), _op.subtract(_op.power(_f64(10.0), _op.divide(mel, _f64(2595.0))), _f64(1.0)))


def _f64(value):
    return const(np.array(value, "float64"))


def _scalar_f64(ctx, expr, what):
    if int(np.prod([int(d) for d in ctx.static_shape(expr, what)], dtype=np.int64)) != 1:
        raise ctx.invalid(f"{what} must be a scalar, got shape {ctx.shape(expr)}")
    return _op.cast(_op.reshape(expr, ()), "float64")


def _int_scalar(ctx, expr, what):
    values = np.asarray(ctx.value(expr, what)).reshape(-1)
    if values.size != 1:
        raise ctx.invalid(f"{what} must be a scalar, got {values.size} values")
    return int(values[0])


@converter("MelWeightMatrix", min_version=17)
def mel_weight_matrix(ctx, inputs):
    """The [dft_length // 2 + 1, num_mel_bins] matrix of triangular filters: num_mel_bins + 2 points
    spaced evenly in mel between the edge frequencies (the step divides by num_mel_bins + 2, as the
    spec's reference does), mapped to FFT bins b = floor((dft_length + 1) * hertz / sample_rate);
    filter i rises linearly from b[i] to 1 at b[i + 1] and falls to 0 at b[i + 2] (a filter whose
    left and centre bins coincide is 1 at the centre). num_mel_bins and dft_length set the shape and
    must be constants; the sample rate and edge frequencies may be run-time inputs (the matrix is then
    computed elementwise when the model runs; bins that fall outside the matrix are dropped)."""
    bins, dft_length = _int_scalar(ctx, inputs[0], "num_mel_bins"), _int_scalar(ctx, inputs[1], "dft_length")
    if bins < 0 or dft_length < 0:
        raise ctx.invalid(f"num_mel_bins and dft_length must be >= 0, got {bins} and {dft_length}")
    rate, low, high = (_scalar_f64(ctx, e, n) for e, n in zip(inputs[2:], ("sample_rate", "lower_edge_hertz",
                                                                              "upper_edge_hertz")))
    dtype = _out_dtype(ctx, "float32")
    rows = dft_length // 2 + 1
    check_tensor_size((rows, bins), dtype, f"{ctx.where()}: the output")
    step = _op.divide(_op.subtract(_mel(high), _mel(low)), _f64(bins + 2))
    points = _hertz(_op.add(_op.multiply(const(np.arange(bins + 2, dtype="float64")), step), _mel(low)))
    fft_bins = _op.floor(_op.divide(_op.multiply(_f64(dft_length + 1), points), rate))
    left, centre, right = (_op.strided_slice(fft_bins, [k], [k + bins]) for k in range(3))
    j = const(np.arange(rows, dtype="float64").reshape(rows, 1))
    zero, one = _f64(0.0), _f64(1.0)
    rising = _op.where(_op.equal(centre, left), _op.where(_op.equal(j, centre), one, zero),
                       _op.divide(_op.subtract(j, left), _op.maximum(_op.subtract(centre, left), one)))
    in_rise = _op.logical_and(_op.greater_equal(j, left), _op.less_equal(j, centre))
    falling = _op.divide(_op.subtract(right, j), _op.maximum(_op.subtract(right, centre), one))
    in_fall = _op.logical_and(_op.greater_equal(j, centre), _op.less(j, right))
    out = _op.where(in_fall, falling, _op.where(in_rise, rising, zero))
    return _op.cast(out, dtype)
