"""Genetic-algorithm search (autotvm.tuner.GATuner): a config is a gene (one choice per knob).

A generation of `pop_size` genes is measured; its genes and the `elite_num` best genes ever
measured are the parents of the next: children are bred by picking two parents with
probability proportional to their score (GFLOPS), crossing them at a random knob and mutating
each knob with `mutation_prob`. Children that were measured already are not bred again; when
fewer unmeasured configs are left than a generation holds, the rest are taken as they are.
"""
import numpy as np

from ...errors import TuningError
from .tuner import Tuner

MAX_BREED_TRIES = 64     # children tried per slot before one is drawn at random


class GATuner(Tuner):
    """Tuner with a genetic algorithm; measures every config it proposes (no cost model)."""

    def __init__(self, task, pop_size=100, elite_num=3, mutation_prob=0.1):
        super().__init__(task)
        if elite_num > pop_size:
            raise TuningError(f"GATuner: elite_num ({elite_num}) must be <= pop_size ({pop_size})")
        self.pop_size = min(pop_size, len(self.space))
        self.elite_num = min(self.pop_size, elite_num)
        self.mutation_prob = mutation_prob
        self.genes = [self.space.point2knob(int(i)) for i in self.space.sample_ints(self.pop_size)]
        self.scores = {}             # index -> score of every measured gene
        self.trial_pt = 0

    def has_next(self) -> bool:
        return len(self.visited) < len(self.space)

    def next_batch(self, batch_size) -> list:
        out = []
        while len(out) < batch_size and self.has_next():
            if self.trial_pt >= len(self.genes):
                self._next_generation()
            index = self.space.knob2point(self.genes[self.trial_pt])
            self.trial_pt += 1
            if index not in self.visited and all(c.index != index for c in out):
                out.append(self.space.get(index))
        return out

    def update(self, inputs, results):
        for inp, res in zip(inputs, results):
            self.scores[inp.config.index] = self.flops_of(inp, res)

    def _next_generation(self):
        self.trial_pt = 0
        left = len(self.space) - len(self.visited)
        if left <= self.pop_size:
            self.genes = [self.space.point2knob(i) for i in range(self.space.range_length)
                          if self.space.is_index_valid(i) and i not in self.visited]
            return
        generation = {self.space.knob2point(g) for g in self.genes} & set(self.scores)
        elites = sorted(self.scores, key=self.scores.get, reverse=True)[:self.elite_num]
        pool = list(dict.fromkeys([*generation, *elites]))
        parents = [self.space.point2knob(i) for i in pool]
        scores = np.array([self.scores[i] for i in pool], dtype=np.float64)
        if not parents or scores.max() <= 0:
            self.genes = [self.space.point2knob(int(i)) for i in self._unvisited_sample(self.pop_size)]
            return
        probs = (scores + 1e-8) / (scores + 1e-8).sum()
        children, seen = [], set()
        while len(children) < self.pop_size:
            for _ in range(MAX_BREED_TRIES):
                a, b = np.random.choice(len(parents), size=2, replace=len(parents) < 2, p=probs)
                point = np.random.randint(len(self.space.dims))
                child = parents[a][:point] + parents[b][point:]
                for k, dim in enumerate(self.space.dims):
                    if np.random.random() < self.mutation_prob:
                        child[k] = np.random.randint(dim)
                index = self.space.knob2point(child)
                if self.space.is_index_valid(index) and index not in self.visited and index not in seen:
                    break
            else:
                index = int(self._unvisited_sample(1, exclude=seen)[0])
                child = self.space.point2knob(index)
            seen.add(index)
            children.append(child)
        self.genes = children

    def _unvisited_sample(self, n, exclude=()):
        out = set()
        while len(out) < n:
            out.add(self.space.get_rand_index(to_exclude=self.visited | set(exclude) | out))
        return list(out)
