"""progress: the one progress-bar helper (tqdm) for long operations.

Builds, ONNX imports of large models, tuning and the benchmark runner show a bar on the
terminal; it stays quiet when stdout is not a TTY (logs, CI, pipes) or when RB_PROGRESS=0, and
RB_PROGRESS=1 forces it on. A bar appears only once its operation has run for `delay` seconds,
so short operations never flash one.

    from relay_backend.progress import progress_bar, track
    for node in track(nodes, desc="import ONNX", unit="node"):
        ...
    with progress_bar(total=len(kernels), desc="build", unit="kernel") as bar:
        ...; bar.update(1)
"""
import sys

from . import config

DEFAULT_DELAY_S = 0.5           # seconds an operation runs before its bar is drawn


def enabled() -> bool:
    """Whether bars are shown: RB_PROGRESS=1 always, RB_PROGRESS=0 never, else when stdout is a
    terminal."""
    setting = config.get().progress
    if setting == "0":
        return False
    if setting == "1":
        return True
    try:
        return bool(sys.stdout.isatty())
    except (AttributeError, ValueError):        # replaced or closed stdout
        return False


class QuietBar:
    """The no-op stand-in used when bars are off: the tqdm methods callers use, doing nothing."""

    def __init__(self, iterable=None, total=None, **_ignored):
        self.iterable = iterable
        self.total = total
        self.n = 0

    def __iter__(self):
        return iter(self.iterable if self.iterable is not None else ())

    def update(self, n=1):
        self.n += n

    def set_description(self, desc=None, refresh=True):
        pass

    def set_postfix_str(self, s="", refresh=True):
        pass

    def write(self, s, file=None):
        """Print a line (tqdm.write keeps it above a live bar; without one it is a print)."""
        print(s, file=file or sys.stdout)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def progress_bar(iterable=None, total=None, desc: str = "", unit: str = "it", delay: float = None,
                 leave: bool = False):
    """A tqdm bar on stderr, or a QuietBar when `enabled()` is false. Use it as a context manager
    or iterate it; `delay` seconds (default DEFAULT_DELAY_S) pass before it is drawn;
    `leave=False` erases it when done."""
    if not enabled():
        return QuietBar(iterable, total)
    from tqdm import tqdm
    return tqdm(iterable, total=total, desc=desc, unit=unit, leave=leave, file=sys.stderr,
                delay=DEFAULT_DELAY_S if delay is None else delay, dynamic_ncols=True)


def track(iterable, total=None, desc: str = "", unit: str = "it", delay: float = None):
    """Iterate `iterable` behind a progress bar (see progress_bar)."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    yield from progress_bar(iterable, total=total, desc=desc, unit=unit, delay=delay)


__all__ = ["enabled", "progress_bar", "track", "QuietBar", "DEFAULT_DELAY_S"]
