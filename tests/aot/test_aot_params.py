"""Constants live in model_params.bin, included by model.c's `.incbin`, not in the C text: model.c
stays small for a model with >10 MB of weights, the library and the exported program still match
the interpreter, and a wrong, truncated or corrupt params file is reported, never used."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.aot import check_params, pack_params
from relay_backend.aot.params import HEADER_BYTES
from relay_backend.errors import SerializationError

pytestmark = pytest.mark.compile
RTOL = ATOL = 1e-4


def _big_model(seed=0):
    """conv (8x4x3x3) -> relu -> flatten -> dense 2048x2048 (16 MiB) -> bias -> relu."""
    rng = np.random.default_rng(seed)
    x = relay.var("data", shape=(1, 4, 16, 16))
    w_conv = relay.const((rng.standard_normal((8, 4, 3, 3)) * 0.3).astype("float32"))
    w_dense = relay.const((rng.standard_normal((2048, 2048)) / 45.0).astype("float32"))
    bias = relay.const(rng.standard_normal(2048).astype("float32"))
    y = relay.nn.relu(relay.nn.conv2d(x, w_conv, padding=(1, 1)))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(relay.nn.batch_flatten(y), w_dense), bias))
    return relay.IRModule.from_expr(relay.Function([x], y))


@pytest.fixture(scope="module")
def big():
    mod = _big_model()
    data = np.random.default_rng(1).standard_normal((1, 4, 16, 16)).astype("float32")
    expected = relay.create_executor("debug", mod=mod).evaluate()(data).numpy()
    return mod, data, expected, relay.build(mod, target="llvm", executor="aot")


def test_weights_stay_out_of_model_c(big):
    mod, data, expected, factory = big
    c_source = factory.get_source("c")
    assert len(factory.params_blob) > 16 * 2 ** 20
    assert len(c_source) < 200 * 1024, f"model.c is {len(c_source)} bytes"
    assert ".incbin" in c_source and "extern const uint8_t tvmgen_default_params[]" in c_source
    offsets = [int(m) for m in re.findall(r"\] at (\d+), \d+ bytes \*/", c_source)]
    assert len(offsets) == 3 and all(off % 64 == 0 for off in offsets)
    assert check_params(factory.params_blob) == 3
    out = relay.create_executor("aot", mod=mod).evaluate()(data).numpy()
    np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


def test_exported_big_model_builds_and_matches(big, tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    _, data, expected, factory = big
    out_dir = factory.export_library(str(tmp_path / "model"))
    assert os.path.getsize(os.path.join(out_dir, "model_params.bin")) == len(factory.params_blob)
    proc = subprocess.run(["make", "-s", "model_run"], cwd=out_dir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    data.tofile(os.path.join(out_dir, "inputs.bin"))
    proc = subprocess.run(["./model_run", "inputs.bin", "outputs.bin"], cwd=out_dir,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = np.fromfile(os.path.join(out_dir, "outputs.bin"), dtype="float32").reshape(expected.shape)
    np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


def test_params_of_another_model_are_rejected(tmp_path):
    """Same structure, other weights: the program built with the other model_params.bin
    returns TVMGEN_DEFAULT_ERR_PARAMS instead of computing with the wrong weights."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    x = relay.var("x", shape=(64,))
    dirs = []
    for k in range(2):
        w = relay.const(np.full(64, k + 1.0, "float32"))
        mod = relay.IRModule.from_expr(relay.Function([x], relay.multiply(x, w)))
        dirs.append(relay.build(mod, executor="aot").export_library(str(tmp_path / f"m{k}")))
    shutil.copy(os.path.join(dirs[1], "model_params.bin"), os.path.join(dirs[0], "model_params.bin"))
    assert subprocess.run(["make", "-s", "model_run"], cwd=dirs[0], capture_output=True).returncode == 0
    np.ones(64, "float32").tofile(os.path.join(dirs[0], "in.bin"))
    proc = subprocess.run(["./model_run", "in.bin", "out.bin"], cwd=dirs[0], capture_output=True, text=True)
    assert proc.returncode != 0 and "tvmgen_default_run failed: -4" in proc.stderr
    # a missing file is a build error that names it
    os.remove(os.path.join(dirs[1], "model_params.bin"))
    proc = subprocess.run(["make", "-s", "model_run"], cwd=dirs[1], capture_output=True, text=True)
    assert proc.returncode != 0 and "model_params.bin" in proc.stderr


