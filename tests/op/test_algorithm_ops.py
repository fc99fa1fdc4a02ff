"""argsort, sort, topk, cumsum and cumprod: each op's numpy reference (and the debug
interpreter) against an INDEPENDENT formulation in plain Python — `sorted` (stable, with
reverse=True keeping ties in input order) over each row with NaN keyed as the largest value,
running totals accumulated element by element — plus TVM's conventions the samples may miss:
ties, NaN, k < 1, empty and one-element axes, and relation errors. The conformance test runs
the compiled kernels (merge sort / scan extern stages) against the references."""
import math

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import AttrsError, TypeInferenceError

OPS = ("argsort", "sort", "topk", "cumsum", "cumprod")


def _rows(x, axis):
    """(row index tuples, python values) along `axis`, one per row."""
    moved = np.moveaxis(x, axis, -1)
    for index in np.ndindex(*moved.shape[:-1]):
        yield index, moved[index].tolist()


def _sorted_positions(values, ascending):
    def key(k):
        v = values[k]
        nan = isinstance(v, float) and math.isnan(v)
        return (nan, 0.0 if nan else v)
    return sorted(range(len(values)), key=key, reverse=not ascending)


def _along(x, axis, per_row, out_len, dtype):
    moved_shape = np.moveaxis(x, axis, -1).shape[:-1] + (out_len,)
    out = np.empty(moved_shape, dtype)
    for index, values in _rows(x, axis):
        out[index] = per_row(values)
    return np.moveaxis(out, -1, axis)


def _argsort(x, attrs):
    n = x.shape[attrs.axis]
    return _along(x, attrs.axis, lambda v: _sorted_positions(v, attrs.is_ascend), n, attrs.dtype)


def _sort(x, attrs):
    n = x.shape[attrs.axis]
    return _along(x, attrs.axis, lambda v: [v[k] for k in _sorted_positions(v, attrs.is_ascend)], n, x.dtype)


def _topk(x, attrs):
    n = x.shape[attrs.axis]
    k = n if attrs.k < 1 else attrs.k
    idx = _along(x, attrs.axis, lambda v: _sorted_positions(v, attrs.is_ascend)[:k], k, attrs.dtype)
    vals = _along(x, attrs.axis, lambda v: [v[p] for p in _sorted_positions(v, attrs.is_ascend)[:k]], k, x.dtype)
    return {"both": [vals, idx], "values": vals, "indices": idx}[attrs.ret_type]


def _scan(combine, identity):
    def run(x, attrs):
        dtype = attrs.dtype or str(x.dtype)
        data = x.reshape(-1) if attrs.axis is None else x
        axis = 0 if attrs.axis is None else attrs.axis

        def row(values):
            out, acc = [], identity
            for v in values:
                acc = combine(acc, np.array(v).astype(dtype).item())
                acc = np.array(acc).astype(dtype).item()      # wrap / round to dtype each step
                out.append(acc)
            return [identity] + out[:-1] if attrs.exclusive else out
        return _along(data, axis, row, data.shape[axis], dtype)
    return run


INDEPENDENT = {"argsort": _argsort, "sort": _sort, "topk": _topk,
               "cumsum": _scan(lambda a, b: a + b, 0), "cumprod": _scan(lambda a, b: a * b, 1)}


def _cases():
    for name in OPS:
        op = relay.op.get(name)
        for i, sample in enumerate(op.samples(np.random.default_rng(0))):
            yield pytest.param(op, sample, id=f"{name}-{i}")


def _flat(v):
    return [np.asarray(x) for x in v] if isinstance(v, (list, tuple)) else [np.asarray(v)]


def _assert_same(actual, expected, what):
    for a, e in zip(_flat(actual), _flat(expected)):
        assert a.shape == e.shape and a.dtype == e.dtype, f"{what}: {a.shape} {a.dtype} vs {e.shape} {e.dtype}"
        if e.dtype.kind == "f":
            np.testing.assert_allclose(a, e, rtol=1e-3 if e.dtype == np.float16 else 1e-6, err_msg=what)
        else:
            np.testing.assert_array_equal(a, e, err_msg=what)


