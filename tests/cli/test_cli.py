"""The `relay-backend` command line end to end, each command in a subprocess as a user runs it:
compile -> run -> info -> export-c (and the exported project builds with make and runs), the
outputs checked against onnxruntime; bad files, shapes and options give one-line errors and a
non-zero exit."""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

pytestmark = pytest.mark.compile
RNG = np.random.default_rng(0)
# the model's convolution as info and profiles name it: compiled at the CLI's opt_level 3, x86
# hosts run it as AlterOpLayout's channel-blocked nn.contrib_conv2d_NCHWc
CONV_OP = re.compile(r"nn\.(conv2d|contrib_conv2d_NCHWc)\b")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _cli(*args, cwd=None, check=True):
    path = os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH", "")]))
    env = {**os.environ, "RB_PROGRESS": "0", "PYTHONPATH": path}    # this checkout's relay_backend
    proc = subprocess.run([sys.executable, "-m", "relay_backend", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=600)
    if check:
        assert proc.returncode == 0, f"{args}: {proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    """A small conv net: data [1,3,8,8] -> conv 4x3x3x3 + relu -> flatten -> gemm 5 -> softmax."""
    w = RNG.standard_normal((4, 3, 3, 3)).astype("float32")
    fc = RNG.standard_normal((5, 4 * 8 * 8)).astype("float32") * 0.1
    nodes = [helper.make_node("Conv", ["data", "w"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["g"], transB=1),
             helper.make_node("Softmax", ["g"], ["prob"], axis=1)]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 5])],
                              initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(fc, "fc")])
    path = tmp_path_factory.mktemp("model") / "cnn.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def _reference(model_path, data):
    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    return sess.run(None, {"data": data})[0]


@pytest.mark.parametrize("executor", ["graph", pytest.param("vm", marks=pytest.mark.slow),
                                      pytest.param("aot", marks=pytest.mark.slow)])
def test_compile_run_info(model_path, tmp_path, executor):
    package = tmp_path / f"cnn_{executor}.tar"
    out = _cli("compile", model_path, "-o", package, "--executor", executor).stdout
    assert f"{executor} executor" in out and package.exists()
    data = RNG.standard_normal((1, 3, 8, 8)).astype("float32")
    np.savez(tmp_path / "in.npz", data=data)
    run = _cli("run", package, "--inputs", tmp_path / "in.npz", "--print-top", "3", "--repeat", "2",
               "--outputs", tmp_path / "out.npz").stdout
    got = np.load(tmp_path / "out.npz")["output0"]
    want = _reference(model_path, data)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert f"top 1: index {int(np.argmax(want))}" in run and "output 0: shape (1, 5) float32" in run
    info = _cli("info", package).stdout
    assert "data: Tensor[(1, 3, 8, 8), float32]" in info and "output0: Tensor[(1, 5), float32]" in info
    assert CONV_OP.search(info) and "memory plan:" in info


def test_run_profile_writes_json_and_trace(model_path, tmp_path):
    package = tmp_path / "cnn.tar"
    _cli("compile", model_path, "-o", package, "--viz", tmp_path / "viz")
    assert (tmp_path / "viz" / "relay.dot").exists() and (tmp_path / "viz" / "kernels.dot").exists()
    out = _cli("run", package, "--fill-mode", "ones", "--profile", "--profile-json", tmp_path / "p.json",
               "--trace", tmp_path / "t.json").stdout
    assert "graph profile" in out and "GFLOP/s" in out
    profile = json.loads((tmp_path / "p.json").read_text())
    assert profile["executor"] == "graph" and any(CONV_OP.fullmatch(op) for r in profile["rows"] for op in r["ops"])
    trace = json.loads((tmp_path / "t.json").read_text())
    assert any(e["ph"] == "X" for e in trace["traceEvents"])


@pytest.mark.slow
def test_export_c_project_builds_with_make_and_runs(model_path, tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    folder = tmp_path / "project"
    _cli("export-c", model_path, "-o", folder)
    proc = subprocess.run(["make", "-C", str(folder)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert (folder / "model_run").exists() and (folder / "libmodel.so").exists()


@pytest.mark.parametrize("args, message", [
    (["compile", "{missing}", "-o", "x.tar"], "does not exist"),
    (["compile", "{model}", "-o", "{tmp}/x.tar", "--input-shapes", "data:[1,3,8"], "--input-shapes"),
    (["compile", "{model}", "-o", "{tmp}/x.tar", "--input-shapes", "dta:[1,3,8,8]"], "not an input of the model"),
    (["compile", "{model}", "-o", "{tmp}/x.tar", "--executor", "tvm"], "Invalid value for '--executor'"),
    (["run", "{model}"], "not a model package"),
    (["info", "{notonnx}"], "not a model package"),
    (["compile", "{notonnx}", "-o", "{tmp}/x.tar"], "error:"),
])
def test_bad_input_is_one_line_and_non_zero(model_path, tmp_path, args, message):
    (tmp_path / "garbage.onnx").write_bytes(b"not a model at all")
    names = {"missing": tmp_path / "nope.onnx", "model": model_path, "tmp": tmp_path,
             "notonnx": tmp_path / "garbage.onnx"}
    proc = _cli(*[a.format(**names) for a in args], cwd=tmp_path, check=False)
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert message in err, err
    assert "Traceback" not in err
    if err.startswith("error:"):
        assert len(err.splitlines()) == 1


@pytest.mark.parametrize("command", ["compile", "run", "info", "export-c", "tune"])
def test_every_subcommand_has_help(command):
    """In-process (click's runner: a process per subcommand cost seconds each); the console
    entry point itself runs in the subprocess tests above."""
    from click.testing import CliRunner
    from relay_backend.cli import cli
    result = CliRunner().invoke(cli, [command, "--help"], prog_name="relay-backend")
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output and command in result.output


def test_console_script_entry_point_is_declared():
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(os.path.dirname(__file__), "..", "..", "setup.cfg"))
    assert "relay-backend = relay_backend.cli:main" in cfg["options.entry_points"]["console_scripts"]
