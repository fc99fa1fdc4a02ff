"""A progress bar on long builds: kernels lowered, compiled, linked (tqdm).

The executors' build entry points (graph build, AOT build, vm.compile) open one bar for the
whole build; the levels that do the work report to whichever bar is open, without passing it
around:

    with progress.build_progress("relay.build"):
        ...  te_compiler:  progress.advance("lowered")
        ...  codegen:      progress.begin("compiled", total=28); progress.advance("compiled")
        ...  codegen/aot:  progress.begin("linked", total=1); progress.advance("linked")

The bar is drawn only when the build lasts longer than DELAY_S (a second: short builds stay
silent), both stdout and stderr are terminals (never in logs, pipes or CI output), and
RB_PROGRESS is not 0. A build inside another build (create_executor building for the VM, say)
reports to the outer bar. The bar is cleared when the build ends.
"""
import contextlib
import contextvars
import sys
import time

from .config import get as get_config

DELAY_S = 1.0
STAGES = {"lowered": "lowering kernels", "compiled": "compiling kernels",
          "linked": "linking"}
_CURRENT = contextvars.ContextVar("relay_backend_build_progress", default=None)


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


def _wanted() -> bool:
    if not get_config().progress:
        return False
    return all(getattr(stream, "isatty", lambda: False)() for stream in (sys.stdout, sys.stderr))


@contextlib.contextmanager
def build_progress(what: str):
    """Show a bar for the build named `what` (see the module docstring); yields the
    BuildProgress, or None when no bar is drawn (not a terminal, RB_PROGRESS=0) or an outer
    build already shows one."""
    outer = _CURRENT.get()
    if outer is not None or not _wanted():
        yield outer if outer is not None else None
        return
    bar = BuildProgress(what, sys.stderr, DELAY_S)
    token = _CURRENT.set(bar)
    try:
        yield bar
    finally:
        _CURRENT.reset(token)
        bar.close()


def begin(stage: str, total=None, note: str = "") -> None:
    """Start `stage` ("lowered", "compiled", "linked") on the open bar, if any."""
    bar = _CURRENT.get()
    if bar is not None:
        bar.begin(stage, total, note)


def advance(stage: str, n: int = 1) -> None:
    """Count `n` steps of `stage` on the open bar, if any."""
    bar = _CURRENT.get()
    if bar is not None:
        bar.advance(stage, n)


__all__ = ["BuildProgress", "build_progress", "begin", "advance", "DELAY_S"]
