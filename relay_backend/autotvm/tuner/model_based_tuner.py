"""Model-based search (autotvm.tuner.ModelBasedTuner): a cost model predicts each config's
speed from its features, an optimizer finds the configs the model rates best, and those are
measured next.

Every `plan_size` new measurements the model is refit on all of them (failed ones count as
speed 0) and the optimizer plans the next `plan_size` trials among the unmeasured configs
(optionally picking a diverse subset of plan_size x diversity_filter_ratio candidates). The
last 5% of a plan, and every trial before the first fit, is a random unmeasured config
(exploration). `load_history` fits a base model on records of other tasks of the same
template, whose predictions the model starts from (transfer learning) and which plans the
first trials.
"""
import numpy as np

from ...errors import TuningError
from .tuner import Tuner


class CostModel:
    """Predicts the speed of configs (by index) of one task."""

    def fit(self, xs, ys, plan_size):
        """Train on configs `xs` (indices) and their speeds `ys`."""
        raise NotImplementedError

    def fit_log(self, records, plan_size, min_seed_records=500) -> bool:
        """Train on records of other tasks; False when there are too few."""
        raise NotImplementedError

    def predict(self, xs, output_margin=False):
        """Predicted speeds (or raw margins) of configs `xs`."""
        raise NotImplementedError

    def load_basemodel(self, base_model):
        """Start from `base_model`'s predictions (transfer learning)."""
        raise NotImplementedError

    def spawn_base_model(self):
        """A fresh model of the same kind, to fit on other tasks' records."""
        raise NotImplementedError


class ModelOptimizer:
    """Finds the configs a cost model rates best."""

    def find_maximums(self, model, num, exclusive) -> list:
        """The `num` configs outside `exclusive` that `model` rates fastest."""
        raise NotImplementedError


class FeatureCache:
    """Features by index, per feature type, shared by a model and its base model."""

    def __init__(self):
        self.feature_cache = {}

    def get(self, key) -> dict:
        return self.feature_cache.setdefault(key, {})

    def size(self, key) -> int:
        return len(self.feature_cache.get(key, ()))

    def clear(self, key):
        self.feature_cache[key] = {}


class ModelBasedTuner(Tuner):
    """Tuner driven by `cost_model` and `model_optimizer` (see the module doc)."""

    def __init__(self, task, cost_model, model_optimizer, plan_size, diversity_filter_ratio=None):
        super().__init__(task)
        if diversity_filter_ratio is not None and diversity_filter_ratio < 1:
            raise TuningError(f"diversity_filter_ratio must be >= 1, got {diversity_filter_ratio}")
        self.target = task.target
        self.plan_size = plan_size
        self.cost_model = cost_model
        self.model_optimizer = model_optimizer
        self.diversity_filter_ratio = diversity_filter_ratio
        self.trials = []
        self.trial_pt = 0
        self.xs, self.ys = [], []
        self.flops_max = 0.0
        self.train_ct = 0

    def has_next(self) -> bool:
        return len(self.visited) < len(self.space)

    def next_batch(self, batch_size) -> list:
        out, taken = [], set()

        def fresh(index) -> bool:
            return index not in self.visited and index not in taken and self.space.is_index_valid(index)
        while len(out) < batch_size and len(self.visited) + len(taken) < len(self.space):
            while self.trial_pt < len(self.trials) and not fresh(int(self.trials[self.trial_pt])):
                self.trial_pt += 1
            planned = self.trial_pt < len(self.trials) - int(0.05 * self.plan_size)
            index = int(self.trials[self.trial_pt]) if planned else \
                self.space.get_rand_index(to_exclude=self.visited | taken)
            taken.add(index)
            out.append(self.space.get(index))
        return out

    def update(self, inputs, results):
        for inp, res in zip(inputs, results):
            flops = self.flops_of(inp, res)
            self.xs.append(inp.config.index)
            self.ys.append(flops)
            self.flops_max = max(self.flops_max, flops)
        if len(self.xs) >= self.plan_size * (self.train_ct + 1) and self.flops_max > 1e-6:
            self.cost_model.fit(self.xs, self.ys, self.plan_size)
            if self.diversity_filter_ratio:
                candidates = self.model_optimizer.find_maximums(
                    self.cost_model, self.plan_size * self.diversity_filter_ratio, self.visited)
                knobs = [self.space.point2knob(x) for x in candidates]
                picked = submodular_pick(np.zeros(len(candidates)), knobs, self.plan_size, knob_weight=1)
                self.trials = [candidates[i] for i in picked]
            else:
                self.trials = self.model_optimizer.find_maximums(self.cost_model, self.plan_size, self.visited)
            self.trial_pt = 0
            self.train_ct += 1

    def load_history(self, data_set, min_seed_records=500):
        base = self.cost_model.spawn_base_model()
        if not base.fit_log(list(data_set), self.plan_size, min_seed_records):
            return
        if not self.trials:
            self.trials = self.model_optimizer.find_maximums(base, self.plan_size, self.visited)
            self.trial_pt = 0
        self.cost_model.load_basemodel(base)


def submodular_pick(scores, knobs, n_pick, knob_weight=1.0) -> list:
    """Greedily pick n_pick points maximizing score + knob_weight x (new distinct knob values)."""
    n_knobs = len(knobs[0]) if knobs else 0
    seen = [set() for _ in range(n_knobs)]
    remain, picked = list(range(len(scores))), []
    for _ in range(min(n_pick, len(remain))):
        best = max(remain, key=lambda x: scores[x] + knob_weight * sum(
            1 for i in range(n_knobs) if knobs[x][i] not in seen[i]))
        picked.append(best)
        remain.remove(best)
        for i in range(n_knobs):
            seen[i].add(knobs[best][i])
    return picked
