"""Making an implementation tunable: register_topi_compute / register_topi_schedule, and the
task collection that extract_from_program runs through (TaskExtractEnv).

    @register_topi_compute("dense_pack.x86")
    def dense_pack(cfg, attrs, inputs, out_type):          # defines knobs, builds te tensors
        ...
    @register_topi_schedule("dense_pack.x86")
    def schedule_dense_pack(cfg, attrs, outs, target):     # reads the same knobs
        ...
    strategy.add_implementation(dense_pack, schedule_dense_pack, "dense_pack.x86", 15)

The compute wrapper takes the implementation's arguments without `cfg`, makes the workload
(task name + serialized arguments), asks the dispatch context for the config, runs the compute
and stores the workload and that config in the output op's attrs. The schedule wrapper finds
them again among the ops feeding the outputs it is given (the whole fused function: a bias add
and relu after the dense still find the dense's workload) and schedules with that config.
A schedule written TVM's way, `f(cfg, outs)`, is wrapped as `wrapper(outs)`.
"""
import functools
import inspect

from ...docstrings import shared_parameters
from ...errors import TuningError
from ...target import Target
from ... import te
from .dispatcher import current_fused_digest, fused_workload, query_config
from .task import (TEMPLATE_DECORATOR_PARAMETERS, is_static_workload, register_task_compute, register_task_schedule, serialize_args,
                   workload_config)


class TaskExtractEnv:
    """While `tracing`, every tunable compute call adds (task name, serialized args) here."""

    current = None

    def __init__(self, allow_duplicate=False):
        self.allow_duplicate = allow_duplicate
        self.task_collection = []
        self.wanted_relay_ops = None
        self.tracing = False
        self.current_function = None     # (JSON text, calls) of the primitive function being lowered
        self.per_function = False        # one task per (workload, fused function)
        self.functions = {}              # task key -> {JSON text: calls} of the functions it is in

    def __enter__(self):
        self.task_collection = []
        self.tracing = True
        return self

    def __exit__(self, *exc):
        self.tracing = False

    def reset(self, wanted_relay_ops=None, per_function=False):
        self.task_collection = []
        self.wanted_relay_ops = wanted_relay_ops
        self.functions = {}
        self.current_function = None
        self.per_function = per_function

    def add_task(self, task_name, args, fused_digest=None):
        """Collect task (`task_name`, `args`); with `per_function` and a `fused_digest`, the
        task of that fused function (its workload ends with the function's digest)."""
        key = (task_name, serialize_args(args))
        if self.per_function and fused_digest is not None:
            key = (task_name, fused_workload(key[1], fused_digest))
        if not is_static_workload(key[1]):
            return          # a symbolic shape cannot be measured: the build uses the fallback
        if self.allow_duplicate or key not in self.task_collection:
            self.task_collection.append(key)
        if self.current_function is not None:
            text, calls = self.current_function
            seen = self.functions.setdefault(key, {})
            seen[text] = seen.get(text, 0) + calls

    def functions_of(self, task_name, args) -> tuple:
        """((JSON text, calls), ...) of the primitive functions task (`task_name`, serialized
        `args`) was found in."""
        return tuple(self.functions.get((task_name, tuple(args)), {}).items())

    def get_tasks(self) -> list:
        return list(self.task_collection)

    @staticmethod
    def get(allow_duplicate=False) -> "TaskExtractEnv":
        """The process's one environment (created on first use)."""
        if TaskExtractEnv.current is None:
            TaskExtractEnv.current = TaskExtractEnv(allow_duplicate)
        else:
            TaskExtractEnv.current.allow_duplicate = allow_duplicate
        return TaskExtractEnv.current


@shared_parameters({**TEMPLATE_DECORATOR_PARAMETERS, "workload_args": (
    "callable, optional", "args -> the args that name the workload (and the task extraction "
    "collects), when they must not depend on a choice the config itself makes: a channel-blocked "
    "convolution is named by its default blocking, whichever blocks the config picked. Defaults to "
    "None (the args themselves).")})
