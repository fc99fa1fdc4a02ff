"""Reductions add up in a dtype wide enough for their inputs, and reductions over bool compile.

Every executor must give what numpy gives in float64 (then rounded to the output dtype):
float16 sums accumulate in float32 (Relay's mixed-precision rule), so 4,096 ones sum to 4,096,
not 2,048; a mean never overflows where its result is representable (float32 averages add up
in float64, integer averages in int64); layer_norm on float16 does its statistics in float32.
min, max, sum, prod, all and any over bool follow numpy's logical meaning (sum/max: or,
prod/min: and). mean and variance of bool tensors are rejected with the cast that fixes them.

Tolerances: float16 outputs within 2 float16 ulps (rtol 2e-3) of the float64 answer, float32
within 1e-6 relative; bool and int outputs exact.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import TypeInferenceError

COMPILED = ["graph", "vm", "aot"]
RTOL = {"float16": 2e-3, "float32": 1e-6}


def _run(kind, build, *inputs):
    params = [relay.var(f"x{i}", shape=x.shape, dtype=str(x.dtype)) for i, x in enumerate(inputs)]
    mod = relay.IRModule.from_expr(relay.Function(params, build(*params)))
    return relay.create_executor(kind, mod=mod).evaluate()(*inputs).numpy()


def _check(got, want64, dtype):
    want = np.asarray(want64).astype(dtype)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=RTOL[dtype], atol=0)


def _layer_norm64(x):
    x64 = x.astype("float64")
    return (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)


_RNG = np.random.default_rng(7)
_UNIFORM100 = _RNG.uniform(0, 100, (2, 4096)).astype("float16")
_UNIFORM1000 = _RNG.uniform(0, 1000, (2, 4096)).astype("float16")

# name, builder, float16 input, float64 answer
FLOAT16_CASES = [
    ("mean of 1024 x 100", lambda x: relay.mean(x), np.full(1024, 100, "float16"), 100.0),
    ("sum of 4096 ones", lambda x: relay.sum(x), np.ones(4096, "float16"), 4096.0),
    ("sum along an axis", lambda x: relay.sum(x, axis=1), _UNIFORM100 / np.float16(64),
     (_UNIFORM100 / np.float16(64)).astype("float64").sum(1)),
    ("variance", lambda x: relay.variance(x, axis=1), _UNIFORM100, _UNIFORM100.astype("float64").var(1)),
    ("std", lambda x: relay.std(x, axis=1), _UNIFORM100, _UNIFORM100.astype("float64").std(1)),
    ("prod", lambda x: relay.prod(x, axis=0), np.full((4096, 2), 1.001, "float16"),
     np.full(2, float(np.float16(1.001)) ** 4096)),
    ("logsumexp", lambda x: relay.logsumexp(x, axis=1), _UNIFORM100 / np.float16(100),
     np.log(np.exp((_UNIFORM100 / np.float16(100)).astype("float64")).sum(1))),
    ("layer_norm whose sum overflows float16", lambda x: relay.nn.layer_norm(
        x, relay.const(np.ones(4096, "float16")), relay.const(np.zeros(4096, "float16"))),
     _UNIFORM100, _layer_norm64(_UNIFORM100)),
    ("layer_norm whose variance overflows float16", lambda x: relay.nn.layer_norm(
        x, relay.const(np.ones(4096, "float16")), relay.const(np.zeros(4096, "float16"))),
     _UNIFORM1000, _layer_norm64(_UNIFORM1000)),
]


@pytest.mark.parametrize("kind", COMPILED)
@pytest.mark.parametrize("name,build,x,want", FLOAT16_CASES, ids=[c[0] for c in FLOAT16_CASES])
def test_float16_reductions_accumulate_in_float32(kind, name, build, x, want):
    got = _run(kind, build, x)
    assert np.all(np.isfinite(got)), f"{name} on {kind}: {got}"
    if name.startswith("layer_norm"):   # values near 0 after centring: compare on the output's scale
        np.testing.assert_allclose(got.astype("float64"), want, rtol=0, atol=4e-3)
    else:
        _check(got, want, "float16")


@pytest.mark.parametrize("kind", COMPILED)
def test_float32_mean_and_variance_do_not_overflow_when_the_result_fits(kind):
    big = np.full(4, 3e38, "float32")
    _check(_run(kind, relay.mean, big), 3e38, "float32")
    spread = np.array([1.5e19, -1.5e19, 1.5e19, -1.5e19], "float32")   # the sum of squares overflows float32
    want = spread.astype("float64").var()
    _check(_run(kind, lambda x: relay.variance(x), spread), want, "float32")


@pytest.mark.parametrize("kind", COMPILED)
@pytest.mark.parametrize("dtype", ["int8", "int32"])
def test_integer_mean_does_not_wrap(kind, dtype):
    info = np.iinfo(dtype)
    x = np.array([[info.max - 3, info.max - 1, info.max - 2, info.max], [info.min, info.min + 2, 0, 0]], dtype)
    want = np.trunc(x.astype("float64").mean(axis=1)).astype(dtype)     # TVM/numpy-cast: toward zero
    np.testing.assert_array_equal(_run(kind, lambda v: relay.mean(v, axis=1), x), want)


BOOL_REDUCTIONS = {"sum": np.any, "max": np.any, "any": np.any, "min": np.all, "prod": np.all, "all": np.all}


@pytest.mark.parametrize("kind", ["debug"] + COMPILED)
@pytest.mark.parametrize("name", sorted(BOOL_REDUCTIONS))
def test_bool_reductions_compile_and_match_numpy(kind, name):
    x = np.array([[True, False, True], [False, False, False], [True, True, True]])
    for axis in (0, 1, None):
        got = _run(kind, lambda v: getattr(relay, name)(v, axis=axis), x)
        want = BOOL_REDUCTIONS[name](x, axis=axis)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, want, err_msg=f"{name}(axis={axis}) on {kind}")


@pytest.mark.parametrize("name", ["mean", "variance", "std"])
def test_mean_and_variance_of_bool_name_the_cast(name):
    x = relay.var("x", shape=(2, 3), dtype="bool")
    mod = relay.IRModule.from_expr(relay.Function([x], getattr(relay, name)(x, axis=1)))
    with pytest.raises(TypeInferenceError, match=r"bool.*cast"):
        relay.transform.InferType()(mod)
