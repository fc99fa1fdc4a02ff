"""Grid search and random search over config indices (autotvm.tuner.GridSearchTuner /
RandomTuner), optionally restricted to an index range."""
from ...errors import TuningError
from .tuner import Tuner


class IndexBaseTuner(Tuner):
    """A tuner that walks indices in [begin, end] (range_idx, inclusive; the whole space by default)."""

    def __init__(self, task, range_idx=None):
        super().__init__(task)
        if range_idx is not None and (not isinstance(range_idx, tuple) or len(range_idx) != 2):
            raise TuningError(f"range_idx must be None or a (begin, end) tuple, got {range_idx!r}")
        begin, end = range_idx or (0, self.space.range_length - 1)
        if not 0 <= begin <= end < self.space.range_length:
            raise TuningError(f"range_idx {range_idx} is outside the space's indices "
                              f"[0, {self.space.range_length - 1}]")
        self.begin_idx, self.end_idx = begin, end + 1
        self.visited_max = self.space.subrange_length(self.begin_idx, self.end_idx)

    def _in_range_visited(self) -> int:
        return sum(1 for i in self.visited if self.begin_idx <= i < self.end_idx)

    def has_next(self) -> bool:
        return self._in_range_visited() < self.visited_max


class GridSearchTuner(IndexBaseTuner):
    """Every valid index of the range in order."""

    def __init__(self, task, range_idx=None):
        super().__init__(task, range_idx)
        self.index = self.begin_idx

    def next_batch(self, batch_size) -> list:
        out = []
        while len(out) < batch_size and self.index is not None and self.index < self.end_idx:
            if self.space.is_index_valid(self.index) and self.index not in self.visited:
                out.append(self.space.get(self.index))
            self.index += 1
        return out


class RandomTuner(IndexBaseTuner):
    """Valid indices of the range in random order, each once."""

    def next_batch(self, batch_size) -> list:
        out, taken = [], set()
        while len(out) < batch_size and self._in_range_visited() + len(taken) < self.visited_max:
            index = self.space.get_rand_index(self.begin_idx, self.end_idx, to_exclude=self.visited | taken)
            taken.add(index)
            out.append(self.space.get(index))
        return out
