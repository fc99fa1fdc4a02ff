"""SimplifyInference: batch_norm / dropout / layer_norm become arithmetic that matches numpy
formulas (rtol 1e-5, atol 1e-5 in float32), and the rewritten ops are gone from the program."""
import numpy as np
import pytest

from relay_backend import op
from relay_backend.ir import Call, Constant, Function, IRModule, Tuple, TupleGetItem, Var, var
from relay_backend.ir.functor import post_order
from relay_backend.ir.structural import assert_structural_equal
from relay_backend.transform.bind_params import bind_params_by_name
from relay_backend.transform.fold_constant import FoldConstant
from relay_backend.transform.infer_type import InferType
from relay_backend.transform.pass_infra import Sequential
from relay_backend.transform.simplify_inference import REWRITES, SimplifyInference

RTOL = ATOL = 1e-5


def _evaluate(func, *args):
    """A dataflow evaluator for straight-line programs: each op runs its numpy reference."""
    env = dict(zip(func.params, args))
    for node in post_order(func.body):
        if isinstance(node, Var):
            continue
        if isinstance(node, Constant):
            env[node] = node.data.numpy()
        elif isinstance(node, Tuple):
            env[node] = [env[f] for f in node.fields]
        elif isinstance(node, TupleGetItem):
            env[node] = env[node.tuple_value][node.index]
        elif isinstance(node, Call):
            env[node] = node.op.ref(*[env[a] for a in node.args], node.attrs)
    return env[func.body]


def _simplify(func):
    return SimplifyInference()(InferType()(IRModule.from_expr(func)))["main"]


def _op_names(func):
    return {n.op.name for n in post_order(func.body) if isinstance(n, Call) and hasattr(n.op, "name")}


