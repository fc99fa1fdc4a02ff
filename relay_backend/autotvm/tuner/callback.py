"""Tuning callbacks (autotvm.callback): each is called as callback(tuner, inputs, results)
after every measured batch; one with a close() is closed when tune() ends.

    log_to_file(path)       append each measurement as a record line (record.encode)
    progress_bar(total)     a tqdm bar (relay_backend.progress: on a terminal, RB_PROGRESS=0/1):
                            trials done, current and best GFLOPS, elapsed time
    Monitor()               keep every trial's score and timestamp
"""
import logging
import os

import numpy as np

from ...diagnostics import get_logger
from ...errors import TuningError
from ...progress import QuietBar
from ...progress import progress_bar as new_progress_bar
from .. import record
from .tuner import SI_PREFIXES

logger = get_logger("autotvm")     # relay_backend.autotvm (TVM: "autotvm")


def log_to_file(file_out, protocol="json"):
    """A callback appending every measurement to `file_out` (a path, or an open text file)."""
    if isinstance(file_out, os.PathLike):
        file_out = os.fspath(file_out)

    def _callback(_, inputs, results):
        lines = "".join(record.encode(inp, res, protocol) + "\n" for inp, res in zip(inputs, results))
        if isinstance(file_out, str):
            with open(file_out, "a", encoding="utf-8") as f:
                f.write(lines)
        else:
            file_out.write(lines)
            file_out.flush()
    return _callback


class Monitor:
    """Collects the score (FLOP/s, 0 for errors) and timestamp of every trial."""

    def __init__(self):
        self.scores, self.timestamps = [], []

    def __call__(self, tuner, inputs, results):
        for inp, res in zip(inputs, results):
            self.scores.append(tuner.flops_of(inp, res))
            self.timestamps.append(res.timestamp)

    def reset(self):
        self.scores, self.timestamps = [], []

    def trial_scores(self):
        return np.array(self.scores)

    def trial_timestamps(self):
        return np.array(self.timestamps)


class progress_bar:  # noqa: N801  (TVM's name for this callback)
    """A progress bar over `total` trials, showing the current and best FLOPS: the package's
    bar (relay_backend.progress: drawn on a terminal, RB_PROGRESS=0 / 1 to force it), and none
    while the autotvm logger prints DEBUG lines (each trial is one of those then)."""

    def __init__(self, total, prefix="", si_prefix="G"):
        if si_prefix not in SI_PREFIXES:
            raise TuningError(f"si_prefix must be one of {sorted(SI_PREFIXES)}, got {si_prefix!r}")
        self.si_prefix, self.scale = si_prefix, SI_PREFIXES[si_prefix]
        if logger.isEnabledFor(logging.DEBUG):
            self.bar = QuietBar(total=total)
        else:
            self.bar = new_progress_bar(total=total, desc=prefix, unit="trial", leave=True)

    def __call__(self, tuner, inputs, results):
        current = max((tuner.flops_of(inp, res) for inp, res in zip(inputs, results)), default=0.0)
        self.bar.update(len(inputs))
        self.bar.set_postfix_str(f"current/best {current / self.scale:.2f}/{tuner.best_flops / self.scale:.2f} "
                                 f"{self.si_prefix}FLOPS")

    def close(self):
        self.bar.close()
