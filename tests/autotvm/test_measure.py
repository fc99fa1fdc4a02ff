"""Measurement (autotvm/measure): every candidate is built in a worker process and run in a
process of its own, so a candidate that crashes, hangs, computes a wrong answer, is rejected
by its template or fails to build becomes an error record and the measurement goes on; a good
candidate's costs follow number / repeat. Timeouts are tiny: the slow candidates are killed."""
import pytest

from relay_backend import autotvm
from relay_backend.autotvm.record import MeasureErrorNo, MeasureInput
from relay_backend.errors import TuningError
from relay_backend.testing import autotvm_templates  # noqa: F401  (registers the templates)

pebble = pytest.importorskip("pebble", reason="measuring needs pebble (pip install relay_backend[tune])")

pytestmark = pytest.mark.compile


@pytest.fixture(scope="module")
def option():
    builder = autotvm.LocalBuilder(timeout=30, n_parallel=2)
    runner = autotvm.LocalRunner(timeout=3, number=2, repeat=4, cooldown_interval=0)
    yield autotvm.measure_option(builder=builder, runner=runner)
    builder.close()
    runner.close()


def _measure(task, option, modes):
    batch = autotvm.measure.create_measure_batch(task, option)
    space = task.config_space
    configs = {space.get(i)["mode"].val: space.get(i) for i in range(len(space))}
    inputs = [MeasureInput(task.target, task, configs[m]) for m in modes]
    return dict(zip(modes, batch(inputs)))


def test_misbehaving_candidates_are_error_records(option):
    task = autotvm.task.create("testing/misbehave", (64, "float32"), "llvm")
    results = _measure(task, option, ["crash", "ok", "hang", "wrong", "invalid", "raise"])
    expected = {"ok": MeasureErrorNo.NO_ERROR, "crash": MeasureErrorNo.RUNTIME_DEVICE,
                "hang": MeasureErrorNo.RUN_TIMEOUT, "wrong": MeasureErrorNo.WRONG_ANSWER,
                "invalid": MeasureErrorNo.INSTANTIATION_ERROR, "raise": MeasureErrorNo.COMPILE_HOST}
    assert {m: r.error_no for m, r in results.items()} == expected
    assert "SIGSEGV" in results["crash"].costs[1] or "signal" in results["crash"].costs[1]
    assert "more than 3 s" in results["hang"].costs[1]
    assert "default config" in results["wrong"].costs[1]
    assert "rejected by the template" in results["invalid"].costs[1]
    ok = results["ok"]
    assert len(ok.costs) == 2 and all(0 < c < 0.1 for c in ok.costs)      # repeat 4, extremes dropped


def test_a_build_past_its_timeout_is_killed():
    builder = autotvm.LocalBuilder(timeout=1, n_parallel=1)
    runner = autotvm.LocalRunner(timeout=3, number=1, repeat=1, cooldown_interval=0)
    try:
        task = autotvm.task.create("testing/misbehave", (16, "float32"), "llvm")
        results = _measure(task, autotvm.measure_option(builder, runner), ["slow_build", "ok"])
        assert results["slow_build"].error_no == MeasureErrorNo.BUILD_TIMEOUT
        assert results["ok"].error_no == MeasureErrorNo.NO_ERROR
    finally:
        builder.close()
        runner.close()


def test_good_configs_pass_the_reference_check(option):
    """Configs with tails and vectorized tails (matmul 7 x 5 x 6) all reproduce the default."""
    task = autotvm.task.create("testing/matmul", (7, 5, 6, "float32"), "llvm")
    batch = autotvm.measure.create_measure_batch(task, option)
    space = task.config_space
    picks = [i for i in range(len(space)) if space.get(i)["tile_y"].size[-1] in (1, 4)
             and space.get(i)["tile_x"].size[-1] == 4]
    results = batch([MeasureInput(task.target, task, space.get(i)) for i in picks])
    assert len(picks) == 4 and [r.error_no for r in results] == [0] * 4


def test_runner_options_are_checked():
    with pytest.raises(TuningError, match="number must be an int >= 1"):
        autotvm.LocalRunner(number=0)
    with pytest.raises(TuningError, match="unknown builder"):
        autotvm.measure_option(builder="remote", runner="local")
