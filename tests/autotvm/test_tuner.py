"""Tuners (autotvm/tuner): grid / random / GA / XGBoost search over a space, early stopping,
resuming from a log, transfer from other tasks' records, callbacks. The search logic is
checked with a synthetic cost (a builder/runner pair that scores configs by a formula, so each
test is fast and its optimum known); test_tune_extract_and_apply measures for real."""
import importlib.util
import random
import time

import numpy as np
import pytest

from relay_backend import autotvm
from relay_backend.autotvm import record
from relay_backend.autotvm.measure import Builder, MeasureErrorNo, MeasureResult, Runner
from relay_backend.autotvm.tuner import GATuner, GridSearchTuner, RandomTuner, callback
from relay_backend.testing import autotvm_templates  # noqa: F401  (registers the templates)

TARGET = "llvm"


def synthetic_cost(config) -> float:
    """Seconds of a made-up kernel: fastest at tile_y = 4, tile_x = 8, vectorized."""
    y, x = config["tile_y"].size[-1], config["tile_x"].size[-1]
    return 1e-3 * (1 + abs(np.log2(y) - 2) + abs(np.log2(x) - 3) + (0 if config["vec"].val else 0.5))


class SyntheticBuilder(Builder):
    def build(self, measure_inputs):
        return [None for _ in measure_inputs]


class SyntheticRunner(Runner):
    def __init__(self):
        super().__init__(timeout=1, n_parallel=1)
        self.measured = []

    def run(self, measure_inputs, build_results):
        self.measured += [inp.config.index for inp in measure_inputs]
        return [MeasureResult((synthetic_cost(inp.config),), MeasureErrorNo.NO_ERROR, 0.0, time.time())
                for inp in measure_inputs]


def _task(n=32):
    return autotvm.task.create("testing/matmul", (n, 8, n, "float32"), TARGET)


def _option(n_parallel=4):
    runner = SyntheticRunner()
    return autotvm.measure_option(SyntheticBuilder(timeout=1, n_parallel=n_parallel), runner), runner


def _best_index(task):
    space = task.config_space
    return min(range(len(space)), key=lambda i: synthetic_cost(space.get(i)))


@pytest.mark.parametrize("tuner_class", [GridSearchTuner, RandomTuner, GATuner])
def test_search_visits_each_config_once_and_finds_the_best(tuner_class):
    task = _task()
    option, runner = _option()
    tuner = tuner_class(task, pop_size=8) if tuner_class is GATuner else tuner_class(task)
    tuner.tune(n_trial=len(task.config_space) + 10, measure_option=option)
    assert sorted(runner.measured) == list(range(len(task.config_space)))
    assert tuner.best_config.index == _best_index(task)
    assert tuner.best_flops == pytest.approx(task.flop / synthetic_cost(tuner.best_config))


def test_ga_generations_get_faster():
    """Selection + crossover + mutation: the third generation is faster on average than the
    first (a random sample), and no config is measured twice."""
    task = _task(64)
    option, runner = _option()
    random.seed(0)
    np.random.seed(0)
    GATuner(task, pop_size=12, elite_num=3).tune(n_trial=36, measure_option=option)
    assert len(runner.measured) == 36 == len(set(runner.measured)) < len(task.config_space)
    costs = [synthetic_cost(task.config_space.get(i)) for i in runner.measured]
    assert np.mean(costs[24:]) < np.mean(costs[:12])


def test_early_stopping():
    task = _task()
    option, runner = _option(n_parallel=1)
    space = task.config_space
    best = _best_index(task)
    tuner = GridSearchTuner(task, range_idx=(best, len(space) - 1))   # the best comes first
    tuner.tune(n_trial=40, measure_option=option, early_stopping=5)
    assert runner.measured[0] == best and len(runner.measured) == 5      # TVM: best_iter + early_stopping


