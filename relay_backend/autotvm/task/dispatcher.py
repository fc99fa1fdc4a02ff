"""Dispatch contexts: which config a tunable template gets for a (target, workload).

Contexts nest with `with`; a query goes to the innermost and falls through to the outer ones:

    with autotvm.apply_history_best("tune.log"):      # best measured config per workload
        lib = relay_backend.build(mod, target)        # selection and schedules read it

    FallbackContext (the root)   a FallbackConfigEntity: the template's hand-picked default
    ApplyConfig(cfg)             one fixed config for every query (tuning a single task)
    ApplyHistoryBest(records)    the lowest-cost error-free record per workload, matched by the
                                 target's model first, then by each of its keys (x86, cpu, ...)
    ApplyFixedConfig(tasks, names)  the first config of the named tasks' spaces

`query_config(target, workload)` is how templates ask; it also reports each answer to the
`recording_queries()` blocks around it, so the kernel cache can key a kernel on the configs it
was built with and re-check them on the next lookup.
"""
import contextlib
import os
import threading
from io import TextIOBase

import numpy as np

from ...diagnostics import get_logger
from ...docstrings import shared_parameters
from ...errors import TuningError
from ...ir.structural import structural_digest
from ..env import recording
from .config_space import FallbackConfigEntity

logger = get_logger("autotvm")     # relay_backend.autotvm (TVM: "autotvm")
# the parameters of query / update (shared_parameters completes their docstrings)
QUERY_PARAMETERS = {
    "target": ("Target or None", "The target the config is for (None: the current one)."),
    "workload": ("tuple", "The workload: (task name, *serialized arguments)."),
    "cfg": ("ConfigEntity", "The config to answer from now on."),
}


class DispatchContext:
    """Base of the dispatch contexts; `DispatchContext.current` is the innermost one."""

    current = None
    warning_messages = set()

    def __init__(self):
        self._old_ctx = DispatchContext.current

    @shared_parameters(QUERY_PARAMETERS, ("cfg", "ConfigEntity", "The config."))
    def query(self, target, workload):
        """The config for `workload` on `target`: this context's, else an outer one's."""
        cfg = self._query_inside(target, workload)
        if cfg is None:
            cfg = self._old_ctx.query(target, workload)
        return cfg

    @shared_parameters(QUERY_PARAMETERS)
    def update(self, target, workload, cfg):
        """Make this context answer `cfg` for (target, workload) from now on."""
        raise NotImplementedError

    def _query_inside(self, target, workload):
        raise NotImplementedError

    def __enter__(self):
        self._old_ctx = DispatchContext.current
        DispatchContext.current = self
        return self

    def __exit__(self, *exc):
        DispatchContext.current = self._old_ctx


class ApplyConfig(DispatchContext):
    """Answer every query with one config (what a task's instantiate uses).

    Parameters
    ----------
    config : ConfigEntity
        The config every query gets.
    """

    def __init__(self, config):
        super().__init__()
        self._config = config
        self.workload = None

    def _query_inside(self, target, workload):
        self.workload = workload
        return self._config

    def update(self, target, workload, cfg):
        self.workload = workload
        self._config = cfg


class ApplyFixedConfig(DispatchContext):
    """Answer with config 0 of the task named by the workload; tasks in `schedule_names` get a
    tiny cost and the others a huge one, so selection prefers the named implementations.

    Parameters
    ----------
    tasks : list of Task
        The tasks whose config 0 is answered.
    schedule_names : str or list of str
        The task names selection should prefer.
    """

    def __init__(self, tasks, schedule_names):
        super().__init__()
        self._names = [schedule_names] if isinstance(schedule_names, str) else list(schedule_names)
        self._tasks = list(tasks)
        self.workload = None

    def _query_inside(self, target, workload):
        self.workload = workload
        for task in self._tasks:
            if task.name == workload[0]:
                config = task.config_space.get(0)
                config.cost = 1e-6 if workload[0] in self._names else 1e5
                return config
        raise TuningError(f"ApplyFixedConfig: workload {workload} is not one of the tasks "
                          f"{[t.name for t in self._tasks]}")

    def update(self, target, workload, cfg):
        self.workload = workload


def _is_records_source(obj) -> bool:
    return isinstance(obj, (str, bytes, os.PathLike, TextIOBase))


class ApplyHistoryBest(DispatchContext):
    """The best measured config per workload from tuning records: a log path, an open log,
    an iterable of (MeasureInput, MeasureResult), or a list mixing those (merged).

    Parameters
    ----------
    records : str or file or iterable, optional
        The records (see above). Defaults to None (none yet: add them with load).
    """

    def __init__(self, records=None):
        super().__init__()
        self.best_by_targetkey = {}
        self.best_by_model = {}
        self._best_user_defined = {}
        if records:
            self.load(records)

    def load(self, records) -> None:
        """Add records; records with an error are skipped.

        Parameters
        ----------
        records : str or file or iterable
            A log path, an open log, an iterable of (MeasureInput, MeasureResult), or a list
            mixing those.
        """
        for inp, res in _flatten_records(records):
            if res.error_no != 0:
                continue
            cost = float(np.mean(res.costs))
            for key in [(k, inp.task.workload) for k in inp.target.keys]:
                self._keep_better(self.best_by_targetkey, key, inp, res, cost)
            if inp.target.model != "unknown":
                self._keep_better(self.best_by_model, (inp.target.model, inp.task.workload), inp, res, cost)

    @staticmethod
    def _keep_better(table, key, inp, res, cost):
        old = table.get(key)
        if old is None or float(np.mean(old[1].costs)) > cost:
            inp.config.cost = cost
            table[key] = (inp, res)

    def _query_inside(self, target, workload):
        if target is None:
            raise TuningError("ApplyHistoryBest needs a target to find a record: compile with a "
                              "target, or query inside `with relay_backend.target.Target(...)`")
        key = (target.model, workload)
        if key in self._best_user_defined:
            return self._best_user_defined[key]
        if key in self.best_by_model:
            return self.best_by_model[key][0].config
        for k in target.keys:
            key = (k, workload)
            if key in self._best_user_defined:
                return self._best_user_defined[key]
            if key in self.best_by_targetkey:
                return self.best_by_targetkey[key][0].config
        return None

    def update(self, target, workload, cfg):
        cfg.cost = 0
        self._best_user_defined[(target.model, workload)] = cfg
        for k in target.keys:
            self._best_user_defined[(k, workload)] = cfg

    def __len__(self) -> int:
        return len({key[1] for key in self.best_by_targetkey})


