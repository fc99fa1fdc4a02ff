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
