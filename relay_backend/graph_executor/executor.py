"""create_executor("graph"): build main once per evaluate, then run it per call.

Returns an NDArray for a tensor result and a runtime tuple (ADT, tag 0) for a tuple result, as
the debug interpreter does, so the two compare directly. Argument flattening and output
regrouping are the CompiledExecutor base's, shared with the AOT executor.
"""
from ..executor import CompiledExecutor
from ..transform.pipeline import default_pipeline
from .build import build_graph


class GraphExecutor(CompiledExecutor):
    """The executor behind create_executor(kind="graph") (tvm.relay.build_module.GraphExecutor)."""

    executor_name = "graph"

    def _build(self, mod):
        return build_graph(default_pipeline(target=self.target, device_type=self.device.device_type)(mod),
                           self.target)


__all__ = ["GraphExecutor"]
