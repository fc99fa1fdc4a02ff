"""RayBuilder / RayRunner (autotvm/measure/ray_runner.py) on a local Ray instance with two CPUs:
on the same small task they give the local runner's verdicts, config by config."""
import pytest

from relay_backend import autotvm
from relay_backend.autotvm.record import MeasureInput
from relay_backend.testing import autotvm_templates  # noqa: F401  (registers the templates)

pebble = pytest.importorskip("pebble", reason="measuring needs pebble (pip install relay_backend[tune])")

ray = pytest.importorskip("ray", reason="ray is not installed (pip install relay_backend[ray])")
pytestmark = pytest.mark.compile

MODES = ["ok", "wrong", "invalid", "raise", "crash"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _verdicts(task, builder, runner):
    batch = autotvm.measure.create_measure_batch(task, autotvm.measure_option(builder, runner))
    space = task.config_space
    configs = {space.get(i)["mode"].val: space.get(i) for i in range(len(space))}
    results = batch([MeasureInput(task.target, task, configs[m]) for m in MODES])
    return {m: r.error_no for m, r in zip(MODES, results)}, results


def test_ray_runner_matches_the_local_runner(local_ray):
    task = autotvm.task.create("testing/misbehave", (32, "float32"), "llvm")
    local_builder = autotvm.LocalBuilder(timeout=30, n_parallel=2)
    local_runner = autotvm.LocalRunner(timeout=5, number=2, repeat=2, cooldown_interval=0)
    try:
        local, _ = _verdicts(task, local_builder, local_runner)
    finally:
        local_builder.close()
        local_runner.close()
    remote, results = _verdicts(task, autotvm.RayBuilder(timeout=30),
                                autotvm.RayRunner(timeout=5, number=2, repeat=2, cooldown_interval=0))
    assert remote == local
    assert remote["ok"] == 0 and all(c > 0 for c in results[0].costs)
