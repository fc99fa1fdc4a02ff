"""The GPU schedules on shapes that exercise them (the op samples are tiny): tiled shared-memory
dense / matmul / batch_matmul with fused epilogues and ragged edges, channel-blocked conv2d,
one-block-per-row softmax, cross-thread and thread-per-output reductions, multi-kernel functions
with device workspace, symbolic shapes. Each runs under the CPU emulation of CUDA against numpy,
and the implementation chosen is the one meant."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te
from relay_backend.te_compiler.lower import lower_to_primfunc, lower_to_te

from .emulator import Emulator, gxx

pytestmark = [pytest.mark.compile,
              pytest.mark.skipif(gxx() is None, reason="the CUDA emulation needs a C++ compiler")]
RNG = np.random.default_rng(7)


def _rand(*shape, dtype="float32"):
    return RNG.uniform(-1, 1, size=shape).astype(dtype)


def _primitive(build, arrays):
    params = [relay.var(f"p{i}", shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(arrays)]
    return relay.Function(params, build(*params)).with_attr("Primitive", 1)


CASES = {
    # name: (builder, inputs, numpy reference, implementation expected for the anchor op)
    "dense_bias_relu": (lambda x, w, b: relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b)),
                        [_rand(70, 100), _rand(96, 100), _rand(96)],
                        lambda x, w, b: np.maximum(x @ w.T + b, 0), "dense_tiled.cuda"),
    "dense_plain": (lambda x, w: relay.nn.dense(x, w), [_rand(64, 32), _rand(64, 32)],
                    lambda x, w: x @ w.T, "dense_tiled.cuda"),
    "matmul_t": (lambda a, b: relay.nn.matmul(a, b, transpose_a=True), [_rand(37, 45), _rand(37, 33)],
                 lambda a, b: a.T @ b, "matmul_tiled.cuda"),
    "batch_matmul": (lambda a, b: relay.nn.batch_matmul(a, b), [_rand(3, 40, 33), _rand(3, 50, 33)],
                     lambda a, b: a @ b.transpose(0, 2, 1), "batch_matmul_tiled.cuda"),
    "batch_matmul_bcast": (lambda a, b: relay.nn.batch_matmul(a, b), [_rand(1, 34, 20), _rand(2, 36, 20)],
                           lambda a, b: a @ b.transpose(0, 2, 1), "batch_matmul_tiled.cuda"),
    "dense_small": (lambda x, w: relay.nn.dense(x, w), [_rand(1, 300), _rand(10, 300)],
                    lambda x, w: x @ w.T, "dense.gpu"),
    "conv_bias_relu": (lambda x, w, b: relay.nn.relu(relay.nn.bias_add(
        relay.nn.conv2d(x, w, strides=(2, 1), padding=(1, 1)), b)),
        [_rand(2, 3, 13, 12), _rand(8, 3, 3, 3), _rand(8)],
        None, "conv2d_nchw.cuda"),
    "conv_plain": (lambda x, w: relay.nn.conv2d(x, w, padding=(0, 2), dilation=(2, 1)),
                   [_rand(1, 4, 9, 7), _rand(6, 4, 2, 3)], None, "conv2d_nchw.cuda"),
    "softmax_long_rows": (lambda x: relay.nn.softmax(x), [_rand(4, 1000) * 5],
                          lambda x: np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True),
                          "softmax.cuda"),
    "log_softmax_axis1": (lambda x: relay.nn.log_softmax(x, axis=1), [_rand(3, 70, 5)],
                          lambda x: x - x.max(1, keepdims=True) - np.log(np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)),
                          "log_softmax.cuda"),
    "sum_rows_cross_thread": (lambda x: relay.sum(x, axis=1), [_rand(8, 5000)],
                              lambda x: x.sum(1), "reduce.gpu"),
    "sum_columns_cross_thread": (lambda x: relay.sum(x, axis=0), [_rand(3000, 8)],
                                 lambda x: x.sum(0), "reduce.gpu"),
    "sum_many_rows_per_thread": (lambda x: relay.sum(x, axis=1), [_rand(3000, 16)],
                                 lambda x: x.sum(1), "reduce.gpu"),
    "argmax_cross_thread": (lambda x: relay.argmax(x, axis=1), [_rand(4, 3000)],
                            lambda x: x.argmax(1).astype("int32"), "reduce.gpu"),
    "mean_all": (lambda x: relay.mean(x), [_rand(37, 91)], lambda x: x.mean(dtype="float64"), "reduce.gpu"),
    "layer_norm_kernels": (lambda x, g, b: relay.nn.layer_norm(x, g, b),
                           [_rand(6, 700), _rand(700), _rand(700)], None, None),
    "global_avg_pool": (lambda x: relay.nn.global_avg_pool2d(x), [_rand(2, 8, 30, 30)],
                        lambda x: x.mean(axis=(2, 3), keepdims=True), "global_avg_pool2d.gpu"),
    "max_pool": (lambda x: relay.nn.max_pool2d(x, (3, 3), (2, 2), padding=(1, 1)), [_rand(2, 5, 17, 17)],
                 None, "max_pool2d.gpu"),
}


def _reference(name, build, arrays, ref):
    """numpy's answer, or the debug interpreter's (the op references) when no formula is given."""
    if ref is not None:
        return np.asarray(ref(*[a.astype("float64") for a in arrays])).astype(
            "int32" if name.startswith("argmax") else "float32")
    params = [relay.var(f"p{i}", shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(arrays)]
    mod = relay.IRModule.from_expr(relay.Function(params, build(*params)))
    return relay.create_executor("debug", mod=mod).evaluate()(*arrays).numpy()


@pytest.fixture(scope="module")
def emulator():
    funcs = {name: lower_to_primfunc(_primitive(build, arrays), "cuda", name)
             for name, (build, arrays, _, _) in CASES.items()}
    return Emulator(list(funcs.values()), opt="-O1")


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_matches_numpy(emulator, name):
    build, arrays, ref, impl = CASES[name]
    want = _reference(name, build, arrays, ref)
    got = np.zeros(want.shape, want.dtype)
    emulator.run(name, *arrays, got)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)
    if impl is not None:
        lowered = lower_to_te(_primitive(build, arrays), "cuda")
        assert lowered.anchor_impl.name == impl


@pytest.mark.parametrize("name", ["dense_bias_relu", "batch_matmul", "softmax_long_rows",
                                  "argmax_cross_thread"])
def test_shared_memory_and_barriers_are_used(emulator, name):
    kernel = emulator.source[emulator.source.index(f"/* {name}:"):]
    kernel = kernel[:kernel.find("\n/* ", 10)]
    assert "__shared__" in kernel and "__syncthreads();" in kernel


def test_multi_kernel_function_uses_device_workspace(emulator):
    plan = emulator.plans["layer_norm_kernels"]
    assert len(plan.kernels) >= 2 and plan.workspace, plan


def test_symbolic_shape_kernel():
    n = te.var("n")
    a = te.placeholder((n, 3), "float32", name="a")
    b = te.compute((n, 3), lambda i, j: te.exp(a[i, j]) * 2.0, name="b")
    from relay_backend.strategy.cuda_generic import schedule_gpu_generic
    func = te.lower(schedule_gpu_generic(None, [b], "cuda"), [a, b], "sym")
    emu = Emulator([func])
    for rows in (1, 100, 700):
        x = _rand(rows, 3)
        out = np.zeros_like(x)
        emu.run("sym", x, out)
        np.testing.assert_allclose(out, np.exp(x) * 2, rtol=1e-6)
    assert emu.plans["sym"].kernels[0].grid[0] != 1          # the grid follows n
