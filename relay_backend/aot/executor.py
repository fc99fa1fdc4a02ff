"""create_executor("aot"): build main ahead of time once per evaluate, then run it per call.

Returns an NDArray for a tensor result and a runtime tuple for a tuple result, as the debug
interpreter does, so the two compare directly. Argument flattening and output regrouping are
the CompiledExecutor base's, shared with the graph executor.
"""
from ..executor import CompiledExecutor
from ..transform.pipeline import default_pipeline
from .factory import aot_build


class AotExecutor(CompiledExecutor):
    """The "aot" kind of relay.create_executor: evaluate() builds the module ahead of time once
    and returns a function that runs main.

    Parameters
    ----------
    mod : IRModule
        The module to run.
    device : Device
        Where to run (the CPU).
    target : str or Target
        What the program is compiled for.
    """

    executor_name = "AOT"

    def _build(self, mod):
        return aot_build(default_pipeline(target=self.target, device_type=self.device.device_type)(mod),
                         self.target)


__all__ = ["AotExecutor"]
