"""CenterCropPad, Col2Im and MaxUnpool (converters/placement.py) against onnxruntime (exact for
these copies and small integer-valued sums), on the debug interpreter and the graph executor.

Node tests they make pass: test_center_crop_pad_* (6), test_col2im* (5), test_maxunpool_* (2)."""
import numpy as np
import pytest
from onnx import helper

from relay_backend.errors import RelayError

from .conftest import assert_close, make_model, raises_relay_error, run_ort, run_relay

EXECUTORS = ("debug", "graph")


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("in_shape,target,axes", [((5, 6, 3), (3, 8, 3), None), ((4, 7), (7, 2), None),
                                                  ((2, 9, 4), (5, 1), (-2, 2)), ((3, 3), (3, 3), None)])
def test_center_crop_pad(executor, in_shape, target, axes):
    attrs = {} if axes is None else {"axes": list(axes)}
    out_shape = list(in_shape)
    for axis, want in zip(axes or range(len(in_shape)), target):
        out_shape[axis] = want
    model = make_model([helper.make_node("CenterCropPad", ["x", "shape"], ["y"], **attrs)],
                       [("x", "float32", list(in_shape))], [("y", "float32", out_shape)],
                       inits={"shape": np.array(target, np.int64)}, opset=18)
    x = np.arange(np.prod(in_shape), dtype="float32").reshape(in_shape) + 1
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}))


def test_center_crop_pad_rejects_repeated_axes():
    model = make_model([helper.make_node("CenterCropPad", ["x", "shape"], ["y"], axes=[0, -2])],
                       [("x", "float32", [4, 4])], [("y", "float32", [2, 2])],
                       inits={"shape": np.array([2, 2], np.int64)}, opset=18)
    raises_relay_error(model, "must be distinct axes", RelayError)


def _col2im_model(x_shape, image, block, **attrs):
    return make_model([helper.make_node("Col2Im", ["x", "image", "block"], ["y"], **attrs)],
                      [("x", "float32", list(x_shape))], [("y", "float32", None)],
                      inits={"image": np.array(image, np.int64), "block": np.array(block, np.int64)}, opset=18)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("channels,image,block,attrs", [
    (1, (5, 5), (2, 2), {}),
    (2, (6, 5), (3, 2), {"strides": [2, 1], "pads": [1, 0, 1, 1]}),
    (1, (7, 7), (2, 3), {"dilations": [2, 1], "strides": [1, 2]}),
    (2, (3, 4, 3), (2, 2, 1), {"pads": [0, 1, 0, 0, 1, 0]}),
])
def test_col2im(executor, channels, image, block, attrs):
    rank = len(image)
    strides = attrs.get("strides", [1] * rank)
    dilations = attrs.get("dilations", [1] * rank)
    pads = attrs.get("pads", [0] * (2 * rank))
    blocks = int(np.prod([(image[d] + pads[d] + pads[rank + d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1
                          for d in range(rank)]))
    x_shape = (2, channels * int(np.prod(block)), blocks)
    model = _col2im_model(x_shape, image, block, **attrs)
    x = np.random.default_rng(0).integers(-4, 5, x_shape).astype("float32")
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}))


def test_col2im_rejects_a_wrong_block_count():
    raises_relay_error(_col2im_model((1, 4, 5), (5, 5), (2, 2)), "number of blocks", RelayError)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("kernel,strides", [((2, 2), (2, 2)), ((3, 2), (1, 2))])
def test_max_unpool_inverts_max_pool(executor, kernel, strides):
    """MaxPool's values and Indices, unpooled: every maximum back in its place (onnxruntime)."""
    x = np.random.default_rng(1).permutation(2 * 3 * 6 * 6).astype("float32").reshape(2, 3, 6, 6)
    pool = make_model([helper.make_node("MaxPool", ["x"], ["v", "i"], kernel_shape=list(kernel),
                                        strides=list(strides))],
                      [("x", "float32", list(x.shape))], [("v", "float32", None), ("i", "int64", None)], opset=12)
    values, indices = run_ort(pool, {"x": x})
    unpool = make_model([helper.make_node("MaxUnpool", ["v", "i"], ["y"], kernel_shape=list(kernel),
                                          strides=list(strides))],
                        [("v", "float32", list(values.shape)), ("i", "int64", list(indices.shape))],
                        [("y", "float32", None)], opset=11)
    feeds = {"v": values, "i": indices}
    assert_close(run_relay(unpool, feeds, executor), run_ort(unpool, feeds))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_max_unpool_output_shape_pads_the_unpooled_tensor_at_the_end(executor):
    """output_shape larger than the unpooled shape: zeros appended (ONNX's reference; the indices
    count positions of the unpooled 4x4 tensor)."""
    values = np.array([[[[5, 6], [7, 8]]]], np.float32)
    indices = np.array([[[[5, 7], [13, 15]]]], np.int64)
    want = np.zeros((1, 1, 5, 6), np.float32)
    unpooled = np.zeros(16, np.float32)
    unpooled[indices.reshape(-1)] = values.reshape(-1)
    want[0, 0, :4, :4] = unpooled.reshape(4, 4)
    model = make_model([helper.make_node("MaxUnpool", ["v", "i", "shape"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
                       [("v", "float32", [1, 1, 2, 2]), ("i", "int64", [1, 1, 2, 2])], [("y", "float32", None)],
                       inits={"shape": np.array([1, 1, 5, 6], np.int64)}, opset=11)
    assert_close(run_relay(model, {"v": values, "i": indices}, executor), [want])


def test_max_unpool_rejects_an_output_shape_below_the_unpooled_one():
    model = make_model([helper.make_node("MaxUnpool", ["v", "i", "shape"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
                       [("v", "float32", [1, 1, 2, 2]), ("i", "int64", [1, 1, 2, 2])], [("y", "float32", None)],
                       inits={"shape": np.array([1, 1, 3, 4], np.int64)}, opset=11)
    raises_relay_error(model, "at least the unpooled shape", RelayError)