def test_resume_skips_measured_configs(tmp_path):
    log = tmp_path / "tune.log"
    task = _task()
    option, first = _option()
    RandomTuner(task).tune(n_trial=12, measure_option=option, callbacks=[callback.log_to_file(str(log))])
    assert len(first.measured) == 12
    option, second = _option()
    tuner = RandomTuner(task)
    assert tuner.resume(record.load_from_file(log)) == 12
    tuner.tune(n_trial=30, measure_option=option, callbacks=[callback.log_to_file(str(log))])
    assert len(second.measured) == 18 and not set(first.measured) & set(second.measured)
    indices = [inp.config.index for inp, _ in record.load_from_file(log)]
    assert len(indices) == len(set(indices)) == 30
    assert tuner.best_config.index == min(indices, key=lambda i: synthetic_cost(task.config_space.get(i)))


@pytest.mark.parametrize("shown", [True, False])
def test_callbacks_progress_bar_and_monitor(capsys, monkeypatch, shown):
    """The bar is relay_backend.progress's: drawn with RB_PROGRESS=1, silent with RB_PROGRESS=0."""
    from relay_backend import config
    monkeypatch.setenv("RB_PROGRESS", "1" if shown else "0")
    config.reload()
    try:
        task = _task()
        option, _ = _option()
        monitor = callback.Monitor()
        bar = callback.progress_bar(8, prefix="[matmul]")
        RandomTuner(task).tune(n_trial=8, measure_option=option, callbacks=[bar, monitor])
    finally:
        monkeypatch.delenv("RB_PROGRESS")
        config.reload()
    assert len(monitor.trial_scores()) == 8 and (monitor.trial_scores() > 0).all()
    assert bar.bar.n == 8
    err = capsys.readouterr().err
    if shown:
        assert "GFLOPS" in (bar.bar.postfix or "") and "[matmul]" in err
    else:
        assert "[matmul]" not in err and "GFLOPS" not in err


# only the XGBoost tests need it (a module-level importorskip would skip the other tuners' tests too)
needs_xgboost = pytest.mark.skipif(importlib.util.find_spec("xgboost") is None,
                                   reason="xgboost is not installed (pip install relay_backend[xgboost])")


@needs_xgboost
@pytest.mark.parametrize("feature_type", ["knob", "itervar"])
def test_xgb_tuner_plans_with_its_model(feature_type):
    from relay_backend.autotvm.tuner import XGBTuner
    task = _task(64)
    option, runner = _option()
    np.random.seed(1)
    tuner = XGBTuner(task, plan_size=16, feature_type=feature_type)
    tuner.tune(n_trial=40, measure_option=option)
    assert len(runner.measured) == 40 == len(set(runner.measured))
    assert tuner.train_ct >= 2                      # refit after 16 and 32 measurements
    costs = sorted(synthetic_cost(task.config_space.get(i)) for i in range(len(task.config_space)))
    assert synthetic_cost(tuner.best_config) <= costs[2]


@needs_xgboost
def test_xgb_transfer_learning_plans_the_first_trials(tmp_path):
    from relay_backend.autotvm.tuner import XGBTuner
    other = _task(32)
    option, _ = _option()
    log = tmp_path / "other.log"
    GridSearchTuner(other).tune(n_trial=len(other.config_space), measure_option=option,
                                callbacks=[callback.log_to_file(str(log))])
    task = _task(64)
    tuner = XGBTuner(task, plan_size=8, feature_type="itervar")
    tuner.load_history(record.load_from_file(log), min_seed_records=20)
    assert tuner.cost_model.base_model is not None and len(tuner.trials) == 8
    first = [task.config_space.get(i) for i in tuner.trials[:4]]
    costs = sorted(synthetic_cost(task.config_space.get(i)) for i in range(len(task.config_space)))
    assert min(synthetic_cost(c) for c in first) <= costs[len(costs) // 4]   # better than chance
    option, runner = _option()
    tuner.tune(n_trial=8, measure_option=option)
    assert runner.measured[:4] == [c.index for c in first]
