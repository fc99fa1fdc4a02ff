"""Symbolic-shape cases for tests/op/test_symbolic_relations.py: one program per op (keyed
"<op name>" or "<op name>:<case>") and its expected output type, written out."""
import numpy as np

import relay_backend as relay
from relay_backend import te

N, M, H, W = SIZE_VARS = (te.size_var("n"), te.size_var("m"), te.size_var("h"), te.size_var("w"))


def _v(name, shape, dtype="float32"):
    return relay.var(name, shape=shape, dtype=dtype)


CASES = {}
EXPECTED = {}


def case(name, expected):
    def register(build):
        CASES[name] = build
        EXPECTED[name] = expected
        return build
    return register


def build_case(name):
    return CASES[name]()


# --- elementwise and broadcast (one expected type per family) -----------------------------------
_UNARY_FLOAT = ["abs", "ceil", "copy", "cos", "erf", "exp", "floor", "log", "negative", "nn.relu",
                "round", "rsqrt", "sigmoid", "sign", "sin", "sqrt", "tanh", "ones_like", "zeros_like",
                "fast_exp", "fast_erf", "fast_tanh", "annotation.stop_fusion", "annotation.checkpoint"]
for _name in _UNARY_FLOAT:
    case(_name, "Tensor[(n, 3), float32]")(
        lambda _name=_name: relay.op.get(_name)(_v("x", (N, 3))))
case("logical_not", "Tensor[(n, m), bool]")(lambda: relay.logical_not(_v("x", (N, M), "bool")))
case("clip", "Tensor[(n, 3), float32]")(lambda: relay.clip(_v("x", (N, 3)), -1.0, 1.0))
case("cast", "Tensor[(n, m), int32]")(lambda: relay.cast(_v("x", (N, M)), "int32"))
case("nn.leaky_relu", "Tensor[(n, 3), float32]")(lambda: relay.nn.leaky_relu(_v("x", (N, 3)), 0.1))
case("nn.dropout", "Tensor[(n, 3), float32]")(lambda: relay.nn.dropout(_v("x", (N, 3))))

_BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "floor_divide",
           "floor_mod"]
for _name in _BINARY:
    # n meets 1 and n meets n: the size variable survives (TVM's BroadcastRel)
    case(_name, "Tensor[(n, m, 3), float32]")(
        lambda _name=_name: relay.op.get(_name)(_v("x", (N, 1, 3)), _v("y", (N, M, 1))))
for _name in ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]:
    case(_name, "Tensor[(n, ?), bool]")(
        lambda _name=_name: relay.op.get(_name)(_v("x", (N, relay.Any())), _v("y", (1, 1))))
for _name in ["logical_and", "logical_or"]:
    case(_name, "Tensor[(n, 4), bool]")(
        lambda _name=_name: relay.op.get(_name)(_v("x", (N, 1), "bool"), _v("y", (4,), "bool")))
# the rarer elementwise ops (op/elemwise_math.py)
for _name in ["acos", "acosh", "asin", "asinh", "atan", "atanh", "tan", "sinh", "cosh", "log2", "log10", "trunc"]:
    case(_name, "Tensor[(n, 3), float32]")(lambda _name=_name: relay.op.get(_name)(_v("x", (N, 3))))
for _name in ["isnan", "isinf", "isfinite"]:
    case(_name, "Tensor[(n, m), bool]")(lambda _name=_name: relay.op.get(_name)(_v("x", (N, M))))
case("bitwise_not", "Tensor[(n, 3), int32]")(lambda: relay.bitwise_not(_v("x", (N, 3), "int32")))
for _name in ["mod", "trunc_divide", "trunc_mod"]:
    case(_name, "Tensor[(n, m, 3), float32]")(
        lambda _name=_name: relay.op.get(_name)(_v("x", (N, 1, 3)), _v("y", (N, M, 1))))
for _name in ["left_shift", "right_shift", "bitwise_and", "bitwise_or", "bitwise_xor"]:
    case(_name, "Tensor[(n, m), int8]")(
        lambda _name=_name: relay.op.get(_name)(_v("x", (N, 1), "int8"), _v("y", (1, M), "int8")))
case("logical_xor", "Tensor[(n, 4), bool]")(
    lambda: relay.logical_xor(_v("x", (N, 1), "bool"), _v("y", (4,), "bool")))
