"""AutoTVM-style tuning (tvm.autotvm): schedule templates declare a space of configs, a tuner
measures configs on this machine, records keep the best, and builds apply them.

    tasks = autotvm.task.extract_from_program(mod, params, target="llvm")
    option = autotvm.measure_option(builder=autotvm.LocalBuilder(), runner=autotvm.LocalRunner())
    for task in tasks:
        tuner = autotvm.tuner.XGBTuner(task)          # or RandomTuner, GridSearchTuner, GATuner
        tuner.tune(n_trial=64, measure_option=option, early_stopping=32,
                   callbacks=[autotvm.callback.progress_bar(64), autotvm.callback.log_to_file("t.log")])
    with autotvm.apply_history_best("t.log"):
        lib = relay_backend.build(mod, target="llvm", params=params)

The spaces, tasks, records and dispatch contexts are read by implementation selection (they
sit below te_compiler); the measurement (measure/), the tuners (tuner/) and task extraction
compile and run code, so they load on first use.
"""
from . import env, record, task, tophub
from .env import GLOBAL_SCOPE, AutotvmGlobalScope
from .record import MeasureErrorNo, MeasureInput, MeasureResult
from .task import (ApplyConfig, ApplyFixedConfig, ApplyHistoryBest, DispatchContext, FallbackContext,
                   get_config, register_topi_compute, register_topi_schedule, template)

apply_history_best = ApplyHistoryBest

_LAZY_MODULES = {"measure", "tuner", "feature"}
_LAZY_NAMES = {"LocalBuilder": "measure", "LocalRunner": "measure", "RayRunner": "measure",
               "RayBuilder": "measure", "measure_option": "measure", "create_measure_batch": "measure",
               "callback": "tuner"}


def __getattr__(name):
    # importlib, not `from . import x`: that form asks this very __getattr__ first, and recurses
    import importlib
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY_NAMES[name]}"), name)
    raise AttributeError(f"module 'relay_backend.autotvm' has no attribute {name!r}")
