"""The issue-20 nn ops beyond what the registry-wide tests check: dyn.nn.upsampling with a
run-time scale (VM shape function, DynamicToStatic, bad values), error messages naming the
problem, and known values from the ONNX / TensorFlow specifications.

Tolerances: float32 1e-5 against the float64 loop references of nn_ext_independent.py.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import AttrsError, InputError, TypeInferenceError
from relay_backend.ir.types import TensorType
from relay_backend.op import get

from .nn_ext_independent import ind_upsampling


def _run(kind, params, body, *args):
    mod = relay.IRModule.from_expr(relay.Function(params, body))
    return relay.create_executor(kind, mod=mod).evaluate()(*args).numpy()


# --- dyn.nn.upsampling -------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_upsampling_with_a_run_time_scale(kind):
    x = relay.var("x", shape=(1, 2, 3, 4))
    s = relay.var("s", shape=(), dtype="float64")
    body = relay.nn.upsampling(x, s, 2.0, method="bilinear")
    assert body.op.name == "dyn.nn.upsampling"
    data = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype("float32")
    for scale in (2.0, 1.5):
        got = _run(kind, [x, s], body, data, np.float64(scale))
        want = ind_upsampling(data, get("nn.upsampling").attrs_type(scale, 2.0, method="bilinear"))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_upsampling_rejects_a_non_positive_run_time_scale(kind):
    x = relay.var("x", shape=(1, 1, 2, 2))
    s = relay.var("s", shape=(), dtype="float64")
    with pytest.raises(InputError, match="dyn.nn.upsampling.*positive"):
        _run(kind, [x, s], relay.nn.upsampling(x, s, 2.0), np.ones((1, 1, 2, 2), "float32"), np.float64(-1.0))


def test_dynamic_to_static_turns_folded_scales_into_the_static_op():
    x = relay.var("x", shape=(1, 2, 3, 4))
    scale = relay.add(relay.const(1.0, "float64"), relay.const(1.0, "float64"))
    before = relay.nn.upsampling3d(relay.reshape(x, (1, 2, 1, 3, 4)), scale, 1.0, scale,
                                   coordinate_transformation_mode="asymmetric")
    mod = relay.transform.DynamicToStatic()(relay.IRModule.from_expr(relay.Function([x], before)))
    body = mod["main"].body
    assert body.op.name == "nn.upsampling3d" and (body.attrs.scale_d, body.attrs.scale_w) == (2.0, 2.0)
    assert body.checked_type == TensorType((1, 2, 2, 3, 8), "float32")
    data = np.arange(24, dtype="float32").reshape(1, 2, 3, 4)
    got = relay.create_executor("graph", mod=mod).evaluate()(data).numpy()
    np.testing.assert_array_equal(got[0, :, 0, :, ::2], data[0])     # nearest, asymmetric: every cell twice
    np.testing.assert_array_equal(got[0, :, 1, :, 1::2], data[0])


def test_constant_scales_build_the_static_op():
    x = relay.var("x", shape=(1, 1, 2, 2))
    assert relay.nn.upsampling(x, relay.const(2.0), 3).op.name == "nn.upsampling"


# --- known values --------------------------------------------------------------------------------------
def test_depth_to_space_matches_the_onnx_examples():
    # ONNX DepthToSpace: x of shape (1, 8, 2, 3) holding 0..47, blocksize 2
    x = np.arange(48, dtype="float32").reshape(1, 8, 2, 3)
    dcr = get("nn.depth_to_space").ref(x, get("nn.depth_to_space").attrs_type(2))
    np.testing.assert_array_equal(dcr[0, 0, 0], [0, 12, 1, 13, 2, 14])
    crd = get("nn.depth_to_space").ref(x, get("nn.depth_to_space").attrs_type(2, mode="CRD"))
    np.testing.assert_array_equal(crd[0, 0, 0], [0, 6, 1, 7, 2, 8])


def test_space_to_batch_nd_matches_tensorflow_example():
    # tf.space_to_batch_nd([[[[1], [2]], [[3], [4]]]], block_shape=[2, 2], paddings=0) -> [[[[1]]], ... [[[4]]]]
    x = np.array([1, 2, 3, 4], "float32").reshape(1, 2, 2, 1)
    op = get("nn.space_to_batch_nd")
    out = op.ref(x, op.attrs_type((2, 2), ((0, 0), (0, 0))))
    np.testing.assert_array_equal(out.reshape(-1), [1, 2, 3, 4])
    assert out.shape == (4, 1, 1, 1)
    back = get("nn.batch_to_space_nd")
    np.testing.assert_array_equal(back.ref(out, back.attrs_type((2, 2), ((0, 0), (0, 0)))), x)


def test_conv2d_transpose_is_the_adjoint_of_conv2d():
    """<conv2d(x, w), y> == <x, conv2d_transpose(y, w)> for the same strides / padding / dilation."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, 7, 6))
    w = rng.standard_normal((4, 3, 3, 2))
    conv = get("nn.conv2d")
    a = conv.attrs_type(strides=2, padding=(1, 0, 1, 1), dilation=(1, 2))
    y = rng.standard_normal(conv.ref(x, w, a).shape)
    tr = get("nn.conv2d_transpose")
    back = tr.ref(y, w, tr.attrs_type(strides=2, padding=(1, 0, 1, 1), dilation=(1, 2)))
    assert back.shape == x.shape
    np.testing.assert_allclose(np.sum(conv.ref(x, w, a) * y), np.sum(x * back), rtol=1e-10)