case("reinterpret", "Tensor[(n, 3), int32]")(lambda: relay.reinterpret(_v("x", (N, 3)), "int32"))
case("cast_like", "Tensor[(n, m), float16]")(lambda: relay.cast_like(_v("x", (N, M)), _v("y", (H,), "float16")))
case("fixed_point_multiply", "Tensor[(n, 3), int32]")(
    lambda: relay.fixed_point_multiply(_v("x", (N, 3), "int32"), 1 << 30, -2))
case("fixed_point_multiply_per_axis", "Tensor[(n, m), int32]")(
    lambda: relay.op.fixed_point_multiply_per_axis(_v("x", (N, M), "int32"), *[_v(k, (M,), "int32") for k in "abc"],
                                                   True, True, [1]))
# sorts and scans (op/algorithm/)
case("argsort", "Tensor[(n, 3), int64]")(lambda: relay.argsort(_v("x", (N, 3)), axis=0, dtype="int64"))
case("sort", "Tensor[(n, m), float32]")(lambda: relay.sort(_v("x", (N, M))))
case("topk", "(Tensor[(n, 2), float32], Tensor[(n, 2), int32])")(lambda: relay.topk(_v("x", (N, 5)), k=2).astuple())
case("topk:all", "Tensor[(n, m), int32]")(lambda: relay.topk(_v("x", (N, M)), k=0, ret_type="indices"))
case("dyn.topk", "Tensor[(n, ?), float32]")(
    lambda: relay.topk(_v("x", (N, 5)), _v("k", (), "int32"), ret_type="values"))
case("einsum", "Tensor[(n, m), float32]")(lambda: relay.einsum([_v("x", (N, 3)), _v("y", (3, M))], "ij,jk->ik"))
case("dft", "(Tensor[(n, 8), float32], Tensor[(n, 8), float32])")(
    lambda: relay.dft(_v("x", (N, 8)), _v("y", (N, 8))).astuple())
case("stft", "Tensor[(n, 5, 4, 2), float32]")(lambda: relay.stft(_v("x", (N, 20)), 8, 4))
_KEY = "Tensor[(10), uint64]"
case("random.threefry_generate", f"({_KEY}, Tensor[(2, 3), uint64])")(
    lambda: relay.random.threefry_generate(_v("k", (10,), "uint64"), (2, 3)).astuple())
case("random.threefry_split", f"({_KEY}, {_KEY})")(lambda: relay.random.threefry_split(_v("k", (10,), "uint64")).astuple())
case("random.uniform", f"({_KEY}, Tensor[(4), float32])")(
    lambda: relay.random.uniform(_v("k", (10,), "uint64"), (4,)).astuple())
case("random.normal", f"({_KEY}, Tensor[(4), float64])")(
    lambda: relay.random.normal(_v("k", (10,), "uint64"), (4,), "float64").astuple())
case("random.multinomial", f"({_KEY}, Tensor[(n, 3), int32])")(
    lambda: relay.random.multinomial(_v("k", (10,), "uint64"), _v("p", (N, 5)), 3).astuple())
case("debug", "Tensor[(n, 3), float32]")(lambda: relay.op.debug(_v("x", (N, 3))))
case("cumsum", "Tensor[(n * 3), float32]")(lambda: relay.cumsum(_v("x", (N, 3))))
case("cumprod", "Tensor[(n, m), int64]")(lambda: relay.cumprod(_v("x", (N, M), "int32"), axis=1, dtype="int64"))
case("add:any", "Tensor[(n, 3), float32]")(lambda: relay.add(_v("x", (relay.Any(), 3)), _v("y", (N, 1))))
case("where", "Tensor[(n, m), float32]")(
    lambda: relay.where(_v("c", (N, 1), "bool"), _v("x", (M,)), _v("y", (N, M))))

