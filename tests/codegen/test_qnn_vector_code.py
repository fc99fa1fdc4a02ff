"""int8 / uint8 quantized kernels compile to vector code: a qnn.conv2d and a qnn.dense, lowered by
the default pipeline to the integer nn kernels, multiply-accumulate whole SIMD registers of
int32 lanes (LLVM `mul`/`add` on <N x i32>, N >= 4), and the requantize epilogue fused into the
convolution is vectorized too (int64 lanes)."""
import re

import numpy as np

import relay_backend as relay

VECTOR_I32_MUL = re.compile(r"= mul (nsw )?<(4|8|16|32) x i32>")   # 32: the vpmaddwd pair kernel
VECTOR_I32_ADD = re.compile(r"= add (nsw )?<(4|8|16|32) x i32>")


def _kernel(ll: str, name_part: str) -> str:
    """The body of the LLVM function whose name contains `name_part`."""
    bodies = [chunk for chunk in ll.split("\ndefine ")[1:] if name_part in chunk.split("(", 1)[0]]
    assert bodies, f"no kernel named *{name_part}* in the module"
    return bodies[0].split("\n}\n", 1)[0]


def _c(value, dtype):
    return relay.const(np.asarray(value, dtype=dtype))


def test_qnn_conv2d_with_requantize_is_vectorized():
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 16, 14, 14), dtype="uint8")
    w = relay.const(rng.integers(-128, 128, (32, 16, 3, 3)).astype("int8"))
    conv = relay.qnn.op.conv2d(x, w, _c(128, "int32"), _c(0, "int32"), _c(0.02, "float32"), _c(0.01, "float32"),
                               kernel_size=(3, 3), channels=32, padding=(1, 1))
    out = relay.qnn.op.requantize(conv, _c(2e-4, "float32"), _c(0, "int32"), _c(0.05, "float32"),
                                  _c(3, "int32"), out_dtype="int8")
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], out)), target="llvm")
    body = _kernel(lib.get_lib().get_source("ll"), "conv2d")
    assert VECTOR_I32_MUL.search(body), "the int32 multiply-accumulate of the convolution is not vectorized"
    assert VECTOR_I32_ADD.search(body)
    assert re.search(r"<(4|8|16) x i64>", body), "the fused fixed-point requantize is not vectorized"
    assert "qnn" not in lib.get_graph_json()          # lowered to basic ops before fusion


def test_qnn_dense_is_vectorized():
    rng = np.random.default_rng(1)
    data = relay.var("d", shape=(4, 64), dtype="int8")
    w = relay.const(rng.integers(-128, 128, (32, 64)).astype("int8"))
    out = relay.qnn.op.dense(data, w, _c(1, "int32"), _c(0, "int32"), _c(0.1, "float32"), _c(0.1, "float32"),
                             units=32)
    lib = relay.build(relay.IRModule.from_expr(relay.Function([data], out)), target="llvm")
    body = _kernel(lib.get_lib().get_source("ll"), "dense")
    assert VECTOR_I32_MUL.search(body) and VECTOR_I32_ADD.search(body), "the int32 dot product is not vectorized"
