"""`relay-backend tune` and `compile --tuning-records` end to end, in subprocesses as a user runs
them: a tiny ONNX model (Gemm + Relu) is tuned for a few trials per task into a log of TVM
records, the log is applied at compile time, and the compiled package still computes
onnxruntime's answer (tolerance 1e-4); a second `tune` into the same log resumes it without
measuring again; bad logs and options give one-line errors."""
import json
import os

import numpy as np
import pytest

from .test_cli import _cli

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

pytestmark = pytest.mark.compile
RNG = np.random.default_rng(1)


def _save(tmp_path, nodes, initializers, name, out_shape=(4, 16)):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("data", TensorProto.FLOAT, [4, 16])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, list(out_shape))],
                              initializer=initializers)
    path = tmp_path / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


@pytest.fixture(scope="module")
def dense_model(tmp_path_factory):
    """data [4,16] -> Gemm with a [16,16] weight (transB) -> Relu: one nn.dense with two x86
    templates at opt_level 2 (dense_pack, dense_dot); at opt_level 3, where `tune` and `compile`
    run, AlterOpLayout packs the constant weight and the one task is dense_pack_prepacked."""
    weight = RNG.standard_normal((16, 16)).astype("float32")
    nodes = [helper.make_node("Gemm", ["data", "w"], ["g"], transB=1), helper.make_node("Relu", ["g"], ["out"])]
    return _save(tmp_path_factory.mktemp("tune"), nodes, [numpy_helper.from_array(weight, "w")], "dense")


@pytest.fixture(scope="module")
def tuned_log(dense_model, tmp_path_factory):
    """(log path, stdout of `tune`) after 2 random trials per task (measuring needs pebble, the
    [tune] extra: the tests using the log skip without it)."""
    pytest.importorskip("pebble", reason="measuring needs pebble (pip install relay_backend[tune])")
    log = tmp_path_factory.mktemp("log") / "log.json"
    out = _cli("tune", dense_model, "-o", log, "--trials", "2", "--tuner", "random", "--parallel", "2",
               "--number", "2", "--repeat", "2").stdout
    return log, out


def _records(log):
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


@pytest.mark.slow  # measures configs in worker processes
def test_tune_writes_tvm_records_for_every_task(tuned_log):
    log, out = tuned_log
    records = _records(log)
    tasks = {r["input"][1] for r in records}
    assert tasks == {"dense_pack_prepacked.x86"}, out
    assert len(records) == 2 and all(r["result"][1] == 0 for r in records), out    # 2 trials, no errors
    assert all(r["input"][0].startswith("llvm") and min(r["result"][0]) > 0 for r in records)
    assert "task 1/1" in out and f"wrote {log}" in out


@pytest.mark.slow  # measures configs in worker processes
def test_compile_with_tuning_records_applies_them_and_stays_correct(dense_model, tuned_log, tmp_path):
    log, _ = tuned_log
    package = tmp_path / "tuned.tar"
    out = _cli("compile", dense_model, "-o", package, "--tuning-records", log).stdout
    assert "tuning records: 1 of 1 tunable workloads tuned" in out, out
    data = RNG.standard_normal((4, 16)).astype("float32")
    np.savez(tmp_path / "in.npz", data=data)
    _cli("run", package, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    sess = ort.InferenceSession(str(dense_model), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"data": data})[0]
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["output0"], want, rtol=1e-4, atol=1e-4)
    assert f"tuning records: {log.name} (1 workload tuned)" in _cli("info", package).stdout


@pytest.mark.slow  # measures configs in worker processes
def test_compile_with_records_of_other_workloads_applies_none(dense_model, tuned_log, tmp_path):
    """A log tuned for other shapes is valid but matches nothing: the count says so."""
    log, _ = tuned_log
    other = tmp_path / "other.json"
    other.write_text(log.read_text().replace("[4, 16]", "[5, 16]"))
    out = _cli("compile", dense_model, "-o", tmp_path / "x.tar", "--tuning-records", other).stdout
    assert "tuning records: 0 of 1 tunable workloads tuned" in out, out


@pytest.mark.slow  # measures configs in worker processes
def test_tune_again_resumes_the_log_without_measuring(dense_model, tuned_log, tmp_path):
    log, _ = tuned_log
    copy = tmp_path / "again.json"
    copy.write_text(log.read_text())
    out = _cli("tune", dense_model, "-o", copy, "--trials", "2", "--tuner", "random").stdout
    assert "resumed 2 measurements" in out and copy.read_text() == log.read_text(), out


def test_tune_a_model_without_tunable_operators(tmp_path):
    model = _save(tmp_path, [helper.make_node("Relu", ["data"], ["out"])], [], "plain")
    log = tmp_path / "plain.json"
    out = _cli("tune", model, "-o", log, "--trials", "4").stdout
    assert "no tunable operators" in out and log.exists() and log.read_text() == ""


@pytest.mark.parametrize("args, message", [
    (["compile", "{model}", "-o", "{tmp}/x.tar", "--tuning-records", "{tmp}/missing.json"], "does not exist"),
    (["compile", "{model}", "-o", "{tmp}/x.tar", "--tuning-records", "{tmp}/garbage.json"], "garbage.json:1"),
    (["tune", "{model}", "-o", "{tmp}/garbage.json"], "garbage.json:1"),
])
def test_bad_tuning_input_is_one_line_and_non_zero(dense_model, tmp_path, args, message):
    (tmp_path / "garbage.json").write_text("{not a record}\n")
    names = {"model": dense_model, "tmp": tmp_path}
    proc = _cli(*[a.format(**names) for a in args], cwd=tmp_path, check=False)
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert message in err and "Traceback" not in err, err
    if err.startswith("error:"):
        assert len(err.splitlines()) == 1, err


@pytest.mark.parametrize("args, message", [
    (["-o", "log.json", "--trials", "0"], "Invalid value for '--trials'"),
    (["-o", "log.json", "--tuner", "bogus"], "Invalid value for '--tuner'"),
    (["--trials", "2"], "Missing option '-o'"),
    (["-o", "log.json", "--timeout", "0"], "Invalid value for '--timeout'"),
    (["-o", "log.json", "--early-stopping", "-1"], "Invalid value for '--early-stopping'"),
])
def test_bad_tune_options_are_rejected_before_any_work(dense_model, tmp_path, args, message):
    """Option checks are click's (in process: no subprocess needed to see them)."""
    from click.testing import CliRunner
    from relay_backend.cli import cli
    runner = CliRunner()
    with runner.isolated_filesystem(temp_dir=tmp_path) as folder:
        result = runner.invoke(cli, ["tune", str(dense_model), *args])
        assert result.exit_code == 2 and message in result.output, result.output
        assert not os.path.exists(os.path.join(folder, "log.json"))


def test_tuner_choices_match_the_tuners():
    from relay_backend.cli.commands import TUNER_NAMES
    from relay_backend.cli.tuning import TUNERS
    assert set(TUNER_NAMES) == set(TUNERS)
