"""build_module: the one place that knows every executor (tvm.relay.build_module).

`create_executor(kind, mod, device, target, params)` returns an Executor whose
`evaluate(expr=None)` gives a callable: kind="debug" is the reference interpreter, "graph" the
compiled graph executor, "vm" the bytecode VM, "aot" the ahead-of-time C program.
`build(mod, target, params, executor, runtime)` runs the optimisation pipeline
(transform/pipeline.py, shared with the VM and create_executor) and the graph or AOT codegen.
"""
import warnings

from .backend.config_registry import resolve_executor, resolve_runtime
from .codegen.llvm import compiling_ahead
from .errors import RelayError
from .ir.expr import Function
from .ir.module import IRModule
from .runtime.device import device as make_device
from .target import as_target
from .transform.bind_params import bind_params_to_main
from .transform.pipeline import default_pipeline

EXECUTOR_KINDS = ("debug", "graph", "vm", "aot")


def optimize(mod, target="llvm", params=None):
    """The module as relay.build sees it just before code generation (tvm.relay.optimize):
    parameters bound and the default optimisation pipeline applied.

    Parameters
    ----------
    mod : IRModule
        The module to optimise; it must have a "main" function.
    target : str or Target, optional
        The target (accepted for TVM's signature; the pipeline does not depend on it).
        Defaults to "llvm".
    params : dict of str to numpy.ndarray or NDArray, optional
        Values for parameters of main, bound into it as constants first. Defaults to None.

    Returns
    -------
    result : tuple
        (the optimised IRModule, {}) - the params are part of the module now.
    """
    mod = _as_module(mod, params)
    return default_pipeline(target=target)(mod), {}


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
    """Compile the main function of a module for the graph or AOT executor (tvm.relay.build).

    The module goes through the default optimisation pipeline (transform.default_pipeline),
    is fused into kernels, and each kernel is compiled with LLVM (or CUDA); the result is a
    factory module from which a runnable module is made on a device:

        factory = relay.build(mod, target="llvm", params=params)
        module = relay.graph_executor.GraphModule(factory["default"](relay.cpu()))
        module.set_input("data", data)
        module.run()
        out = module.get_output(0).numpy()

    Parameters
    ----------
    mod : IRModule
        The module to compile; it must have a "main" function. A bare Function is accepted
        too, with a DeprecationWarning, as in TVM.
    target : str or Target, optional
        What to compile for: "llvm" (the default: this CPU), "llvm -mcpu=... -mattr=...",
        "llvm -mtriple=aarch64-linux-gnu" (cross-compiling), "c", or "cuda".
    target_host : str or Target, optional
        The host target of a device target such as "cuda" (it becomes target.host).
        Defaults to None.
    executor : str or backend.Executor, optional
        "graph" (the default) for a graph-executor module, "aot" for one ahead-of-time C
        program, or relay.backend.Executor(name, options).
    runtime : backend.Runtime, optional
        relay.backend.Runtime("cpp") or Runtime("crt"), checked against the executor.
        Defaults to None (the executor's usual runtime).
    workspace_memory_pools : None
        Not supported: the graph and AOT executors plan one workspace each. Must be None.
    constant_memory_pools : None
        Not supported. Must be None.
    params : dict of str to numpy.ndarray or NDArray, optional
        Values for parameters of main, bound into it as constants before optimising (so they
        can be folded); GraphModule.set_input then ignores these names, as TVM does.
        Defaults to None.
    mod_name : str, optional
        The prefix of the generated symbol names (tvmgen_<mod_name>_...). Defaults to
        "default".

    Returns
    -------
    factory : GraphExecutorFactoryModule or AotExecutorFactoryModule
        For executor="graph": get_graph_json(), get_params(), get_lib(),
        factory["default"](device) -> a module for GraphModule, export_library(path).
        For executor="aot": factory["default"](device) -> an AotModule, export_library(dir).
    """
    target = as_target(target)
    if target_host is not None:
        target = target.with_host(target_host)
    executor = resolve_executor(executor)
    resolve_runtime(runtime, executor)
    if workspace_memory_pools is not None or constant_memory_pools is not None:
        raise RelayError("build: memory pools are not supported; the graph and AOT executors plan "
                         "one workspace each (omit workspace_memory_pools / constant_memory_pools)")
    opt_mod = default_pipeline(target=target)(_as_module(mod, params))
    # kernels compile in the pool while the rest of main is still being lowered
    with compiling_ahead(target):
        if executor.name == "aot":  # one C program over a static workspace (aot/)
            from .aot.factory import aot_build
            factory = aot_build(opt_mod, target, mod_name)
        else:
            from .graph_executor.build import build_graph
            factory = build_graph(opt_mod, target, mod_name)
    factory.bound_param_names = frozenset(params or ())
    return factory


def create_executor(kind="debug", mod=None, device=None, target="llvm", params=None):
    """An executor that evaluates a module's functions (tvm.relay.create_executor).

        run = relay.create_executor("graph", mod=mod, target="llvm").evaluate()
        out = run(data)

    Parameters
    ----------
    kind : str, optional
        Which executor: "debug" (the default: the reference interpreter), "graph", "vm"
        (needed for control flow, ADTs and shapes known only at run time) or "aot".
    mod : IRModule, optional
        The module whose functions are run; None (the default) is an empty module (useful
        with evaluate(expr)).
    device : Device or str, optional
        Where to run; None (the default) is the target's device. It must match the target.
    target : str or Target, optional
        What to compile for. Defaults to "llvm".
    params : dict of str to numpy.ndarray or NDArray, optional
        Values bound into main as constants first (the module's other functions are then
        dropped, as in TVM). Defaults to None.

    Returns
    -------
    executor : Executor
        Its evaluate(expr=None) returns a Python function that runs main (or `expr`) on
        numpy arrays or NDArrays.
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