# --- reductions ---------------------------------------------------------------------------------
case("sum", "Tensor[(n, w), float32]")(lambda: relay.sum(_v("x", (N, H, W)), axis=1))
case("mean", "Tensor[(n, 1, w), float32]")(lambda: relay.mean(_v("x", (N, H, W)), axis=1, keepdims=True))
case("max", "Tensor[(h), float32]")(lambda: relay.max(_v("x", (N, H, W)), axis=(0, 2)))
case("min", "float32")(lambda: relay.min(_v("x", (N, H))))
case("prod", "Tensor[(n, h), float32]")(lambda: relay.prod(_v("x", (N, H, W)), axis=2))
case("all", "Tensor[(m), bool]")(lambda: relay.all(_v("x", (N, M), "bool"), axis=0))
case("any", "Tensor[(n, 1), bool]")(lambda: relay.any(_v("x", (N, M), "bool"), axis=1, keepdims=True))
case("argmax", "Tensor[(n), int32]")(lambda: relay.argmax(_v("x", (N, M)), axis=1))
case("argmin", "Tensor[(m), int32]")(lambda: relay.argmin(_v("x", (N, M)), axis=0))
case("variance", "Tensor[(n), float32]")(
    lambda: relay.variance(_v("x", (N, M)), axis=1))

# --- creation (static shapes come from attrs) ----------------------------------------------------
case("zeros", "Tensor[(2, 3), float32]")(lambda: relay.zeros((2, 3), "float32"))
case("ones", "Tensor[(4), int32]")(lambda: relay.ones((4,), "int32"))
case("full", "Tensor[(2, 2), float32]")(lambda: relay.full(relay.const(1.0), (2, 2)))
case("arange", "Tensor[(5), float32]")(lambda: relay.arange(relay.const(5.0)))

# --- shape ops ----------------------------------------------------------------------------------
case("reshape", "Tensor[(n * 3, 4), float32]")(lambda: relay.reshape(_v("x", (N, 3, 4)), (-1, 4)))
case("reshape:copy", "Tensor[(n, 12), float32]")(lambda: relay.reshape(_v("x", (N, 3, 4)), (0, -1)))
case("reshape:merge", "Tensor[(n * h, w), float32]")(lambda: relay.reshape(_v("x", (N, H, W)), (-3, -2)))
case("reshape:split", "Tensor[(n // 2, 2, 3), float32]")(lambda: relay.reshape(_v("x", (N, 3)), (-4, -1, 2, -2)))
case("reshape:any", "Tensor[(?, 4), float32]")(lambda: relay.reshape(_v("x", (relay.Any(), 8)), (-1, 4)))
case("transpose", "Tensor[(w, n, h), float32]")(lambda: relay.transpose(_v("x", (N, H, W)), (2, 0, 1)))
case("expand_dims", "Tensor[(n, 1, 1, m), float32]")(lambda: relay.expand_dims(_v("x", (N, M)), 1, 2))
case("squeeze", "Tensor[(n, m), float32]")(lambda: relay.squeeze(_v("x", (N, 1, M)), axis=[1]))
case("broadcast_to", "Tensor[(4, 3), float32]")(lambda: relay.broadcast_to(_v("x", (1, 3)), (4, 3)))
case("tile", "Tensor[(n * 2, m * 3), float32]")(lambda: relay.tile(_v("x", (N, M)), (2, 3)))
case("repeat", "Tensor[(n, m * 4), float32]")(lambda: relay.repeat(_v("x", (N, M)), 4, 1))
case("reverse", "Tensor[(n, m), float32]")(lambda: relay.reverse(_v("x", (N, M)), 0))
case("concatenate", "Tensor[(n + m + 2, 3), float32]")(
    lambda: relay.concatenate([_v("x", (N, 3)), _v("y", (M, 3)), _v("z", (2, 3))], 0))
case("concatenate:any", "Tensor[(n, ?), float32]")(
    lambda: relay.concatenate([_v("x", (N, 3)), _v("y", (N, relay.Any()))], 1))
case("stack", "Tensor[(n, 3, m), float32]")(
    lambda: relay.stack([_v("x", (N, M)), _v("y", (N, M)), _v("z", (N, M))], 1))
case("split", "(Tensor[(n, 1), float32], Tensor[(n, 2), float32], Tensor[(n, m - 3), float32])")(
    lambda: relay.split(_v("x", (N, M)), (1, 3), axis=1).astuple())
case("split:sections", "(Tensor[(n // 2, 3), float32], Tensor[(n // 2, 3), float32])")(
    lambda: relay.split(_v("x", (N, 3)), 2, axis=0).astuple())
