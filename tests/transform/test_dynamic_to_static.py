"""DynamicToStatic: dyn.* calls whose shape arguments are (or fold to) constants become static
ops; before/expected structural tests, and the rewritten program gives the same answer (numpy)
and runs on the graph executor, which refuses the dynamic form."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te
from relay_backend.errors import InputError, RelayError, TypeInferenceError


def _d2s(body, params):
    mod = relay.IRModule.from_expr(relay.Function(params, body))
    return relay.transform.DynamicToStatic()(mod)


def _expected(body, params):
    """The static program as the pass leaves it: typed, with constants folded (as TVM's pass)."""
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, body)))
    return relay.transform.InferType()(relay.transform.FoldConstant()(mod))


def _c(*values, dtype="int64"):
    return relay.const(np.array(values, dtype=dtype))


X = relay.var("x", shape=(2, 3, 4))
V = relay.var("v", shape=(), dtype="float32")

CASES = {
    "reshape": (relay.dyn.reshape(X, _c(6, -1)), relay.reshape(X, (6, -1))),
    "broadcast_to": (relay.dyn.broadcast_to(X, _c(5, 2, 3, 4)), relay.broadcast_to(X, (5, 2, 3, 4))),
    "tile": (relay.dyn.tile(X, _c(2, 1, 1)), relay.tile(X, (2, 1, 1))),
    "squeeze": (relay.dyn.squeeze(relay.reshape(X, (2, 1, 12)), _c(1, dtype="int32")),
                relay.squeeze(relay.reshape(X, (2, 1, 12)), (1,))),
    "expand_dims": (relay.dyn.expand_dims(X, relay.const(np.array(1, "int64")), 2), relay.expand_dims(X, 1, 2)),
    "strided_slice": (relay.strided_slice(X, relay.var("b", shape=(2,), dtype="int64"), (2, 3)), None),
    "full": (relay.dyn.full(V, _c(2, 2)), relay.full(V, (2, 2))),
    "zeros": (relay.dyn.zeros(_c(3), "int32"), relay.zeros((3,), "int32")),
    "ones": (relay.dyn.ones(_c(3, 1)), relay.ones((3, 1))),
    "arange": (relay.dyn.arange(relay.const(np.array(1.5, "float32")), relay.const(np.array(7, "int32")),
                                relay.const(np.array(2, "int32")), "int32"), relay.arange(1, 7, 2, "int32")),
    "pad": (relay.dyn.nn.pad(X, relay.const(np.array([[0, 0], [1, 0], [0, 2]], "int64")), relay.const(1.0)),
            relay.nn.pad(X, ((0, 0), (1, 0), (0, 2)), 1.0)),
}


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n][1] is not None])
def test_constant_shape_arguments_give_the_static_op(name):
    before, after = CASES[name]
    params = relay.analysis.free_vars(before)
    assert relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, before)))["main"].body.op.name \
        .startswith("dyn.")
    got = _d2s(before, params)
    relay.assert_structural_equal(got["main"], _expected(after, params)["main"])


def test_dyn_strided_slice_with_constant_bounds_is_the_static_slice():
    before = relay.dyn.strided_slice(X, _c(1, 0), _c(2, 3), _c(1, 2))
    got = _d2s(before, [X])
    relay.assert_structural_equal(got["main"], _expected(relay.strided_slice(X, (1, 0), (2, 3), (1, 2)), [X])["main"])


def test_a_run_time_argument_stays_dynamic():
    before, _ = CASES["strided_slice"]
    b = relay.analysis.free_vars(before)
    got = _d2s(before, [X] + [v for v in b if v is not X])
    assert "dyn.strided_slice" in got.astext()


def test_shapes_from_static_tensors_fold_and_the_program_runs_on_the_graph_executor():
    y = relay.var("y", shape=(4, 6))
    body = relay.add(relay.reshape(X, relay.shape_of(y)), relay.dyn.ones(relay.shape_of(y), "float32"))
    mod = relay.IRModule.from_expr(relay.Function([X, y], body))
    with pytest.raises(RelayError, match="needs static shapes"):
        relay.create_executor("graph", mod=mod).evaluate()(np.zeros((2, 3, 4), "float32"), np.zeros((4, 6), "float32"))
    static = relay.transform.DynamicToStatic()(mod)
    text = static.astext()
    assert "dyn." not in text and "shape_of" not in text
    assert str(static["main"].ret_type) == "Tensor[(4, 6), float32]"
    xv = np.arange(24, dtype="float32").reshape(2, 3, 4)
    got = relay.create_executor("graph", mod=static).evaluate()(xv, np.zeros((4, 6), "float32")).numpy()
    np.testing.assert_array_equal(got, xv.reshape(4, 6) + 1)


def test_a_constant_the_static_op_rejects_is_reported():
    with pytest.raises(TypeInferenceError, match=r"reshape: cannot infer the -1 in newshape \(5, -1\)"):
        _d2s(relay.reshape(X, _c(5, -1)), [X])
    with pytest.raises(InputError, match=r"dyn.reshape.*-2"):
        _d2s(relay.dyn.reshape(X, _c(-2, 4)), [X])


def test_fold_constant_folds_shape_of_a_static_tensor_only():
    n = te.size_var("n")
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(n, 3))
    body = relay.Tuple([relay.shape_of(x, "int64"), relay.ndarray_size(x), relay.shape_of(y)])
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, y], body)))
    folded = relay.transform.FoldConstant()(mod)["main"].body
    np.testing.assert_array_equal(folded.fields[0].data.numpy(), np.array([2, 3], "int64"))
    assert folded.fields[1].data.numpy() == 6
    assert isinstance(folded.fields[2], relay.Call)
