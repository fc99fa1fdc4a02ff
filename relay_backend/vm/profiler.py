"""VirtualMachineProfiler: a VirtualMachine whose `profile(...)` times every kernel call
(tvm.runtime.profiler_vm.VirtualMachineProfiler).

    vm = VirtualMachineProfiler(exe, relay_backend.cpu())
    report = vm.profile(x, func_name="main")     # runtime.profiling.ProfileReport
    print(report); report.save_chrome_trace("vm_trace.json")

Kernels are wrapped once at construction; outside `profile` the wrappers only check a flag, so
`run`/`invoke` work as usual. Shape functions are not timed (they run in Python). The Relay ops
and MAC counts come from the executable's kernel_info (executables compiled in this process).
"""
import threading
import time

from ..docstrings import shared_parameters
from ..runtime.profiling import PROFILE_PARAMETERS, PROFILE_RESULT, KernelCall, ProfileReport
from .runtime import INVOCATION_PARAMETERS, VM_PARAMETERS, VirtualMachine


@shared_parameters(VM_PARAMETERS)
class VirtualMachineProfiler(VirtualMachine):
    """A VirtualMachine that also times every kernel call: profile(*args, func_name="main",
    repeat=1, warmup=1, **kwargs) returns a ProfileReport with one row per kernel
    (tvm.runtime.profiler_vm.VirtualMachineProfiler).
    """

    def __init__(self, exe, device=None, memory_cfg=None):
        super().__init__(exe, device, memory_cfg)
        self._recording = threading.local()
        self._packed = [fn if i in exe.shape_funcs else self._timed(fn, name)
                        for i, (fn, name) in enumerate(zip(self._packed, exe.primitive_names))]

    def _timed(self, fn, name: str):
        info = self.exe.kernel_info.get(name, {})
        ops, macs = list(info.get("ops", [])) or [name], int(info.get("macs", 0))

        def call(*args):
            calls = getattr(self._recording, "calls", None)
            if calls is None:
                return fn(*args)
            start = time.perf_counter()
            result = fn(*args)
            end = time.perf_counter()
            origin = self._recording.origin
            shapes = [list(args[-1].shape)] if args and hasattr(args[-1], "shape") else []
            calls.append(KernelCall(name=name, kernel=name, ops=ops, start_us=(start - origin) * 1e6,
                                    duration_us=(end - start) * 1e6, shapes=shapes, macs=macs))
            return result
        return call

    @shared_parameters({**PROFILE_PARAMETERS, **INVOCATION_PARAMETERS}, PROFILE_RESULT)
    def profile(self, *args, func_name: str = "main", repeat: int = 1, warmup: int = 1, **kwargs) -> ProfileReport:
        """Time every kernel call of a VM function: `warmup` untimed runs, then `repeat` timed ones,
        on the inputs given here (or those of set_input).
        """
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        for _ in range(max(int(warmup), 0)):
            self.invoke(func_name)
        self._recording.calls, self._recording.origin = [], time.perf_counter()
        try:
            for _ in range(max(int(repeat), 1)):
                self.invoke(func_name)
            wall_us = (time.perf_counter() - self._recording.origin) * 1e6
            calls = self._recording.calls
        finally:
            self._recording.calls = None
        return ProfileReport(calls, "vm", max(int(repeat), 1), wall_us)


__all__ = ["VirtualMachineProfiler"]