def register_topi_compute(task_name, func=None, workload_args=None):
    """Decorate compute `f(cfg, *args)` as the compute of tunable task `task_name`; the result
    takes `*args` (see the module doc). A compute may store its own "autotvm_config" on its
    outputs (e.g. the fallback, when the queried config does not fit the args it got): the
    schedule then uses that one.

    Returns
    -------
    decorated : callable
        The wrapper, or a decorator making it.
    """
    def decorate(topi_compute):
        @functools.wraps(topi_compute)
        def wrapper(*args, **kwargs):
            named = args if workload_args is None or kwargs else tuple(workload_args(args))
            workload, cfg = workload_config(task_name, named, kwargs)
            digest = current_fused_digest()
            if digest is not None:                 # a config recorded for this fused function wins
                specific = query_config(Target.current(allow_none=True), fused_workload(workload, digest))
                if not specific.is_fallback:
                    workload, cfg = fused_workload(workload, digest), specific
            env = TaskExtractEnv.current
            if env is not None and env.tracing:
                env.add_task(task_name, named, digest)
            out = topi_compute(cfg, *args)
            for t in (out if isinstance(out, (list, tuple)) else [out]):
                t.op.attrs["workload"] = workload
                t.op.attrs.setdefault("autotvm_config", cfg)
            return out
        wrapper.autotvm_task_name = task_name
        wrapper.workload_args = workload_args
        register_task_compute(task_name, wrapper)
        return wrapper
    return decorate(func) if func is not None else decorate


@shared_parameters(TEMPLATE_DECORATOR_PARAMETERS)
def register_topi_schedule(task_name, func=None):
    """Decorate schedule `f(cfg, attrs, outs, target)` (or TVM's `f(cfg, outs)`) as the schedule
    of tunable task `task_name`; the result takes the arguments without `cfg`. It schedules with
    the config its compute was given (kept on the op with the workload), so compute and
    schedule always agree, whatever the current target.

    Returns
    -------
    decorated : callable
        The wrapper, or a decorator making it.
    """
    def decorate(topi_schedule):
        tvm_style = len(inspect.signature(topi_schedule).parameters) == 2

        def config_of(outs):
            op = find_workload_op(outs, task_name)
            if op is None:
                raise TuningError(f"schedule {task_name}: no op among the outputs carries a "
                                  f"{task_name} workload; its compute must be registered with "
                                  f"register_topi_compute({task_name!r})")
            cfg = op.attrs.get("autotvm_config")
            return cfg if cfg is not None else query_config(Target.current(allow_none=True), op.attrs["workload"])

        if tvm_style:
            @functools.wraps(topi_schedule)
            def wrapper(outs):
                return topi_schedule(config_of(outs), outs)
        else:
            @functools.wraps(topi_schedule)
            def wrapper(attrs, outs, target):
                return topi_schedule(config_of(outs), attrs, outs, target)
        wrapper.autotvm_task_name = task_name
        register_task_schedule(task_name, wrapper)
        return wrapper
    return decorate(func) if func is not None else decorate


def find_workload_op(outs, task_name=None):
    """The op feeding `outs` (inputs searched first) that carries a workload, or None."""
    outs = [outs] if isinstance(outs, te.Tensor) else list(outs)
    seen = set()
    stack = [(t.op, False) for t in reversed(outs)]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            workload = op.attrs.get("workload") if isinstance(op, te.ComputeOp) else None
            if workload is not None and (task_name is None or workload[0] == task_name):
                return op
            continue
        if id(op) in seen:
            continue
        seen.add(id(op))
        stack.append((op, True))
        stack.extend((t.op, False) for t in reversed(op.input_tensors()))
    return None


def get_workload(outs, task_name=None):
    """The workload attached to an op feeding `outs`, or None (not a tunable implementation)."""
    op = find_workload_op(outs, task_name)
    return None if op is None else op.attrs["workload"]
