"""codegen/llvm_vector.py: vectorized loops of static extent are emitted as LLVM vector
instructions (no loop left to LLVM's loop vectorizer), the rest keep the loop with its
vectorize metadata. Every kernel is run and compared with numpy: vector-emitted ones
(contiguous and gathered loads, broadcasts, casts, selects on the lane index, min / max,
intrinsics) and the ones that fall back (a padded read, a strided store, integer division of
the lane index). The x86 Winograd and conv2d_NCHWc kernels must leave no loop to LLVM's
vectorizer (that work was most of a cold ResNet-50 build's LLVM time), and to its unroller
only the conv's reduction step, which its schedule asks for."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te, tir
from relay_backend.codegen import build, codegen_llvm
from relay_backend.codegen.llvm_vector import vector_plan
from relay_backend.op.registry import get as get_op
from relay_backend.runtime import nd
from relay_backend.te_compiler.select import select_implementation
from relay_backend.tir import stmt as S
from relay_backend.tir.functor import walk
from relay_backend.tir.unroll import unroll_loops

pytestmark = pytest.mark.compile
VECTOR_MD = "llvm.loop.vectorize.enable"


def _kernel(make_value, n=64, lanes=8, out_dtype="float32", in_dtype="float32", name="k"):
    """Y[o*lanes + l] = make_value(X, o, l) with l a vectorized loop of `lanes`."""
    X, Y = tir.Buffer("X", (n + 8,), in_dtype), tir.Buffer("Y", (n,), out_dtype)
    o, lane = tir.Var("o"), tir.Var("l")
    body = S.For(o, 0, n // lanes, "serial", S.For(
        lane, 0, lanes, "vectorized", S.BufferStore(Y, make_value(X, o, lane), (o * lanes + lane,))))
    return tir.PrimFunc([X, Y], body, name)


def _inner(func):
    return next(n for n in walk(func.body) if isinstance(n, S.For) and n.kind == "vectorized")


def _run(func, x, out_dtype="float32", n=64):
    y = nd.empty((n,), out_dtype)
    build(func)[func.name](nd.array(x), y)
    return y.numpy()


ONE = tir.FloatImm("float32", 1.0)
X_F32 = (np.arange(72, dtype="float32") - 30.5) / 4
IDX = np.arange(64)

# (id, value builder, numpy reference of Y from X, input)
VECTOR_CASES = [
    ("contiguous-fma-max", lambda X, o, l: tir.max(X[o * 8 + l] * 2.0 + X[o * 8 + l + 1], 0.0),
     lambda x: np.maximum(x[IDX] * 2 + x[IDX + 1], 0), X_F32),
    ("broadcast-row", lambda X, o, l: X[o * 8 + l] - X[o], lambda x: x[IDX] - x[IDX // 8], X_F32),
    ("gather-quads", lambda X, o, l: X[o * 8 + (l // 4) * 4 + (l % 4)] + X[(l % 4) * 2 + o],
     lambda x: x[IDX] + x[(IDX % 4) * 2 + IDX // 8], X_F32),
    ("select-on-lane", lambda X, o, l: X[o * 8 + l] * tir.Select(tir.all(l < 3, o > 1), ONE, -ONE),
     lambda x: np.where((IDX % 8 < 3) & (IDX >= 16), x[IDX], -x[IDX]), X_F32),
    ("lane-index-cast", lambda X, o, l: tir.Cast("float32", o * 8 + l) * 0.5 + X[o * 8 + l],
     lambda x: IDX.astype("float32") * 0.5 + x[IDX], X_F32),
    ("intrinsics", lambda X, o, l: tir.call_intrin("float32", "sqrt", tir.call_intrin("float32", "fabs", X[o * 8 + l]))
     + tir.min(X[o * 8 + l], 1.0), lambda x: np.sqrt(np.abs(x[IDX])) + np.minimum(x[IDX], 1), X_F32),
]


@pytest.mark.parametrize("name,make,ref,x", VECTOR_CASES, ids=[c[0] for c in VECTOR_CASES])
def test_vector_emitted_loops_match_numpy(name, make, ref, x):
    func = _kernel(make)
    assert vector_plan(_inner(func)) is not None
    text, _ = codegen_llvm([func])
    assert "<8 x float>" in text and VECTOR_MD not in text
    np.testing.assert_allclose(_run(func, x), ref(x), rtol=1e-6)


def test_int_to_float_cast_of_loaded_lanes():
    func = _kernel(lambda X, o, l: tir.Cast("float32", X[o * 8 + l]) * 0.25, in_dtype="int32")
    assert vector_plan(_inner(func)) is not None
    x = np.arange(72, dtype="int32") - 40
    np.testing.assert_array_equal(_run(func, x), x[IDX].astype("float32") * 0.25)


FALLBACK_CASES = [
    # a padded read: the load may only run for the lanes the condition picks
    ("padded-read", lambda X, o, l: tir.Select(o * 8 + l >= 1, X[o * 8 + l - 1], 0.0),
     lambda x: np.where(IDX >= 1, x[np.maximum(IDX - 1, 0)], 0)),
    # integer division of the lane value itself (not an index)
    ("lane-floordiv", lambda X, o, l: tir.Cast("float32", tir.floordiv(o * 8 + l, 3)) + X[o * 8 + l],
     lambda x: (IDX // 3).astype("float32") + x[IDX]),
]


@pytest.mark.parametrize("name,make,ref", FALLBACK_CASES, ids=[c[0] for c in FALLBACK_CASES])
def test_unsupported_bodies_keep_the_loop_for_llvm(name, make, ref):
    func = _kernel(make)
    assert vector_plan(_inner(func)) is None
    text, _ = codegen_llvm([func])
    assert VECTOR_MD in text
    np.testing.assert_allclose(_run(func, X_F32), ref(X_F32), rtol=1e-6)


def test_a_store_that_does_not_step_by_one_element_is_not_vector_emitted():
    X, Y = tir.Buffer("X", (16,), "float32"), tir.Buffer("Y", (16,), "float32")
    lane = tir.Var("l")
    loop = S.For(lane, 0, 8, "vectorized", S.BufferStore(Y, X[lane], (lane * 2,)))
    assert vector_plan(loop) is None
    func = tir.PrimFunc([X, Y], loop, "strided")
    y = nd.array(np.zeros(16, "float32"))
    build(func)["strided"](nd.array(np.arange(16, dtype="float32")), y)
    np.testing.assert_array_equal(y.numpy()[::2], np.arange(8))


def test_symbolic_extent_or_dependent_iterations_keep_the_loop():
    Y = tir.Buffer("Y", (64,), "float32")
    lane, n = tir.Var("l"), tir.SizeVar("n")
    assert vector_plan(S.For(lane, 0, n, "vectorized", S.BufferStore(Y, 1.0, (lane,)))) is None
    shifted = S.For(lane, 0, 8, "vectorized", S.BufferStore(Y, Y[lane + 1], (lane,)))   # reads a later lane's element
    assert vector_plan(shifted) is None


def _lowered(call, name):
    """The chosen x86 implementation of `call` (checked to be `name`), lowered to a PrimFunc."""
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function(relay.analysis.free_vars(call), call)))
    typed = mod["main"].body
    phs = [te.placeholder(tuple(int(d) for d in a.checked_type.shape), a.checked_type.dtype) for a in typed.args]
    impl, outs = select_implementation(get_op(typed.op.name), typed.attrs, phs, typed.checked_type, "llvm")
    assert impl.name == name
    return te.lower(impl.schedule(typed.attrs, outs, "llvm"), phs + list(outs), "kernel")


def _left_to_llvm(func) -> list:
    """The buffers stored by the vectorized loops of `func` that codegen leaves to LLVM."""
    return [st.buffer.name for loop in walk(unroll_loops(func.body))
            if isinstance(loop, S.For) and loop.kind == "vectorized" and vector_plan(loop) is None
            for st in walk(loop.body) if isinstance(st, S.BufferStore)]


@pytest.mark.parametrize("tile", [2, 4])
def test_winograd_kernel_leaves_no_loop_to_llvms_vectorizer_or_unroller(tile):
    """Only the zero-padding copy (a lane-dependent border test guarding its load) stays a loop:
    the transforms' select chains are decided by unrolling, their rows and the GEMM's register
    tile are vector code."""
    x = relay.var("x", shape=(1, 16, 12, 12))
    u = relay.var("u", shape=(tile + 2, tile + 2, 16, 16))
    call = relay.nn.contrib_conv2d_winograd_without_weight_transform(x, u, tile, padding=1)
    func = _lowered(call, "conv2d_winograd.x86")
    assert _left_to_llvm(func) == ["winograd_pad"]
    text, _ = codegen_llvm([func])
    # the one fallback loop may carry unroll.disable (kept whole for the vectorizer); nothing
    # asks LLVM's unroller to unroll
    assert text.count(VECTOR_MD) == 1
    assert "llvm.loop.unroll.full" not in text and "llvm.loop.unroll.enable" not in text


def test_nchwc_conv_kernel_leaves_no_loop_to_llvms_vectorizer():
    """The padding copy too: its border test is the same in every lane of a channel block. The
    one loop LLVM unrolls is the reduction step over a channel block's lanes (ii, asked for by
    the schedule: unroll(ii, explicit=False)), whose body does not branch on ii."""
    data = relay.var("x", shape=(1, 2, 14, 14, 8))
    kernel = relay.var("k", shape=(2, 2, 3, 3, 8, 8))
    call = relay.nn.contrib_conv2d_nchwc(data, kernel, (1, 1), (1, 1, 1, 1), (1, 1), 1, data_layout="NCHW8c",
                                         kernel_layout="OIHW8i8o", out_layout="NCHW8c")
    func = _lowered(call, "conv2d_NCHWc.x86")
    assert _left_to_llvm(func) == []
    text, _ = codegen_llvm([func])
    assert VECTOR_MD not in text and "llvm.loop.unroll.enable" not in text
    assert text.count('!"llvm.loop.unroll.full"') == 1 and text.count("!llvm.loop") == 1
    left = [loop.loop_var.name for loop in walk(unroll_loops(func.body))
            if isinstance(loop, S.For) and loop.kind == "unrolled"]
    assert left == ["ii"]
