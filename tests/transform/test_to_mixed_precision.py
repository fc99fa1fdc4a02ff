"""ToMixedPrecision: before/expected programs from TVM's test_to_mixed_precision.py (a single
conv, conv + batch norm following it, softmax and summations kept in float32, follow ops
fed by float32 values, clip bounds, keep_orig_output_dtype, another target type), and outputs
close to the float32 program."""
import warnings

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import transform
from relay_backend.errors import RelayError
from relay_backend.op.mixed_precision import MIXED_PRECISION_ALWAYS, register_mixed_precision_conversion
from relay_backend.op.registry import get as get_op

RNG = np.random.default_rng(0)


def amp(func, dtype="float16", keep=False, missing_op_mode=1):
    mod = transform.InferType()(relay.IRModule.from_expr(func))
    with transform.PassContext(config={"relay.ToMixedPrecision.keep_orig_output_dtype": keep}):
        out = transform.ToMixedPrecision(dtype, missing_op_mode)(mod)
    return transform.InferType()(out)["main"]


def typed(func):
    return transform.InferType()(relay.IRModule.from_expr(func))["main"]


def close(before, after, atol=0.02, rtol=1e-2):
    args = [RNG.uniform(-1, 1, size=[int(d) for d in p.type_annotation.shape]).astype("float32")
            for p in before.params]
    want = relay.create_executor().evaluate(before)(*args).numpy()
    for kind in ("debug", "graph"):
        got = relay.create_executor(kind, mod=relay.IRModule.from_expr(after)).evaluate()(*args).numpy()
        np.testing.assert_allclose(got.astype("float32"), want, atol=atol, rtol=rtol)


def _conv_inputs():
    return relay.var("data", shape=(1, 3, 8, 8)), relay.var("weight", shape=(5, 3, 3, 3))


def test_single_conv_keeps_original_output_dtype():
    data, weight = _conv_inputs()
    before = relay.Function([data, weight], relay.nn.conv2d(data, weight, padding=(1, 1), out_dtype="float32"))
    after = amp(before, keep=True)
    expected = relay.Function([data, weight], relay.cast(relay.nn.conv2d(
        relay.cast(data, "float16"), relay.cast(weight, "float16"), padding=(1, 1), out_dtype="float16"),
        "float32"))
    relay.assert_structural_equal(after, typed(expected))
    close(before, after)


def test_single_conv_float64_target():
    data, weight = _conv_inputs()
    before = relay.Function([data, weight], relay.nn.conv2d(data, weight, padding=(1, 1)))
    after = amp(before, "float64")
    expected = relay.Function([data, weight], relay.nn.conv2d(
        relay.cast(data, "float64"), relay.cast(weight, "float64"), padding=(1, 1), out_dtype="float64"))
    relay.assert_structural_equal(after, typed(expected))
    close(before, after, atol=1e-5, rtol=1e-5)


def test_conv_then_batch_norm_follows():
    data, weight = _conv_inputs()
    params = [relay.var(n, shape=(5,)) for n in ("gamma", "beta", "mean", "var")]
    conv = relay.nn.conv2d(data, weight, padding=(1, 1))
    before = relay.Function([data, weight] + params, relay.nn.batch_norm(conv, *params)[0])
    after = amp(before)
    bn = after.body.tuple_value
    assert bn.op.name == "nn.batch_norm" and all(
        a.op.name == "cast" and a.attrs.dtype == "float16" for a in bn.args[1:])
    assert after.checked_type.ret_type.dtype == "float16"


@pytest.mark.parametrize("make", [lambda x: relay.nn.softmax(x), lambda x: relay.sum(x, axis=1),
                                  lambda x: relay.exp(x)])
def test_never_ops_stay_float32(make):
    x = relay.var("x", shape=(2, 8))
    before = relay.Function([x], make(x))
    relay.assert_structural_equal(amp(before), typed(before))


def test_follow_op_with_a_float32_input_stays_float32():
    x = relay.var("x", shape=(2, 8))
    w = relay.var("w", shape=(4, 8))
    s = relay.sum(x, axis=1, keepdims=True)         # NEVER: float32
    d = relay.nn.dense(x, w)                          # ALWAYS: float16
    before = relay.Function([x, w], relay.add(d, s))  # FOLLOW, but s is float32: add in float32
    after = amp(before)
    add = after.body
    assert add.op.name == "add" and add.checked_type.dtype == "float32"
    assert add.args[0].op.name == "cast" and add.args[0].attrs.dtype == "float32"
    close(before, after)


def test_clip_outside_float16_range_stays_float32():
    x = relay.var("x", shape=(4,))
    w = relay.var("w", shape=(4, 4))
    y = relay.nn.dense(relay.reshape(x, (1, 4)), w)
    inside = amp(relay.Function([x, w], relay.clip(y, -1.0, 1.0)))
    assert inside.body.checked_type.dtype == "float16"
    outside = amp(relay.Function([x, w], relay.clip(y, -1e6, 1e6)))
    assert outside.body.checked_type.dtype == "float32"


