"""The build progress bar (relay_backend/progress.py): on a terminal, a build that lasts longer
than BUILD_DELAY_S shows kernels being lowered, compiled and linked, then clears the line; nothing is
written when stdout or stderr is not a terminal, with RB_PROGRESS=0, or for a build shorter
than the delay."""
import io
import sys

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import config, progress
from relay_backend.te_compiler import get as get_compiler


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _model(width):
    """A two-kernel model whose shapes no other test uses (so it is lowered afresh)."""
    x = relay.var("x", shape=(3, width))
    y = relay.nn.relu(relay.add(x, relay.const(1.0)))
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.softmax(y * y)))


@pytest.fixture
def terminal(monkeypatch):
    """Call it inside the test (pytest swaps sys.stdout/stderr for its capture after fixtures
    run): stdout and stderr become terminals; returns them."""
    monkeypatch.setenv("RB_NO_DISK_CACHE", "1")
    monkeypatch.delenv("RB_PROGRESS", raising=False)
    config.reload()

    def attach():
        out, err = _Terminal(), _Terminal()
        monkeypatch.setattr(sys, "stdout", out)
        monkeypatch.setattr(sys, "stderr", err)
        return out, err
    yield attach
    monkeypatch.undo()
    config.reload()


def _build_and_check(width):
    get_compiler().clear()
    factory = relay.build(_model(width))
    gmod = factory["default"](relay.cpu())
    x = np.linspace(-1, 1, 3 * width, dtype="float32").reshape(3, width)
    gmod.set_input("x", x)
    gmod.run()
    y = np.maximum(x + 1, 0) ** 2
    want = np.exp(y - y.max(-1, keepdims=True))
    np.testing.assert_allclose(gmod.get_output(0).numpy(), want / want.sum(-1, keepdims=True), rtol=1e-5)


def test_a_long_build_on_a_terminal_shows_each_stage(terminal, monkeypatch):
    monkeypatch.setattr(progress, "BUILD_DELAY_S", 0.0)
    out, err = terminal()
    _build_and_check(37)
    shown = err.getvalue()
    for stage in ("graph build: lowering kernels", "graph build: compiling kernels", "graph build: linking"):
        assert stage in shown, shown
    assert out.getvalue() == ""                              # never on stdout


def test_a_build_shorter_than_the_delay_shows_nothing(terminal, monkeypatch):
    monkeypatch.setattr(progress, "BUILD_DELAY_S", 1000.0)
    _, err = terminal()
    _build_and_check(38)
    assert err.getvalue() == ""


@pytest.mark.parametrize("quiet", ["stdout is a pipe", "stderr is a file", "RB_PROGRESS=0"])
def test_no_bar_off_a_terminal_or_when_disabled(terminal, monkeypatch, quiet):
    monkeypatch.setattr(progress, "BUILD_DELAY_S", 0.0)
    terminal()
    if quiet == "stdout is a pipe":
        monkeypatch.setattr(sys, "stdout", io.StringIO())
    elif quiet == "stderr is a file":
        monkeypatch.setattr(sys, "stderr", io.StringIO())
    else:
        monkeypatch.setenv("RB_PROGRESS", "0")
        config.reload()
    _build_and_check(39)
    assert sys.stderr.getvalue() == "" and sys.stdout.getvalue() == ""


def test_an_inner_build_reports_to_the_outer_bar(terminal, monkeypatch):
    monkeypatch.setattr(progress, "BUILD_DELAY_S", 0.0)
    _, err = terminal()
    with progress.build_progress("outer") as outer:
        with progress.build_progress("inner") as inner:
            assert inner is outer
            progress.advance("lowered", 3)
        assert outer.counts["lowered"] == 3
    assert "outer: lowering kernels" in err.getvalue()
