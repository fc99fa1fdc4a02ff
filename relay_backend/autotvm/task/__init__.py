"""autotvm.task: config spaces, tasks, templates and dispatch contexts (tvm.autotvm.task).

Everything here is what schedules and implementation selection read (level 4 of the package
layering); `extract_from_program`, which compiles a Relay program to find its tasks, is loaded
on first use from relay_integration.py.
"""
from .config_space import ConfigEntity, ConfigSpace, FallbackConfigEntity
from .dispatcher import (ApplyConfig, ApplyFixedConfig, ApplyHistoryBest, DispatchContext,
                         FallbackContext, clear_fallback_cache)
from .space import (AnnotateEntity, AnnotateSpace, InstantiationError, OtherOptionEntity,
                    OtherOptionSpace, ReorderEntity, ReorderSpace, SplitEntity, SplitSpace, get_factors,
                    get_pow2s)
from .task import (TASK_TABLE, Task, args_to_workload, compute_flop, create, deserialize_args,
                   get_config, serialize_args, template)
from .topi_integration import TaskExtractEnv, get_workload, register_topi_compute, register_topi_schedule

_LAZY = {"extract_from_program", "extract_from_multiple_program"}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.relay_integration"), name)
    raise AttributeError(f"module 'relay_backend.autotvm.task' has no attribute {name!r}")