def test_registered_rule_with_float32_accumulation():
    """A rule registered at a higher level may ask for float32 accumulation with a float16
    output (Relay's [category, accumulation dtype, output dtype]): the op gets out_dtype float32
    and a cast to float16 follows."""
    dense_op = get_op("nn.dense")
    default_rule = dense_op.get_attr("FTVMMixedPrecisionConversionType")
    register_mixed_precision_conversion(
        "nn.dense", lambda call, mixed: [MIXED_PRECISION_ALWAYS, "float32", mixed], level=11)
    try:
        x, w = relay.var("x", shape=(2, 8)), relay.var("w", shape=(4, 8))
        before = relay.Function([x, w], relay.nn.dense(x, w))
        after = amp(before)
    finally:
        dense_op.reset_attr("FTVMMixedPrecisionConversionType")
        register_mixed_precision_conversion("nn.dense", default_rule)
    expected = relay.Function([x, w], relay.cast(relay.nn.dense(
        relay.cast(x, "float16"), relay.cast(w, "float16"), out_dtype="float32"), "float16"))
    relay.assert_structural_equal(after, typed(expected))
    close(before, after)
    assert amp(before).body.op.name == "nn.dense"     # the default rule is back


def test_casts_keep_their_target_type():
    """cast's dtype is what the program asks for, not an accumulation type (Relay changes only
    out_dtype and the dtype of zeros/ones/full): an int -> float32 cast stays float32, and so
    does, on a second run, the float32 cast the first run put in front of a NEVER op."""
    i = relay.var("i", shape=(2, 4), dtype="int32")
    x, w = relay.var("x", shape=(2, 8)), relay.var("w", shape=(4, 8))
    before = relay.Function([i, x, w], relay.exp(relay.add(relay.nn.dense(x, w), relay.cast(i, "float32"))))
    once = amp(before)
    cast_of_int = once.body.args[0].args[1]
    assert cast_of_int.op.name == "cast" and cast_of_int.checked_type.dtype == "float32"
    twice = transform.InferType()(transform.ToMixedPrecision("float16")(relay.IRModule.from_expr(once)))["main"]
    assert twice.body.op.name == "exp" and twice.body.args[0].checked_type.dtype == "float32"
    args = [RNG.integers(-3, 3, size=(2, 4)).astype("int32"), RNG.uniform(-1, 1, size=(2, 8)).astype("float32"),
            RNG.uniform(-1, 1, size=(4, 8)).astype("float32")]
    want = relay.create_executor().evaluate(before)(*args).numpy()
    for after in (once, twice):
        got = relay.create_executor().evaluate(after)(*args).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


def test_missing_op_modes():
    x = relay.var("x", shape=(1, 4, 3, 3))
    before = relay.Function([x], relay.nn.lrn(x))     # lrn has no rule: FOLLOW
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        amp(before)
    assert any("nn.lrn" in str(w.message) for w in caught)
    with pytest.raises(RelayError, match="no mixed precision rule"):
        amp(before, missing_op_mode=0)
    with pytest.raises(RelayError, match="Missing op mode"):
        transform.ToMixedPrecision("float16", 3)


def _module_with_functions(dtype):
    """main calls a global function @layer (dense + relu) and a let-bound closure (sigmoid)."""
    mod = relay.IRModule()
    layer = relay.GlobalVar("layer")
    a, b = relay.var("a", shape=(2, 8), dtype=dtype), relay.var("b", shape=(4, 8), dtype=dtype)
    mod[layer] = relay.Function([a, b], relay.nn.relu(relay.nn.dense(a, b)))
    x, w = relay.var("x", shape=(2, 8), dtype=dtype), relay.var("w", shape=(4, 8), dtype=dtype)
    c = relay.var("c", shape=(2, 4), dtype=dtype)
    f = relay.Var("f")
    mod["main"] = relay.Function([x, w], relay.Let(f, relay.Function([c], relay.sigmoid(c)),
                                                   relay.Call(f, [relay.Call(layer, [x, w])])))
    return transform.InferType()(mod)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_functions_keep_their_signatures(dtype):
    """Every function but the entry keeps its type (its body runs in the mixed type and casts
    back), so the calls between functions still type-check, whatever the program's float type."""
    before = _module_with_functions(dtype)
    after = transform.InferType()(transform.ToMixedPrecision("float16")(before))
    assert after["layer"].checked_type == before["layer"].checked_type
    dense = after["layer"].body.args[0].args[0]
    assert dense.op.name == "nn.dense" and dense.checked_type.dtype == "float16"
    closure = after["main"].body.value
    assert closure.checked_type == before["main"].body.value.checked_type
    args = [RNG.uniform(-1, 1, size=(2, 8)).astype(dtype), RNG.uniform(-1, 1, size=(4, 8)).astype(dtype)]
    want = relay.create_executor("debug", mod=before).evaluate()(*args).numpy()
    got = relay.create_executor("debug", mod=after).evaluate()(*args).numpy()
    np.testing.assert_allclose(got.astype("float64"), want, atol=0.02, rtol=1e-2)
