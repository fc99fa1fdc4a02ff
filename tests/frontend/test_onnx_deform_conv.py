"""DeformConv (converters/deform_conv.py) with and without a mask against onnx's reference
evaluator (rtol 1e-4 / atol 1e-5 scaled to |ref|), on the debug interpreter and the graph executor.
Offsets up to +-2 put samples across the image border, where ONNX lets each corner outside count 0
(relay's deformable_conv2d, used before, zeroed or clamped whole samples there: a wrong answer).

Node test it makes pass: test_deform_conv_with_mask_bias (the other DeformConv tests keep passing)."""
import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from .conftest import assert_close, make_model, run_relay

CASES = [  # (x shape, out channels, kernel, group, offset_group, attrs)
    ((1, 2, 5, 5), 3, (2, 2), 1, 1, {}),
    ((2, 4, 6, 5), 4, (3, 3), 2, 2, {"pads": [1, 1, 1, 0], "strides": [2, 1]}),
    ((1, 2, 7, 7), 2, (3, 2), 1, 2, {"dilations": [2, 1], "pads": [0, 1, 2, 1]}),
]


def _case(xshape, oc, kernel, group, offset_group, attrs, with_mask=True):
    n, c, h, w = xshape
    pads, strides, dil = attrs.get("pads", [0] * 4), attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    oh = (h + pads[0] + pads[2] - dil[0] * (kernel[0] - 1) - 1) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - dil[1] * (kernel[1] - 1) - 1) // strides[1] + 1
    taps = kernel[0] * kernel[1]
    rng = np.random.default_rng(sum(xshape) + oc)
    feeds = {"x": rng.normal(size=xshape).astype("float32"),
             "w": rng.normal(size=(oc, c // group, *kernel)).astype("float32"),
             "off": rng.uniform(-2, 2, (n, offset_group * 2 * taps, oh, ow)).astype("float32"),
             "b": rng.normal(size=oc).astype("float32"),
             "m": rng.uniform(0, 1, (n, offset_group * taps, oh, ow)).astype("float32")}
    names = ["x", "w", "off", "b", "m"] if with_mask else ["x", "w", "off", "b"]
    node = helper.make_node("DeformConv", names, ["y"], kernel_shape=list(kernel), group=group,
                            offset_group=offset_group, **attrs)
    model = make_model([node], [(k, "float32", list(feeds[k].shape)) for k in names], [("y", "float32", None)],
                       opset=19)
    return model, {k: feeds[k] for k in names}


@pytest.mark.parametrize("executor", ["debug", "graph"])
@pytest.mark.parametrize("with_mask", [True, False])
@pytest.mark.parametrize("xshape,oc,kernel,group,offset_group,attrs", CASES)
def test_deform_conv(executor, with_mask, xshape, oc, kernel, group, offset_group, attrs):
    model, feeds = _case(xshape, oc, kernel, group, offset_group, attrs, with_mask)
    want = ReferenceEvaluator(model).run(None, feeds)
    assert_close(run_relay(model, feeds, executor), want, rtol=1e-4)
