"""build_module: the one place that knows every executor (tvm.relay.build_module).

`create_executor(kind, mod, device, target, params)` returns an Executor whose
`evaluate(expr=None)` gives a callable: kind="debug" is the reference interpreter, "graph" the
compiled graph executor; "vm" and "aot" are reserved for the other compiled executors.
`build(mod, target, params)` runs the optimizing pipeline and the graph executor codegen and
returns a GraphExecutorFactoryModule.
"""
import warnings

from .errors import RelayError
from .interpreter.executor import CompiledExecutor
from .ir.expr import Function
from .ir.module import IRModule
from .runtime.device import device as _make_device

EXECUTOR_KINDS = ("debug", "graph", "vm", "aot")
BUILD_EXECUTORS = ("graph", "aot")


def optimize_pipeline():
    """The passes build() runs, written out (each gated by the current PassContext's opt_level)."""
    from . import transform
    return transform.Sequential([
        transform.InferType(),
        transform.SimplifyInference(),
        transform.FoldConstant(),
        transform.FuseOps(),            # fuse_opt_level=-1: fuse at PassContext.opt_level
        transform.InferType(),
    ], name="build_pipeline")


def optimize(mod, target="llvm", params=None):
    """(optimized module, params) as build() sees it before codegen (tvm.relay.optimize)."""
    mod = _as_module(mod, params)
    return optimize_pipeline()(mod), {}


def _as_module(mod, params) -> IRModule:
    if isinstance(mod, Function):
        warnings.warn("Please use input parameter mod (tvm.IRModule) instead of deprecated parameter "
                      "mod (tvm.relay.function.Function)", DeprecationWarning, stacklevel=3)
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise RelayError(f"Type of input parameter mod must be tvm.IRModule, got {type(mod).__name__}")
    if "main" not in mod:
        raise RelayError("build: the module has no 'main' function")
    if params:
        from .transform.bind_params import bind_params_by_name
        mod = IRModule.from_expr(bind_params_by_name(mod["main"], params))
    return mod


def build(mod, target="llvm", params=None, executor="graph", mod_name="default", target_host=None,
          runtime=None):
    """Compile `mod`'s main for the graph executor (tvm.relay.build).

    params (name -> array) are bound into main as constants first; the result is a
    GraphExecutorFactoryModule: get_graph_json(), get_params() (p0, p1, ...), get_lib(),
    ["default"](device) -> GraphModule, export_library(path).
    """
    executor_name = getattr(executor, "name", executor)
    if executor_name not in BUILD_EXECUTORS:
        raise RelayError(f"build: unknown executor {executor_name!r}; valid executors are {list(BUILD_EXECUTORS)}")
    if executor_name == "aot":  # aot branch: one C program over a static workspace (aot/)
        from .aot.factory import aot_build
        return aot_build(optimize_pipeline()(_as_module(mod, params)), target, mod_name)
    from .graph_executor.codegen import GraphExecutorCodegen
    from .graph_executor.factory import GraphExecutorFactoryModule
    mod = _as_module(mod, params)
    opt_mod = optimize_pipeline()(mod)
    codegen = GraphExecutorCodegen(opt_mod, target, mod_name=mod_name)
    graph_json, lib, graph_params = codegen.codegen(opt_mod, opt_mod["main"])
    return GraphExecutorFactoryModule(opt_mod, target, graph_json, lib, mod_name, graph_params,
                                      codegen_result=codegen.result)


class GraphExecutor(CompiledExecutor):
    """create_executor("graph"): build main once per evaluate, then run it per call.

    Returns an NDArray for a tensor result and a runtime tuple (ADT, tag 0) for a tuple result,
    as the debug interpreter does, so the two can be compared directly.
    """

    executor_name = "graph"

    def _build(self, mod):
        return build(mod, target=self.target)


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
    if kind == "graph":
        return GraphExecutor(mod, device, target)
    if kind == "aot":
        from .aot.executor import AotExecutor
        return AotExecutor(mod, device, target, build)
    from .vm.executor import VMExecutor
    return VMExecutor(mod, device, target)


__all__ = ["create_executor", "build", "optimize", "EXECUTOR_KINDS"]
