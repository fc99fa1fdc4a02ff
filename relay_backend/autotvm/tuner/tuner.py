"""Tuner: the measure-update loop every search strategy shares (autotvm.tuner.Tuner).

    tuner = RandomTuner(task)                 # or GridSearchTuner, GATuner, XGBTuner
    tuner.resume(autotvm.record.load_from_file("tune.log"))      # optional: continue a run
    tuner.tune(n_trial=200, measure_option=option, early_stopping=50,
               callbacks=[callback.progress_bar(200), callback.log_to_file("tune.log")])

Each round asks the strategy for a batch of configs (`next_batch`, as many as the builder
builds at once), measures them, keeps the best (highest GFLOPS = flop / mean cost), lets the
strategy learn (`update`) and calls the callbacks. Tuning stops after n_trial measurements
(those a resumed log holds count), when the space is exhausted, or after `early_stopping`
measurements without a better config. A strategy never proposes a config that was measured
already (in this run or in the resumed log).
"""

import numpy as np

from ...diagnostics import get_logger
from ...errors import TuningError
from .. import env
from ..measure import MeasureInput, create_measure_batch

logger = get_logger("autotvm")     # relay_backend.autotvm (TVM: "autotvm")


class Tuner:
    """Base class of the search strategies; subclasses implement has_next / next_batch and may
    learn in update."""

    def __init__(self, task, **kwargs):
        if task.config_space is None:
            raise TuningError(f"task {task.name} has no config space: make it with autotvm.task.create "
                              f"or extract_from_program")
        self.param = kwargs
        self.task = task
        self.space = task.config_space
        self.visited = set()          # indices measured (or in flight): never proposed again
        self.best_config = None
        self.best_flops = 0.0
        self.best_measure_pair = None
        self.best_iter = 0
        self.error_ct_threshold = 150
        self.n_measured = 0           # measurements so far, resumed ones included
        self.errors = []
        self.ttl = None
        self.n_trial = None
        self.early_stopping = None

    # -- the strategy -------------------------------------------------------------------------
    def has_next(self) -> bool:
        """Whether an unmeasured config is left to propose."""
        raise NotImplementedError

    def next_batch(self, batch_size) -> list:
        """Up to `batch_size` unmeasured configs to measure next."""
        raise NotImplementedError

    def update(self, inputs, results):
        """Learn from measured (inputs, results); the base strategy learns nothing."""

    def load_history(self, data_set, min_seed_records=500):
        """Learn from records of other tasks (transfer); only model-based tuners use them."""

    # -- bookkeeping ----------------------------------------------------------------------------
    def flops_of(self, inp, res) -> float:
        """FLOP/s of a measurement (0 for an error); a task without a flop count scores 1/cost."""
        if res.error_no != 0:
            return 0.0
        return float(inp.task.flop or 1) / max(float(np.mean(res.costs)), 1e-12)

    def _record(self, inputs, results):
        for inp, res in zip(inputs, results):
            self.visited.add(inp.config.index)
            flops = self.flops_of(inp, res)
            if res.error_no != 0:
                self.errors.append(f"config {inp.config.index}: {res.costs[-1] if res.costs else ''}")
            if flops > self.best_flops:
                self.best_flops, self.best_config = flops, inp.config
                self.best_measure_pair = (inp, res)
                self.best_iter = self.n_measured
            self.n_measured += 1

    def resume(self, records) -> int:
        """Take the measurements of this task in `records` (e.g. the log of an interrupted run) as
        done: they are never proposed again, count toward n_trial, seed the best config, and the
        strategy learns from them. Returns how many were taken."""
        inputs, results = [], []
        for inp, res in records:
            if inp.task.workload != self.task.workload or inp.task.name != self.task.name:
                continue
            index = inp.config.index
            if not self.space.is_index_valid(index) or index in self.visited:
                continue
            config = self.space.get(index)
            if config.fingerprint() != inp.config.fingerprint():
                continue                      # the space changed since: not the same config
            inputs.append(MeasureInput(self.task.target, self.task, config))
            results.append(res)
        if inputs:
            self._record(inputs, results)
            self.update(inputs, results)
        return len(inputs)

    # -- the loop -------------------------------------------------------------------------------
    def tune(self, n_trial, measure_option, early_stopping=None, callbacks=(), si_prefix="G"):
        """Measure up to `n_trial` configs in all (see the module doc)."""
        if n_trial < 0:
            raise TuningError(f"tune: n_trial must be >= 0, got {n_trial}")
        if si_prefix not in SI_PREFIXES:
            raise TuningError(f"tune: si_prefix must be one of {sorted(SI_PREFIXES)}, got {si_prefix!r}")
        measure_batch = create_measure_batch(self.task, measure_option)
        n_parallel = getattr(measure_batch, "n_parallel", 1)
        early_stopping = early_stopping or 1 << 60
        self.n_trial, self.early_stopping = n_trial, early_stopping
        env.GLOBAL_SCOPE.in_tuning = True
        error_streak = 0
        try:
            while self.n_measured < n_trial and self.has_next():
                configs = [c for c in self.next_batch(min(n_parallel, n_trial - self.n_measured))
                           if c.index not in self.visited]
                if not configs:
                    break
                inputs = [MeasureInput(self.task.target, self.task, c) for c in configs]
                results = measure_batch(inputs)
                self._record(inputs, results)
                for inp, res in zip(inputs, results):
                    error_streak = error_streak + 1 if res.error_no else 0
                    logger.debug("No: %d\t%sFLOPS: %.2f/%.2f\tresult: %s\t%s", self.n_measured,
                                 si_prefix, self.flops_of(inp, res) / SI_PREFIXES[si_prefix],
                                 self.best_flops / SI_PREFIXES[si_prefix], res, inp.config)
                self.ttl = min(early_stopping + self.best_iter, n_trial) - self.n_measured
                self.update(inputs, results)
                for callback in callbacks:
                    callback(self, inputs, results)
                if self.n_measured >= self.best_iter + early_stopping:
                    logger.debug("Early stopped. Best iter: %d.", self.best_iter)
                    break
                if error_streak > self.error_ct_threshold:
                    logger.warning("%d measurements in a row failed; the last: %s", error_streak, self.errors[-1])
                    error_streak = 0
        finally:
            env.GLOBAL_SCOPE.in_tuning = False
            for callback in callbacks:
                close = getattr(callback, "close", None)
                if close is not None:
                    close()
        if self.best_config is None and self.errors:
            logger.warning("no valid config found for task %s; first errors:\n%s", self.task,
                           "\n".join(self.errors[:5]))

    def reset(self):
        """Forget the best config (the visited set stays)."""
        self.best_config, self.best_flops, self.best_measure_pair = None, 0.0, None

    def set_error_threshold(self, threshold):
        """Warn after this many failed measurements in a row."""
        self.error_ct_threshold = threshold


SI_PREFIXES = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}   # si_prefix -> scale of FLOPS reports
