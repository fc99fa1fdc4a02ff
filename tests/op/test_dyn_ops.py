"""The dyn operators (shape arguments are tensors read at run time) against numpy.

Each case runs on the debug interpreter and on the VM (compiled kernels whose output sizes come
from the op's data-dependent shape function) with shape values passed as inputs, so one compiled
program serves every value. Expected results are numpy expressions written here (exact: the ops
only move or fill elements). Bad run-time values are InputErrors naming the op on both.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te
from relay_backend.errors import InputError, TypeInferenceError

pytestmark = pytest.mark.compile

KINDS = ("debug", "vm")


def _run(kind, params, body, *args):
    mod = relay.IRModule.from_expr(relay.Function(params, body))
    return relay.create_executor(kind, mod=mod).evaluate()(*args).numpy()


def _i64(*values):
    return np.array(values, dtype="int64")


X = np.arange(24, dtype="float32").reshape(2, 3, 4)


@pytest.mark.parametrize("kind", KINDS)
def test_reshape_with_a_shape_tensor(kind):
    x, s = relay.var("x", shape=(2, 3, 4)), relay.var("s", shape=(2,), dtype="int64")
    for shape, want in (((6, -1), X.reshape(6, 4)), ((0, -3), X.reshape(2, 12)), ((-1, 2), X.reshape(12, 2))):
        np.testing.assert_array_equal(_run(kind, [x, s], relay.reshape(x, s), X, _i64(*shape)), want)
    with pytest.raises(InputError, match="dyn.reshape"):
        _run(kind, [x, s], relay.reshape(x, s), X, _i64(5, -1))


@pytest.mark.parametrize("kind", KINDS)
def test_shapes_computed_from_other_tensors(kind):
    """dyn.reshape(x, shape_of(y)), broadcast_to(c, shape_of(y)), zeros(shape_of(y)) over a
    symbolic y: one program, any size."""
    n = te.size_var("n")
    x, y = relay.var("x", shape=(relay.Any(),)), relay.var("y", shape=(n, 3))
    body = relay.Tuple([relay.reshape(x, relay.shape_of(y)),
                        relay.broadcast_to(relay.const(np.float32(2.5)), relay.shape_of(y)),
                        relay.ones(relay.shape_of(y), "int32"),
                        relay.ndarray_size(y)])
    mod = relay.IRModule.from_expr(relay.Function([x, y], body))
    fn = relay.create_executor(kind, mod=mod).evaluate()
    for rows in (1, 4):
        xv = np.arange(rows * 3, dtype="float32")
        out = fn(xv, np.zeros((rows, 3), "float32"))
        np.testing.assert_array_equal(out[0].numpy(), xv.reshape(rows, 3))
        np.testing.assert_array_equal(out[1].numpy(), np.full((rows, 3), 2.5, "float32"))
        np.testing.assert_array_equal(out[2].numpy(), np.ones((rows, 3), "int32"))
        assert out[3].numpy() == rows * 3 and out[3].numpy().dtype == np.int32


@pytest.mark.parametrize("kind", KINDS)
def test_broadcast_to_tile_full_zeros(kind):
    x, s = relay.var("x", shape=(3, 1)), relay.var("s", shape=(3,), dtype="int64")
    xv = np.array([[1.0], [2.0], [3.0]], "float32")
    np.testing.assert_array_equal(_run(kind, [x, s], relay.broadcast_to(x, s), xv, _i64(2, 3, 4)),
                                  np.broadcast_to(xv, (2, 3, 4)))
    with pytest.raises(InputError, match="dyn.broadcast_to"):
        _run(kind, [x, s], relay.broadcast_to(x, s), xv, _i64(2, 2, 4))
    r = relay.var("r", shape=(2,), dtype="int32")
    np.testing.assert_array_equal(_run(kind, [x, r], relay.tile(x, r), xv, np.array([2, 3], "int32")),
                                  np.tile(xv, (2, 3)))
    v = relay.var("v", shape=(), dtype="float32")
    np.testing.assert_array_equal(_run(kind, [v, s], relay.full(v, s), np.float32(7), _i64(1, 2, 2)),
                                  np.full((1, 2, 2), 7, "float32"))
    np.testing.assert_array_equal(_run(kind, [s], relay.zeros(s, "float64"), _i64(2, 0, 3)), np.zeros((2, 0, 3)))
    with pytest.raises(InputError, match="negative"):
        _run(kind, [s], relay.zeros(s, "float64"), _i64(2, -1, 3))


@pytest.mark.parametrize("kind", KINDS)
def test_squeeze_and_expand_dims_with_axis_tensors(kind):
    x = relay.var("x", shape=(1, 3, 1))
    xv = np.arange(3, dtype="float32").reshape(1, 3, 1)
    a = relay.var("a", shape=(1,), dtype="int32")
    np.testing.assert_array_equal(_run(kind, [x, a], relay.squeeze(x, a), xv, np.array([2], "int32")),
                                  np.squeeze(xv, 2))
    with pytest.raises(InputError, match="dyn.squeeze"):
        _run(kind, [x, a], relay.squeeze(x, a), xv, np.array([1], "int32"))
    k = relay.var("k", shape=(), dtype="int64")
    np.testing.assert_array_equal(_run(kind, [x, k], relay.expand_dims(x, k, 2), xv, np.array(1, "int64")),
                                  xv.reshape(1, 1, 1, 3, 1))


@pytest.mark.parametrize("kind", KINDS)
def test_strided_slice_with_tensor_bounds(kind):
    data = np.arange(42, dtype="float32").reshape(6, 7)
    x = relay.var("x", shape=(6, 7))
    b, e, s = (relay.var(name, shape=(2,), dtype="int64") for name in "bes")
    body = relay.strided_slice(x, b, e, s)
    for (b0, b1), (e0, e1), (s0, s1) in (((1, -6), (5, 7), (2, 3)), ((-1, 0), (-7, 100), (-2, 1)),
                                         ((0, 6), (6, 2), (1, -1))):
        want = data[b0:e0:s0, b1:e1:s1]
        got = _run(kind, [x, b, e, s], body, data, _i64(b0, b1), _i64(e0, e1), _i64(s0, s1))
        np.testing.assert_array_equal(got, want)
    size_mode = relay.strided_slice(x, b, e, s, slice_mode="size")
    np.testing.assert_array_equal(_run(kind, [x, b, e, s], size_mode, data, _i64(2, 1), _i64(3, -1), _i64(1, 1)),
                                  data[2:5, 1:])


@pytest.mark.parametrize("kind", KINDS)
def test_pad_with_a_width_tensor(kind):
    x, p = relay.var("x", shape=(2, 3)), relay.var("p", shape=(2, 2), dtype="int64")
    xv = np.arange(6, dtype="float32").reshape(2, 3)
    widths = np.array([[1, 0], [2, 1]], "int64")
    got = _run(kind, [x, p], relay.nn.pad(x, p, 9.0), xv, widths)
    np.testing.assert_array_equal(got, np.pad(xv, ((1, 0), (2, 1)), constant_values=9.0))
    got = _run(kind, [x, p], relay.nn.pad(x, p, pad_mode="edge"), xv, widths)
    np.testing.assert_array_equal(got, np.pad(xv, ((1, 0), (2, 1)), mode="edge"))
    with pytest.raises(InputError, match="dyn.nn.pad"):
        _run(kind, [x, p], relay.nn.pad(x, p, 0.0), xv, np.array([[1, -1], [0, 0]], "int64"))


def test_front_doors_build_dyn_ops_only_for_run_time_arguments():
    x, s = relay.var("x", shape=(2, 3)), relay.var("s", shape=(2,), dtype="int64")
    assert relay.reshape(x, s).op.name == "dyn.reshape"
    assert relay.reshape(x, relay.const(np.array([3, 2]))).op.name == "reshape"
    assert relay.broadcast_to(x, s).op.name == "dyn.broadcast_to"
    assert relay.tile(x, s).op.name == "dyn.tile"
    assert relay.zeros(s).op.name == "dyn.zeros" and relay.ones((2,)).op.name == "ones"
    assert relay.full(relay.const(1.0), s).op.name == "dyn.full"
    assert relay.squeeze(x, s).op.name == "dyn.squeeze"
    assert relay.expand_dims(x, relay.var("a", shape=(), dtype="int32")).op.name == "dyn.expand_dims"
    assert relay.strided_slice(x, s, (2, 3)).op.name == "dyn.strided_slice"
    assert relay.nn.pad(x, relay.var("p", shape=(2, 2), dtype="int32")).op.name == "dyn.nn.pad"
    assert relay.nn.pad(x, ((1, 1), (0, 0))).op.name == "nn.pad"


def test_a_shape_argument_needs_a_static_length_and_an_integer_dtype():
    x = relay.var("x", shape=(2, 3))
    with pytest.raises(TypeInferenceError, match="length of newshape must be static"):
        relay.transform.InferTypeLocal(relay.reshape(x, relay.var("s", shape=(relay.Any(),), dtype="int64")))
    with pytest.raises(TypeInferenceError, match="must be an integer tensor"):
        relay.transform.InferTypeLocal(relay.reshape(x, relay.var("s", shape=(2,), dtype="float32")))
