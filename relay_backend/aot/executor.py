"""create_executor("aot"): build main ahead of time once per evaluate, then run it per call.

Returns an NDArray for a tensor result and a runtime tuple for a tuple result, as the debug
interpreter does, so the two compare directly. Argument flattening and output regrouping are
the CompiledExecutor base's, shared with the graph executor.
"""
from ..interpreter.executor import CompiledExecutor


class AotExecutor(CompiledExecutor):
    """The executor behind create_executor(kind="aot")."""

    executor_name = "AOT"

    def __init__(self, mod, device, target, build):
        super().__init__(mod, device, target)
        self.build = build          # build_module.build, passed down (it is a level above)

    def _build(self, mod):
        return self.build(mod, target=self.target, executor="aot")