case("strided_slice", "Tensor[(n, 2), float32]")(
    lambda: relay.strided_slice(_v("x", (N, 6)), (1,), (5,), (2,), axes=(1,)))
# numpy's clamping of [1:5] over a size m, written out (TVM gives Any here)
case("strided_slice:symbolic", "Tensor[(n, max(min(5, m) - min(1, m), 0)), float32]")(
    lambda: relay.strided_slice(_v("x", (N, M)), (1,), (5,), axes=(1,)))
case("take", "Tensor[(n, m, h), float32]")(
    lambda: relay.take(_v("x", (N, 7, H)), _v("i", (M,), "int32"), axis=1))
case("take:flat", "Tensor[(m), float32]")(lambda: relay.take(_v("x", (N, 7)), _v("i", (M,), "int32")))

# --- nn ----------------------------------------------------------------------------------------
case("nn.dense", "Tensor[(n, 16), float32]")(lambda: relay.nn.dense(_v("x", (N, 8)), _v("w", (16, 8))))
case("nn.dense:units", "Tensor[(n, 10), float32]")(lambda: relay.nn.dense(_v("x", (N, M)), relay.var("w"), units=10))
# AlterOpLayout's x86 ops: a packed weight (units/8, K, 8); channel-blocked data and kernels
case("nn.contrib_dense_pack", "Tensor[(n, 16), float32]")(
    lambda: relay.nn.contrib_dense_pack(_v("x", (N, M)), _v("w", (2, M, 8)), "NC8n"))
case("nn.contrib_conv2d_NCHWc", "Tensor[(n, 3, (h + 1) // 2, w - 2, 8), float32]")(
    lambda: relay.nn.contrib_conv2d_nchwc(_v("x", (N, M, H, W, 4)), _v("k", (3, M, 3, 3, 4, 8)), strides=(2, 1),
                                          padding=(1, 0), data_layout="NCHW4c", kernel_layout="OIHW4i8o",
                                          out_layout="NCHW8c"))
case("nn.contrib_depthwise_conv2d_NCHWc", "Tensor[(n, 2, h, w, 4), float32]")(
    lambda: relay.nn.contrib_depthwise_conv2d_nchwc(_v("x", (N, 2, H, W, 4)), _v("k", (2, 1, 3, 3, 1, 4)), padding=1,
                                                    groups=8, data_layout="NCHW4c", kernel_layout="OIHW1i4o",
                                                    out_layout="NCHW4c"))
# Winograd: the kernel transform keeps its symbolic channels; the convolution is stride 1
case("nn.contrib_conv2d_winograd_weight_transform", "Tensor[(6, 6, m, n), float32]")(
    lambda: relay.nn.contrib_conv2d_winograd_weight_transform(_v("k", (M, N, 3, 3)), 4))
case("nn.contrib_conv2d_winograd_without_weight_transform", "Tensor[(n, 8, h, w - 2), float32]")(
    lambda: relay.nn.contrib_conv2d_winograd_without_weight_transform(_v("x", (N, M, H, W)), _v("u", (6, 6, 8, M)), 4,
                                                                       padding=(1, 0)))
case("nn.matmul", "Tensor[(n, m), float32]")(lambda: relay.nn.matmul(_v("a", (4, N)), _v("b", (4, M)), transpose_a=True))
case("nn.batch_matmul", "Tensor[(n, h, w), float32]")(
    lambda: relay.nn.batch_matmul(_v("a", (N, H, 8)), _v("b", (1, W, 8))))
# (h + 1 + 1 - 3) // 2 + 1 and (w - 3) // 1 + 1, simplified
case("nn.conv2d", "Tensor[(n, 8, (h + 1) // 2, w - 2), float32]")(
    lambda: relay.nn.conv2d(_v("x", (N, 3, H, W)), _v("k", (8, 3, 3, 3)), strides=(2, 1), padding=(1, 0)))
case("nn.conv2d:weight", "Tensor[(n, 4, h, w), float32]")(
    lambda: relay.nn.conv2d(_v("x", (N, 3, H, W)), relay.var("k"), channels=4, kernel_size=(3, 3), padding=1))
case("nn.max_pool2d", "Tensor[(n, 3, h // 2, w // 2), float32]")(
    lambda: relay.nn.max_pool2d(_v("x", (N, 3, H, W)), (2, 2), (2, 2)))
