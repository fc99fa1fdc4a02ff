"""Building the same model again and loading a library again do not grow the process without
bound: a rebuilt model reuses its compiled kernels, and a loaded library is closed (its
mappings removed) once nothing uses it. The default suite runs 50 rounds of each; the slow
test the 200 rounds the issue measured."""
import gc
import os
import weakref

import numpy as np
import pytest

import relay_backend as relay

pytestmark = [pytest.mark.compile,
              pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")]


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def _mappings() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def _model():
    x = relay.var("x", shape=(1, 16))
    w = relay.const(np.linspace(-1, 1, 128, dtype="float32").reshape(8, 16))
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.nn.dense(x, w))))


def _check_result(lib):
    _check_module(lib["default"](relay.cpu(0)))


def _check_module(module):
    x = np.linspace(0, 1, 16, dtype="float32").reshape(1, 16)
    module.run(x=x)
    want = np.maximum(x @ np.linspace(-1, 1, 128, dtype="float32").reshape(8, 16).T, 0)
    np.testing.assert_allclose(module.get_output(0).numpy(), want, rtol=1e-5, atol=1e-6)


def _growth(rounds: int, step) -> tuple:
    """(RSS growth in MB, growth in mappings) over `rounds` calls of step, after 5 to warm up."""
    for _ in range(5):
        step()
    gc.collect()
    rss, maps = _rss_mb(), _mappings()
    for _ in range(rounds):
        step()
    gc.collect()
    return _rss_mb() - rss, _mappings() - maps


def _builds_and_loads_stay_bounded(rounds, tmp_path):
    mod = _model()
    state = {}

    def build():
        state["lib"] = relay.build(mod)
    rss, _ = _growth(rounds, build)
    assert rss < 4.0, f"{rounds} builds of one model grew RSS by {rss:.1f} MB"
    _check_result(state["lib"])
    rss, _ = _growth(rounds, lambda: relay.build(mod))       # results dropped at once
    assert rss < 4.0, f"{rounds} builds of one model, each dropped, grew RSS by {rss:.1f} MB"

    path = str(tmp_path / "model.so")
    state["lib"].export_library(path)

    def load():
        state["lib"] = relay.runtime.load_module(path)
    rss, maps = _growth(rounds, load)
    assert maps < 10, f"{rounds} loads of one library left {maps} more mappings"
    assert rss < 4.0, f"{rounds} loads of one library grew RSS by {rss:.1f} MB"
    _check_result(state["lib"])


def test_builds_and_loads_stay_bounded(tmp_path):
    _builds_and_loads_stay_bounded(50, tmp_path)


@pytest.mark.slow
def test_200_builds_and_loads_stay_bounded(tmp_path):
    _builds_and_loads_stay_bounded(200, tmp_path)


def test_a_loaded_library_is_closed_only_when_unused(tmp_path):
    lib = relay.build(_model())
    path = str(tmp_path / "model.so")
    lib.export_library(path)
    loaded = relay.runtime.load_module(path)
    module = loaded["default"](relay.cpu(0))
    native = loaded.get_lib()._handle
    private_path, native = native.path, weakref.ref(native)

    def mapped() -> bool:
        with open("/proc/self/maps") as f:
            return private_path in f.read()
    assert mapped()
    del loaded
    gc.collect()
    assert native() is not None and mapped()     # the GraphModule's kernels still use it
    _check_module(module)
    del module
    gc.collect()
    assert native() is None and not mapped()
