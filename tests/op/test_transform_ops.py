"""Shape/transform, slicing and creation ops: relations vs numpy, references vs hand-written numpy,
Relay's reshape codes, Any dims, attrs validation and error messages."""
import numpy as np
import pytest

from relay_backend import op
from relay_backend.errors import AttrsError, OpNotImplemented, TypeInferenceError
from relay_backend.ir import Any, Call, Tuple, TupleType, TupleWrapper, TensorType, const, var
from relay_backend.op.indexing import SplitAttrs, StridedSliceAttrs, TakeAttrs
from relay_backend.op.transform import ReshapeAttrs, SqueezeAttrs, TransposeAttrs

OPS = ["reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "tile", "repeat", "reverse",
       "concatenate", "stack", "split", "strided_slice", "take", "full", "zeros", "ones", "arange"]
A = Any()


def ttype(x):
    if isinstance(x, (list, tuple)):
        return TupleType([ttype(e) for e in x])
    return TensorType(x.shape, x.dtype)


def call_type(call):
    """Output type of `call` from its op's relation; args are annotated vars or tuples of them."""
    def arg_type(a):
        if isinstance(a, Tuple):
            return TupleType([arg_type(f) for f in a.fields])
        if isinstance(a, Call):
            return call_type(a)
        if hasattr(a, "data"):
            return TensorType(a.data.shape, a.data.dtype)
        return a.type_annotation
    return call.op.rel([arg_type(a) for a in call.args], call.attrs)


def rel(name, *types, **attrs):
    o = op.get(name)
    return o.rel(list(types), o.attrs_type(**attrs))


@pytest.mark.parametrize("name", OPS)
def test_relation_matches_reference_on_every_sample(name):
    o = op.get(name)
    samples = o.samples(np.random.default_rng(0))
    assert len(samples) >= 2
    for s in samples:
        out_t = o.rel([ttype(x) for x in s.inputs], s.attrs)
        out = o.ref(*s.inputs, s.attrs)
        assert out_t == ttype(out), (name, s.attrs, out_t)


# --- reshape -------------------------------------------------------------------------------------
RESHAPE_CASES = [  # (input shape, newshape, hand-computed output shape), from Relay's documentation
    ((2, 3, 4), (6, 1, -1), (6, 1, 4)), ((2, 3, 4), (3, -1, 8), (3, 1, 8)), ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (4, 0, 2), (4, 3, 2)), ((2, 3, 4), (2, 0, 0), (2, 3, 4)), ((2, 3, 4), (-2,), (2, 3, 4)),
    ((2, 3, 4), (2, -2), (2, 3, 4)), ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)), ((2, 3, 4), (-3, 4), (6, 4)),
    ((2, 3, 4, 5), (-3, -3), (6, 20)), ((2, 3, 4), (0, -3), (2, 12)), ((2, 3, 4), (-3, -2), (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)), ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)),
    ((), (1, 1, -1), (1, 1, 1)), ((0, 4), (-1, 2), (0, 2)),
]


@pytest.mark.parametrize("ishape,newshape,want", RESHAPE_CASES)
def test_reshape_codes(ishape, newshape, want):
    x = np.arange(int(np.prod(ishape)), dtype="float32").reshape(ishape)
    c = op.reshape(var("x", shape=ishape), newshape)
    assert call_type(c) == TensorType(want)
    np.testing.assert_array_equal(op.get("reshape").ref(x, c.attrs), x.reshape(want))


@pytest.mark.parametrize("ishape,newshape,want", [
    ((A, 3, 4), (0, -1), (A, 12)), ((A, 3, 4), (-1,), (A,)), ((A, 3, 4), (-1, 4), (A, 4)),
    ((2, A, 4), (-3, -2), (A, 4)), ((A, 6), (0, -4, 2, -1), (A, 2, 3)), ((A, 4), (-4, -1, 2, 0), (A, 2, 4)),
    ((A, 3), (2, 3), (2, 3)), ((2, A), (-1, 3), (A, 3)), ((4, A), (2, -1), (2, A)),
])
def test_reshape_any(ishape, newshape, want):
    assert rel("reshape", TensorType(ishape), newshape=newshape) == TensorType(want)


