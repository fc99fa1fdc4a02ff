"""Level 6: the bytecode VM (tvm.relay.vm + tvm.runtime.vm).

    exe = relay_backend.vm.compile(mod, target="llvm", params=params)   # compiler.py
    print(exe.bytecode)                                                 # executable.py
    code, lib = exe.save(); exe = Executable.load_exec(code, lib)
    vm = relay_backend.vm.VirtualMachine(exe, relay_backend.cpu())      # runtime.py, loop.py
    out = vm.run(x)

bytecode.py holds the instruction set; lambda_lift.py turns closures into globals;
function_compiler.py compiles one function to bytecode, with explicit allocations from
memory_alloc.py and shape functions (shape_func.py) for outputs whose dims are known only at run
time (Any, size variables, data-dependent dyn.* ops); kernels over size variables are compiled
once with them as parameters;
executor.py is what `create_executor("vm")` returns.
"""
from .bytecode import Opcode
from .compiler import VMCompiler, compile
from .executable import Executable
from .lambda_lift import LambdaLift, lambda_lift
from .loop import Storage, VMClosure
from .runtime import VirtualMachine
from .executor import VMExecutor

__all__ = ["compile", "VMCompiler", "Executable", "VirtualMachine", "VMExecutor", "VMClosure", "Opcode",
           "LambdaLift", "lambda_lift", "Storage"]
