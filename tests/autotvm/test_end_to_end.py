"""Tuning a small model for real: extract its tasks, measure a few configs of each in worker
processes, keep the log, pick the best records, and build with them: the kernels use the
logged configs and the model still computes numpy's answer."""
import numpy as np
import pytest

import relay_backend as rb
from relay_backend import autotvm
from relay_backend.autotvm import record
from relay_backend.autotvm.tuner import RandomTuner, callback
from relay_backend.autotvm.task.dispatcher import config_fingerprint
from relay_backend.backend import te_compiler

pebble = pytest.importorskip("pebble", reason="measuring needs pebble (pip install relay_backend[tune])")

pytestmark = pytest.mark.compile


def test_tune_extract_and_apply(tmp_path):
    x = rb.var("x", shape=(16, 24))
    w = rb.var("w", shape=(20, 24))
    mod = rb.IRModule.from_expr(rb.Function([x, w], rb.nn.relu(rb.nn.dense(x, w))))
    tasks = autotvm.task.extract_from_program(mod, {}, "llvm")
    # extracted at opt_level 3, as a build at opt_level 3 runs it: AlterOpLayout packs the weight
    assert [t.name for t in tasks] == ["dense_pack_prepacked.x86"]
    _, (data, packed), _ = tasks[0].args
    assert data == ("TENSOR", (16, 24), "float32") and packed[0] == "TENSOR" and packed[1][1] == 24
    assert packed[1][0] * packed[1][2] == 20                 # (20 / block, K, block)
    log, best = tmp_path / "tune.log", tmp_path / "best.log"
    builder = autotvm.LocalBuilder(timeout=60, n_parallel=2)
    runner = autotvm.LocalRunner(timeout=10, number=3, repeat=2, cooldown_interval=0)
    try:
        for task in tasks:
            RandomTuner(task).tune(n_trial=2, measure_option=autotvm.measure_option(builder, runner),
                                   callbacks=[callback.log_to_file(str(log))])
    finally:
        builder.close()
        runner.close()
    records = list(record.load_from_file(log))
    assert len(records) == 2 and all(res.error_no == 0 for _, res in records)
    assert record.pick_best(str(log), str(best)) == 1          # one best per task
    (fastest_inp, fastest_res), = sorted(record.load_from_file(best), key=lambda r: np.mean(r[1].costs))[:1]

    rng = np.random.default_rng(0)
    xv = rng.standard_normal((16, 24)).astype("float32")
    wv = rng.standard_normal((20, 24)).astype("float32")
    te_compiler.get().clear()
    with autotvm.apply_history_best(str(best)), rb.transform.PassContext(opt_level=3):
        lib = rb.build(mod, "llvm")
    cached = [value.cached_func for _, value in te_compiler.get().items()]
    chosen = [impl for cf in cached for _, impl in cf.implementations]
    assert fastest_inp.task.name in chosen                   # the tuned implementation
    answered = {fp for cf in cached for _, fp in cf.tuning_queries}
    assert config_fingerprint(fastest_inp.config).split("|")[0] in {fp.split("|")[0] for fp in answered}
    gm = rb.graph_executor.GraphModule(lib["default"](rb.cpu()))
    gm.set_input("x", xv)
    gm.set_input("w", wv)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), np.maximum(xv @ wv.T, 0), rtol=1e-4, atol=1e-4)
