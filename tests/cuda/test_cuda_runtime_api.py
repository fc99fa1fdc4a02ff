"""TVM v0.18's runtime calls (issue 19) on target "cuda", without a GPU (the emulated device of
conftest.py): a CUDA kernel under Module.time_evaluator, the GraphModule calls (input info,
set_input ignoring unknown names, load_params, share_params, benchmark) on device storage, the
VM calls (set_one_input, invoke_with_outputs into device and host tensors, benchmark, late-bound
constants), and an external codegen's CPU function inside a cuda program. Results are checked
against numpy."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.codegen.cuda_compile import find_nvcc
from relay_backend.errors import InputError, RelayError
from relay_backend.graph_executor import GraphModule
from relay_backend.runtime.benchmark import BenchmarkResult
from relay_backend.testing.external_codegen import partitioned_module, register_tir_codegen, sample_io

from .emulator import gxx

pytestmark = [pytest.mark.compile,
              pytest.mark.skipif(gxx() is None, reason="the CUDA emulation needs a C++ compiler"),
              pytest.mark.skipif(not find_nvcc(), reason="building for cuda needs nvcc")]

X = np.linspace(-1, 1, 12, dtype="float32").reshape(2, 6)
W = np.linspace(0.5, 2, 12, dtype="float32").reshape(2, 6)
BIG = np.arange(32 * 32, dtype="float32").reshape(32, 32) / 100


def expected(x, w):
    return np.exp(x.astype("float64") * w)


def _exp_module():
    x, w = relay.var("x", shape=(2, 6)), relay.var("w", shape=(2, 6))
    return relay.IRModule.from_expr(relay.Function([x, w], relay.exp(relay.multiply(x, w))))


def test_time_evaluator_times_a_cuda_kernel(device):
    lib = relay.build(_exp_module(), target="cuda").get_lib()
    name, = lib.function_names
    cuda = relay.cuda(0)
    args = [relay.nd.array(X, device=cuda), relay.nd.array(W, device=cuda),
            relay.nd.empty((2, 6), "float32", cuda)]
    result = lib.time_evaluator(name, cuda, number=2, repeat=3)(*args)
    assert isinstance(result, BenchmarkResult) and len(result.results) == 3
    # one warm-up call, then repeat x number timed calls, each launching the function's kernels
    assert len(device.launches) == (1 + 3 * 2) * len(lib.plans[name].kernels)
    np.testing.assert_allclose(args[2].numpy(), expected(X, W), rtol=1e-5)


def test_graph_module_calls_on_cuda(device):
    factory = relay.build(_exp_module(), target="cuda")
    gmod = GraphModule(factory["default"](relay.cuda(0)))
    shapes, dtypes = gmod.get_input_info()
    assert {k: tuple(v) for k, v in shapes.items()} == {"x": (2, 6), "w": (2, 6)}
    gmod.set_input(x=X, w=W, unused=np.zeros(3, "float32"))           # TVM skips 'unused'
    gmod.run()
    assert gmod.get_output(0).device == relay.cuda(0)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), expected(X, W), rtol=1e-5)
    gmod.load_params(relay.save_param_dict({"w": 2 * W, "other": np.ones(2, "float32")}))
    gmod.run()
    np.testing.assert_allclose(gmod.get_output(0).numpy(), expected(X, 2 * W), rtol=1e-5)
    result = gmod.benchmark(relay.cuda(0), repeat=2, number=1, x=X, w=W)
    assert len(result.results) == 2
    assert len(gmod.module.time_evaluator("run", relay.cuda(0), number=1, repeat=2)().results) == 2


def test_share_params_on_cuda_shares_device_memory(device):
    factory = relay.build(_exp_module(), target="cuda")
    first = GraphModule(factory["default"](relay.cuda(0)))
    second = GraphModule(factory["default"](relay.cuda(0)))
    first.set_input("w", W)
    second.share_params(first, relay.save_param_dict({"w": W}))
    assert second.get_input("w").data_ptr == first.get_input("w").data_ptr
    second.set_input("x", X)
    first.set_input("w", 3 * W)                     # writes the shared device array in place
    second.run()
    np.testing.assert_allclose(second.get_output(0).numpy(), expected(X, 3 * W), rtol=1e-5)
    on_cpu = relay.build(_exp_module(), target="llvm")["default"](relay.cpu())
    with pytest.raises(InputError, match=r"share_params: input 'w' is on cuda\(0\) here but on cpu\(0\)"):
        second.share_params(GraphModule(on_cpu), relay.save_param_dict({"w": W}))


def _vm_exe():
    """main(x, w) = (exp(x * w), x + x) for target cuda."""
    x, w = relay.var("x", shape=(2, 6)), relay.var("w", shape=(2, 6))
    body = relay.Tuple([relay.exp(relay.multiply(x, w)), relay.add(x, x)])
    return rvm.compile(relay.IRModule.from_expr(relay.Function([x, w], body)), target="cuda")


def test_vm_calls_on_cuda(device):
    exe = _vm_exe()
    assert "device type 2" in exe.virtual_devices
    machine = rvm.VirtualMachine(exe, relay.cuda(0))
    machine.set_one_input("main", "w", W)
    machine.set_one_input("main", 0, X)
    out = machine.invoke("main")
    assert out[0].device == relay.cuda(0)
    np.testing.assert_allclose(out[0].numpy(), expected(X, W), rtol=1e-5)
    # caller's tensors on the device are filled after the run, host tensors in place
    on_device = [relay.nd.empty((2, 6), "float32", relay.cuda(0)) for _ in range(2)]
    ptrs = [o.data_ptr for o in on_device]
    machine.invoke_with_outputs("main", {"x": X, "w": 2 * W}, on_device)
    assert [o.data_ptr for o in on_device] == ptrs
    np.testing.assert_allclose(on_device[0].numpy(), expected(X, 2 * W), rtol=1e-5)
    np.testing.assert_allclose(on_device[1].numpy(), 2 * X, rtol=1e-6)
    on_host = [relay.nd.empty((2, 6), "float32"), relay.nd.empty((2, 6), "float32")]
    machine.invoke_with_outputs("main", {"x": X, "w": W}, on_host)
    np.testing.assert_allclose(on_host[0].numpy(), expected(X, W), rtol=1e-5)
    with pytest.raises(InputError, match=r"output 0 is Tensor\[\(4,\), float32\]"):
        machine.invoke_with_outputs("main", {"x": X, "w": W},
                                    [relay.nd.empty((4,), "float32", relay.cuda(0)), on_device[1]])
    assert len(machine.benchmark(relay.cuda(0), X, W, repeat=2, number=1).results) == 2
    assert len(machine.benchmark(relay.cuda(0), repeat=2, number=1, end_to_end=True, x=X, w=W).results) == 2


def test_vm_late_bound_constants_on_cuda(device, tmp_path):
    x = relay.var("x", shape=(32, 32))
    exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x], relay.multiply(x, relay.const(BIG)))),
                      target="cuda")
    path = str(tmp_path / "consts.params")
    exe.move_late_bound_consts(path, byte_limit=1024)
    code, lib = exe.save()
    assert BIG.tobytes() not in bytes(code)
    loaded = rvm.Executable.load_exec(code, lib)
    loaded.load_late_bound_consts(path)
    data = np.random.default_rng(0).standard_normal((32, 32)).astype("float32")
    out = rvm.VirtualMachine(loaded, relay.cuda(0)).run(data)
    np.testing.assert_allclose(out.numpy(), data * BIG, rtol=1e-6)


def test_external_codegen_function_runs_on_the_host_in_a_cuda_program(device, scratch_names):
    """The external codegen builds a CPU function; on a cuda device the graph executor stages its
    arguments through host memory (never handing it device pointers) and the VM, whose registers
    are host memory, calls it directly."""
    scratch_names.append("relay.ext.cudahostcc")
    calls = register_tir_codegen("cudahostcc")
    mod = partitioned_module("cudahostcc_main_0", "cudahostcc")
    data, want = sample_io()
    factory = relay.build(mod, target="cuda")
    assert factory.get_lib().has_function("cudahostcc_main_0", query_imports=True)
    gmod = GraphModule(factory["default"](relay.cuda(0)))
    copies_before = device.copies["dtoh"]
    gmod.run(x=data)
    assert device.copies["dtoh"] > copies_before           # the staged input came to the host
    np.testing.assert_allclose(gmod.get_output(0).numpy(), want, rtol=1e-5)
    got = relay.create_executor("vm", mod=mod, device=relay.cuda(0), target="cuda").evaluate()(data)
    assert got.device == relay.cuda(0)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    assert len(calls) == 1                    # compiled once for (function, cuda), then cached


def test_device_annotations_follow_the_cuda_target(device):
    """PlanDevices checks on_device against the target's device: cuda for target cuda, in the
    graph executor and the VM alike."""
    x = relay.var("x", shape=(2, 6))
    on_cuda = relay.IRModule.from_expr(relay.Function([x], relay.annotation.on_device(relay.exp(x), "cuda")))
    for kind in ("graph", "vm"):
        run = relay.create_executor(kind, mod=on_cuda, device=relay.cuda(0), target="cuda").evaluate()
        np.testing.assert_allclose(run(X).numpy(), np.exp(X), rtol=1e-5, err_msg=kind)
    on_cpu = relay.IRModule.from_expr(relay.Function([x], relay.annotation.on_device(relay.exp(x), "cpu")))
    with pytest.raises(RelayError, match="puts a value on cpu, but this module runs on cuda"):
        rvm.compile(on_cpu, target="cuda")
    with pytest.raises(RelayError, match="puts a value on cpu, but this module runs on cuda"):
        relay.build(on_cpu, target="cuda")
