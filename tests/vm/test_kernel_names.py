"""VM kernels: TVM's names (the bare "vm_mod" prefix, numbered per compiled module, whatever
the shared TECompiler cache saw first) and the public unchecked call for static kernels.
Results are checked against numpy."""
import json

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.runtime.module import Function

pytestmark = pytest.mark.compile


def _two_adds():
    """Two different fused_add kernels (shapes differ), then a relu."""
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(3,))
    a = relay.add(x, y)
    b = relay.add(relay.sum(a, axis=1), relay.const(1.0))
    return relay.IRModule.from_expr(relay.Function([x, y], relay.nn.relu(b)))


def test_names_use_the_unmangled_vm_prefix_even_after_build_lowered_them():
    mod = _two_adds()
    graph = json.loads(relay.build(mod).get_graph_json())      # fills the shared cache first
    assert all(n["name"].startswith("tvmgen_default_") for n in graph["nodes"] if n["op"] == "tvm_op")
    for _ in range(2):                                          # numbered per module, not per process
        exe = rvm.compile(mod)
        assert all(name.startswith("vm_mod_fused_") for name in exe.primitive_ops), exe.primitive_ops
        assert not any("tvmgen" in name for name in exe.primitive_ops)
        assert len(set(exe.primitive_ops)) == len(exe.primitive_ops)
    x = np.arange(6, dtype="float32").reshape(2, 3) - 3
    y = np.array([1.0, -2.0, 0.5], "float32")
    out = rvm.VirtualMachine(exe, relay.cpu()).run(x, y)
    np.testing.assert_allclose(out.numpy(), np.maximum((x + y).sum(axis=1) + 1, 0), rtol=1e-6)


def test_static_kernels_use_the_public_unchecked_call():
    x = relay.var("x", shape=(4,))
    exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))))
    vm = rvm.VirtualMachine(exe, relay.cpu())
    (kernel,) = vm._packed
    assert not isinstance(kernel, Function) and isinstance(kernel.checked, Function)
    data = np.linspace(-1, 1, 4).astype("float32")
    np.testing.assert_allclose(vm.run(data).numpy(), np.exp(data), rtol=1e-6)


def test_symbolic_kernels_keep_the_checked_call():
    x = relay.var("x", shape=(relay.Any(),))
    exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))))
    vm = rvm.VirtualMachine(exe, relay.cpu())
    kernels = [k for name, k in zip(exe.primitive_names, vm._packed) if "shape_func" not in name]
    assert kernels and all(isinstance(k, Function) for k in kernels)
    data = np.linspace(-1, 1, 5).astype("float32")
    np.testing.assert_allclose(vm.run(data).numpy(), np.exp(data), rtol=1e-6)
