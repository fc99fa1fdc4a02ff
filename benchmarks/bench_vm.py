"""The bytecode VM against the graph executor on the static models, and the VM loop's own cost.

- MLP (784-128-64-10), the seed CNN and a ResNet basic block: VM `run` vs graph executor `run`
  (inputs set once; both on the same compiled kernels), ratio = VM / graph; also the same
  executable saved and loaded back (`Executable.save` / `load_exec`: its kernel calls are checked
  unless the bytecode fixes their arguments, vm/static_calls.py).
- Per-call overhead: a one-kernel model on a 4-element tensor, where the kernel costs almost
  nothing, so the time is the VM's argument checks, allocation and dispatch loop; also the
  same model with an 8-level If/recursion (control flow the graph executor cannot express).
"""
import numpy as np

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.testing import mlp, seed_cnn

from .common import interleaved_medians


def _resnet_block(channels=16, size=16):
    """conv3x3-bn-relu-conv3x3-bn + identity, relu, with seeded params."""
    from relay_backend.ir.vars import free_vars
    rng = np.random.default_rng(3)
    data = relay.var("data", shape=(1, channels, size, size))
    params = {}

    def conv_bn(x, i):
        w = relay.var(f"conv{i}_weight", shape=(channels, channels, 3, 3))
        params[w.name_hint] = (rng.standard_normal((channels, channels, 3, 3)) / np.sqrt(9 * channels)).astype("float32")
        bn = []
        for k, lo, hi in (("gamma", 0.8, 1.2), ("beta", -0.1, 0.1), ("moving_mean", -0.1, 0.1), ("moving_var", 0.5, 1.5)):
            v = relay.var(f"bn{i}_{k}", shape=(channels,))
            params[v.name_hint] = rng.uniform(lo, hi, channels).astype("float32")
            bn.append(v)
        y = relay.nn.conv2d(x, w, padding=(1, 1), channels=channels, kernel_size=(3, 3))
        return relay.nn.batch_norm(y, *bn)[0]

    y = relay.nn.relu(relay.add(conv_bn(relay.nn.relu(conv_bn(data, 1)), 2), data))
    return relay.IRModule.from_expr(relay.Function(free_vars(y), y)), params


def _models():
    rng = np.random.default_rng(0)
    mod, params = mlp.get_workload(batch_size=1)
    yield "MLP 784-128-64-10", mod, params, rng.standard_normal((1, 1, 28, 28)).astype("float32")
    mod, params = seed_cnn.get_workload()
    yield "seed CNN", mod, params, rng.standard_normal((1, 3, 32, 32)).astype("float32")
    mod, params = _resnet_block()
    yield "ResNet basic block 16x16x16", mod, params, rng.standard_normal((1, 16, 16, 16)).astype("float32")


def _graph_runner(mod, params, data):
    try:
        factory = relay.build(mod, target="llvm", params=params)
        gmod = factory["default"](relay.cpu())
    except Exception:  # noqa: BLE001 - the graph executor is optional for this suite
        return None
    name = mod["main"].params[0].name_hint
    gmod.set_input(name, data)
    return gmod.run


def _tiny():
    x = relay.var("x", shape=(4,))
    return relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))


def _loop(depth=8):
    from relay_backend.ir import Call, GlobalVar, TensorType
    mod = relay.IRModule()
    f = GlobalVar("loop")
    i = relay.var("i", shape=(), dtype="int32")
    x = relay.var("x", shape=(4,))
    mod[f] = relay.Function([i, x], relay.If(relay.less(i, relay.const(depth, "int32")),
                                             Call(f, [relay.add(i, relay.const(1, "int32")), relay.add(x, x)]), x),
                            TensorType((4,), "float32"))
    y = relay.var("y", shape=(4,))
    mod["main"] = relay.Function([y], Call(f, [relay.const(0, "int32"), y]))
    return mod


def run(repeats: int = 15) -> list:
    rows = []
    for label, mod, params, data in _models():
        exe = rvm.compile(mod, params=params)
        machine = rvm.VirtualMachine(exe, relay.cpu())
        machine.set_input("main", data)
        candidates = {"vm": lambda m=machine: m.invoke("main")}
        loaded = rvm.VirtualMachine(rvm.Executable.load_exec(*exe.save()), relay.cpu())
        loaded.set_input("main", data)
        candidates["loaded"] = lambda m=loaded: m.invoke("main")
        graph = _graph_runner(mod, params, data)
        if graph is not None:
            candidates["graph"] = graph
        timing = interleaved_medians(candidates, repeats=repeats)
        ratio = timing["vm"][0] / timing["graph"][0] if graph is not None else None
        rows.append((f"{label}, vm", "ms", timing["vm"][0] * 1e3, ratio, timing["vm"][1]))
        loaded_ratio = timing["loaded"][0] / timing["graph"][0] if graph is not None else None
        rows.append((f"{label}, vm loaded from bytes", "ms", timing["loaded"][0] * 1e3, loaded_ratio,
                     timing["loaded"][1]))
        if graph is not None:
            rows.append((f"{label}, graph executor", "ms", timing["graph"][0] * 1e3, 1.0, timing["graph"][1]))
    x = np.ones(4, "float32")
    tiny = rvm.VirtualMachine(rvm.compile(_tiny()), relay.cpu())
    loop = rvm.VirtualMachine(rvm.compile(_loop()), relay.cpu())
    nd_x, nd_out = relay.nd.array(x), relay.nd.empty((4,), "float32")
    lib_fn = tiny.exe.lib[tiny.exe.primitive_ops[0]]
    timing = interleaved_medians({
        "vm": lambda: tiny.run(nd_x),
        "kernel": lambda: lib_fn(nd_x, nd_out),
        "loop": lambda: loop.run(nd_x),
    }, repeats=max(repeats, 5) * 20, warmup=20)
    rows.append(("tiny add(4): vm.run per call", "us", timing["vm"][0] * 1e6,
                 timing["vm"][0] / timing["kernel"][0], timing["vm"][1]))
    rows.append(("tiny add(4): checked kernel call alone", "us", timing["kernel"][0] * 1e6, 1.0,
                 timing["kernel"][1]))
    rows.append(("8-step recursive loop (9 invokes, 25 kernels)", "us", timing["loop"][0] * 1e6,
                 timing["loop"][0] / timing["kernel"][0], timing["loop"][1]))
    return rows


if __name__ == "__main__":
    for row in run(5):
        print(row)
