"""Finding the configs a cost model rates best (autotvm.tuner.SimulatedAnnealingOptimizer).

A space of at most `exhaustive_limit` configs is scored whole (its features are computed once
and cached). A larger one is searched by simulated annealing: `parallel_size` walkers start
at random configs and each step moves to a neighbour (one knob changed), accepted with
probability exp((new - old) / temperature) as the temperature falls from temp[0] to temp[1];
the best configs seen are kept, and the search stops after n_iter steps or `early_stop` steps
without a change to them.
"""
import heapq

import numpy as np

from ...diagnostics import get_logger
from .model_based_tuner import ModelOptimizer

logger = get_logger("autotvm")     # relay_backend.autotvm (TVM: "autotvm")


class SimulatedAnnealingOptimizer(ModelOptimizer):
    """See the module doc."""

    def __init__(self, task, n_iter=500, temp=(1, 0), persistent=True, parallel_size=128,
                 early_stop=50, log_interval=50, exhaustive_limit=4096):
        self.task = task
        self.n_iter, self.temp = n_iter, temp
        self.persistent, self.parallel_size = persistent, parallel_size
        self.early_stop = early_stop or 1 << 30
        self.log_interval = log_interval
        self.exhaustive_limit = exhaustive_limit
        self.points = None

    def find_maximums(self, model, num, exclusive) -> list:
        space = self.task.config_space
        if space.range_length <= self.exhaustive_limit:
            candidates = [i for i in range(space.range_length) if space.is_index_valid(i) and i not in exclusive]
            if not candidates:
                return []
            scores = np.asarray(model.predict(candidates))
            order = np.argsort(-scores, kind="stable")[:num]
            return [candidates[i] for i in order]
        return self._anneal(model, num, exclusive)

    def _anneal(self, model, num, exclusive) -> list:
        space = self.task.config_space
        n = min(self.parallel_size, len(space))
        points = self.points if self.persistent and self.points is not None else space.sample_ints(n)
        scores = np.asarray(model.predict(points))
        heap = [(-np.inf, -1 - k) for k in range(num)]       # (score, index): the best `num`
        in_heap = set()
        for s, p in zip(scores, points):
            self._push(heap, in_heap, float(s), int(p), exclusive)
        t0, t1 = self.temp
        t, step = t0, (t0 - t1) / (self.n_iter + 1)
        last_change = 0
        for k in range(self.n_iter):
            new_points = np.array([space.random_walk(int(p)) for p in points])
            new_scores = np.asarray(model.predict(new_points))
            accept = np.random.random(len(points)) < np.exp(np.minimum((new_scores - scores) / (t + 1e-5), 0))
            points[accept], scores[accept] = new_points[accept], new_scores[accept]
            for s, p in zip(new_scores, new_points):
                if self._push(heap, in_heap, float(s), int(p), exclusive):
                    last_change = k
            t -= step
            if k - last_change > self.early_stop:
                break
            if self.log_interval and k % self.log_interval == 0:
                logger.debug("SA iter %d: best predicted %.3f, temperature %.3f", k, max(s for s, _ in heap), t)
        self.points = points
        return [p for s, p in sorted(heap, reverse=True) if p >= 0]

    @staticmethod
    def _push(heap, in_heap, score, point, exclusive) -> bool:
        if point in exclusive or point in in_heap or score <= heap[0][0]:
            return False
        _, old = heapq.heapreplace(heap, (score, point))
        in_heap.discard(old)
        in_heap.add(point)
        return True