def test_reshape_errors():
    with pytest.raises(TypeInferenceError) as err:
        rel("reshape", TensorType((2, 3)), newshape=(4, 2))
    assert str(err.value) == "reshape: cannot reshape Tensor[(2, 3), float32] to (4, 2): 6 elements vs 8"
    with pytest.raises(TypeInferenceError, match="cannot infer the -1"):
        rel("reshape", TensorType((2, 3)), newshape=(-1, 4))
    with pytest.raises(TypeInferenceError, match="rank 2"):
        rel("reshape", TensorType((2, 3)), newshape=(0, 0, 0))
    with pytest.raises(TypeInferenceError, match="-4 splits dim 0 of size 6 into 2 x 2"):
        rel("reshape", TensorType((6,)), newshape=(-4, 2, 2))
    for bad in [(-1, -1), (-5,), (-4, 2), (-4, -1, -1), (-4, 0, 3)]:
        with pytest.raises(AttrsError):
            ReshapeAttrs(bad)
    # a run-time newshape builds dyn.reshape, as tvm.relay.reshape does
    assert op.reshape(var("x", shape=(2, 3)), var("s", shape=(2,), dtype="int64")).op.name == "dyn.reshape"
    c = op.reshape(var("x", shape=(2, 3)), const(np.array([3, -1], "int64")))
    assert call_type(c) == TensorType((3, 2))
    assert call_type(op.reshape(var("x", shape=(2, 3)), 6)) == TensorType((6,))
    assert rel("reshape", TensorType((2, 0)), newshape=(0, 3), allowzero=True) == TensorType((0, 3))


# --- transpose, expand_dims, squeeze, broadcast_to, tile, repeat, reverse ---------------------------------
def test_layout_ops_vs_numpy():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 1, 3, 4)).astype("float32")
    xv = var("x", shape=x.shape)
    cases = [
        (op.transpose(xv), np.transpose(x)),
        (op.transpose(xv, (0, 2, -1, 1)), np.transpose(x, (0, 2, 3, 1))),
        (op.expand_dims(xv, 1, 2), x[:, None, None]),
        (op.expand_dims(xv, -1), x[..., None]),
        (op.squeeze(xv), x.reshape(2, 3, 4)),
        (op.squeeze(xv, axis=[-3]), x[:, 0]),
        (op.broadcast_to(xv, (5, 2, 3, 3, 4)), np.broadcast_to(x, (5, 2, 3, 3, 4))),
        (op.tile(xv, (2, 1)), np.tile(x, (1, 1, 2, 1))),
        (op.tile(xv, (3, 1, 1, 1, 2)), np.tile(x, (3, 1, 1, 1, 2))),
        (op.repeat(xv, 3, -1), x.repeat(3, axis=3)),
        (op.reverse(xv, 2), x[:, :, ::-1]),
    ]
    for c, want in cases:
        assert call_type(c) == ttype(want), c.op.name
        np.testing.assert_array_equal(c.op.ref(x, c.attrs), want)


def test_layout_ops_any_dims():
    t = TensorType((A, 1, 3))
    assert rel("transpose", t, axes=(2, 0, 1)) == TensorType((3, A, 1))
    assert rel("expand_dims", t, axis=3) == TensorType((A, 1, 3, 1))
    with pytest.raises(TypeInferenceError, match="axis must be given when data has dynamic dims"):
        rel("squeeze", t)  # axis=None needs static dims (TVM: "axis needs to be defined for dynamic input")
    assert rel("squeeze", t, axis=(0, 1)) == TensorType((3,))  # and assumed 1 when named
    assert rel("broadcast_to", t, shape=(2, 5, 4, 3)) == TensorType((2, 5, 4, 3))
    assert rel("tile", t, reps=(2, 2, 1)) == TensorType((A, 2, 3))
    assert rel("repeat", t, repeats=2, axis=0) == TensorType((A, 1, 3))
    assert rel("reverse", t, axis=0) == t


def test_layout_op_errors():
    t = TensorType((2, 3))
    with pytest.raises(TypeInferenceError, match="not a permutation"):
        rel("transpose", t, axes=(0, 0))
    with pytest.raises(TypeInferenceError, match=r"-3 <= axis <= 2"):
        rel("expand_dims", t, axis=3)
    with pytest.raises(TypeInferenceError, match="size is 3, not 1"):
        rel("squeeze", t, axis=(1,))
    with pytest.raises(TypeInferenceError, match=r"Tensor\[\(2, 3\), float32\]"):
        rel("broadcast_to", t, shape=(2, 4))
    with pytest.raises(TypeInferenceError, match="lower rank"):
        rel("broadcast_to", t, shape=(3,))
    with pytest.raises(TypeInferenceError, match="axis 2 is out of range"):
        rel("repeat", t, repeats=2, axis=2)
    with pytest.raises(TypeInferenceError, match="out of range"):
        rel("reverse", t, axis=-3)
    with pytest.raises(AttrsError):
        op.repeat(var("x", shape=(2,)), 0, 0)
    with pytest.raises(AttrsError):
        op.tile(var("x", shape=(2,)), (-1,))
    with pytest.raises(AttrsError):
        op.expand_dims(var("x", shape=(2,)), 0, num_newaxis=-1)


