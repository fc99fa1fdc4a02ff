"""autotvm.measure: building and timing configs (tvm.autotvm.measure).

LocalBuilder / LocalRunner measure on this machine in worker processes; RayBuilder / RayRunner
(optional extra `ray`) fan the same jobs out over a Ray cluster.
"""
from .jobs import BuildResult
from .local import LocalBuilder, LocalRunner
from .measure import (Builder, MeasureErrorNo, MeasureInput, MeasureResult, Runner, create_measure_batch,
                      measure_option)

_RAY = {"RayBuilder", "RayRunner"}


def __getattr__(name):
    if name in _RAY:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.ray_runner"), name)
    raise AttributeError(f"module 'relay_backend.autotvm.measure' has no attribute {name!r}")