# ceil_mode: ceil((h + 2 - 3) / 2) + 1 windows, all starting before the trailing padding
case("nn.avg_pool2d", "Tensor[(n, 3, h // 2 + 1, w - 2), float32]")(
    lambda: relay.nn.avg_pool2d(_v("x", (N, 3, H, W)), (3, 3), (2, 1), padding=(1, 0), ceil_mode=True))
case("nn.global_avg_pool2d", "Tensor[(n, m, 1, 1), float32]")(lambda: relay.nn.global_avg_pool2d(_v("x", (N, M, H, W))))
case("nn.global_max_pool2d", "Tensor[(n, m, 1, 1), float32]")(lambda: relay.nn.global_max_pool2d(_v("x", (N, M, H, W))))
case("nn.adaptive_avg_pool2d", "Tensor[(n, m, 3, w), float32]")(
    lambda: relay.nn.adaptive_avg_pool2d(_v("x", (N, M, H, W)), (3, None)))
case("nn.batch_flatten", "Tensor[(n, h * 3 * w), float32]")(lambda: relay.nn.batch_flatten(_v("x", (N, 3, H, W))))
case("nn.bias_add", "Tensor[(n, m, h), float32]")(lambda: relay.nn.bias_add(_v("x", (N, M, H)), relay.var("b")))
case("nn.batch_norm", "(Tensor[(n, m), float32], Tensor[(m), float32], Tensor[(m), float32])")(
    lambda: relay.nn.batch_norm(_v("x", (N, M)), *(relay.var(p) for p in "gbmv")).astuple())
case("nn.layer_norm", "Tensor[(n, m), float32]")(
    lambda: relay.nn.layer_norm(_v("x", (N, M)), relay.var("g"), relay.var("b")))
case("nn.lrn", "Tensor[(n, m, h), float32]")(lambda: relay.nn.lrn(_v("x", (N, M, H))))
case("nn.softmax", "Tensor[(n, m), float32]")(lambda: relay.nn.softmax(_v("x", (N, M))))
case("nn.fast_softmax", "Tensor[(n, m), float32]")(lambda: relay.nn.fast_softmax(_v("x", (N, M))))
case("nn.log_softmax", "Tensor[(n, m), float32]")(lambda: relay.nn.log_softmax(_v("x", (N, M)), axis=0))
case("nn.prelu", "Tensor[(n, 5), float32]")(lambda: relay.nn.prelu(_v("x", (N, 5)), relay.var("a")))
case("nn.pad", "Tensor[(n + 3, m), float32]")(lambda: relay.nn.pad(_v("x", (N, M)), ((1, 2), (0, 0))))

# --- shape queries and dyn ops (shape arguments are tensors: output dims are Any) -------------------
_SHAPE2 = lambda: _v("s", (2,), "int64")  # noqa: E731
case("shape_of", "Tensor[(3), int32]")(lambda: relay.shape_of(_v("x", (N, 3, M))))
case("ndarray_size", "int64")(lambda: relay.ndarray_size(_v("x", (N, M)), "int64"))
case("dyn.reshape", "Tensor[(?, ?), float32]")(lambda: relay.reshape(_v("x", (N, 4)), _SHAPE2()))
case("dyn.reshape:shape_of", "Tensor[(?, ?, ?), float32]")(
    lambda: relay.reshape(_v("x", (N, 4)), relay.shape_of(_v("y", (N, M, 2)))))
case("dyn.broadcast_to", "Tensor[(?, ?), float32]")(lambda: relay.broadcast_to(_v("x", (N, 1)), _SHAPE2()))
case("dyn.tile", "Tensor[(?, ?, ?), float32]")(lambda: relay.tile(_v("x", (N, M)), _v("r", (3,), "int32")))
case("dyn.squeeze", "Tensor[(?), float32]")(lambda: relay.squeeze(_v("x", (N, 1)), _v("a", (1,), "int32")))
case("dyn.expand_dims", "Tensor[(?, ?, ?), float32]")(
    lambda: relay.expand_dims(_v("x", (N, M)), _v("a", (), "int32")))