# --- concatenate, stack, split ---------------------------------------------------------------------------
def test_concatenate_and_stack():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(2, 3)).astype("float32"), rng.normal(size=(4, 3)).astype("float32")
    c = op.concatenate([var("a", shape=a.shape), var("b", shape=b.shape)], axis=0)
    assert isinstance(c.args[0], Tuple) and len(c.args) == 1
    assert call_type(c) == TensorType((6, 3))
    np.testing.assert_array_equal(c.op.ref([a, b], c.attrs), np.vstack([a, b]))
    s = op.stack((var("a", shape=(2, 3)), var("b", shape=(2, 3))), axis=-1)
    assert call_type(s) == TensorType((2, 3, 2))
    np.testing.assert_array_equal(s.op.ref([a, a * 2], s.attrs), np.dstack([a, a * 2]))
    tup = var("t", TupleType([TensorType((2, 3)), TensorType((2, 5))]))
    assert call_type(op.concatenate(tup, 1)) == TensorType((2, 8))
    assert rel("concatenate", TupleType([TensorType((A, 3)), TensorType((2, A))]), axis=0) == TensorType((A, 3))
    assert rel("concatenate", TupleType([TensorType((A, 3)), TensorType((2, 3))]), axis=1) == TensorType((2, 6))
    assert rel("stack", TupleType([TensorType((A, 3)), TensorType((2, A))]), axis=1) == TensorType((2, 2, 3))


def test_concatenate_and_stack_errors():
    with pytest.raises(TypeInferenceError, match="dim 1 differs"):
        rel("concatenate", TupleType([TensorType((2, 3)), TensorType((2, 4))]), axis=0)
    with pytest.raises(TypeInferenceError, match="same rank and dtype"):
        rel("concatenate", TupleType([TensorType((2, 3)), TensorType((2, 3), "int32")]), axis=0)
    with pytest.raises(TypeInferenceError, match="tuple"):
        rel("stack", TensorType((2, 3)), axis=0)
    with pytest.raises(AttrsError, match="non-empty"):
        op.concatenate([], 0)


def test_split():
    x = np.arange(24, dtype="float32").reshape(4, 6)
    w = op.split(var("x", shape=x.shape), 3, axis=1)
    assert isinstance(w, TupleWrapper) and len(w) == 3
    assert call_type(w.astuple()) == TupleType([TensorType((4, 2))] * 3)
    parts = w.astuple().op.ref(x, w.astuple().attrs)
    for got, want in zip(parts, [x[:, 0:2], x[:, 2:4], x[:, 4:6]]):
        np.testing.assert_array_equal(got, want)
    w = op.split(var("x", shape=x.shape), (1, 3), axis=0)
    assert len(w) == 3 and call_type(w.astuple()) == TupleType(
        [TensorType((1, 6)), TensorType((2, 6)), TensorType((1, 6))])
    assert rel("split", TensorType((A, 2)), indices_or_sections=(1,)) == TupleType(
        [TensorType((1, 2)), TensorType((A, 2))])
    assert rel("split", TensorType((A, 2)), indices_or_sections=2) == TupleType([TensorType((A, 2))] * 2)
    with pytest.raises(TypeInferenceError, match="does not divide into 4"):
        rel("split", TensorType((6,)), indices_or_sections=4)
    with pytest.raises(TypeInferenceError, match="past the end of axis 0 of size 6"):
        rel("split", TensorType((6,)), indices_or_sections=(2, 7))
    for bad in [0, (3, 2), (-1, 2)]:
        with pytest.raises(AttrsError):
            SplitAttrs(bad)