def test_params_file_can_be_named_when_building_elsewhere(tmp_path):
    """Built from another directory, -DTVMGEN_DEFAULT_PARAMS_FILE points .incbin at the file."""
    from relay_backend.codegen.c_compiler import find_cc
    x = relay.var("x", shape=(8,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(np.arange(8, dtype="float32")))))
    out_dir = relay.build(mod, target="c", executor="aot").export_library(str(tmp_path / "model"))
    params = os.path.join(out_dir, "model_params.bin")      # target "c": main.c + model.c is all
    build = tmp_path / "elsewhere"
    build.mkdir()
    proc = subprocess.run([*find_cc(), "-O1", "-std=c99", f"-DTVMGEN_DEFAULT_PARAMS_FILE=\"{params}\"",
                           os.path.join(out_dir, "main.c"), os.path.join(out_dir, "model.c"),
                           "-o", "model_run", "-lm"], cwd=build, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    np.zeros(8, "float32").tofile(build / "in.bin")
    proc = subprocess.run(["./model_run", "in.bin", "out.bin"], cwd=build, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.fromfile(build / "out.bin", dtype="float32"), np.arange(8))


def test_pack_params_layout_and_checks():
    arrays = [np.arange(5, dtype="float32"), np.array([True, False]), np.zeros((0, 3), "int64"),
              np.arange(6, dtype=">i4").reshape(2, 3), np.array([1.5, -2], "float16")]
    blob = pack_params(arrays)
    assert blob.offsets[0] == HEADER_BYTES and all(off % 64 == 0 for off in blob.offsets)
    assert len(blob) % 64 == 0 and check_params(blob.data) == len(arrays)
    for arr, off, size in zip(arrays, blob.offsets, blob.sizes):
        native = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
        assert blob.data[off:off + size] == native.tobytes()
    with pytest.raises(SerializationError, match="truncated or padded"):
        check_params(blob.data[:-64])
    with pytest.raises(SerializationError, match="not an AOT params file"):
        check_params(b"x" * 128)
    corrupt = bytearray(blob.data)
    corrupt[HEADER_BYTES] ^= 1
    with pytest.raises(SerializationError, match="digest"):
        check_params(bytes(corrupt))
    with pytest.raises(SerializationError, match="too short"):
        check_params(b"RBAOTPRM")


def test_scratch_size_expression_stays_small():
    """RB_MAX_CONST repeats its arguments: a left-nested chain over ResNet-50's 18 kernel scratch
    sizes expanded to 2^18 copies (a minute of cc); the tree is balanced and duplicates dropped."""
    from relay_backend.aot.codegen import max_expr
    terms = [f"RB_ALIGN64_CONST({k} * TVMGEN_DEFAULT_MAX_THREADS)" for k in range(32)]
    expr = max_expr(terms + terms)

    def expanded(e):        # characters after expanding RB_MAX_CONST(a, b) -> a > b ? a : b
        if not e.startswith("RB_MAX_CONST("):
            return len(e)
        depth, inner = 0, e[len("RB_MAX_CONST("):-1]
        for i, ch in enumerate(inner):
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                return 2 * (expanded(inner[:i]) + expanded(inner[i + 2:]))
        raise AssertionError(e)
    assert expr.count("RB_ALIGN64_CONST(") == 32
    assert expanded(expr) < 32 * 32 * len(terms[-1])
    assert max_expr(["7"]) == "7" and max_expr([]) == "0"


def test_fixed_scratch_sizes_fold_to_one_number():
    """Kernels whose scratch does not depend on the thread count share one folded number."""
    from relay_backend.testing import resnet
    mod, params = resnet.get_block_workload(channels=16, image_size=32)
    source = relay.build(mod, params=params, executor="aot").get_source("c")
    define = re.search(r"#define TVMGEN_DEFAULT_SCRATCH_BYTES \((.*)\)  /\*", source).group(1)
    assert define.count("RB_MAX_CONST") <= define.count("MAX_THREADS"), define