# axes past the length of begin keep their (symbolic) dims
case("dyn.strided_slice", "Tensor[(?, m), float32]")(
    lambda: relay.strided_slice(_v("x", (N, M)), _v("b", (1,), "int64"), _v("e", (1,), "int64"),
                                _v("s", (1,), "int64")))
case("dyn.full", "Tensor[(?, ?), float32]")(lambda: relay.full(relay.const(1.0), _SHAPE2()))
case("dyn.zeros", "Tensor[(?, ?), int32]")(lambda: relay.zeros(_SHAPE2(), "int32"))
case("dyn.ones", "Tensor[(?, ?), float32]")(lambda: relay.ones(relay.shape_of(_v("x", (N, M))), "float32"))
case("dyn.arange", "Tensor[(?), int32]")(
    lambda: relay.arange(_v("stop", (), "int32"), dtype="int32"))
case("dyn.nn.pad", "Tensor[(?, ?), float32]")(
    lambda: relay.nn.pad(_v("x", (N, M)), _v("p", (2, 2), "int64"), relay.const(0.0)))

# --- layouts and annotations (the data's type passes through; layout_transform splits C by 4) ----
case("layout_transform", "Tensor[(n, m, h, w, 4), float32]")(
    lambda: relay.layout_transform(_v("x", (N, M * 4, H, W)), "NCHW", "NCHW4c"))
case("layout_transform:merge", "Tensor[(n, h, w, m * 4), float32]")(
    lambda: relay.layout_transform(_v("x", (N, M, H, W, 4)), "NCHW4c", "NHWC"))
case("annotation.compiler_begin", "Tensor[(n, 3), float32]")(
    lambda: relay.annotation.compiler_begin(_v("x", (N, 3)), "ccompiler"))
case("annotation.compiler_end", "Tensor[(n, 3), float32]")(
    lambda: relay.annotation.compiler_end(_v("x", (N, 3)), "ccompiler"))
case("on_device", "Tensor[(n, 3), float32]")(lambda: relay.annotation.on_device(_v("x", (N, 3)), relay.cpu()))

from . import symbolic_expectations_nn_ext  # noqa: E402,F401  (the issue-20 nn ops add their cases)
# --- gather and scatter (issue 20) -------------------------------------------------------------------
case("gather", "Tensor[(n, h), float32]")(lambda: relay.gather(_v("x", (N, M)), 1, _v("i", (N, H), "int32")))
case("gather_nd", "Tensor[(h, m), float32]")(lambda: relay.gather_nd(_v("x", (N, M)), _v("i", (1, H), "int32")))
case("gather_nd:batch", "Tensor[(n, h), float32]")(
    lambda: relay.gather_nd(_v("x", (N, M, 3)), _v("i", (2, N, H), "int64"), batch_dims=1))
case("adv_index", "Tensor[(h, n, m), float32]")(
    lambda: relay.adv_index([_v("x", (N, 3, M)), _v("i", (H, 1), "int32"), _v("j", (N,), "int32")]))
case("scatter_elements", "Tensor[(n, m), float32]")(
    lambda: relay.scatter_elements(_v("x", (N, M)), _v("i", (H, M), "int32"), _v("u", (H, M)), 0, "add"))
case("scatter_nd", "Tensor[(n, m), float32]")(
    lambda: relay.scatter_nd(_v("x", (N, M)), _v("i", (1, H), "int32"), _v("u", (H, M)), "update"))
case("one_hot", "Tensor[(n, 5, m), int32]")(
    lambda: relay.one_hot(_v("i", (N, M), "int32"), relay.const(1), relay.const(0), 5, 1, "int32"))
case("dyn.one_hot", "Tensor[(n, ?), float32]")(
    lambda: relay.one_hot(_v("i", (N,), "int64"), relay.const(1.0), relay.const(0.0), _v("d", (), "int32"), -1,
                          "float32"))
case("reshape_like", "Tensor[(n, m, 6), float32]")(
    lambda: relay.reshape_like(_v("x", (N, 6, M)), _v("y", (M, 6)), lhs_begin=1))
case("broadcast_to_like", "Tensor[(n, m), float32]")(lambda: relay.broadcast_to_like(_v("x", (M,)), _v("y", (N, M))))
case("collapse_sum_like", "Tensor[(m, 1), float32]")(
    lambda: relay.collapse_sum_like(_v("x", (N, M, H)), _v("y", (M, 1))))
