"""x86 implementations of the issue-20 nn ops (strategy/x86_conv_nd.py, x86_conv_transpose.py,
x86_conv_layouts.py): every sample of each op through each x86 implementation that applies,
compiled and run against the op's numpy reference; the phase-split transposed convolution on
strides, groups, odd kernels and 1-D / 3-D, with a fused bias + relu epilogue; and selection
(the x86 implementations outrank the generic one). Tolerances as tests/strategy/test_x86.py."""
import numpy as np
import pytest

from relay_backend import te
from relay_backend.ir.types import TensorType
from relay_backend.op.registry import get as get_op
from relay_backend.te_compiler.select import select_implementation

from .test_x86 import _bias_relu, _build_run, _check, _impls

pytestmark = pytest.mark.compile

EXT_OPS = ["nn.conv1d", "nn.conv3d", "nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose"]


@pytest.mark.parametrize("op_name", EXT_OPS)
def test_every_sample_matches_reference(op_name):
    op = get_op(op_name)
    ran = 0
    for sample in op.samples(np.random.default_rng(0)):
        arrays = list(sample.inputs)
        _, out_type, impls = _impls(op_name, arrays, sample.attrs)
        want = op.ref(*arrays, sample.attrs)
        for impl in impls:
            _check(_build_run(impl.compute, impl.schedule, sample.attrs, arrays, out_type), want)
            ran += 1
    assert ran > 0, f"no x86 implementation of {op_name} ran on its samples"


PHASE_CASES = [  # (op, data shape, weight shape, attrs)
    ("nn.conv2d_transpose", (1, 6, 5, 4), (6, 5, 3, 3), dict(strides=2, padding=1, output_padding=1)),
    ("nn.conv2d_transpose", (2, 4, 3, 5), (4, 3, 4, 3), dict(strides=(3, 2), padding=(2, 0, 1, 1))),
    ("nn.conv2d_transpose", (1, 6, 4, 4), (6, 2, 3, 3), dict(strides=2, groups=3)),
    ("nn.conv1d_transpose", (2, 3, 7), (3, 4, 5), dict(strides=3, padding=(4, 1), output_padding=2)),
    ("nn.conv3d_transpose", (1, 2, 3, 2, 3), (2, 3, 2, 3, 2), dict(strides=(2, 1, 2), padding=(1, 0, 0, 0, 1, 1))),
]


@pytest.mark.parametrize("op_name,dshape,wshape,kw", PHASE_CASES)
def test_phase_split_transpose_with_fused_bias_relu(op_name, dshape, wshape, kw):
    op = get_op(op_name)
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(dshape).astype("float32"), rng.standard_normal(wshape).astype("float32")
    attrs = op.attrs_type(**kw)
    _, out_type, impls = _impls(op_name, [x, w], attrs)
    impl = next(i for i in impls if i.name == "conv_transpose_phase.x86")
    b = rng.standard_normal(out_type.shape[1]).astype("float32")
    got = _build_run(impl.compute, impl.schedule, attrs, [x, w], out_type, _bias_relu(1, b))
    want = op.ref(x, w, attrs)
    _check(got, np.maximum(want + b.reshape((-1,) + (1,) * (x.ndim - 2)), 0))


@pytest.mark.parametrize("op_name,kw,expected", [
    ("nn.conv2d_transpose", dict(strides=2), "conv_transpose_phase.x86"),
    ("nn.conv2d_transpose", dict(strides=1), "conv2d_transpose.x86"),
    ("nn.conv2d_transpose", dict(strides=2, dilation=2), "conv2d_transpose.x86"),
])
def test_selection_prefers_the_x86_implementations(op_name, kw, expected):
    op = get_op(op_name)
    attrs = op.attrs_type(**kw)
    types = [TensorType((1, 4, 6, 6), "float32"), TensorType((4, 2, 3, 3), "float32")]
    phs = [te.placeholder(t.shape, t.dtype) for t in types]
    impl, _ = select_implementation(op, attrs, phs, op.rel(types, attrs), "llvm")
    assert impl.name == expected and impl.plevel > 10
