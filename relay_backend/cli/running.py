"""`run`: load a package, fill its inputs, run it `repeat` times, optionally profile it."""
import time

import numpy as np

from ..errors import InputError
from ..runtime.device import cpu, cuda
from .package import load_package
from .values import fill_inputs, load_inputs


def run_package(path, inputs_path, fill_mode, outputs_path, repeat, profile) -> dict:
    """{"outputs": [numpy], "mean_ms": float, "profile": ProfileReport or None}."""
    from ..target import as_target
    from .package import read_metadata
    meta = read_metadata(path)
    device = cuda(0) if as_target(meta["target"]).kind.name == "cuda" else cpu(0)
    meta, loaded = load_package(path, device)
    given = load_inputs(inputs_path) if inputs_path else {}
    inputs = fill_inputs(meta["inputs"], given, fill_mode)
    runner = _runner(meta["executor"], loaded, device)
    outputs = runner.run(inputs)                       # warm-up, and the outputs reported
    start = time.perf_counter()
    for _ in range(repeat):
        runner.run(inputs)
    mean_ms = (time.perf_counter() - start) * 1e3 / repeat
    report = runner.profile(inputs, repeat) if profile else None
    if outputs_path:
        np.savez(outputs_path, **{f"output{i}": out for i, out in enumerate(outputs)})
    return {"outputs": outputs, "mean_ms": mean_ms, "profile": report}


class _GraphRunner:
    def __init__(self, factory, device):
        self.factory, self.device = factory, device
        self.module = factory["default"](device)

    def run(self, inputs):
        self.module.run(**inputs)
        return [self.module.get_output(i).numpy() for i in range(self.module.get_num_outputs())]

    def profile(self, inputs, repeat):
        debug = self.factory.create(self.device, debug=True)
        return debug.profile(repeat=repeat, **inputs)


class _VMRunner:
    def __init__(self, exe, device):
        from ..vm import VirtualMachineProfiler
        self.vm = VirtualMachineProfiler(exe, device)

    def run(self, inputs):
        result = self.vm.invoke("main", **inputs)
        fields = result.fields if hasattr(result, "fields") else [result]
        return [field.numpy() for field in fields]

    def profile(self, inputs, repeat):
        return self.vm.profile(repeat=repeat, **inputs)


class _AotRunner:
    def __init__(self, factory, device):
        from ..aot.runtime import AotModule
        self.module = AotModule(factory, device)

    def run(self, inputs):
        self.module.run(**inputs)
        return [self.module.get_output(i).numpy() for i in range(self.module.get_num_outputs())]

    def profile(self, inputs, repeat):
        raise InputError("--profile times kernels of the graph and vm executors; the AOT executor "
                         "runs one C function (compile with --executor graph to profile)")


def _runner(executor, loaded, device):
    return {"graph": _GraphRunner, "vm": _VMRunner, "aot": _AotRunner}[executor](loaded, device)


__all__ = ["run_package"]