# --- strided_slice ----------------------------------------------------------------------------------------
def test_strided_slice_vs_numpy_slicing():
    x = np.arange(60, dtype="int32").reshape(3, 4, 5)
    xv = var("x", shape=x.shape, dtype="int32")
    cases = [
        (op.strided_slice(xv, [1, 0], [3, 4]), x[1:3, 0:4]),
        (op.strided_slice(xv, [-1, 3], [-4, 0], [-1, -2]), x[-1:-4:-1, 3:0:-2]),
        (op.strided_slice(xv, [0], [100], [2], axes=[2]), x[:, :, 0:100:2]),
        (op.strided_slice(xv, [-100, 1, 2], [100, 2, 5]), x[-100:100, 1:2, 2:5]),
        (op.strided_slice(xv, [2], [0]), x[2:0]),
        (op.strided_slice(xv, [1, -3], [1, -1], slice_mode="size"), x[1:2, 1:]),
        (op.strided_slice(xv, [0, 1, 1], [2, 2, 3], [9, 9], slice_mode="size"), x[0:2, 1:3, 1:4]),
        (op.strided_slice(xv, [4, 2], [-100, 0], [-1, 1], axes=[2, -2]), x[:, 2:0, 4::-1]),
    ]
    for c, want in cases:
        assert call_type(c) == ttype(want), c.attrs
        np.testing.assert_array_equal(c.op.ref(x, c.attrs), want)


def test_strided_slice_any_and_errors():
    t = TensorType((A, 4, 5))
    assert rel("strided_slice", t, begin=(0, 1), end=(2, 3)) == TensorType((A, 2, 5))
    with pytest.raises(TypeInferenceError, match="rank 2"):
        rel("strided_slice", TensorType((2, 3)), begin=(0, 0, 0), end=(1, 1, 1))
    with pytest.raises(TypeInferenceError, match="sliced twice"):
        rel("strided_slice", TensorType((2, 3)), begin=(0, 0), end=(1, 1), axes=(1, -1))
    with pytest.raises(AttrsError, match="contain 0"):
        StridedSliceAttrs((0,), (1,), (0,))
    with pytest.raises(AttrsError, match="differ in length"):
        StridedSliceAttrs((0, 1), (1,))
    with pytest.raises(AttrsError, match="slice_mode"):
        StridedSliceAttrs((0,), (1,), slice_mode="stride")
    # run-time bounds build dyn.strided_slice (static ones become constants), as in tvm.relay
    dyn = op.strided_slice(var("x", shape=(4,)), var("b", shape=(1,), dtype="int64"), [2])
    assert dyn.op.name == "dyn.strided_slice" and dyn.args[2].data.numpy().tolist() == [2]
    with pytest.raises(AttrsError, match="axes"):
        op.strided_slice(var("x", shape=(4,)), var("b", shape=(1,), dtype="int64"), [2], axes=[0])


# --- take -------------------------------------------------------------------------------------------------
def test_take_modes_and_batch_dims():
    x = np.arange(12, dtype="float32").reshape(3, 4)
    idx = np.array([[0, -1], [5, 2]], "int32")
    take = op.get("take")
    np.testing.assert_array_equal(take.ref(x, idx, TakeAttrs(1, mode="clip")),
                                  x[:, [[0, 0], [3, 2]]])
    np.testing.assert_array_equal(take.ref(x, idx, TakeAttrs(1, mode="wrap")),
                                  x[:, [[0, 3], [1, 2]]])
    np.testing.assert_array_equal(take.ref(x, idx, TakeAttrs(None, mode="wrap")),
                                  x.reshape(-1)[[[0, 11], [5, 2]]])
    np.testing.assert_array_equal(take.ref(x, np.array([1, 2], "int64"), TakeAttrs(0, mode="fast")), x[1:3])
    d = np.arange(24, dtype="float32").reshape(2, 4, 3)
    bi = np.array([[3, 0], [1, 1]], "int64")
    want = np.array([[d[b, bi[b, j], :] for j in range(2)] for b in range(2)])
    got = take.ref(d, bi, TakeAttrs(1, batch_dims=1))
    np.testing.assert_array_equal(got, want)
    c = op.take(var("d", shape=(2, 4, 3)), var("i", shape=(2, 2), dtype="int64"), axis=1, batch_dims=-1)
    assert call_type(c) == TensorType((2, 2, 3))


def test_take_types_any_and_errors():
    data, ind = TensorType((A, 5, 6)), TensorType((2, A), "int64")
    assert rel("take", data, ind, axis=1) == TensorType((A, 2, A, 6))
    assert rel("take", data, ind) == TensorType((2, A))
    assert rel("take", data, TensorType((), "int32"), axis=-1) == TensorType((A, 5))
    with pytest.raises(TypeInferenceError, match="integer tensor"):
        rel("take", data, TensorType((2,), "float32"), axis=0)
    with pytest.raises(TypeInferenceError, match="batch dim 0 differs"):
        rel("take", TensorType((3, 4)), TensorType((2, 2), "int32"), axis=1, batch_dims=1)
    with pytest.raises(TypeInferenceError, match="batch_dims"):
        rel("take", TensorType((3, 4)), TensorType((3,), "int32"), axis=0, batch_dims=1)
    with pytest.raises(AttrsError, match="mode"):
        TakeAttrs(0, mode="nearest")


