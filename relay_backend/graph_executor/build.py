"""Building for the graph executor: an optimized module -> GraphExecutorFactoryModule.

`build_graph(opt_mod, target, mod_name)` runs the graph codegen (graph JSON, one kernel library,
the constants as params) over a module the optimisation pipeline has already run on. build()
and create_executor("graph") both come here.
"""
from ..progress import build_progress
from .codegen import GraphExecutorCodegen
from .factory import GraphExecutorFactoryModule


def build_graph(opt_mod, target="llvm", mod_name: str = "default") -> GraphExecutorFactoryModule:
    """The graph executor's factory for an optimized (fused, typed) module's main."""
    codegen = GraphExecutorCodegen(opt_mod, target, mod_name=mod_name)
    with build_progress("graph build"):
        graph_json, lib, graph_params = codegen.codegen(opt_mod, opt_mod["main"])
    return GraphExecutorFactoryModule(opt_mod, target, graph_json, lib, mod_name, graph_params,
                                      codegen_result=codegen.result)


__all__ = ["build_graph"]
