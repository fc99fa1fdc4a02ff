"""progress: the one progress-bar helper (tqdm) for long operations.

One rule decides whether any bar is drawn (`enabled()`): RB_PROGRESS=0 never, RB_PROGRESS=1
always, otherwise only when both stdout and stderr are terminals — so logs, pipes, CI output
and a redirected stderr never receive a bar. Bars are drawn on stderr, and only once their
operation has run for a while, so short operations never flash one.

Two ways to use it:

* a bar over a loop or a count, for ONNX imports, tuning, the benchmark runner:

      for node in track(nodes, desc="import ONNX", unit="node"):
          ...
      with progress_bar(total=len(suites), desc="benchmarks", unit="suite") as bar:
          ...; bar.update(1)

* the one bar of a build (graph build, AOT build, vm.compile), which the levels doing the work
  report to without passing it around; it appears once the build has lasted BUILD_DELAY_S
  (a second), a build inside another build reports to the outer bar, and the line is cleared
  when the build ends:

      with build_progress("relay.build"):
          ...  te_compiler:  advance("lowered")
          ...  codegen:      begin("compiled", total=28); advance("compiled")
          ...  codegen/aot:  begin("linked", total=1); advance("linked")
"""
import contextlib
import contextvars
import sys
import time

from . import config

DEFAULT_DELAY_S = 0.5           # seconds an operation runs before its bar is drawn
BUILD_DELAY_S = 1.0             # the same for a build's bar (issue 16: builds longer than a second)
STAGES = {"lowered": "lowering kernels", "compiled": "compiling kernels", "linked": "linking"}
_CURRENT_BUILD = contextvars.ContextVar("relay_backend_build_progress", default=None)


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):        # replaced or closed stream
        return False


def enabled() -> bool:
    """Whether bars are shown: RB_PROGRESS=1 always, RB_PROGRESS=0 never, else when both stdout
    and stderr are terminals."""
    setting = config.get().progress
    if setting == "0":
        return False
    if setting == "1":
        return True
    return _is_terminal(sys.stdout) and _is_terminal(sys.stderr)


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


class BuildProgress:
    """The state of one build's progress (stage, steps done, `counts` of kernels each stage
    handled) and, once the build has lasted `delay` seconds, the tqdm bar that shows it."""

    def __init__(self, what: str, stream, delay: float):
        self.what, self.stream, self.delay = what, stream, delay
        self.start = time.monotonic()
        self.counts = dict.fromkeys(STAGES, 0)
        self.stage, self.total, self.done, self.note = None, None, 0, ""
        self.bar = None

    def _describe(self) -> str:
        return f"{self.what}: {STAGES[self.stage]}" if self.stage else self.what

    def _show(self) -> None:
        """Draw the bar if the build has lasted long enough (tqdm's own `delay` would be
        undone by reset(), which redraws at once)."""
        if self.bar is None and time.monotonic() - self.start >= self.delay:
            from tqdm import tqdm
            self.bar = tqdm(total=self.total, initial=self.done, desc=self._describe(),
                            unit="kernel", file=self.stream, leave=False, dynamic_ncols=True,
                            mininterval=0.2, postfix=self.note or None)

    def begin(self, stage: str, total=None, note: str = "") -> None:
        """Start `stage` with `total` steps (None: unknown); `note` is shown after the count."""
        self.stage, self.total, self.done, self.note = stage, total, 0, note
        if self.bar is None:
            self._show()
            return
        self.bar.set_description(self._describe(), refresh=False)
        self.bar.set_postfix_str(note, refresh=False)
        self.bar.reset(total=total)

    def advance(self, stage: str, n: int = 1) -> None:
        """`n` more steps of `stage` done (starts the stage if it is not the current one)."""
        if stage != self.stage:
            self.begin(stage)
        self.counts[stage] += n
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        else:
            self._show()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@contextlib.contextmanager
def build_progress(what: str):
    """Show a bar for the build named `what` (see the module docstring); yields the
    BuildProgress, or None when no bar is drawn (`enabled()` is false) or an outer build
    already shows one."""
    outer = _CURRENT_BUILD.get()
    if outer is not None or not enabled():
        yield outer
        return
    bar = BuildProgress(what, sys.stderr, BUILD_DELAY_S)
    token = _CURRENT_BUILD.set(bar)
    try:
        yield bar
    finally:
        _CURRENT_BUILD.reset(token)
        bar.close()


def begin(stage: str, total=None, note: str = "") -> None:
    """Start `stage` ("lowered", "compiled", "linked") on the open build bar, if any."""
    bar = _CURRENT_BUILD.get()
    if bar is not None:
        bar.begin(stage, total, note)


def advance(stage: str, n: int = 1) -> None:
    """Count `n` steps of `stage` on the open build bar, if any."""
    bar = _CURRENT_BUILD.get()
    if bar is not None:
        bar.advance(stage, n)


__all__ = ["enabled", "progress_bar", "track", "QuietBar", "DEFAULT_DELAY_S",
           "BuildProgress", "build_progress", "begin", "advance", "BUILD_DELAY_S"]