@pytest.mark.parametrize("mode", ["clip", "fast", "wrap"])
def test_take_from_an_empty_axis_is_a_type_error(mode):
    # clip would clamp to index -1, fast trusts the index, wrap divides by 0: all read out of bounds
    with pytest.raises(TypeInferenceError, match=r"take: cannot index an empty axis: axis 1 has size 0"):
        rel("take", TensorType((3, 0)), TensorType((2,), "int32"), axis=1, mode=mode)
    with pytest.raises(TypeInferenceError, match=r"cannot index an empty axis: the flattened data"):
        rel("take", TensorType((A, 0)), TensorType((), "int32"), mode=mode)
    with pytest.raises(TypeInferenceError, match=r"cannot index an empty axis: axis 0"):
        call_type(op.take(var("x", shape=(0, 4)), var("i", shape=(1, 2), dtype="int64"), axis=0,
                          mode=mode))
    # empty indices, a non-empty axis or a dim not known statically stay valid
    assert rel("take", TensorType((3, 0)), TensorType((0,), "int32"), axis=1, mode=mode) == \
        TensorType((3, 0))
    assert rel("take", TensorType((3, 0)), TensorType((2,), "int32"), axis=0, mode=mode) == \
        TensorType((2, 0))
    assert rel("take", TensorType((3, A)), TensorType((2,), "int32"), axis=1, mode=mode) == \
        TensorType((3, 2))
    assert rel("take", TensorType((3, 0)), TensorType((A,), "int32"), axis=1, mode=mode) == \
        TensorType((3, A))


# --- full, zeros, ones, arange --------------------------------------------------------------------------------
def test_creation_ops():
    c = op.full(const(2.5), (2, 3))
    assert call_type(c) == TensorType((2, 3))
    np.testing.assert_array_equal(c.op.ref(np.array(2.5, "float32"), c.attrs), np.full((2, 3), 2.5, "float32"))
    c = op.full(7, (4,), "int64")
    assert call_type(c) == TensorType((4,), "int64")
    assert call_type(op.full(var("v", shape=(), dtype="int32"), [2])) == TensorType((2,), "int32")
    with pytest.raises(TypeInferenceError, match="scalar"):
        call_type(op.full(var("v", shape=(2,)), (2, 2)))
    z, o = op.zeros((2, 2), "int32"), op.ones([3])
    assert z.args == () and call_type(z) == TensorType((2, 2), "int32") and call_type(o) == TensorType((3,))
    np.testing.assert_array_equal(o.op.ref(o.attrs), np.ones(3, "float32"))
    with pytest.raises(AttrsError, match="negative"):
        op.zeros((2, -1))


@pytest.mark.parametrize("args,kwargs,want", [
    ((5,), {}, np.arange(5, dtype="float32")),
    ((1, 10, 3), {"dtype": "int32"}, np.arange(1, 10, 3, dtype="int32")),
    ((1.5, -2.0, -0.5), {}, np.arange(1.5, -2.0, -0.5, dtype="float32")),
    ((0.0, 1.0, 0.1), {"dtype": "float64"}, np.arange(0.0, 1.0, 0.1)),
    ((4, 1), {}, np.zeros(0, "float32")),
])
def test_arange_vs_numpy(args, kwargs, want):
    c = op.arange(*args, **kwargs)
    assert call_type(c) == ttype(want)
    np.testing.assert_allclose(c.op.ref(c.attrs), want, rtol=1e-6)


def test_arange_constants_and_errors():
    c = op.arange(const(2), const(8), const(2), dtype="int32")
    assert call_type(c) == TensorType((3,), "int32")
    dynamic = op.arange(var("n", shape=(), dtype="int32"), dtype="int32")   # a run-time limit
    assert dynamic.op.name == "dyn.arange" and call_type(dynamic) == TensorType((Any(),), "int32")
    with pytest.raises(TypeInferenceError, match="stop must be a scalar"):
        call_type(op.arange(0, var("v", shape=(2,), dtype="int32")))
    with pytest.raises(AttrsError, match="step"):
        op.arange(0, 4, 0)


def test_attrs_are_normalized_and_hashable():
    assert TransposeAttrs([1, 0]).axes == (1, 0) and SqueezeAttrs(2).axis == (2,)
    a, b = ReshapeAttrs([2, -1]), ReshapeAttrs((2, -1))
    assert a == b and hash(a) == hash(b)
    assert hash(SplitAttrs([1, 2])) == hash(SplitAttrs((1, 2)))
