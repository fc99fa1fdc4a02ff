"""Where a model comes from, on bad input: garbage or truncated bytes, missing paths, names that are
not UTF-8, external data that is missing, of the wrong size or outside the model's directory, and
the ONNX Backend's prepare/run. Each must raise a RelayError naming the file, tensor or input at
fault, and the valid neighbours (a path object, external data inside the directory) still load and
match onnxruntime."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, external_data_helper, helper, numpy_helper

from .conftest import add_model_with, assert_close, make_model, raises_relay_error, relu_model, run_ort

import relay_backend as relay  # noqa: E402
from relay_backend.errors import InputError, RelayError, SerializationError  # noqa: E402
from relay_backend.frontend.onnx.backend import RelayBackend  # noqa: E402

F = "float32"
R = np.random.default_rng(2)


# --- bytes and paths ---------------------------------------------------------------------------
@pytest.mark.parametrize("cut", [1, 5, 9])
def test_garbage_and_truncated_bytes_raise_serialization_error(cut, tmp_path):
    data = relu_model().SerializeToString()
    for bad in (b"\x08\x07garbage\xff\xff\xff", data[:-cut]):
        with pytest.raises(SerializationError, match="not a valid ONNX model"):
            relay.frontend.from_onnx(bad)
        path = tmp_path / "bad.onnx"
        path.write_bytes(bad)
        with pytest.raises(SerializationError, match=r"bad\.onnx.*not a valid ONNX model"):
            relay.frontend.from_onnx(str(path))


def test_empty_model_is_rejected():
    with pytest.raises(RelayError, match="no outputs"):
        relay.frontend.from_onnx(b"")


def test_missing_path_is_an_input_error(tmp_path):
    for path in (str(tmp_path / "nope.onnx"), tmp_path / "nope.onnx"):
        with pytest.raises(InputError, match=r"nope\.onnx.*does not exist"):
            relay.frontend.from_onnx(path)
    with pytest.raises(InputError, match="is a directory"):
        relay.frontend.from_onnx(str(tmp_path))


def test_a_path_object_loads_like_a_string(tmp_path):
    path = tmp_path / "relu.onnx"
    path.write_bytes(relu_model().SerializeToString())
    x = R.standard_normal((2, 3)).astype(F)
    mod, params = relay.frontend.from_onnx(path)
    out = relay.create_executor("debug", mod=mod).evaluate()(x)
    np.testing.assert_allclose(out.numpy(), np.maximum(x, 0), rtol=0, atol=0)


# --- external data ------------------------------------------------------------------------------
def _external_model(tmp_path, location, payload=None, **info):
    """A model file in tmp_path/model whose initializer 'w' lives at `location` (payload written there)."""
    root = tmp_path / "model"
    root.mkdir(exist_ok=True)
    w = np.arange(4, dtype=F)
    if payload is not None:
        (root / location).write_bytes(payload)
    t = numpy_helper.from_array(w, "w")
    external_data_helper.set_external_data(t, location=location, **info)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    m = add_model_with(t)
    path = root / "m.onnx"
    path.write_bytes(m.SerializeToString())
    return str(path), m, w


def test_valid_external_data_loads_and_matches_onnxruntime(tmp_path):
    w = np.arange(4, dtype=F)
    path, _, _ = _external_model(tmp_path, "w.bin", b"junk" + w.tobytes(), offset=4, length=16)
    x = R.standard_normal(4).astype(F)
    mod, params = relay.frontend.from_onnx(path)
    out = relay.create_executor("debug", mod=mod).evaluate()(x).numpy()
    import onnxruntime as ort
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(out, ref, rtol=0, atol=0)


def test_missing_external_data_names_the_tensor(tmp_path):
    path, model, _ = _external_model(tmp_path, "missing.bin")
    raises_relay_error(path, r"initializer 'w'.*'missing\.bin'.*does not exist")


@pytest.mark.parametrize("location", ["../../etc/passwd", "/etc/passwd", "sub/../../outside.bin"])
def test_external_data_outside_the_model_directory_is_refused(tmp_path, location):
    (tmp_path / "outside.bin").write_bytes(b"\0" * 16)
    path, _, _ = _external_model(tmp_path, location)
    raises_relay_error(path, r"initializer 'w'.*outside the model's directory")


def test_external_data_symlink_escaping_the_model_directory_is_refused(tmp_path):
    (tmp_path / "secret.bin").write_bytes(b"\1" * 16)
    path, _, _ = _external_model(tmp_path, "link.bin")
    os.symlink(tmp_path / "secret.bin", tmp_path / "model" / "link.bin")
    raises_relay_error(path, r"initializer 'w'.*outside the model's directory")


def test_external_data_of_the_wrong_size_is_refused(tmp_path):
    path, _, _ = _external_model(tmp_path, "short.bin", b"\0" * 12)
    raises_relay_error(path, r"initializer 'w'.*12 bytes.*needs 16")
    path, _, _ = _external_model(tmp_path, "w2.bin", b"\0" * 16, offset=8, length=16)
    raises_relay_error(path, r"initializer 'w'.*offset 8.*length 16.*16 bytes")


def test_external_data_of_an_in_memory_model_is_never_read_from_the_working_directory(tmp_path, monkeypatch):
    _, model, _ = _external_model(tmp_path, "w.bin", b"\0" * 16)
    monkeypatch.chdir(tmp_path / "model")  # the file exists relative to the working directory
    raises_relay_error(model, r"initializer 'w'.*external file 'w\.bin'.*pass the model's path")


# --- the onnx.backend Backend -------------------------------------------------------------------------
def test_backend_prepare_gives_the_importer_errors():
    m = make_model([helper.make_node("Add", ["x"], ["y"], name="n")], [("x", F, [2])], [("y", F, [2])])
    with pytest.raises(RelayError, match=r"'n' \(Add.*1 input"):
        RelayBackend.prepare(m)
    with pytest.raises(SerializationError, match="not a valid ONNX model"):
        RelayBackend.prepare(b"\x08\x07garbage\xff\xff\xff")
    with pytest.raises(InputError, match="does not exist"):
        RelayBackend.prepare("/nonexistent/model.onnx")
    m = relu_model()
    m.ClearField("ir_version")  # what only onnx.checker looks at: its message, as a RelayError
    with pytest.raises(RelayError, match="ONNX checker.*ir_version"):
        RelayBackend.prepare(m)


def test_backend_accepts_bytes_and_paths_and_checks_run_inputs(tmp_path):
    m = relu_model()
    x = R.standard_normal((2, 3)).astype(F)
    path = tmp_path / "relu.onnx"
    path.write_bytes(m.SerializeToString())
    for source in (m.SerializeToString(), str(path)):
        rep = RelayBackend.prepare(source, executor="debug")
        np.testing.assert_allclose(rep.run([x])[0], np.maximum(x, 0), rtol=0, atol=0)
    with pytest.raises(InputError, match=r"missing input\(s\) \['x'\].*expects \['x'\]"):
        rep.run({"z": x})
    with pytest.raises(InputError, match=r"2 inputs.*expects 1 \(\['x'\]\)"):
        rep.run([x, x])


def test_deferred_backend_rep_checks_run_inputs():
    """A model prepared lazily (its shape input arrives at run time) checks its inputs the same way."""
    m = make_model([helper.make_node("Reshape", ["x", "s"], ["y"])], [("x", F, [2, 3]), ("s", "int64", [2])],
                   [("y", F, [3, 2])])
    rep = RelayBackend.prepare(m, executor="debug")
    x, s = R.standard_normal((2, 3)).astype(F), np.array([3, 2], "int64")
    assert_close(rep.run({"x": x, "s": s}), run_ort(m, {"x": x, "s": s}))
    with pytest.raises(InputError, match=r"got 1 inputs.*expects 2 \(\['x', 's'\]\)"):
        rep.run([x])
    with pytest.raises(InputError, match=r"missing input\(s\) \['s'\]"):
        rep.run({"x": x})


def test_names_that_are_not_utf8_text_are_a_serialization_error(tmp_path):
    """protobuf parses invalid UTF-8 in a string field and hands it out as bytes; the loader names it."""
    m = make_model([helper.make_node("Relu", ["x"], ["y"], name="act")], [("x", F, [2])], [("y", F, [2])])
    data = m.SerializeToString().replace(b"Relu", b"R\xfflu")
    with pytest.raises(SerializationError, match=r"not valid UTF-8 in model\.graph\.node\[0\]\.op_type"):
        relay.frontend.from_onnx(data)
    parsed = onnx.ModelProto()
    parsed.ParseFromString(data)
    with pytest.raises(SerializationError, match="not valid UTF-8"):
        relay.frontend.from_onnx(parsed)
