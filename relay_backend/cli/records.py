"""`compile --tuning-records log.json`: build inside autotvm.apply_history_best(log) and report
how many of the tunable workloads the compilation asked about the log answered (tvmc's
--tuning-records; the log is what `relay-backend tune` writes, TVM's JSON records)."""
import contextlib
import os

from ..autotvm.task.config_space import FallbackConfigEntity
from ..autotvm.task.dispatcher import ApplyHistoryBest, recording_queries
from ..target import as_target


@contextlib.contextmanager
def applying_records(records_path, target):
    """Apply the tuning log at `records_path` (None: nothing) while the block compiles for
    `target`; yields a dict that gets "file", "tuned" and "tunable" when the block ends: how
    many of the tunable workloads the compilation asked about the log answered."""
    report = {}
    if records_path is None:
        yield report
        return
    history = ApplyHistoryBest(records_path)
    with history, recording_queries() as queries:
        yield report
    target = as_target(target)
    asked = {workload for workload, _ in queries}
    tuned = [w for w in asked if not isinstance(history.query(target, w), FallbackConfigEntity)]
    report.update(file=os.path.basename(records_path), tuned=len(tuned), tunable=len(asked))


__all__ = ["applying_records"]
