"""`compile --tuning-records log.json`: build inside autotvm.apply_history_best(log) and report
how many of the tunable workloads the compilation asked about the log answered (tvmc's
--tuning-records; the log is what `relay-backend tune` writes, TVM's JSON records)."""
import contextlib
import os

from ..autotvm.task.config_space import FallbackConfigEntity
from ..autotvm.task.dispatcher import ApplyHistoryBest, op_workload, recording_queries
from ..target import as_target


@contextlib.contextmanager
def applying_records(records_path, target):
    """Apply the tuning log at `records_path` (None: nothing) while the block compiles for
    `target`; yields a dict that gets "file", "tuned" and "tunable" when the block ends: how
    many of the tunable workloads the compilation asked about the log answered (an op's
    workload counts once, answered by its own record or one of its fused functions')."""
    report = {}
    if records_path is None:
        yield report
        return
    history = ApplyHistoryBest(records_path)
    with history, recording_queries() as queries:
        yield report
    target = as_target(target)
    asked = {}          # op workload -> the workloads asked for it (its own, its fused functions')
    for workload, _ in queries:
        asked.setdefault(op_workload(workload), set()).add(workload)
    tuned = [op for op, workloads in asked.items()
             if any(not isinstance(history.query(target, w), FallbackConfigEntity) for w in workloads)]
    report.update(file=os.path.basename(records_path), tuned=len(tuned), tunable=len(asked))


__all__ = ["applying_records"]
