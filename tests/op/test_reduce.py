"""Reduction ops: relations vs numpy shapes, references vs independent numpy, attrs, errors, Any."""
import numpy as np
import pytest

from relay_backend import op
from relay_backend.errors import AttrsError, RelayError, TypeInferenceError
from relay_backend.ir import Any, Call, Tuple, TupleWrapper, TensorType, var
from relay_backend.op.reduce import ArgReduceAttrs, ReduceAttrs, VarianceAttrs

REDUCE_NAMES = ["sum", "mean", "max", "min", "prod", "all", "any", "argmax", "argmin", "variance"]


def ttype(x):
    return TensorType(x.shape, x.dtype)


def call_type(call):
    """The call's output type from its op's relation, with arg types read off annotated vars."""
    def arg_type(a):
        if isinstance(a, Tuple):
            raise AssertionError("reduce ops take tensors")
        if isinstance(a, Call):
            return call_type(a)
        return a.type_annotation
    return call.op.rel([arg_type(a) for a in call.args], call.attrs)


def np_axes(attrs, ndim):
    """Independent statement of TVM's axis rule: None/[] -> all; else mod ndim; exclude -> complement."""
    if not attrs.axis:
        return tuple(range(ndim))
    chosen = sorted({a % ndim for a in attrs.axis})
    if attrs.exclude:
        chosen = [a for a in range(ndim) if a not in chosen]
    return tuple(chosen)


@pytest.mark.parametrize("name", REDUCE_NAMES)
def test_relation_matches_reference_on_every_sample(name):
    o = op.get(name)
    samples = o.samples(np.random.default_rng(0))
    assert len(samples) >= 6
    for s in samples:
        out_t = o.rel([ttype(x) for x in s.inputs], s.attrs)
        out = o.ref(*s.inputs, s.attrs)
        assert out_t == ttype(out), (name, s.attrs, out_t, out.shape, out.dtype)


NP_FUNCS = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod, "all": np.all, "any": np.any,
            "mean": np.mean}


@pytest.mark.parametrize("name", sorted(NP_FUNCS))
def test_reference_vs_numpy(name):
    o = op.get(name)
    for s in o.samples(np.random.default_rng(1)):
        x, attrs = s.inputs[0], s.attrs
        if x.size == 0 and name in ("max", "min"):
            continue   # numpy raises; the identity result is checked in test_zero_size.py
        want = NP_FUNCS[name](x.astype("float64") if x.dtype.kind == "f" else x,
                              axis=np_axes(attrs, x.ndim), keepdims=attrs.keepdims)
        got = o.ref(x, attrs)
        assert got.dtype == x.dtype
        tol = 1e-6 if x.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got.astype("float64"), np.asarray(want).astype(x.dtype).astype("float64"),
                                   rtol=tol, atol=tol)


def test_samples_cover_ranks_dtypes_and_flags():
    seen = {"keepdims": set(), "exclude": set(), "dtype": set(), "rank": set(), "negative_axis": False}
    for s in op.get("sum").samples(np.random.default_rng(0)):
        x, a = s.inputs[0], s.attrs
        seen["keepdims"].add(a.keepdims)
        seen["exclude"].add(a.exclude)
        seen["dtype"].add(str(x.dtype))
        seen["rank"].add(x.ndim)
        seen["negative_axis"] |= any(ax < 0 for ax in (a.axis or ()))
    assert seen["keepdims"] == {True, False} and seen["exclude"] == {True, False}
    assert {"float32", "float64", "int32"} <= seen["dtype"] and len(seen["rank"]) >= 4
    assert seen["negative_axis"]


