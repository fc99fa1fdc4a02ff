"""build_module: the one place that knows every executor (tvm.relay.build_module).

`create_executor(kind, mod, device, target, params)` returns an Executor whose
`evaluate(expr=None)` gives a callable. Only kind="debug" (the reference interpreter) exists so
far; "graph", "vm" and "aot" are reserved for the compiled executors. `build()` is added with
the graph executor.
"""
from .errors import ExecutorUnavailable, RelayError
from .ir.module import IRModule
from .runtime.device import device as _make_device

EXECUTOR_KINDS = ("debug", "graph", "vm", "aot")


def _bind_params(mod: IRModule, params) -> IRModule:
    """Bind `params` (name -> array) into main as constants; like TVM, only main is kept."""
    from .transform.bind_params import bind_params_by_name
    if "main" not in mod:
        raise RelayError("create_executor: params were given but the module has no 'main' function to bind them into")
    return IRModule.from_expr(bind_params_by_name(mod["main"], params))


def create_executor(kind="debug", mod=None, device=None, target="llvm", params=None):
    """An executor of `kind` for `mod` on `device` (tvm.relay.create_executor).

    kind: "debug" (reference interpreter), "graph", "vm" or "aot". mod defaults to an empty
    IRModule; device defaults to the target's device; params (name -> numpy array / NDArray)
    are bound into main as constants first, dropping the module's other functions, as TVM does.
    """
    if kind not in EXECUTOR_KINDS:
        raise RelayError(f"unknown execution strategy: {kind}; valid kinds are {list(EXECUTOR_KINDS)}")
    if mod is None:
        mod = IRModule()
    if not isinstance(mod, IRModule):
        raise RelayError(f"create_executor: mod must be an IRModule, got {type(mod).__name__}; "
                         f"wrap an expression with IRModule.from_expr(expr)")
    from .interpreter.evaluator import target_device_type
    expected = target_device_type(target)
    device = expected if device is None else _make_device(device)
    if device.device_type != expected.device_type:
        raise RelayError(f"create_executor: device {device} does not match target {target!r}, which runs on "
                         f"{expected.name}")
    if params is not None:
        mod = _bind_params(mod, params)
    if kind == "debug":
        from .interpreter.evaluator import Interpreter
        return Interpreter(mod, device, target)
    raise ExecutorUnavailable(f"the {kind!r} executor is not available yet in this version of relay_backend; "
                     f"use kind=\"debug\" (the reference interpreter) for now")


__all__ = ["create_executor", "EXECUTOR_KINDS"]
