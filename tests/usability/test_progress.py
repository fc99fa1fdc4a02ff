"""Progress bars (relay_backend.progress): drawn when stdout and stderr are terminals, quiet in
pipes, with a redirected stderr and with RB_PROGRESS=0, forced with
RB_PROGRESS=1; the ONNX importer's bar stays quiet off a terminal."""
import io

import pytest

from relay_backend import config, progress


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def rb_progress(monkeypatch):
    def set_value(value):
        if value is None:
            monkeypatch.delenv("RB_PROGRESS", raising=False)
        else:
            monkeypatch.setenv("RB_PROGRESS", value)
        config.reload()
    yield set_value
    monkeypatch.delenv("RB_PROGRESS", raising=False)
    config.reload()


@pytest.mark.parametrize("setting, stdout_is_tty, stderr_is_tty, shown", [
    (None, True, True, True), (None, False, True, False), (None, True, False, False),
    ("0", True, True, False), ("1", False, False, True)])
def test_bars_follow_the_terminal_and_rb_progress(rb_progress, monkeypatch, setting, stdout_is_tty,
                                                  stderr_is_tty, shown):
    rb_progress(setting)
    monkeypatch.setattr("sys.stdout", _Terminal() if stdout_is_tty else io.StringIO())
    monkeypatch.setattr("sys.stderr", _Terminal() if stderr_is_tty else io.StringIO())
    assert progress.enabled() is shown
    bar = progress.progress_bar(total=3)
    assert isinstance(bar, progress.QuietBar) is not shown
    bar.close()


def test_a_forced_bar_draws_on_stderr_and_track_yields_everything(rb_progress, capsys):
    rb_progress("1")
    items = list(progress.track(range(3), desc="probe-step", delay=0))
    assert items == [0, 1, 2]
    err = capsys.readouterr().err
    assert "probe-step" in err and "/3 " in err


def test_a_quiet_bar_yields_everything_and_prints_nothing(rb_progress, capsys):
    rb_progress("0")
    with progress.progress_bar(total=2, desc="quiet") as bar:
        bar.update(2)
    assert list(progress.track(["a", "b"], desc="quiet")) == ["a", "b"]
    assert capsys.readouterr().err == ""


def test_onnx_import_is_quiet_off_a_terminal(rb_progress, capfd):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    import relay_backend as relay
    rb_progress(None)                        # pytest's stdout is not a terminal
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"]) for i in range(50)]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("v50", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    relay.frontend.from_onnx(model)
    assert "import ONNX" not in capfd.readouterr().err
    del onnx


def test_onnx_import_shows_its_bar_when_forced(rb_progress, capfd, monkeypatch):
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    import relay_backend as relay
    rb_progress("1")
    monkeypatch.setattr(progress, "DEFAULT_DELAY_S", 0)
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"]) for i in range(5)]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("v5", TensorProto.FLOAT, [2])])
    relay.frontend.from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    err = capfd.readouterr().err
    assert "import ONNX" in err and "/5 " in err
