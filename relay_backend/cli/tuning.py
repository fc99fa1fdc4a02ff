"""`tune`: the command line's driver of relay_backend.autotvm (tvmc's autotuner).

    relay-backend tune model.onnx -o log.json --trials 64      # TVM JSON records, one per measurement
    relay-backend compile model.onnx -o model.tar --tuning-records log.json   (records.py)

`tune` extracts the model's tuning tasks (one per tunable implementation and shape), measures up
to --trials configs of each with the chosen tuner in worker processes, and appends every
measurement to the log. A log that exists already is resumed: its measurements of these tasks
count toward --trials and are never measured again, so an interrupted run continues where it
stopped.
"""
import os

from ..autotvm.measure import LocalBuilder, LocalRunner, measure_option
from ..autotvm.record import load_from_file
from ..autotvm.task.relay_integration import extract_from_program
from ..autotvm.tuner import GATuner, GridSearchTuner, RandomTuner, XGBTuner, callback
from ..target import as_target
from ..transform import PassContext
from .compiling import import_onnx

# --tuner name -> (tuner class, its keyword arguments); tvmc's names
TUNERS = {
    "xgb": (XGBTuner, {}),
    "xgb_knob": (XGBTuner, {"feature_type": "knob"}),
    "xgb_rank": (XGBTuner, {"loss_type": "rank"}),
    "ga": (GATuner, {}),
    "random": (RandomTuner, {}),
    "gridsearch": (GridSearchTuner, {}),
}


def make_tuner(name: str, task):
    """The tuner `name` (a TUNERS key) for `task`; the xgb ones raise TuningError naming
    `pip install relay_backend[tune]` when xgboost is missing."""
    cls, kwargs = TUNERS[name]
    return cls(task, **kwargs)


def tune_model(model_path, log_path, target="llvm", input_shapes="", trials=1000, tuner="xgb",
               early_stopping=None, opt_level=3, n_parallel=None, number=4, repeat=3, min_repeat_ms=0,
               timeout=10, echo=print) -> dict:
    """Tune every task of the ONNX model into `log_path` (see the module doc); `echo` gets the
    lines to print. Returns {"tasks", "measured", "resumed", "records"}."""
    mod, params = import_onnx(model_path, input_shapes)
    target = as_target(target)
    with PassContext(opt_level=opt_level):
        tasks = extract_from_program(mod, params, target)
    previous = list(load_from_file(log_path)) if os.path.exists(log_path) else []
    with open(log_path, "a", encoding="utf-8"):
        pass                                       # the log exists (and is writable) from the start
    if not tasks:
        echo(f"no tunable operators in {os.path.basename(model_path)} for {target}: every kernel keeps "
             f"its default schedule; {log_path} holds no new records")
        return {"tasks": 0, "measured": 0, "resumed": 0, "records": len(previous)}
    builder = LocalBuilder(timeout=timeout, n_parallel=n_parallel)
    runner = LocalRunner(timeout=timeout, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
                         cooldown_interval=0.0)
    option = measure_option(builder, runner)
    log = callback.log_to_file(log_path)
    measured = resumed = 0
    try:
        for k, task in enumerate(tasks, 1):
            search = make_tuner(tuner, task)
            done = search.resume(previous)
            resumed += done
            n_trial = min(trials, len(task.config_space))
            prefix = f"[task {k}/{len(tasks)}] {task.name}"
            bar = callback.progress_bar(max(n_trial - done, 0), prefix=prefix)
            search.tune(n_trial=n_trial, measure_option=option, early_stopping=early_stopping,
                        callbacks=[bar, log])
            measured += search.n_measured - done
            echo(_task_summary(k, len(tasks), task, search, done))
    finally:
        builder.close()
        runner.close()
    return {"tasks": len(tasks), "measured": measured, "resumed": resumed,
            "records": len(previous) + measured}


def _tensor_shapes(args) -> list:
    """The shapes of the ("TENSOR", shape, dtype) entries anywhere in a task's arguments."""
    if isinstance(args, tuple) and len(args) == 3 and args[0] == "TENSOR":
        return [tuple(args[1])]
    if isinstance(args, (tuple, list)):
        return [shape for arg in args for shape in _tensor_shapes(arg)]
    return []


def _task_summary(k, count, task, search, resumed) -> str:
    shapes = " x ".join(str(shape) for shape in _tensor_shapes(task.args))
    line = (f"task {k}/{count} {task.name} {shapes}: {len(task.config_space)} configs, "
            f"{search.n_measured - resumed} measured")
    if resumed:
        line += f" (resumed {resumed} measurements)"
    if search.best_config is None:
        return line + ", no valid config found"
    return line + f", best {search.best_flops / 1e9:.2f} GFLOPS (config {search.best_config.index})"


__all__ = ["TUNERS", "make_tuner", "tune_model"]
