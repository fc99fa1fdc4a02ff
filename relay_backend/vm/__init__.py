"""Level 6: the bytecode VM (tvm.relay.vm + tvm.runtime.vm).

    exe = relay_backend.vm.compile(mod, target="llvm", params=params)   # compiler.py
    print(exe.bytecode)                                                 # executable.py
    code, lib = exe.save(); exe = Executable.load_exec(code, lib)
    vm = relay_backend.vm.VirtualMachine(exe, relay_backend.cpu())      # runtime.py, loop.py
    out = vm.run(x)

bytecode.py holds the instruction set; transform.LambdaLift turns closures into globals;
manifest_alloc.py makes every kernel call's memory explicit in the memory dialect of
dialect.py (storage, tensors, shape functions (shape_func.py) for outputs whose dims are known
only at run time: Any, size variables, data-dependent dyn.* ops; kernel invocations), which
`VMCompiler.optimize` returns; kernels over size variables are compiled once with them as
parameters; function_compiler.py compiles one function to bytecode (memory_alloc.py: the
dialect's instructions); late_bound.py and outputs.py hold the Executable's late-bound constants
and invoke_with_outputs;
executor.py is what `create_executor("vm")` returns.
"""
from .bytecode import Opcode
from .compiler import VMCompiler, compile
from .executable import Executable
from ..transform.lambda_lift import LambdaLift, lambda_lift
from .manifest_alloc import ManifestAlloc, manifest_alloc
from .loop import VMClosure
from .storage import Storage
from .runtime import VirtualMachine
from .profiler import VirtualMachineProfiler
from .executor import VMExecutor

__all__ = ["compile", "VMCompiler", "Executable", "VirtualMachine", "VirtualMachineProfiler", "VMExecutor",
           "VMClosure", "Opcode", "LambdaLift", "lambda_lift", "Storage", "ManifestAlloc", "manifest_alloc"]