def _bn_case(shape, axis, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    channels = shape[axis]
    data = rng.normal(size=shape).astype(dtype)
    gamma, beta = rng.normal(size=channels).astype(dtype), rng.normal(size=channels).astype(dtype)
    mean = rng.normal(size=channels).astype(dtype)
    variance = rng.uniform(0.2, 3.0, size=channels).astype(dtype)
    return data, gamma, beta, mean, variance


def _bn_numpy(data, gamma, beta, mean, variance, axis, eps, center=True, scale=True):
    shape = [1] * data.ndim
    shape[axis] = -1
    g, b, m, v = (a.reshape(shape) for a in (gamma, beta, mean, variance))
    out = (data - m) / np.sqrt(v + eps)
    if scale:
        out = out * g
    if center:
        out = out + b
    return out


def _bn_func(shape, axis, **kw):
    names = ("data", "gamma", "beta", "mean", "var")
    channels = shape[axis]
    vs = [var("data", shape=shape)] + [var(n, shape=(channels,)) for n in names[1:]]
    return vs, Function(vs, op.nn.batch_norm(*vs, axis=axis, **kw)[0])


@pytest.mark.parametrize("shape,axis", [((2, 3, 4, 5), 1), ((2, 4, 5, 3), 3), ((2, 4, 5, 3), -1),
                                        ((6, 4), 1), ((3, 4, 2), 0)])
def test_batch_norm_matches_numpy_formula(shape, axis):
    _, func = _bn_func(shape, axis, epsilon=1e-3)
    out = _simplify(func)
    assert "nn.batch_norm" not in _op_names(out)
    arrays = _bn_case(shape, axis)
    np.testing.assert_allclose(_evaluate(out, *arrays), _bn_numpy(*arrays, axis=axis, eps=1e-3),
                               rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("center,scale", [(False, True), (True, False), (False, False)])
def test_batch_norm_without_center_or_scale(center, scale):
    shape, axis = (2, 3, 4), 1
    _, func = _bn_func(shape, axis, center=center, scale=scale)
    out = _simplify(func)
    arrays = _bn_case(shape, axis, seed=1)
    expected = _bn_numpy(*arrays, axis=axis, eps=1e-5, center=center, scale=scale)
    np.testing.assert_allclose(_evaluate(out, *arrays), expected, rtol=RTOL, atol=ATOL)


def test_other_batch_norm_outputs_keep_the_op():
    vs = [var("data", shape=(2, 3))] + [var(n, shape=(3,)) for n in ("g", "b", "m", "v")]
    bn = op.nn.batch_norm(*vs)
    out = _simplify(Function(vs, Tuple([bn[0], bn[1]])))
    assert "nn.batch_norm" in _op_names(out)           # still needed for field 1
    assert not isinstance(out.body.fields[0], TupleGetItem)  # field 0 was rewritten


def test_dropout_becomes_its_input():
    x = var("x", shape=(2, 3))
    before = Function([x], op.exp(op.nn.dropout(op.negative(x), rate=0.3)))
    expected = Function([x], op.exp(op.negative(x)))   # typed like Relay's run_infer_type(expected)
    assert_structural_equal(_simplify(before), InferType()(IRModule.from_expr(expected))["main"])


@pytest.mark.parametrize("shape,axis", [((2, 3, 8), -1), ((4, 6), 0), ((2, 5, 3), 1)])
def test_layer_norm_matches_numpy_formula(shape, axis):
    rng = np.random.default_rng(2)
    n = shape[axis]
    x, g, b = var("x", shape=shape), var("g", shape=(n,)), var("b", shape=(n,))
    out = _simplify(Function([x, g, b], op.nn.layer_norm(x, g, b, axis=axis, epsilon=1e-4)))
    assert "nn.layer_norm" not in _op_names(out)
    xs = rng.normal(size=shape).astype("float32")
    gs, bs = rng.normal(size=n).astype("float32"), rng.normal(size=n).astype("float32")
    bshape = [1] * len(shape)
    bshape[axis] = n
    mean = xs.mean(axis=axis, keepdims=True)
    varr = ((xs - mean) ** 2).mean(axis=axis, keepdims=True)
    expected = (xs - mean) / np.sqrt(varr + 1e-4) * gs.reshape(bshape) + bs.reshape(bshape)
    np.testing.assert_allclose(_evaluate(out, xs, gs, bs), expected, rtol=RTOL, atol=ATOL)


def test_untyped_input_is_typed_by_the_pass():
    _, func = _bn_func((2, 3, 4), 1)
    out = SimplifyInference()(IRModule.from_expr(func))["main"]  # no InferType before
    assert "nn.batch_norm" not in _op_names(out)


def test_rewrites_are_a_table_keyed_by_op_name():
    assert set(REWRITES) >= {"nn.batch_norm", "nn.dropout", "nn.layer_norm"}
    assert REWRITES["nn.batch_norm"].index == 0 and REWRITES["nn.layer_norm"].index is None


def test_with_bound_statistics_fold_constant_leaves_one_multiply_add():
    shape, axis = (1, 4, 3, 3), 1
    _, func = _bn_func(shape, axis)
    arrays = _bn_case(shape, axis, seed=3)
    params = dict(zip(("gamma", "beta", "mean", "var"), arrays[1:]))
    mod = IRModule.from_expr(bind_params_by_name(func, params))
    out = Sequential([InferType(), SimplifyInference(), FoldConstant()])(mod)["main"]
    calls = [n for n in post_order(out.body) if isinstance(n, Call)]
    assert sorted(c.op.name for c in calls) == ["add", "multiply"]
    np.testing.assert_allclose(_evaluate(out, arrays[0]), _bn_numpy(*arrays, axis=axis, eps=1e-5),
                               rtol=RTOL, atol=ATOL)


def test_deep_chain_of_dropouts():
    x = var("x", shape=(4,))
    body = x
    for _ in range(2000):
        body = op.nn.dropout(op.negative(body))
    out = _simplify(Function([x], body))
    assert _op_names(out) == {"negative"}
    xs = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(_evaluate(out, xs), xs)


def test_interpreter_agrees_with_the_simplified_program():
    from relay_backend.build_module import create_executor
    vs, _ = _bn_func((2, 3, 4, 4), 1)
    g, b = var("lg", shape=(4,)), var("lb", shape=(4,))
    body = op.nn.layer_norm(op.nn.dropout(op.nn.batch_norm(*vs)[0]), g, b)
    mod = InferType()(IRModule.from_expr(Function(vs + [g, b], op.nn.relu(body))))
    out = SimplifyInference()(mod)
    assert not _op_names(out["main"]) & set(REWRITES)
    rng = np.random.default_rng(5)
    args = list(_bn_case((2, 3, 4, 4), 1, seed=5)) + [rng.normal(size=4).astype("float32") for _ in range(2)]
    before = create_executor("debug", mod).evaluate()(*args).numpy()
    after = create_executor("debug", out).evaluate()(*args).numpy()
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-5)
