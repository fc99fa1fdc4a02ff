"""conv2d_int16_pairs.x86 (strategy/x86_conv_int16.py): 8/16-bit integer conv2d summed into int32
as a column-matrix dot product that LLVM turns into vpmaddwd. Exact against an independent
int64 reference (test_x86_grouped_conv's, one window tap at a time) at odd channel counts, stride 2, dilation,
asymmetric padding, batch 2 and a fused epilogue; selected above conv2d_nchw.x86 on AVX2 hosts
only for the calls it serves; vpmaddwd in the generated assembly; a quantized ONNX QLinearConv
bit-exact against the debug interpreter on the graph executor."""
import re

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te, tir
from relay_backend.codegen import llvm_target
from relay_backend.op.registry import get as get_op
from relay_backend.strategy import x86_conv_int16
from relay_backend.te_compiler.select import select_implementation

from .test_x86 import _build_run, _types
from .test_x86_grouped_conv import grouped_conv_reference

pytestmark = pytest.mark.compile

needs_avx2 = pytest.mark.skipif(not llvm_target.host_has_feature("avx2"),
                                reason="the pair kernel is selected on AVX2 hosts only")


CASES = [  # (dtype, N, C, H, W, O, K, strides, pads, dilation)
    pytest.param("int16", 1, 5, 9, 11, 7, 3, (1, 1), (1, 1, 1, 1), (1, 1), id="int16-odd-channels"),
    pytest.param("int16", 2, 6, 12, 13, 4, 3, (2, 2), (1, 0, 2, 1), (1, 1), id="int16-stride2-asym-pad"),
    pytest.param("int8", 1, 3, 11, 10, 5, 3, (1, 1), (2, 2, 2, 2), (2, 2), id="int8-dilated"),
    pytest.param("uint8", 1, 17, 7, 9, 3, 1, (2, 1), (0, 0, 0, 0), (1, 1), id="uint8-1x1-strided"),
    pytest.param("int16", 1, 2, 10, 10, 9, 5, (1, 2), (2, 1, 2, 1), (1, 2), id="int16-5x5-mixed"),
    # a kernel row of 3 x 81 = 243 taps: chunks of 81 (the largest divisor up to CHUNK_MAX)
    pytest.param("int8", 1, 81, 6, 7, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), id="int8-chunked-run"),
    # a 1x1 kernel over 197 channels (prime): no divisor from 32 to CHUNK_MAX, one chunk of 197
    pytest.param("int16", 1, 197, 4, 5, 2, 1, (1, 1), (0, 1, 0, 1), (1, 1), id="int16-prime-run"),
]


@pytest.mark.parametrize("run,chunk", [(15, 15), (192, 192), (243, 81), (768, 192), (201, 67), (197, 197)])
def test_chunk_length(run, chunk):
    assert x86_conv_int16.chunk_length(run) == chunk


def _inputs(dtype, n, c, h, w, o, k, seed):
    rng = np.random.default_rng(seed)
    lo, hi = {"int16": (-300, 300), "int8": (-128, 128), "uint8": (0, 256)}[dtype]
    return (rng.integers(lo, hi, (n, c, h, w)).astype(dtype), rng.integers(lo, hi, (o, c, k, k)).astype(dtype))


def _bias_shift(bias):
    """out -> (out + bias[channel]) >> 3, an integer epilogue like requantize's."""
    def epilogue(out):
        b = te.placeholder(bias.shape, "int32", name="bias")
        added = te.compute(out.shape, lambda *i: out[i] + b[i[1]], name="bias_add")
        shifted = te.compute(out.shape, lambda *i: tir.floordiv(added[i], 8), name="shift")
        return [shifted], [b, bias]
    return epilogue


