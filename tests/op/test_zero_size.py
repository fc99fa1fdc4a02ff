"""Zero-size cases the ONNX node suite exercises: empty max/min reductions and split with
empty sections. Reference, type relation and compiled code must agree.

Expected values are written out here (not taken from the op's reference): an empty max is
the reducer's identity -inf (floats) or the dtype's lowest value (ints), an empty min +inf or
the highest (TVM and ONNX ReduceMax/ReduceMin agree); split follows np.split. Exact equality.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import nd, op
from relay_backend.backend import te_compiler
from relay_backend.errors import AttrsError, RelayError, TypeInferenceError
from relay_backend.op.indexing import SplitAttrs
from relay_backend.op.reduce import ReduceAttrs

EMPTY_REDUCTIONS = [  # (shape, dtype, axis, keepdims, out shape)
    ((2, 0, 3), "float32", 1, True, (2, 1, 3)),
    ((0, 4), "int32", 0, False, (4,)),
    ((3, 0), "float64", None, False, ()),
    ((0,), "uint8", 0, False, ()),
    ((2, 0), "float16", 1, False, (2,)),
]


def _identity(name, dtype):
    if np.dtype(dtype).kind == "f":
        return -np.inf if name == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if name == "max" else info.max


def _jit(fn, inputs, out_types):
    """Run a primitive function through the TECompiler (LLVM) and return its outputs."""
    prim = fn.with_attr("Primitive", 1)
    outs = [nd.empty(shape, dtype) for shape, dtype in out_types]
    te_compiler.TECompiler().jit(prim, "llvm")(*[nd.array(x) for x in inputs], *outs)
    return [o.numpy() for o in outs]


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("shape,dtype,axis,keepdims,out_shape", EMPTY_REDUCTIONS)
def test_empty_reduction_is_the_identity(name, shape, dtype, axis, keepdims, out_shape):
    x = np.zeros(shape, dtype)
    want = np.full(out_shape, _identity(name, dtype), dtype)
    attrs = ReduceAttrs(axis=axis, keepdims=keepdims)
    ref = op.get(name).ref(x, attrs)
    assert ref.shape == out_shape and ref.dtype == want.dtype
    np.testing.assert_array_equal(ref, want)

    v = relay.var("x", shape=shape, dtype=dtype)
    call = getattr(relay, name)(v, axis=axis, keepdims=keepdims)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([v], call)))
    assert mod["main"].body.checked_type == relay.TensorType(out_shape, dtype)

    (got,) = _jit(relay.Function([v], call), [x], [(out_shape, dtype)])
    np.testing.assert_array_equal(got, want)


def test_nonempty_reduction_is_unchanged_by_the_identity():
    x = np.array([[3.0, np.nan, 1.0], [-5.0, -7.0, 2.0]], "float32")
    np.testing.assert_array_equal(op.get("max").ref(x, ReduceAttrs(axis=1)), [np.nan, 2.0])
    np.testing.assert_array_equal(op.get("min").ref(x, ReduceAttrs(axis=0)), [-5.0, np.nan, 1.0])
    ints = np.array([[-128, 5], [7, 127]], "int8")
    np.testing.assert_array_equal(op.get("max").ref(ints, ReduceAttrs(axis=0)), [7, 127])
    np.testing.assert_array_equal(op.get("min").ref(ints, ReduceAttrs()), -128)


def test_logsumexp_of_an_empty_set_is_minus_inf():
    """ONNX ReduceLogSumExp of an empty set: max gives -inf, sum(exp) 0, log 0 = -inf."""
    v = relay.var("x", shape=(2, 0, 4))
    f = relay.Function([v], relay.logsumexp(v, axis=1, keepdims=True))
    with np.errstate(divide="ignore"):                 # log(0) is the point here
        out = relay.create_executor("debug", mod=relay.IRModule.from_expr(f)).evaluate()(np.zeros((2, 0, 4), "float32"))
    np.testing.assert_array_equal(out.numpy(), np.full((2, 1, 4), -np.inf, "float32"))


SPLITS = [  # (shape, indices_or_sections, axis)
    ((4, 3), (0, 2, 2, 4), 0),       # empty first, middle and last sections
    ((2, 5), (3, 3), 1),             # a repeated index
    ((2, 3), (3,), 1),               # a split point at the end of the axis
    ((0, 2), 2, 0),                  # equal sections of an empty axis
    ((0,), (0, 0), 0),               # ONNX test_split_zero_size_splits
]


@pytest.mark.parametrize("shape,ios,axis", SPLITS)
def test_split_with_empty_sections(shape, ios, axis):
    x = np.arange(int(np.prod(shape)), dtype="float32").reshape(shape)
    want = np.split(x, ios if isinstance(ios, int) else list(ios), axis=axis)
    attrs = SplitAttrs(ios, axis)
    ref = op.get("split").ref(x, attrs)
    assert [r.shape for r in ref] == [w.shape for w in want]

    v = relay.var("x", shape=shape)
    tup = relay.split(v, ios, axis=axis).astuple()
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([v], tup)))
    assert mod["main"].body.checked_type == relay.TupleType([relay.TensorType(w.shape) for w in want])

    got = _jit(relay.Function([v], tup), [x], [(w.shape, "float32") for w in want])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_split_errors_name_the_fix():
    with pytest.raises(AttrsError, match="non-decreasing"):
        SplitAttrs((3, 1))
    with pytest.raises(AttrsError, match="non-decreasing"):
        SplitAttrs((-1, 2))
    v = relay.var("x", shape=(6,))
    with pytest.raises(TypeInferenceError, match="past the end of axis 0 of size 6"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([v], relay.split(v, (2, 7)).astuple())))


ARG_EMPTY = [  # (shape, axis): the reduced part has no elements, so there is no index to return
    ((3, 0), 1),
    ((0, 4), 0),
    ((2, 0, 3), (0, 1)),
    ((3, 0), None),
]


@pytest.mark.parametrize("kind", ["debug", "graph", "vm", "aot"])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("shape,axis", ARG_EMPTY)
def test_arg_reduction_over_an_empty_axis_is_an_error_everywhere(kind, name, shape, axis):
    """numpy raises on argmax of an empty sequence; compiled code would return the identity's
    index (INT32_MAX). Every executor rejects the program when the size is known."""
    v = relay.var("x", shape=shape)
    mod = relay.IRModule.from_expr(relay.Function([v], getattr(relay, name)(v, axis=axis)))
    with pytest.raises(TypeInferenceError, match=rf"{name}: .*size 0.*no index"):
        relay.create_executor(kind, mod=mod).evaluate()(np.zeros(shape, "float32"))


def test_arg_reduction_over_an_empty_dynamic_axis_fails_at_run_time():
    v = relay.var("x", shape=(3, relay.Any()))
    mod = relay.IRModule.from_expr(relay.Function([v], relay.argmax(v, axis=1)))
    run = relay.create_executor("vm", mod=mod).evaluate()
    np.testing.assert_array_equal(run(np.array([[0, 2], [3, 1], [5, 5]], "float32")).numpy(), [1, 0, 0])
    with pytest.raises(RelayError, match=r"argmax: .*size 0.*no index"):
        run(np.zeros((3, 0), "float32"))


def test_arg_reduction_over_a_non_reduced_empty_axis_is_fine():
    x = np.zeros((0, 4), "float32")
    v = relay.var("x", shape=x.shape)
    mod = relay.IRModule.from_expr(relay.Function([v], relay.argmax(v, axis=1)))
    for kind in ("debug", "graph"):
        out = relay.create_executor(kind, mod=mod).evaluate()(x).numpy()
        assert out.shape == (0,) and out.dtype == np.int32
