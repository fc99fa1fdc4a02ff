"""Diagnostics go through the `relay_backend` logger: RB_DEBUG maps onto it, an application's
logging configuration receives the records, and nothing is printed by default."""
import logging

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import config, diagnostics


@pytest.fixture
def rb_debug(monkeypatch):
    def set_level(level: str):
        monkeypatch.setenv("RB_DEBUG", level)
        config.reload()
    yield set_level
    monkeypatch.delenv("RB_DEBUG", raising=False)
    config.reload()
    diagnostics.sync_with_config()


def _run_small_model():
    x = relay.var("x", shape=(4,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(x) + x))
    run = relay.create_executor("graph", mod=mod).evaluate()
    data = np.arange(4, dtype="float32")
    np.testing.assert_allclose(run(data).numpy(), np.exp(data) + data, rtol=1e-5)


def test_nothing_is_printed_by_default(rb_debug, capfd):
    rb_debug("0")
    _run_small_model()
    out, err = capfd.readouterr()
    assert "[relay_backend]" not in out + err and "[pass]" not in err


def test_rb_debug_2_prints_kernel_lines_through_the_logger(rb_debug, capsys):
    rb_debug("2")
    _run_small_model()
    err = capsys.readouterr().err
    assert "[relay_backend] kernel " in err and " ms" in err
    assert "[relay_backend] [pass] " in err                     # level 1 is included in level 2


def test_an_application_logger_receives_pass_timings_without_rb_debug(rb_debug, caplog):
    rb_debug("0")
    x = relay.var("x", shape=(2,))
    with caplog.at_level(logging.DEBUG, logger="relay_backend"):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))))
    names = {r.name for r in caplog.records}
    assert "relay_backend.passes" in names
    assert any("InferType" in r.getMessage() for r in caplog.records)


def test_rb_dump_dir_writes_every_stage_to_files(monkeypatch, tmp_path):
    """RB_DUMP_DIR (docs/debugging.md): the module after each pass, each kernel's TIR and its
    LLVM IR land in the folder as numbered files, in the order they were made."""
    folder = tmp_path / "dump"
    monkeypatch.setenv("RB_DUMP_DIR", str(folder))
    monkeypatch.setenv("RB_NO_DISK_CACHE", "1")
    config.reload()
    try:
        x = relay.var("x", shape=(3, 7919))          # a shape no other test compiles: lowered here
        mod = relay.IRModule.from_expr(relay.Function([x], relay.sigmoid(x) * x))
        run = relay.create_executor("graph", mod=mod).evaluate()
        data = np.linspace(-3, 3, 3 * 7919, dtype="float32").reshape(3, 7919)
        np.testing.assert_allclose(run(data).numpy(), data / (1 + np.exp(-data)), rtol=1e-5, atol=1e-6)
    finally:
        monkeypatch.delenv("RB_DUMP_DIR")
        monkeypatch.delenv("RB_NO_DISK_CACHE")
        config.reload()
    names = sorted(p.name for p in folder.iterdir())
    numbers = [int(n.split("_", 1)[0]) for n in names]
    assert numbers == sorted(set(numbers))
    relay_files = [n for n in names if "_relay_after_" in n]
    assert any(n.endswith("_relay_after_FuseOps.txt") for n in relay_files), names
    fused = next(folder / n for n in relay_files if n.endswith("after_FuseOps.txt")).read_text()
    assert "sigmoid" in fused and "Primitive=1" in fused.replace(" ", "")
    tir_files = [n for n in names if "_tir_" in n and "sigmoid" in n]
    llvm_files = [n for n in names if "_llvm_" in n and n.endswith(".ll") and "sigmoid" in n]
    assert tir_files and llvm_files, names
    assert "7919" in (folder / tir_files[0]).read_text()
    assert "define" in (folder / llvm_files[0]).read_text()


def test_rb_dump_dir_that_cannot_be_written_names_the_setting(monkeypatch, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("RB_DUMP_DIR", str(blocker / "inside"))
    config.reload()
    try:
        with pytest.raises(relay.RelayError, match="RB_DUMP_DIR=.*cannot write"):
            diagnostics.dump("relay", "x", "text")
    finally:
        monkeypatch.delenv("RB_DUMP_DIR")
        config.reload()


def test_rb_dump_dir_names_a_module_of_several_kernels_after_the_first(monkeypatch, tmp_path):
    monkeypatch.setenv("RB_DUMP_DIR", str(tmp_path))
    config.reload()
    try:
        diagnostics.dump("c", ["kernel_a", "kernel_b", "kernel_c"], "int x;", "c")
        diagnostics.dump("c", ["only_one"], "int y;", "c")
    finally:
        monkeypatch.delenv("RB_DUMP_DIR")
        config.reload()
    names = sorted(p.name.split("_", 1)[1] for p in tmp_path.iterdir())
    assert names == ["c_kernel_a_and_2_more.c", "c_only_one.c"]


def test_rb_dump_dir_numbers_after_the_files_already_there(monkeypatch, tmp_path):
    """A second run into the same folder (another process: its own count) continues after the
    first run's numbers instead of overwriting its files; a file that appears under the next
    number meanwhile (a process dumping at the same time) is skipped, not overwritten."""
    (tmp_path / "00000_relay_after_InferType.txt").write_text("first run")
    (tmp_path / "00041_tir_kernel.txt").write_text("first run")
    (tmp_path / "notes.txt").write_text("not numbered")
    monkeypatch.setenv("RB_DUMP_DIR", str(tmp_path))
    config.reload()
    monkeypatch.setattr(diagnostics, "_DUMP_NEXT", {})       # as a fresh process starts
    try:
        diagnostics.dump("relay", "after_InferType", "second run")
        (tmp_path / "00043_tir_kernel.txt").write_text("the other process")
        diagnostics.dump("tir", "kernel", "second run")
    finally:
        monkeypatch.delenv("RB_DUMP_DIR")
        config.reload()
    assert (tmp_path / "00000_relay_after_InferType.txt").read_text() == "first run"
    assert (tmp_path / "00042_relay_after_InferType.txt").read_text() == "second run"
    assert (tmp_path / "00043_tir_kernel.txt").read_text() == "the other process"
    assert (tmp_path / "00044_tir_kernel.txt").read_text() == "second run"
    assert len(list(tmp_path.iterdir())) == 6
