"""x86 depthwise, grouped and channel-last conv2d (strategy/x86_conv.py's row schedule for NCHW,
x86_conv_layouts.py's window tiles for NHWC): selected above the generic implementation, and
compiled results against an independent float64 reference (one window tap at a time) at odd
channel counts, stride 2, dilation and asymmetric padding, with a fused bias + relu epilogue.
The NCHWc kernels AlterOpLayout makes are covered by tests/op/test_blocked_ops.py."""
import numpy as np
import pytest

from relay_backend import te
from relay_backend.op.registry import get as get_op
from relay_backend.te_compiler.select import select_implementation

from .test_x86 import _bias_relu, _check, _run_impl, _types

pytestmark = pytest.mark.compile


def grouped_conv_reference(x, w, strides, pads, dilation, groups, dtype="float64"):
    """NCHW data, OIHW weight, in `dtype` (float64, or int64 for exact integer sums):
    out[:, o] = sum over its group's channels and the taps."""
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    (sh, sw), (dh, dw) = strides, dilation
    top, left, bottom, right = pads
    xp = np.pad(x.astype(dtype), ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + left + right - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), dtype)
    per_group = o // groups
    for oc in range(o):
        first = (oc // per_group) * i
        for p in range(kh):
            for q in range(kw):
                patch = xp[:, first:first + i, p * dh:p * dh + sh * (oh - 1) + 1:sh,
                           q * dw:q * dw + sw * (ow - 1) + 1:sw]
                out[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, p, q].astype(dtype))
    return out


CASES = [  # (C, H, W, O, groups, K, strides, pads, dilation)
    pytest.param(7, 9, 11, 7, 7, 3, (1, 1), (1, 1, 1, 1), (1, 1), id="depthwise-odd-channels"),
    pytest.param(5, 12, 13, 5, 5, 3, (2, 2), (1, 0, 2, 1), (1, 1), id="depthwise-stride2-asym-pad"),
    pytest.param(6, 11, 10, 12, 6, 3, (1, 1), (2, 2, 2, 2), (2, 2), id="depthwise-multiplier2-dilated"),
    pytest.param(9, 10, 9, 15, 3, 3, (2, 2), (1, 1, 1, 1), (1, 1), id="grouped-odd-stride2"),
    pytest.param(12, 8, 9, 8, 4, 3, (1, 2), (2, 1, 2, 1), (2, 1), id="grouped-dilated"),
    pytest.param(17, 7, 7, 17, 17, 5, (2, 2), (2, 2, 2, 2), (1, 1), id="depthwise-5x5-stride2"),
]


def _inputs(c, h, w, o, groups, k, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((2, c, h, w)).astype("float32"),
            rng.standard_normal((o, c // groups, k, k)).astype("float32"),
            rng.standard_normal(o).astype("float32"))


@pytest.mark.parametrize("c,h,w,o,groups,k,strides,pads,dilation", CASES)
def test_nchw_rows_schedule(c, h, w, o, groups, k, strides, pads, dilation):
    x, kern, bias = _inputs(c, h, w, o, groups, k, seed=0)
    attrs = get_op("nn.conv2d").attrs_type(strides=strides, padding=pads, dilation=dilation, groups=groups)
    name = "depthwise_conv2d_nchw.x86" if groups == c else "group_conv2d_nchw.x86"
    got = _run_impl("nn.conv2d", name, [x, kern], attrs, _bias_relu(1, bias))
    want = grouped_conv_reference(x, kern, strides, pads, dilation, groups)
    _check(got, np.maximum(want + bias[:, None, None], 0).astype("float32"))


@pytest.mark.parametrize("kernel_layout", ["HWOI", "HWIO", "OHWI"])
@pytest.mark.parametrize("c,h,w,o,groups,k,strides,pads,dilation", CASES)
def test_nhwc_window_tiles(c, h, w, o, groups, k, strides, pads, dilation, kernel_layout):
    x, kern, bias = _inputs(c, h, w, o, groups, k, seed=1)
    attrs = get_op("nn.conv2d").attrs_type(strides=strides, padding=pads, dilation=dilation, groups=groups,
                                           data_layout="NHWC", kernel_layout=kernel_layout)
    x_nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    kern_laid = np.ascontiguousarray(kern.transpose(["OIHW".index(d) for d in kernel_layout]))
    name = "conv2d_nhwc.x86" if groups == 1 else \
        "depthwise_conv2d_nhwc.x86" if groups == c else "group_conv2d_nhwc.x86"
    got = _run_impl("nn.conv2d", name, [x_nhwc, kern_laid], attrs, _bias_relu(3, bias))
    want = grouped_conv_reference(x, kern, strides, pads, dilation, groups).transpose(0, 2, 3, 1)
    _check(got, np.maximum(want + bias, 0).astype("float32"))


def test_plain_nhwc_window_tiles():
    """groups = 1 in NHWC / HWIO, odd channels, stride 2, dilation 2."""
    x, kern, bias = _inputs(5, 13, 12, 11, 1, 3, seed=2)
    attrs = get_op("nn.conv2d").attrs_type(strides=2, padding=(2, 1, 2, 1), dilation=2,
                                           data_layout="NHWC", kernel_layout="HWIO")
    got = _run_impl("nn.conv2d", "conv2d_nhwc.x86", [x.transpose(0, 2, 3, 1).copy(), kern.transpose(2, 3, 1, 0).copy()],
                    attrs, _bias_relu(3, bias))
    want = grouped_conv_reference(x, kern, (2, 2), (2, 1, 2, 1), (2, 2), 1).transpose(0, 2, 3, 1)
    _check(got, np.maximum(want + bias, 0).astype("float32"))


@pytest.mark.parametrize("dshape,wshape,kw,expected", [
    ((1, 8, 9, 9), (8, 1, 3, 3), dict(groups=8), "depthwise_conv2d_nchw.x86"),
    ((1, 8, 9, 9), (8, 2, 3, 3), dict(groups=4), "group_conv2d_nchw.x86"),
    ((1, 9, 9, 8), (3, 3, 8, 1), dict(groups=8, data_layout="NHWC", kernel_layout="HWOI"), "depthwise_conv2d_nhwc.x86"),
    ((1, 9, 9, 8), (3, 3, 2, 8), dict(groups=4, data_layout="NHWC", kernel_layout="HWIO"), "group_conv2d_nhwc.x86"),
    ((1, 9, 9, 8), (3, 3, 8, 6), dict(data_layout="NHWC", kernel_layout="HWIO"), "conv2d_nhwc.x86"),
])
def test_selection_outranks_the_generic_schedule(dshape, wshape, kw, expected):
    op = get_op("nn.conv2d")
    attrs = op.attrs_type(padding=1, **kw)
    arrays = [np.zeros(dshape, "float32"), np.zeros(wshape, "float32")]
    phs = [te.placeholder(a.shape, "float32") for a in arrays]
    impl, _ = select_implementation(op, attrs, phs, op.rel(_types(arrays), attrs), "llvm", use_autotvm=False)
    assert impl.name == expected and impl.plevel > 10


def test_empty_nhwc_falls_back_to_generic():
    op = get_op("nn.conv2d")
    attrs = op.attrs_type(data_layout="NHWC", kernel_layout="HWIO")
    arrays = [np.zeros((0, 5, 5, 4), "float32"), np.zeros((3, 3, 4, 2), "float32")]
    phs = [te.placeholder(a.shape, "float32") for a in arrays]
    impl, _ = select_implementation(op, attrs, phs, op.rel(_types(arrays), attrs), "llvm", use_autotvm=False)
    assert impl.name == "conv2d.generic"
