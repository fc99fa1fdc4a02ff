"""build_module: the one place that knows every executor (tvm.relay.build_module).

`create_executor(kind, mod, device, target, params)` returns an Executor whose
`evaluate(expr=None)` gives a callable: kind="debug" is the reference interpreter, "graph" the
compiled graph executor, "vm" the bytecode VM, "aot" the ahead-of-time C program.
`build(mod, target, params, executor, runtime)` runs the optimisation pipeline
(transform/pipeline.py, shared with the VM and create_executor) and the graph or AOT codegen.
"""
import warnings

from .backend.config_registry import resolve_executor, resolve_runtime
from .errors import RelayError
from .ir.expr import Function
from .ir.module import IRModule
from .runtime.device import device as make_device
from .target import as_target
from .transform.bind_params import bind_params_to_main
from .transform.pipeline import default_pipeline

EXECUTOR_KINDS = ("debug", "graph", "vm", "aot")


def optimize(mod, target="llvm", params=None):
    """(optimized module, params) as build() sees it before codegen (tvm.relay.optimize)."""
    mod = _as_module(mod, params)
    return default_pipeline()(mod), {}


def _as_module(mod, params) -> IRModule:
    if isinstance(mod, Function):
        warnings.warn("Please use input parameter mod (tvm.IRModule) instead of deprecated parameter "
                      "mod (tvm.relay.function.Function)", DeprecationWarning, stacklevel=3)
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise RelayError(f"Type of input parameter mod must be tvm.IRModule, got {type(mod).__name__}")
    if "main" not in mod:
        raise RelayError("build: the module has no 'main' function")
    return bind_params_to_main(mod, params, "build")


def build(mod, target="llvm", target_host=None, executor="graph", runtime=None, workspace_memory_pools=None,
          constant_memory_pools=None, params=None, mod_name="default"):
    """Compile `mod`'s main for the graph or AOT executor (tvm.relay.build).

    Parameters
    ----------
    mod : IRModule (a Function is accepted with a DeprecationWarning), with a "main".
    target : a target.Target or its string: "llvm" (this CPU), "llvm -mcpu=... -mattr=...",
        "llvm -mtriple=aarch64-linux-gnu" (cross-compile), "c", "cuda".
    target_host : the host target of a device target (becomes target.host).
    executor : "graph" (default), "aot", or relay.backend.Executor(name, options).
    runtime : relay.backend.Runtime("cpp" | "crt", options); checked against the executor.
    params : {name: numpy array or NDArray}, bound into main as constants before optimising;
        GraphModule.set_input(**params) then ignores these names, as TVM does.
    mod_name : the prefix of generated names ("default": tvmgen_default_...).
    workspace_memory_pools, constant_memory_pools : not supported (must be None).

    Returns
    -------
    GraphExecutorFactoryModule (get_graph_json(), get_params() -> p0, p1, ..., get_lib(),
    ["default"](device) -> GraphModule, export_library(path)), or for executor="aot" an
    AotExecutorFactoryModule (["default"](device) -> AotModule, export_library(dir)).

    Example: ``GraphModule(relay.build(mod, "llvm", params=params)["default"](relay.cpu()))``.
    """
    target = as_target(target)
    if target_host is not None:
        target = target.with_host(target_host)
    executor = resolve_executor(executor)
    resolve_runtime(runtime, executor)
    if workspace_memory_pools is not None or constant_memory_pools is not None:
        raise RelayError("build: memory pools are not supported; the graph and AOT executors plan "
                         "one workspace each (omit workspace_memory_pools / constant_memory_pools)")
    opt_mod = default_pipeline(device_type=target.device_type)(_as_module(mod, params))
    if executor.name == "aot":  # one C program over a static workspace (aot/)
        from .aot.factory import aot_build
        factory = aot_build(opt_mod, target, mod_name)
    else:
        from .graph_executor.build import build_graph
        factory = build_graph(opt_mod, target, mod_name)
    factory.bound_param_names = frozenset(params or ())
    return factory


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
    target = as_target(target)
    expected = target_device_type(target)
    device = expected if device is None else make_device(device)
    if device.device_type != expected.device_type:
        raise RelayError(f"create_executor: device {device} does not match target {str(target)!r}, which runs on "
                         f"{expected.name}")
    mod = bind_params_to_main(mod, params, "create_executor")
    if kind == "debug":
        from .interpreter.evaluator import Interpreter
        return Interpreter(mod, device, target)
    if kind == "graph":
        from .graph_executor.executor import GraphExecutor
        return GraphExecutor(mod, device, target)
    if kind == "aot":
        from .aot.executor import AotExecutor
        return AotExecutor(mod, device, target)
    from .vm.executor import VMExecutor
    return VMExecutor(mod, device, target)


__all__ = ["create_executor", "build", "optimize", "EXECUTOR_KINDS"]