def test_hand_checked_values():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(op.get("sum").ref(x, ReduceAttrs(axis=1)), [3, 12])
    np.testing.assert_array_equal(op.get("max").ref(x, ReduceAttrs(axis=0, keepdims=True)), [[3, 4, 5]])
    np.testing.assert_array_equal(op.get("mean").ref(x, ReduceAttrs(axis=1, exclude=True)), [1.5, 2.5, 3.5])
    assert op.get("prod").ref(x + 1, ReduceAttrs()) == 720
    # int sums wrap in the input dtype rather than widening to int64 as numpy would
    big = np.full((4,), 2**30, "int32")
    assert op.get("sum").ref(big, ReduceAttrs()).dtype == np.int32


def test_argmax_argmin_ties_and_multi_axis():
    x = np.array([[1, 3, 3], [2, 2, 0]], "int32")
    argmax, argmin = op.get("argmax"), op.get("argmin")
    np.testing.assert_array_equal(argmax.ref(x, ArgReduceAttrs(axis=1)), [1, 0])
    np.testing.assert_array_equal(argmax.ref(x, ArgReduceAttrs(axis=1, select_last_index=True)), [2, 1])
    np.testing.assert_array_equal(argmin.ref(x, ArgReduceAttrs(axis=0, select_last_index=True)), [0, 1, 1])
    # several axes: the index is into the row-major flattening of the reduced axes
    y = np.random.default_rng(2).normal(size=(2, 3, 4)).astype("float32")
    got = argmax.ref(y, ArgReduceAttrs(axis=(0, 2)))
    want = [int(np.argmax(y[:, j, :].reshape(-1))) for j in range(3)]
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int32
    assert argmax.ref(y, ArgReduceAttrs()) == np.argmax(y)


def test_variance_and_std_vs_numpy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 4, 5))
    vop = op.get("variance")
    for axis, unbiased, keep in [((1,), False, False), ((0, 2), True, True), (None, True, False)]:
        attrs = VarianceAttrs(axis, keep, False, unbiased)
        m = x.mean(axis=axis, keepdims=True)
        got = vop.ref(x, m, attrs)
        np.testing.assert_allclose(got, np.var(x, axis=axis, ddof=int(unbiased), keepdims=keep), rtol=1e-12)
    for s in vop.samples(rng):
        x, m = s.inputs
        want = np.var(x.astype("float64"), axis=np_axes(s.attrs, x.ndim), ddof=int(s.attrs.unbiased),
                      keepdims=s.attrs.keepdims)
        rtol = 1e-3 if x.dtype == np.float16 else 2e-5      # the result is rounded to x's dtype
        np.testing.assert_allclose(vop.ref(x, m, s.attrs), want, rtol=rtol, atol=1e-6)


def test_constructors_build_calls_with_tvm_signatures():
    x = var("x", shape=(2, 3, 4))
    c = op.sum(x, axis=1, keepdims=True)
    assert c.op is op.get("sum") and c.attrs == ReduceAttrs((1,), True, False)
    assert call_type(c) == TensorType((2, 1, 4))
    assert call_type(op.mean(x, axis=[0, -1], exclude=True)) == TensorType((2, 4))
    am = op.argmax(x, axis=-1, select_last_index=True)
    assert am.attrs.select_last_index and call_type(am) == TensorType((2, 3), "int32")
    v = op.variance(x, axis=2, unbiased=True)
    assert v.op is op.get("variance") and v.args[0] is x and v.args[1].op is op.get("mean")
    assert v.args[1].attrs.keepdims and call_type(v) == TensorType((2, 3))
    s = op.std(x, axis=(0, 1))
    assert s.op is op.get("sqrt") and call_type(s.args[0]) == TensorType((4,))
    mv = op.mean_variance(x, axis=1)
    assert isinstance(mv, TupleWrapper) and len(mv) == 2
    assert call_type(mv.astuple().fields[0]) == call_type(mv.astuple().fields[1]) == TensorType((2, 4))
    assert isinstance(op.logsumexp(x, axis=1), Call)