# --- errors --------------------------------------------------------------------------------------------
def test_errors_name_the_problem():
    T = TensorType
    tr = get("nn.conv2d_transpose")
    with pytest.raises(TypeInferenceError, match="output_padding=.*smaller than the stride"):
        tr.rel([T((1, 2, 3, 3)), T((2, 2, 3, 3))], tr.attrs_type(output_padding=1))
    with pytest.raises(TypeInferenceError, match="data has 3 input channels but the weight's I axis has 2"):
        tr.rel([T((1, 3, 3, 3)), T((2, 2, 3, 3))], tr.attrs_type())
    with pytest.raises(TypeInferenceError, match="not a multiple of block_size"):
        get("nn.depth_to_space").rel([T((1, 6, 2, 2))], get("nn.depth_to_space").attrs_type(2))
    with pytest.raises(TypeInferenceError, match="REFLECT padding .* longer than"):
        get("nn.mirror_pad").rel([T((3, 2))], get("nn.mirror_pad").attrs_type("REFLECT", ((3, 0), (0, 0))))
    with pytest.raises(TypeInferenceError, match="not a multiple of its block size"):
        get("nn.space_to_batch_nd").rel([T((1, 5, 4))], get("nn.space_to_batch_nd").attrs_type((2,), ((0, 0),)))
    with pytest.raises(TypeInferenceError, match="groups=2 does not divide the 3 input channels"):
        get("nn.conv1d").rel([T((1, 3, 8)), T((4, 1, 3))], get("nn.conv1d").attrs_type(groups=2))
    with pytest.raises(AttrsError, match="padding.*1, 3 or 6 values"):
        relay.nn.conv3d(relay.var("x"), relay.var("w"), padding=(1, 2))
    with pytest.raises(AttrsError, match="scale_h.*positive"):
        relay.nn.upsampling(relay.var("x"), 0.0)
    with pytest.raises(AttrsError, match="output_size"):
        relay.nn.adaptive_max_pool3d(relay.var("x"), (2, 2))


def test_nll_loss_target_out_of_range():
    """debug names the bad target; compiled kernels clamp the class index (never read outside)."""
    p = relay.var("p", shape=(2, 3))
    t = relay.var("t", shape=(2,), dtype="int32")
    w = relay.var("w", shape=(3,))
    body = relay.nn.nll_loss(p, t, w, reduction="none")
    args = (np.ones((2, 3), "float32"), np.array([1, 7], "int32"), np.ones(3, "float32"))
    with pytest.raises(InputError, match="target 7 is outside the 3 classes"):
        _run("debug", [p, t, w], body, *args)
    np.testing.assert_array_equal(_run("graph", [p, t, w], body, *args), [-1.0, -1.0])


def test_sparse_index_values_are_checked_on_debug():
    d = relay.var("d", shape=(2, 3))
    data, indices, indptr = (relay.var("a", shape=(2,)), relay.var("i", shape=(2,), dtype="int32"),
                             relay.var("p", shape=(3,), dtype="int32"))
    body = relay.nn.sparse_dense(d, (data, indices, indptr))
    args = (np.ones((2, 3), "float32"), np.ones(2, "float32"), np.array([0, 5], "int32"), np.array([0, 1, 2], "int32"))
    with pytest.raises(InputError, match="column index .* outside the 3 columns"):
        _run("debug", [d, data, indices, indptr], body, *args)
    bad_ptr = (args[0], args[1], np.array([0, 2], "int32"), np.array([0, 3, 2], "int32"))
    with pytest.raises(InputError, match="indptr"):
        _run("debug", [d, data, indices, indptr], body, *bad_ptr)