@pytest.mark.parametrize("dtype,n,c,h,w,o,k,strides,pads,dilation", CASES)
def test_pair_kernel_is_exact(dtype, n, c, h, w, o, k, strides, pads, dilation):
    x, kern = _inputs(dtype, n, c, h, w, o, k, seed=0)
    attrs = get_op("nn.conv2d").attrs_type(strides=strides, padding=pads, dilation=dilation, out_dtype="int32")
    want = grouped_conv_reference(x, kern, strides, pads, dilation, 1, dtype="int64")
    got = x86_conv_int16_run(x, kern, attrs)
    np.testing.assert_array_equal(got, want.astype("int32"))
    bias = np.random.default_rng(1).integers(-1000, 1000, o).astype("int32")
    fused = x86_conv_int16_run(x, kern, attrs, _bias_shift(bias))
    np.testing.assert_array_equal(fused, (want + bias[:, None, None]) // 8)


def x86_conv_int16_run(x, kern, attrs, epilogue=None):
    """Compile the pair kernel itself (whatever the host) and run it."""
    out_type = get_op("nn.conv2d").rel(_types([x, kern]), attrs)
    return _build_run(x86_conv_int16.conv2d_int16_pairs_compute, x86_conv_int16.conv2d_int16_pairs_schedule,
                      attrs, [x, kern], out_type, epilogue)


@needs_avx2
@pytest.mark.parametrize("dtype,kw,chosen", [
    ("int16", dict(out_dtype="int32"), "conv2d_int16_pairs.x86"),
    ("int8", dict(out_dtype="int32", strides=2), "conv2d_int16_pairs.x86"),
    ("int16", dict(out_dtype="int32", groups=2), "group_conv2d_nchw.x86"),
    ("float32", {}, "conv2d_nchw.x86"),
])
def test_selection(dtype, kw, chosen):
    op = get_op("nn.conv2d")
    attrs = op.attrs_type(padding=1, **kw)
    arrays = [np.zeros((1, 8, 9, 9), dtype), np.zeros((8, 8 // attrs.groups, 3, 3), dtype)]
    phs = [te.placeholder(a.shape, dtype) for a in arrays]
    impl, _ = select_implementation(op, attrs, phs, op.rel(_types(arrays), attrs), "llvm", use_autotvm=False)
    assert impl.name == chosen


@needs_avx2
def test_int8_conv_assembly_has_vpmaddwd():
    """The column dot product reaches vpmaddwd (and no vpmulld) in the kernel LLVM emits; on a
    host with AVX-512 VNNI, LLVM folds vpmaddwd and its vpaddd into vpdpwssd, the same pairwise
    16-bit product summed into int32."""
    x = relay.var("x", shape=(1, 16, 12, 12), dtype="int8")
    w = relay.const(np.random.default_rng(2).integers(-128, 128, (16, 16, 3, 3)).astype("int8"))
    conv = relay.nn.conv2d(x, w, padding=(1, 1), out_dtype="int32")
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], conv)), target="llvm")
    asm = lib.get_lib().get_source("asm")
    assert re.search(r"\b(vpmaddwd|vpdpwssd)\b", asm), "no vpmaddwd (or VNNI vpdpwssd) in the int8 convolution"
    assert not re.search(r"\bvpmulld\b", asm)


def test_quantized_onnx_conv_is_bit_exact_against_the_interpreter():
    """QLinearConv (uint8 x int8, requantize fused) on the graph executor: every output equal
    to the debug interpreter's, over padding, stride 2 and an odd channel count."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    w = rng.integers(-128, 128, (6, 5, 3, 3)).astype("int8")
    inits = {"w": w, "w_scale": np.array(0.01, "float32"), "w_zp": np.array(0, "int8"),
             "x_scale": np.array(0.02, "float32"), "x_zp": np.array(128, "uint8"),
             "y_scale": np.array(0.3, "float32"), "y_zp": np.array(100, "uint8"),
             "b": rng.integers(-2000, 2000, 6).astype("int32")}
    node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "b"],
                            ["y"], pads=[1, 1, 1, 1], strides=[2, 2])
    graph = helper.make_graph([node], "qconv", [helper.make_tensor_value_info("x", TensorProto.UINT8, (1, 5, 13, 12))],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    mod, params = relay.frontend.from_onnx(model)
    x = rng.integers(0, 256, (1, 5, 13, 12)).astype("uint8")
    want = relay.create_executor("debug", mod=mod, params=params).evaluate()(x).numpy()
    got = relay.create_executor("graph", mod=mod, params=params).evaluate()(x).numpy()
    np.testing.assert_array_equal(got, want)
