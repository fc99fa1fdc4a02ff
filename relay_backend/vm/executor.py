"""VMExecutor: what `create_executor("vm", mod, device, target)` returns.

`evaluate()` compiles the module once (relay_backend.vm.compile) and returns a callable that
converts its arguments (positional then keyword, as every Executor does) and runs `main` on a
VirtualMachine. `evaluate(func)` compiles a module whose main is `func`.
"""
from ..errors import RelayError
from ..executor import Executor, convert_args
from ..ir.expr import Function, GlobalVar
from .compiler import compile as vm_compile
from .runtime import VirtualMachine


class VMExecutor(Executor):
    """The "vm" kind of relay.create_executor (tvm.relay.backend.vm.VMExecutor): evaluate()
    compiles the module once and returns a function that runs main on the VM.

    Parameters
    ----------
    mod : IRModule
        The module to run.
    device : Device
        Where to run.
    target : str or Target, optional
        What the kernels are compiled for. Defaults to "llvm".
    """

    def __init__(self, mod, device, target="llvm"):
        if mod is None:
            raise RelayError("the vm executor needs a module")
        self.mod = mod
        self.device = device
        self.target = target
        self.executable = None
        self.vm = None

    def _make_executor(self, expr=None):
        mod = self.mod
        if isinstance(expr, GlobalVar):
            if expr.name_hint != "main":
                mod = mod.copy()
                mod["main"] = mod[expr.name_hint]
        elif isinstance(expr, Function):
            mod = mod.copy()
            mod["main"] = expr
        elif expr is not None:
            raise RelayError(f"cannot make a vm executor for a {type(expr).__name__}; give a Function or GlobalVar")
        if "main" not in mod:
            raise RelayError("the module has no main function to run with the vm executor")
        main = mod["main"]
        self.executable = vm_compile(mod, target=self.target)
        self.vm = VirtualMachine(self.executable, self.device)
        vm = self.vm

        def _vm_wrapper(*args, **kwargs):
            return vm.run(*convert_args(main, args, kwargs))

        return _vm_wrapper


__all__ = ["VMExecutor"]