def _flatten_records(records):
    from ..record import MeasureInput, load_from_buffer, load_from_file
    if _is_records_source(records):
        yield from (load_from_buffer(records) if isinstance(records, TextIOBase) else load_from_file(records))
        return
    for item in records:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], MeasureInput):
            yield item
        elif _is_records_source(item) or isinstance(item, (list, tuple)):
            yield from _flatten_records(item)
        else:
            raise TuningError(f"ApplyHistoryBest: records are log paths, open logs or (MeasureInput, "
                              f"MeasureResult) pairs, got a {type(item).__name__}")


class FallbackContext(DispatchContext):
    """The root context: a FallbackConfigEntity per (target, workload), memoized so a template's
    compute and schedule see the same defaults."""

    def __init__(self):
        super().__init__()
        self.memory = {}

    def _query_inside(self, target, workload):
        key = (str(target), workload)
        cfg = self.memory.get(key)
        if cfg is None:
            logger.debug("no config for target=%s, workload=%s: using the template's default", target, workload)
            cfg = self.memory[key] = FallbackConfigEntity()
        return cfg

    @shared_parameters(QUERY_PARAMETERS)
    def clear_cache(self, target, workload):
        """Forget the fallback config made for (target, workload), so the next query makes it anew."""
        self.memory.pop((str(target), workload), None)

    def update(self, target, workload, cfg):
        self.memory[(str(target), workload)] = cfg


DispatchContext.current = FallbackContext()


def clear_fallback_cache(target, workload):
    """Forget the fallback config of (target, workload) in the root context."""
    context = DispatchContext.current
    while not isinstance(context, FallbackContext):
        context = context._old_ctx
    context.clear_cache(target, workload)


# --- recording what templates asked ----------------------------------------------------------
_RECORDERS = threading.local()


def query_config(target, workload):
    """DispatchContext.current.query(target, workload), reported to the active recorders."""
    cfg = DispatchContext.current.query(target, workload)
    for log in getattr(_RECORDERS, "stack", ()):
        log.append((workload, config_fingerprint(cfg)))
    return cfg


def config_fingerprint(cfg) -> str:
    """Text naming a config: "fallback", or its knobs' JSON, with its measured cost (selection
    compares the costs of the tuned implementations of one op)."""
    fingerprint = getattr(cfg, "fingerprint", None)
    text = fingerprint() if fingerprint is not None else repr(cfg)
    return text if getattr(cfg, "cost", None) is None else f"{text}|cost={cfg.cost!r}"


FUSED_MARK = "FUSED"              # a workload's last item (FUSED_MARK, digest): one fused function's
_FUSED = threading.local()        # .stack: the primitive functions being lowered (innermost last)


@contextlib.contextmanager
def fused_function_scope(func):
    """While the block runs, the tunable computes called are those of primitive function `func`
    (te_compiler's lowering opens it): a template asks first for a config recorded for this very
    function (its workload + (FUSED_MARK, structural digest of `func`)), then for the op's own."""
    stack = getattr(_FUSED, "stack", None)
    if stack is None:
        stack = _FUSED.stack = []
    stack.append([func, None])
    try:
        yield
    finally:
        stack.pop()


def current_fused_digest():
    """The structural digest of the primitive function being lowered (None outside one)."""
    stack = getattr(_FUSED, "stack", None)
    if not stack:
        return None
    entry = stack[-1]
    if entry[1] is None:
        entry[1] = structural_digest(entry[0])
    return entry[1]


def fused_workload(workload, digest) -> tuple:
    """The workload of `workload`'s op inside the fused function of `digest`."""
    return tuple(workload) + ((FUSED_MARK, digest),)


def split_fused(args) -> tuple:
    """(args without a trailing (FUSED_MARK, digest), that digest or None)."""
    args = tuple(args)
    last = args[-1] if args else None
    if isinstance(last, (tuple, list)) and len(last) == 2 and last[0] == FUSED_MARK:
        return args[:-1], last[1]
    return args, None


def op_workload(workload) -> tuple:
    """`workload` without a fused function's mark: the op's own workload."""
    return (workload[0],) + split_fused(workload[1:])[0] if workload else tuple(workload)


def recording_queries():
    """Collect (workload, config fingerprint) of every query_config made inside the block."""
    return recording(_RECORDERS, "stack")


def queries_still_hold(target, log) -> bool:
    """Whether the current contexts answer every recorded query with the same config."""
    return all(config_fingerprint(DispatchContext.current.query(target, workload)) == fp
               for workload, fp in log)
