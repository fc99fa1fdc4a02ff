"""The graph executor and the VM on target "cuda", without a GPU: the CUDA device API is the
CPU emulation (emulated_device.py), so everything but pycuda runs for real: relay.build for
cuda, CUDAModule launches with device workspace, device-resident graph storage with host<->device
copies, the VM staging kernels on the device, export/load of a cuda factory. Results are compared
with numpy / the llvm target."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.codegen.cuda_compile import find_nvcc
from relay_backend.errors import CompileError, RelayError
from relay_backend.runtime import load_module
from relay_backend.testing import mlp

from .emulator import gxx

pytestmark = [pytest.mark.compile,
              pytest.mark.skipif(gxx() is None, reason="the CUDA emulation needs a C++ compiler"),
              pytest.mark.skipif(not find_nvcc(), reason="building for cuda needs nvcc")]


def _model():
    x = relay.var("x", shape=(4, 64))
    w = relay.var("w", shape=(48, 64))
    b = relay.var("b", shape=(48,))
    y = relay.nn.softmax(relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b)))
    mod = relay.IRModule.from_expr(relay.Function([x, w, b], relay.sum(y, axis=1) + relay.mean(y)))
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((48, 64)).astype("float32"),
              "b": rng.standard_normal(48).astype("float32")}
    return mod, params, rng.standard_normal((4, 64)).astype("float32")


def _reference(mod, params, x):
    return relay.create_executor("graph", mod=mod, params=params).evaluate()(x).numpy()


def test_graph_executor_on_cuda(device, tmp_path):
    mod, params, x = _model()
    factory = relay.build(mod, target="cuda", params=params)
    assert factory.get_lib().type_key == "cuda"
    gmod = relay.graph_executor.GraphModule(factory["default"](relay.cuda(0)))
    gmod.set_input("x", x)
    gmod.run()
    out = gmod.get_output(0)
    assert out.device == relay.cuda(0)
    np.testing.assert_allclose(out.numpy(), _reference(mod, params, x), rtol=1e-5, atol=1e-5)
    assert device.launches and device.copies["htod"] >= 1
    with pytest.raises(RelayError, match="kernels run on cuda but device cpu"):
        factory["default"](relay.cpu())
    path = factory.export_library(str(tmp_path / "model.so"))
    loaded = load_module(path)
    again = relay.graph_executor.GraphModule(loaded["default"](relay.cuda(0)))
    again.set_input("x", relay.nd.array(x, device=relay.cuda(0)))
    again.run()
    np.testing.assert_allclose(again.get_output(0).numpy(), out.numpy(), rtol=0, atol=0)


def test_create_executor_graph_and_vm_on_cuda(device):
    mod, params, x = _model()
    want = _reference(mod, params, x)
    for kind in ("graph", "vm"):
        run = relay.create_executor(kind, mod=mod, device=relay.cuda(0), target="cuda",
                                    params=params).evaluate()
        got = run(x)
        assert got.device == relay.cuda(0), kind
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5, err_msg=kind)


def test_vm_on_cuda_with_control_flow_and_dynamic_shapes(device):
    """The VM keeps registers on the host and stages each kernel on the device: control flow and
    symbolic shapes work as on the CPU."""
    x = relay.var("x", shape=(relay.Any(), 3))
    c = relay.var("c", shape=(), dtype="bool")
    body = relay.If(c, relay.exp(x) * relay.const(2.0), relay.nn.relu(x) - relay.const(1.0))
    mod = relay.IRModule.from_expr(relay.Function([c, x], relay.sum(body, axis=1)))
    exe = relay.vm.compile(mod, target="cuda")
    vm = relay.vm.VirtualMachine(exe, relay.cuda(0))
    for rows, flag in ((5, True), (300, False)):
        data = np.random.default_rng(rows).standard_normal((rows, 3)).astype("float32")
        got = vm.run(np.array(flag), data).numpy()
        want = (np.exp(data) * 2 if flag else np.maximum(data, 0) - 1).sum(1)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(RelayError, match="kernels run on cuda, got device cpu"):
        relay.vm.VirtualMachine(exe, relay.cpu())


@pytest.mark.slow  # model-level
def test_demo_mlp_on_cuda_matches_numpy(device):
    mod, params = mlp.get_workload(batch_size=8)
    data = np.random.default_rng(3).standard_normal((8, 1, 28, 28)).astype("float32")
    got = relay.create_executor("graph", mod=mod, device=relay.cuda(0), target="cuda",
                                params=params).evaluate()(data).numpy()
    np.testing.assert_allclose(got, mlp.numpy_forward(data, params), rtol=1e-4, atol=1e-5)


def test_aot_stays_on_the_cpu(device):
    mod, params, _ = _model()
    with pytest.raises(CompileError, match="AOT executor compiles one C program for the CPU"):
        relay.build(mod, target="cuda", executor="aot", params=params)


@pytest.mark.slow
def test_demo_resnet18_on_emulated_cuda(device):
    from relay_backend.testing import resnet
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    data = np.random.default_rng(4).standard_normal((1, 3, 32, 32)).astype("float32")
    got = relay.create_executor("graph", mod=mod, device=relay.cuda(0), target="cuda",
                                params=params).evaluate()(data).numpy()
    want = resnet.numpy_forward(data, params, 18)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1, np.abs(want).max()))
