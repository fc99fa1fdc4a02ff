"""How configs are measured: a Builder compiles a batch, a Runner times it (autotvm.measure).

    option = measure_option(builder=LocalBuilder(), runner=LocalRunner(number=4, repeat=3))
    measure_batch = create_measure_batch(task, option)
    results = measure_batch([MeasureInput(target, task, config), ...])   # MeasureResults, in order

A builder returns, per input, a jobs.BuildResult or (when the build failed) the MeasureResult
recording why; a runner passes those through and times the rest.
"""
import multiprocessing
import time

from ...errors import TuningError
from ..record import MeasureErrorNo, MeasureInput, MeasureResult  # noqa: F401  (re-exported)


class Builder:
    """Compiles configs; `n_parallel` builds run at a time, each at most `timeout` seconds."""

    def __init__(self, timeout=10, n_parallel=None, build_kwargs=None):
        if timeout is not None and timeout <= 0:
            raise TuningError(f"builder timeout must be > 0 seconds, got {timeout}")
        self.timeout = timeout
        self.n_parallel = n_parallel or multiprocessing.cpu_count()
        self.user_build_kwargs = dict(build_kwargs or {})
        self.build_kwargs = {}
        self.task = None

    def set_task(self, task, build_kwargs=None):
        """Prepare for a new task (build_kwargs from the runner; the user's override them)."""
        self.task = task
        self.build_kwargs = {**(build_kwargs or {}), **self.user_build_kwargs}

    def build(self, measure_inputs) -> list:
        raise NotImplementedError


class Runner:
    """Times built configs, each at most `timeout` seconds."""

    def __init__(self, timeout=5, n_parallel=None):
        if timeout is not None and timeout <= 0:
            raise TuningError(f"runner timeout must be > 0 seconds, got {timeout}")
        self.timeout = timeout
        self.n_parallel = n_parallel or multiprocessing.cpu_count()
        self.task = None

    def set_task(self, task):
        self.task = task

    def get_build_kwargs(self) -> dict:
        """Device facts the builder should check configs against (none for CPUs)."""
        return {}

    def run(self, measure_inputs, build_results) -> list:
        raise NotImplementedError


def error_result(error_no, traceback_text, message, seconds) -> MeasureResult:
    """The MeasureResult of a failed measurement: costs = (traceback, message)."""
    return MeasureResult((traceback_text, message), int(error_no), float(seconds), time.time())


def from_build(result):
    """A BuildResult without error as it is; a failed one as the MeasureResult recording it."""
    if result.error is None:
        return result
    kind, traceback_text, message = result.error
    error_no = MeasureErrorNo.INSTANTIATION_ERROR if kind == "instantiation" else MeasureErrorNo.COMPILE_HOST
    return error_result(error_no, traceback_text, message, result.time_cost)


def measure_option(builder, runner) -> dict:
    """{"builder", "runner"} for Tuner.tune; "local" names LocalBuilder() / LocalRunner()."""
    from .local import LocalBuilder, LocalRunner
    if isinstance(builder, str):
        if builder != "local":
            raise TuningError(f"measure_option: unknown builder {builder!r}; use 'local' or a Builder")
        builder = LocalBuilder()
    if isinstance(runner, str):
        if runner != "local":
            raise TuningError(f"measure_option: unknown runner {runner!r}; use 'local' or a Runner")
        runner = LocalRunner()
    if not isinstance(builder, Builder) or not isinstance(runner, Runner):
        raise TuningError(f"measure_option: expected a Builder and a Runner, got {type(builder).__name__} "
                          f"and {type(runner).__name__}")
    return {"builder": builder, "runner": runner}


def create_measure_batch(task, option):
    """A function measuring a list of MeasureInputs of `task` with `option`'s builder and runner."""
    builder, runner = option["builder"], option["runner"]
    attached = runner.set_task(task)
    builder.set_task(task, runner.get_build_kwargs())

    def measure_batch(measure_inputs):
        return runner.run(measure_inputs, builder.build(measure_inputs))

    measure_batch.n_parallel = builder.n_parallel
    measure_batch.attach_objects = attached
    return measure_batch