case("collapse_sum_to", "Tensor[(1, 4), float32]")(lambda: relay.collapse_sum_to(_v("x", (N, M, 4)), (1, 4)))
case("full_like", "Tensor[(n, m), int32]")(lambda: relay.full_like(_v("x", (N, M), "int32"), relay.const(3)))
case("slice_like", "Tensor[(h, m), float32]")(lambda: relay.slice_like(_v("x", (N, M)), _v("y", (H, 2)), axes=(0,)))
case("trilu", "Tensor[(n, m, 3), float32]")(lambda: relay.trilu(_v("x", (N, M, 3)), 1, upper=False))
case("matrix_set_diag", "Tensor[(n, 3, 4), float32]")(
    lambda: relay.matrix_set_diag(_v("x", (N, 3, 4)), _v("d", (N, 4, 3)), k=(-1, 2)))
case("reverse_sequence", "Tensor[(n, m), float32]")(
    lambda: relay.reverse_sequence(_v("x", (N, M)), _v("l", (M,), "int32"), seq_axis=0, batch_axis=1))
case("sequence_mask", "Tensor[(n, m, 2), float32]")(
    lambda: relay.sequence_mask(_v("x", (N, M, 2)), _v("l", (M,), "int32")))
case("sliding_window", "Tensor[(n, (m + 1) // 2 - 1, 3), float32]")(
    lambda: relay.sliding_window(_v("x", (N, M)), 1, (3,), (2,)))
case("argwhere", "Tensor[(?, 3), int32]")(lambda: relay.argwhere(_v("x", (N, M, 2), "bool")))
case("searchsorted", "Tensor[(n, h), int64]")(
    lambda: relay.searchsorted(_v("s", (N, M)), _v("v", (N, H)), right=True, dtype="int64"))
case("unique", "(Tensor[(n), float32], Tensor[(n), int32], Tensor[(n), int32], Tensor[(1), int32])")(
    lambda: relay.unique(_v("x", (N,))).astuple())
case("invert_permutation", "Tensor[(n), int64]")(lambda: relay.invert_permutation(_v("p", (N,), "int64")))
case("meshgrid", "(Tensor[(m, n), float32], Tensor[(m, n), float32])")(
    lambda: relay.meshgrid([_v("a", (N,)), _v("b", (M,))], indexing="xy").astuple())
case("unravel_index", "Tensor[(3, n), int64]")(
    lambda: relay.unravel_index(_v("i", (N,), "int64"), _v("s", (3,), "int64")))
case("contrib_reverse_reshape", "Tensor[(n * 5, 4), float32]")(lambda: relay.reverse_reshape(_v("x", (N, 5, 4)), (-1, 0)))
case("strided_set", "Tensor[(n, m), float32]")(
    lambda: relay.strided_set(_v("x", (N, M)), _v("v", (1, M)), [0], [1], [1]))
case("sparse_to_dense", "Tensor[(3, 4), float32]")(
    lambda: relay.sparse_to_dense(_v("i", (N, 2), "int32"), (3, 4), _v("v", (N,)), relay.const(0.0)))
case("dyn.sparse_to_dense", "Tensor[(?, ?), float32]")(
    lambda: relay.sparse_to_dense(_v("i", (N, 2), "int32"), _v("s", (2,), "int64"), _v("v", (N,)),
                                  relay.const(0.0)))
case("sparse_reshape", "(Tensor[(n, 2), int64], Tensor[(2), int64])")(
    lambda: relay.sparse_reshape(_v("i", (N, 3), "int64"), _v("p", (3,), "int64"), _v("s", (2,), "int64")).astuple())
case("sparse_fill_empty_rows", "(Tensor[(?, 2), int64], Tensor[(?), float32], Tensor[(?), bool])")(
    lambda: relay.sparse_fill_empty_rows(_v("i", (N, 2), "int64"), _v("v", (N,)), _v("s", (2,), "int64"),
                                         _v("d", (1,))))
from . import symbolic_expectations_image  # noqa: E402,F401  (image and vision cases)
# --- the qnn dialect (its own file) -------------------------------------------------------------
from . import symbolic_expectations_qnn  # noqa: E402,F401  (registers its cases here)