def test_empty_axis_means_all_axes_like_tvm():
    assert ReduceAttrs(axis=[]).axis is None
    assert ReduceAttrs(axis=2).axis == (2,)
    assert op.get("sum").rel([TensorType((2, 3))], ReduceAttrs(axis=[], exclude=True)) == TensorType(())


def test_any_dims():
    rel = op.get("sum").rel
    t = TensorType((Any(), 3, Any()), "float32")
    assert rel([t], ReduceAttrs(axis=1)) == TensorType((Any(), Any()))
    assert rel([t], ReduceAttrs(axis=(0,), keepdims=True)) == TensorType((1, 3, Any()))
    assert rel([t], ReduceAttrs(axis=(1,), exclude=True)) == TensorType((3,))
    assert op.get("argmin").rel([t], ArgReduceAttrs(axis=-1)) == TensorType((Any(), 3), "int32")
    vrel = op.get("variance").rel
    assert vrel([t, TensorType((1, 3, 1))], VarianceAttrs(axis=(0, 2))) == TensorType((3,))


def test_errors_are_clear():
    t = TensorType((2, 3))
    with pytest.raises(TypeInferenceError, match="out of range"):
        op.get("sum").rel([t], ReduceAttrs(axis=2))
    with pytest.raises(TypeInferenceError, match="repeated"):
        op.get("max").rel([t], ReduceAttrs(axis=(1, -1)))
    with pytest.raises(TypeInferenceError, match="bool"):
        op.get("all").rel([t], ReduceAttrs())
    with pytest.raises(TypeInferenceError, match="expected a tensor"):
        op.get("sum").rel([None], ReduceAttrs())
    with pytest.raises(TypeInferenceError, match="dtype"):
        op.get("variance").rel([t, TensorType((2, 1), "float64")], VarianceAttrs(axis=1))
    with pytest.raises(TypeInferenceError, match="rank"):
        op.get("variance").rel([t, TensorType((1, 2, 1))], VarianceAttrs(axis=1))
    with pytest.raises(AttrsError, match="axis"):
        ReduceAttrs(axis="rows")
    with pytest.raises(RelayError):
        op.sum(var("x", shape=(2,)), axis=[0.5])


def _evaluate(expr, env):
    """A tiny evaluator over op references (Var, Constant, Call, Tuple), to check composed constructors."""
    if isinstance(expr, Call):
        return expr.op.ref(*[_evaluate(a, env) for a in expr.args], expr.attrs)
    if isinstance(expr, Tuple):
        return tuple(_evaluate(f, env) for f in expr.fields)
    if hasattr(expr, "data"):
        return expr.data.numpy()
    return env[expr]


def test_composed_constructors_compute_the_right_values():
    rng = np.random.default_rng(4)
    xv = rng.normal(size=(3, 5)).astype("float64") * 10
    x = var("x", shape=(3, 5), dtype="float64")
    lse = _evaluate(op.logsumexp(x, axis=1), {x: xv})
    np.testing.assert_allclose(lse, np.log(np.exp(xv).sum(axis=1)), rtol=1e-12)
    lse_all = _evaluate(op.logsumexp(x, keepdims=True), {x: xv})
    assert lse_all.shape == (1, 1)
    np.testing.assert_allclose(lse_all, np.log(np.exp(xv).sum()), rtol=1e-12)
    np.testing.assert_allclose(_evaluate(op.std(x, axis=0, unbiased=True), {x: xv}), xv.std(0, ddof=1), rtol=1e-12)
    m, s = _evaluate(op.mean_std(x, axis=1).astuple(), {x: xv})
    np.testing.assert_allclose(m, xv.mean(1), rtol=1e-12)
    np.testing.assert_allclose(s, xv.std(1), rtol=1e-12)
    m, v = _evaluate(op.mean_variance(x, axis=0, keepdims=True).astuple(), {x: xv})
    assert m.shape == v.shape == (1, 5)
    np.testing.assert_allclose(v, xv.var(0, keepdims=True), rtol=1e-12)
