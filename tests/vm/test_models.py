"""Static and dynamic-shape models on the VM, checked against the debug interpreter and numpy.

Tolerances: float32 kernels vs float64 numpy / float32 numpy references, rtol 1e-4, atol 1e-5.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.ir.vars import free_vars
from relay_backend.testing import mlp, numpy_nn, seed_cnn

from .conftest import assert_same, run_both

pytestmark = pytest.mark.compile
RTOL, ATOL = 1e-4, 1e-5


def test_mlp_matches_interpreter_and_numpy(rng):
    mod, params = mlp.get_workload(batch_size=2, num_hidden=(32, 16))
    data = rng.standard_normal((2, 1, 28, 28)).astype("float32")
    out, ref = run_both(mod, data, params=params)
    assert_same(out, ref, RTOL, ATOL)
    np.testing.assert_allclose(out.numpy(), mlp.numpy_forward(data, params), rtol=RTOL, atol=ATOL)


def test_seed_cnn_matches_interpreter_and_numpy(rng):
    mod, params = seed_cnn.get_workload()
    data = rng.standard_normal((1, 3, 32, 32)).astype("float32")
    out, ref = run_both(mod, data, params=params)
    assert_same(out, ref, RTOL, ATOL)
    np.testing.assert_allclose(out.numpy(), seed_cnn.numpy_forward(data, params), rtol=RTOL, atol=ATOL)


def resnet_basic_block(channels=8, size=8):
    """conv3x3-bn-relu-conv3x3-bn + identity, relu (a ResNet basic block), with its params."""
    data = relay.var("data", shape=(1, channels, size, size))
    names = {}

    def param(name, shape):
        names[name] = shape
        return relay.var(name, shape=shape)

    def conv_bn(x, i):
        w = param(f"conv{i}_weight", (channels, channels, 3, 3))
        y = relay.nn.conv2d(x, w, padding=(1, 1), channels=channels, kernel_size=(3, 3))
        bn = [param(f"bn{i}_{k}", (channels,)) for k in ("gamma", "beta", "moving_mean", "moving_var")]
        return relay.nn.batch_norm(y, *bn)[0]

    y = relay.nn.relu(conv_bn(data, 1))
    y = relay.nn.relu(relay.add(conv_bn(y, 2), data))
    func = relay.Function(free_vars(y), y)
    rng = np.random.default_rng(3)
    params = {}
    for name, shape in names.items():
        if name.endswith("weight"):
            params[name] = (rng.standard_normal(shape) / np.sqrt(channels * 9)).astype("float32")
        elif name.endswith("var"):
            params[name] = rng.uniform(0.5, 1.5, shape).astype("float32")
        else:
            params[name] = rng.uniform(-0.2, 0.2, shape).astype("float32") + (1.0 if name.endswith("gamma") else 0)
    return relay.IRModule.from_expr(func), params


def _resnet_block_numpy(x, p):
    def conv_bn(v, i):
        y = numpy_nn.conv2d(v, p[f"conv{i}_weight"].astype("float64"), pad=1)
        return numpy_nn.batch_norm(y, *(p[f"bn{i}_{k}"] for k in ("gamma", "beta", "moving_mean", "moving_var")))
    y = numpy_nn.relu(conv_bn(x.astype("float64"), 1))
    return numpy_nn.relu(conv_bn(y, 2) + x)


def test_resnet_basic_block_with_batch_norm(rng):
    mod, params = resnet_basic_block()
    data = rng.standard_normal((1, 8, 8, 8)).astype("float32")
    out, ref = run_both(mod, data, params=params)
    assert_same(out, ref, RTOL, ATOL)
    np.testing.assert_allclose(out.numpy(), _resnet_block_numpy(data, params), rtol=RTOL, atol=ATOL)


def test_mlp_with_any_batch_compiled_once_runs_at_1_7_64(rng):
    mod, params = mlp.get_workload(batch_size=relay.Any(), num_hidden=(32, 16))
    exe = rvm.compile(mod, params=params)
    assert "alloc_tensor_reg" in exe.bytecode and "shape_of" in exe.bytecode
    machine = rvm.VirtualMachine(exe, relay.cpu())
    for batch in (1, 7, 64):
        data = rng.standard_normal((batch, 1, 28, 28)).astype("float32")
        out = machine.run(data)
        assert out.shape == (batch, 10)
        np.testing.assert_allclose(out.numpy(), mlp.numpy_forward(data, params), rtol=RTOL, atol=ATOL)


def test_concatenate_and_reshape_with_any_dims(rng):
    a = relay.var("a", shape=(relay.Any(), 3))
    b = relay.var("b", shape=(relay.Any(), 3))
    cat = relay.concatenate((relay.exp(a), b), axis=0)
    out = relay.reshape(relay.multiply(cat, relay.const(2.0)), newshape=(-1,))
    mod = relay.IRModule.from_expr(relay.Function([a, b], relay.Tuple([cat, out])))
    machine = rvm.VirtualMachine(rvm.compile(mod), relay.cpu())
    for n, m in ((1, 2), (5, 0), (4, 9)):
        x = rng.standard_normal((n, 3)).astype("float32")
        y = rng.standard_normal((m, 3)).astype("float32")
        res = machine.run(x, y)
        want = np.concatenate([np.exp(x), y], axis=0)
        np.testing.assert_allclose(res[0].numpy(), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(res[1].numpy(), 2 * want.reshape(-1), rtol=1e-5, atol=1e-6)


def test_dynamic_shapes_that_disagree_raise(rng):
    a = relay.var("a", shape=(relay.Any(), 3))
    b = relay.var("b", shape=(relay.Any(), 3))
    mod = relay.IRModule.from_expr(relay.Function([a, b], relay.add(a, b)))
    machine = rvm.VirtualMachine(rvm.compile(mod), relay.cpu())
    np.testing.assert_array_equal(machine.run(np.ones((4, 3), "float32"), np.ones((1, 3), "float32")).numpy(),
                                  np.full((4, 3), 2.0, "float32"))
    with pytest.raises(relay.RelayError, match="add"):
        machine.run(np.ones((4, 3), "float32"), np.ones((2, 3), "float32"))


def test_squeezenet_with_in_place_concatenations_matches_onnxruntime():
    """SqueezeNet 1.1 (64x64, opt_level 3): its 8 fire-module concatenations run in place on the
    VM (producers write their slices, vm/site_plan.py) and its intermediates share planned
    blocks; the outputs of repeated runs, held, match onnxruntime (|err| <= 1e-4 * max|ref|)."""
    ort = pytest.importorskip("onnxruntime")
    from relay_backend.codegen.kernel_sequence import KernelSequence
    from relay_backend.frontend import from_onnx
    from relay_backend.testing import onnx_models
    from relay_backend.vm.bytecode import Opcode
    model, shape = onnx_models.squeezenet(image=64)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    mod, params = from_onnx(model)
    with relay.transform.PassContext(opt_level=3):
        exe = rvm.compile(mod, params=params)
    machine = rvm.VirtualMachine(exe, relay.cpu())
    rng = np.random.default_rng(11)
    held = []
    for _ in range(3):
        x = rng.standard_normal(shape).astype("float32")
        held.append((x, machine.run(x)))
    for x, out in held:
        ref = sess.run(None, {"data": x})[0]
        assert np.abs(out.numpy() - ref).max() <= 1e-4 * np.abs(ref).max()
    calls = sum(ins[0] == Opcode.InvokePacked for ins in exe.functions[exe.global_map["main"]].instructions)
    ran = sum(len(v[0]) for v in machine._storage_pool().sites.values()
              if isinstance(v, tuple) and isinstance(v[0], KernelSequence))
    assert len(exe.concat_kernels) >= 1 and ran == calls - 8