@pytest.mark.parametrize("op,sample", list(_cases()))
def test_reference_and_interpreter_match_independent(op, sample):
    expected = INDEPENDENT[op.name](*sample.inputs, sample.attrs)
    _assert_same(op.ref(*sample.inputs, sample.attrs), expected, f"{op.name} reference")
    x = relay.var("x", shape=sample.inputs[0].shape, dtype=str(sample.inputs[0].dtype))
    mod = relay.IRModule.from_expr(relay.Function([x], op(x, attrs=sample.attrs)))
    out = relay.create_executor("debug", mod=mod).evaluate()(*sample.inputs)
    _assert_same([o.numpy() for o in out] if isinstance(expected, list) else out.numpy(), expected,
                 f"{op.name} on debug")


@pytest.mark.parametrize("kind", ["graph", "vm"])
def test_ties_and_nan_compiled(kind):
    """Stable both ways (ties keep input order) and NaN largest, on a row long enough for
    several merge passes, against the independent formulation."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=(2, 37)).astype("float32")
    x[0, ::5] = np.nan
    data = relay.var("x", shape=x.shape, dtype="float32")
    for attrs_kw in (dict(is_ascend=True), dict(is_ascend=False)):
        mod = relay.IRModule.from_expr(relay.Function([data], relay.argsort(data, **attrs_kw)))
        out = relay.create_executor(kind, mod=mod).evaluate()(x).numpy()
        want = _argsort(x, relay.op.get("argsort").attrs_type(**attrs_kw))
        np.testing.assert_array_equal(out, want)
    mod = relay.IRModule.from_expr(relay.Function([data], relay.topk(data, k=5, is_ascend=False).astuple()))
    vals, idx = relay.create_executor(kind, mod=mod).evaluate()(x)
    want_vals, want_idx = _topk(x, relay.op.get("topk").attrs_type(k=5))
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    np.testing.assert_array_equal(vals.numpy(), want_vals)


def _infer(expr):
    return relay.transform.InferType()(relay.IRModule.from_expr(expr))["main"].body.checked_type


def test_errors():
    x = relay.var("x", shape=(2, 5), dtype="float32")
    with pytest.raises(TypeInferenceError, match="k=6 is larger"):
        _infer(relay.topk(x, k=6).astuple())
    with pytest.raises(TypeInferenceError, match="out of range"):
        _infer(relay.argsort(x, axis=2))
    with pytest.raises(TypeInferenceError, match="rank >= 1"):
        _infer(relay.sort(relay.var("s", shape=(), dtype="float32")))
    with pytest.raises(AttrsError, match="ret_type"):
        relay.topk(x, k=1, ret_type="value")
    with pytest.raises(TypeInferenceError, match="give dtype"):
        _infer(relay.cumsum(relay.var("b", shape=(3,), dtype="bool")))
    assert _infer(relay.cumsum(x)) == relay.TensorType((10,), "float32")


# --- dyn.topk ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_dyn_topk_reads_k_at_run_time(kind):
    """One program, several k: sizes from the shape function on the VM; k < 1 keeps the whole
    axis; a k beyond the axis is an InputError naming the op."""
    from relay_backend.errors import InputError
    x, k = relay.var("x", shape=(3, 6)), relay.var("k", shape=(), dtype="int32")
    call = relay.topk(x, k, axis=1, ret_type="both").astuple()
    assert call.op.name == "dyn.topk"
    run = relay.create_executor(kind, mod=relay.IRModule.from_expr(relay.Function([x, k], call))).evaluate()
    data = np.random.default_rng(4).integers(0, 4, size=(3, 6)).astype("float32")
    for k_value in (1, 4, 0, 6):
        vals, idx = run(data, np.int32(k_value))
        want_vals, want_idx = _topk(data, relay.op.get("topk").attrs_type(k=k_value, axis=1))
        np.testing.assert_array_equal(idx.numpy(), want_idx)
        np.testing.assert_array_equal(vals.numpy(), want_vals)
    with pytest.raises(InputError, match="dyn.topk"):
        run(data, np.int32(7))


def test_dynamic_to_static_makes_a_constant_k_static():
    x = relay.var("x", shape=(3, 6))
    dyn = relay.op.dyn.topk(x, relay.const(np.array(2, "int64")), ret_type="indices")
    mod = relay.transform.DynamicToStatic()(relay.IRModule.from_expr(relay.Function([x], dyn)))
    want = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], relay.topk(x, 2, ret_type="indices"))))
    relay.assert_structural_equal(mod["main"], want["main"])
    assert relay.topk(x, relay.const(3)).astuple().op.name == "topk"     # a constant k is static at once


# --- einsum, dft, stft: independent element-by-element sums -----------------------------------------
def _einsum(data, attrs):
    """Python loops over every assignment of the labels (numpy only for the index grid)."""
    from relay_backend.op.algorithm.contraction import plan
    labels, out, sizes = plan(attrs.equation, [x.shape for x in data])
    names = list(sizes)
    result = np.zeros([sizes[n] for n in out], "float64" if data[0].dtype.kind == "f" else "int64")
    for values in np.ndindex(*[sizes[n] for n in names]):
        where = dict(zip(names, values))
        term = 1
        for x, lab in zip(data, labels):
            term = term * x[tuple(0 if x.shape[k] == 1 and sizes[n] != 1 else where[n]
                                  for k, n in enumerate(lab))].item()
        result[tuple(where[n] for n in out)] += term
    return result.astype(data[0].dtype)


def _dft(re, im, attrs):
    import cmath
    n = re.shape[-1]
    out_re, out_im = np.zeros(re.shape), np.zeros(re.shape)
    sign = 1 if attrs.inverse else -1
    for index in np.ndindex(*re.shape[:-1]):
        for f in range(n):
            total = sum(complex(re[index + (k,)], im[index + (k,)]) * cmath.exp(sign * 2j * cmath.pi * f * k / n)
                        for k in range(n))
            total = total / n if attrs.inverse else total
            out_re[index + (f,)], out_im[index + (f,)] = total.real, total.imag
    return [out_re.astype(re.dtype), out_im.astype(re.dtype)]


def _stft(data, window, attrs):
    import cmath
    signal = data.reshape(-1, data.shape[-1])
    bins = attrs.n_fft // 2 + 1 if attrs.onesided else attrs.n_fft
    frames = (data.shape[-1] - attrs.n_fft) // attrs.hop_length + 1
    out = np.zeros((signal.shape[0], bins, frames, 2))
    for b in range(signal.shape[0]):
        for r in range(bins):
            for f in range(frames):
                total = sum(float(window[w]) * float(signal[b, f * attrs.hop_length + w])
                            * cmath.exp(-2j * cmath.pi * r * w / attrs.win_length) for w in range(attrs.win_length))
                total /= math.sqrt(attrs.n_fft) if attrs.normalized else 1
                out[b, r, f] = total.real, total.imag
    return out.reshape(data.shape[:-1] + out.shape[1:]).astype(data.dtype)


@pytest.mark.parametrize("name", ["einsum", "dft", "stft"])
def test_fourier_and_einsum_references_match_independent(name):
    op = relay.op.get(name)
    for sample in op.samples(np.random.default_rng(0)):
        if max(np.size(x) for x in _flat(sample.inputs[0] if name == "einsum" else sample.inputs)) > 100:
            continue          # the long float16 accumulation samples: the conformance test covers them
        fn = {"einsum": _einsum, "dft": _dft, "stft": _stft}[name]
        expected = fn(*sample.inputs, sample.attrs)
        got = op.ref(*sample.inputs, sample.attrs)
        for a, e in zip(_flat(got), _flat(expected)):
            assert a.shape == e.shape and a.dtype == e.dtype
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5, err_msg=f"{name} {sample.attrs}")


def test_einsum_and_fourier_errors():
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(4, 5))
    with pytest.raises(TypeInferenceError, match="size 4 in operand 1 but 3"):
        _infer(relay.einsum([x, y], "ij,jk->ik"))
    with pytest.raises(TypeInferenceError, match="2 operand terms for 1"):
        _infer(relay.einsum([x], "ij,jk"))
    with pytest.raises(TypeInferenceError, match="must be distinct labels"):
        _infer(relay.einsum([x], "ij->iz"))
    with pytest.raises(TypeInferenceError, match="shorter than n_fft"):
        _infer(relay.stft(relay.var("s", shape=(5,)), 8, 2))
    with pytest.raises(TypeInferenceError, match="one type"):
        _infer(relay.dft(x, y).astuple())
    assert _infer(relay.stft(relay.var("s", shape=(2, 20)), 8, 4)) == relay.TensorType((2, 5, 4, 2), "float32")
