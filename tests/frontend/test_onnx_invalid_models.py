"""from_onnx and the ONNX Backend on invalid input: corrupt or missing files, nodes that break their
ONNX schema, inconsistent initializers, unsafe external data and bad from_onnx arguments. Each must
raise a RelayError that names the node, tensor or argument at fault (never a bare DecodeError,
KeyError, TypeError, ValueError or MemoryError), and the valid neighbours of these cases still
match onnxruntime."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, external_data_helper, helper, numpy_helper

from .conftest import assert_close, make_model, run_ort, run_relay

import relay_backend as relay  # noqa: E402
from relay_backend.errors import AllocationError, InputError, RelayError, SerializationError  # noqa: E402
from relay_backend.frontend.onnx.backend import RelayBackend  # noqa: E402

F = "float32"
R = np.random.default_rng(1)


def _relu_model():
    return make_model([helper.make_node("Relu", ["x"], ["y"], name="act")], [("x", F, [2, 3])], [("y", F, [2, 3])])


def _raises(model, pattern, error=RelayError, **kw):
    with pytest.raises(error, match=pattern):
        relay.frontend.from_onnx(model, **kw)


# --- item 1: Split sizes and duplicate output names -------------------------------------------------
@pytest.mark.parametrize("opset,sizes", [(13, [2, 2]), (13, [4, 2]), (13, [6, -1]), (11, [2, 2])])
def test_split_sizes_that_do_not_sum_to_the_axis_are_rejected(opset, sizes):
    if opset >= 13:
        node = helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0, name="cut")
        inits = {"s": np.array(sizes, "int64")}
    else:
        node, inits = helper.make_node("Split", ["x"], ["a", "b"], axis=0, split=sizes, name="cut"), {}
    m = make_model([node], [("x", F, [5, 2])], [("a", F, None), ("b", F, None)], inits, opset=opset)
    _raises(m, r"'cut' \(Split.*split sizes .* axis 0 has length 5")


def test_split_count_must_match_the_outputs():
    node = helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0, name="cut")
    m = make_model([node], [("x", F, [6])], [("a", F, None), ("b", F, None)], {"s": np.array([2, 2, 2], "int64")})
    _raises(m, r"'cut' \(Split.*3 split sizes.*2 outputs")
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=3, name="cut")
    m = make_model([node], [("x", F, [6])], [("a", F, None), ("b", F, None)], opset=18)
    _raises(m, r"'cut' \(Split.*num_outputs=3.*2 outputs")


def test_split_into_equal_parts_needs_a_divisible_axis_before_opset_18():
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=1, name="cut")
    m = make_model([node], [("x", F, [2, 5])], [("a", F, None), ("b", F, None)])
    _raises(m, r"'cut' \(Split.*length 5.*2 equal parts")


def test_split_axis_out_of_range():
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=2, name="cut")
    m = make_model([node], [("x", F, [2, 4])], [("a", F, None), ("b", F, None)])
    _raises(m, r"'cut' \(Split.*axis=2 is out of range")


def test_valid_splits_still_match_onnxruntime():
    x = R.standard_normal((5, 4)).astype(F)
    node = helper.make_node("Split", ["x", "s"], ["a", "b", "c"], axis=0)
    m = make_model([node], [("x", F, [5, 4])], [("a", F, None), ("b", F, None), ("c", F, None)],
                   {"s": np.array([1, 0, 4], "int64")})
    assert_close(run_relay(m, {"x": x}), run_ort(m, {"x": x}))
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2)
    m = make_model([node], [("x", F, [5, 4])], [("a", F, None), ("b", F, None)], opset=18)
    assert_close(run_relay(m, {"x": x}), run_ort(m, {"x": x}))


def test_two_nodes_writing_one_output_name_are_rejected():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="first"), helper.make_node("Neg", ["x"], ["y"], name="second")]
    m = make_model(nodes, [("x", F, [2])], [("y", F, [2])])
    _raises(m, r"'second' \(Neg\).*'y'.*'first' \(Relu\)")


def test_a_node_overwriting_a_graph_input_or_initializer_is_rejected():
    m = make_model([helper.make_node("Relu", ["x"], ["x"], name="loop")], [("x", F, [2])], [("x", F, [2])])
    _raises(m, r"'loop' \(Relu\).*'x'.*graph input")
    m = make_model([helper.make_node("Neg", ["x"], ["w"], name="over"), helper.make_node("Add", ["w", "x"], ["y"])],
                   [("x", F, [2])], [("y", F, [2])], {"w": np.ones(2, F)})
    _raises(m, r"'over' \(Neg\).*'w'.*initializer")


def test_duplicate_graph_inputs_and_initializers_are_rejected():
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, [2]), ("x", F, [2])], [("y", F, [2])])
    _raises(m, r"graph input 'x' is declared twice")
    m = make_model([helper.make_node("Add", ["x", "w"], ["y"])], [("x", F, [2])], [("y", F, [2])], {"w": np.ones(2, F)})
    m.graph.initializer.append(numpy_helper.from_array(np.zeros(2, F), "w"))
    _raises(m, r"initializer 'w' is declared twice")


# --- item 2: bytes and paths ---------------------------------------------------------------------------
@pytest.mark.parametrize("cut", [1, 5, 9])
def test_garbage_and_truncated_bytes_raise_serialization_error(cut, tmp_path):
    data = _relu_model().SerializeToString()
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
    path.write_bytes(_relu_model().SerializeToString())
    x = R.standard_normal((2, 3)).astype(F)
    mod, params = relay.frontend.from_onnx(path)
    out = relay.create_executor("debug", mod=mod).evaluate()(x)
    np.testing.assert_allclose(out.numpy(), np.maximum(x, 0), rtol=0, atol=0)


# --- item 2: nodes that break their schema -------------------------------------------------------------
def _softmax_axis(value):
    node = helper.make_node("Softmax", ["x"], ["y"], name="sm")
    node.attribute.append(helper.make_attribute("axis", value))
    return node


MALFORMED_NODES = {
    "add_one_input": (helper.make_node("Add", ["x"], ["y"], name="n"), r"'n' \(Add.*1 input.*needs 2"),
    "add_three_inputs": (helper.make_node("Add", ["x", "x", "x"], ["y"], name="n"), r"'n' \(Add.*3 input.*needs 2"),
    "add_empty_required_input": (helper.make_node("Add", ["x", ""], ["y"], name="n"),
                                 r"'n' \(Add.*input 1 \(B\).*empty"),
    "relu_two_outputs": (helper.make_node("Relu", ["x"], ["y", "z"], name="n"), r"'n' \(Relu.*2 output.*1"),
    "concat_without_axis": (helper.make_node("Concat", ["x", "x"], ["y"], name="n"), r"'n' \(Concat.*required.*'axis'"),
    "maxpool_without_kernel": (helper.make_node("MaxPool", ["x"], ["y"], name="n"),
                               r"'n' \(MaxPool.*required.*'kernel_shape'"),
    "softmax_axis_list": (_softmax_axis([1]), r"'sm' \(Softmax.*attribute 'axis' is INTS.*INT"),
    "softmax_axis_string": (_softmax_axis("1"), r"'sm' \(Softmax.*attribute 'axis' is STRING.*INT"),
    "softmax_axis_float": (_softmax_axis(1.0), r"'sm' \(Softmax.*attribute 'axis' is FLOAT.*INT"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_NODES))
def test_nodes_that_break_their_schema_are_named(case):
    node, pattern = MALFORMED_NODES[case]
    m = make_model([node], [("x", F, [1, 1, 4, 4])], [("y", F, None)])
    m.graph.output[0].type.tensor_type.ClearField("shape")
    _raises(m, pattern)


def test_attribute_without_a_type_and_duplicate_attributes_are_named():
    node = helper.make_node("Relu", ["x"], ["y"], name="n")
    node.attribute.add(name="alpha")  # type UNDEFINED
    m = make_model([node], [("x", F, [2])], [("y", F, [2])])
    _raises(m, r"'n' \(Relu.*attribute 'alpha' has no type")
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="n", alpha=0.1)
    node.attribute.append(helper.make_attribute("alpha", 0.2))
    m = make_model([node], [("x", F, [2])], [("y", F, [2])])
    _raises(m, r"'n' \(LeakyRelu.*attribute 'alpha' is given 2 times")


def test_every_schema_problem_is_listed_at_once():
    nodes = [helper.make_node("Add", ["x"], ["a"], name="first"),
             helper.make_node("Concat", ["a", "a"], ["y"], name="second")]
    m = make_model(nodes, [("x", F, [2])], [("y", F, [4])])
    with pytest.raises(RelayError) as err:
        relay.frontend.from_onnx(m)
    assert "2 node(s)" in str(err.value) and "'first' (Add" in str(err.value) and "'second' (Concat" in str(err.value)


# --- item 2: initializers and Constant tensors ----------------------------------------------------------
def _tensor(dims, raw=None, floats=None):
    """A float TensorProto named 'w' whose data need not match its dims (helper.make_tensor checks)."""
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=dims)
    if raw is not None:
        t.raw_data = raw
    t.float_data.extend(floats or [])
    return t


def _add_init(tensor):
    m = make_model([helper.make_node("Add", ["x", "w"], ["y"])], [("x", F, [4])], [("y", F, [4])])
    m.graph.initializer.append(tensor)
    return m


def test_raw_data_length_must_match_the_dims():
    _raises(_add_init(_tensor([4], raw=b"\0" * 10)),
            r"initializer 'w'.*10 bytes.*\(4,\) float32 needs 16")


def test_typed_data_count_must_match_the_dims():
    _raises(_add_init(_tensor([4], floats=[1.0, 2.0])), r"initializer 'w'.*2 value")


def test_unknown_data_type_is_named():
    t = helper.make_tensor("w", TensorProto.FLOAT, [4], b"\0" * 16, raw=True)
    t.data_type = 99
    _raises(_add_init(t), r"initializer 'w'.*element type 99")


def test_negative_and_huge_initializer_dims_are_rejected_before_allocating():
    _raises(_add_init(_tensor([-4], raw=b"\0" * 16)), r"initializer 'w'.*negative")
    _raises(_add_init(_tensor([1 << 20, 1 << 20, 1 << 10], raw=b"")), r"initializer 'w'", error=AllocationError)


def test_bad_constant_node_tensor_names_the_node():
    m = make_model([helper.make_node("Constant", [], ["y"], value=_tensor([4], raw=b"\0" * 10), name="k")], [],
                   [("y", F, [4])])
    _raises(m, r"'k' \(Constant.*10 bytes")


# --- item 2: ConstantOfShape and Range --------------------------------------------------------------------
def _cos(dims):
    return make_model([helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill")], [], [("y", F, None)],
                      {"s": np.array(dims, "int64")})


def test_constant_of_shape_rejects_negative_and_huge_dims():
    _raises(_cos([2, -3]), r"'fill' \(ConstantOfShape.*negative")
    _raises(_cos([1 << 20, 1 << 20, 1 << 10]), r"'fill' \(ConstantOfShape", error=AllocationError)
    assert_close(run_relay(_cos([2, 0, 3]), {}), run_ort(_cos([2, 0, 3]), {}))


def _range(start, limit, delta, dtype=F):
    inits = {"a": np.array(start, dtype), "b": np.array(limit, dtype), "c": np.array(delta, dtype)}
    return make_model([helper.make_node("Range", ["a", "b", "c"], ["y"], name="rng")], [], [("y", dtype, None)], inits)


def test_range_rejects_a_zero_delta_and_a_huge_length():
    _raises(_range(0, 5, 0), r"'rng' \(Range.*delta is 0")
    _raises(_range(0, 5, 0, "int64"), r"'rng' \(Range.*delta is 0")
    _raises(_range(0, 1e15, 1), r"'rng' \(Range", error=AllocationError)
    _raises(_range(0, np.inf, 1), r"'rng' \(Range.*finite")
    for args in ((0, 5, 2), (5, 0, -1.5), (3, 1, 1)):
        assert_close(run_relay(_range(*args), {}), run_ort(_range(*args), {}))


# --- item 2: from_onnx arguments ------------------------------------------------------------------------
@pytest.mark.parametrize("kw,pattern", [
    (dict(opset="abc"), r"opset='abc'.*integer"),
    (dict(opset=True), r"opset=True.*integer"),
    (dict(opset=0), r"opset=0"),
    (dict(opset=1000), r"opset 1000.*up to"),
    (dict(shape=[1]), r"shape=\[1\].*dict"),
    (dict(shape={"x": "ab"}), r"shape\['x'\]='ab'"),
    (dict(shape={"x": (2, 2.5)}), r"shape\['x'\]=\(2, 2.5\)"),
    (dict(shape={"z": (2,)}), r"shape names 'z'.*inputs are \['x'\]"),
    (dict(dtype=5), r"dtype=5"),
    (dict(dtype="floaty"), r"dtype='floaty'"),
    (dict(dtype={"z": "float32"}), r"dtype names 'z'.*inputs are \['x'\]"),
    (dict(dtype={"x": "floaty"}), r"dtype\['x'\]='floaty'"),
])
def test_bad_from_onnx_arguments_name_the_argument(kw, pattern):
    _raises(_relu_model(), pattern, error=InputError, **kw)


def test_model_opset_beyond_the_installed_onnx_is_rejected():
    m = _relu_model()
    m.opset_import[0].version = 1000
    _raises(m, r"opset 1000.*up to")


# --- item 2: external data ------------------------------------------------------------------------------
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
    m = _add_init(t)
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
    _raises(path, r"initializer 'w'.*'missing\.bin'.*does not exist")


@pytest.mark.parametrize("location", ["../../etc/passwd", "/etc/passwd", "sub/../../outside.bin"])
def test_external_data_outside_the_model_directory_is_refused(tmp_path, location):
    (tmp_path / "outside.bin").write_bytes(b"\0" * 16)
    path, _, _ = _external_model(tmp_path, location)
    _raises(path, r"initializer 'w'.*outside the model's directory")


def test_external_data_symlink_escaping_the_model_directory_is_refused(tmp_path):
    (tmp_path / "secret.bin").write_bytes(b"\1" * 16)
    path, _, _ = _external_model(tmp_path, "link.bin")
    os.symlink(tmp_path / "secret.bin", tmp_path / "model" / "link.bin")
    _raises(path, r"initializer 'w'.*outside the model's directory")


def test_external_data_of_the_wrong_size_is_refused(tmp_path):
    path, _, _ = _external_model(tmp_path, "short.bin", b"\0" * 12)
    _raises(path, r"initializer 'w'.*12 bytes.*needs 16")
    path, _, _ = _external_model(tmp_path, "w2.bin", b"\0" * 16, offset=8, length=16)
    _raises(path, r"initializer 'w'.*offset 8.*length 16.*16 bytes")


def test_external_data_of_an_in_memory_model_is_never_read_from_the_working_directory(tmp_path, monkeypatch):
    _, model, _ = _external_model(tmp_path, "w.bin", b"\0" * 16)
    monkeypatch.chdir(tmp_path / "model")  # the file exists relative to the working directory
    _raises(model, r"initializer 'w'.*external file 'w\.bin'.*pass the model's path")


# --- the onnx.backend Backend -------------------------------------------------------------------------
def test_backend_prepare_gives_the_importer_errors():
    m = make_model([helper.make_node("Add", ["x"], ["y"], name="n")], [("x", F, [2])], [("y", F, [2])])
    with pytest.raises(RelayError, match=r"'n' \(Add.*1 input"):
        RelayBackend.prepare(m)
    with pytest.raises(SerializationError, match="not a valid ONNX model"):
        RelayBackend.prepare(b"\x08\x07garbage\xff\xff\xff")
    with pytest.raises(InputError, match="does not exist"):
        RelayBackend.prepare("/nonexistent/model.onnx")
    m = _relu_model()
    m.ClearField("ir_version")  # what only onnx.checker looks at: its message, as a RelayError
    with pytest.raises(RelayError, match="ONNX checker.*ir_version"):
        RelayBackend.prepare(m)


def test_backend_accepts_bytes_and_paths_and_checks_run_inputs(tmp_path):
    m = _relu_model()
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


# --- value checks inside converters (found by the mutation tests) ------------------------------------------
def _with_attr(node, name, value, attr_type):
    node.attribute.append(helper.make_attribute(name, value, attr_type=attr_type))
    return node


CONVERTER_CASES = {
    "pool_empty_kernel": ([_with_attr(helper.make_node("MaxPool", ["x"], ["y"], name="n"), "kernel_shape", [],
                                      onnx.AttributeProto.INTS)], {}, r"'n' \(MaxPool.*kernel_shape is empty"),
    "pool_kernel_rank": ([helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2, 2], name="n")], {},
                         r"'n' \(AveragePool.*kernel_shape=\[2, 2, 2\] must hold 2 value"),
    "pool_zero_stride": ([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[0, 1], name="n")],
                         {}, r"'n' \(MaxPool.*strides=\[0, 1\] must hold 2 value\(s\) >= 1"),
    "conv_short_pads": ([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1], name="n")],
                        {"w": np.ones((1, 1, 2, 2), F)}, r"'n' \(Conv.*pads=\[1\] must hold 4"),
    "conv_negative_pads": ([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, -1, 0, 0], name="n")],
                           {"w": np.ones((1, 1, 2, 2), F)}, r"'n' \(Conv.*non-negative"),
    "conv_transpose_short_pads": ([helper.make_node("ConvTranspose", ["x", "w"], ["y"], pads=[1, 1], name="n")],
                                  {"w": np.ones((1, 1, 2, 2), F)}, r"'n' \(ConvTranspose.*pads=\[1, 1\] must hold 4"),
    "conv_transpose_output_padding": ([helper.make_node("ConvTranspose", ["x", "w"], ["y"], output_padding=[1],
                                                        name="n")], {"w": np.ones((1, 1, 2, 2), F)},
                                      r"'n' \(ConvTranspose.*output_padding=\[1\] must hold 2 value\(s\) >= 0"),
    "clip_vector_bound": ([helper.make_node("Clip", ["x", "lo"], ["y"], name="n")], {"lo": np.zeros(3, F)},
                          r"'n' \(Clip.*min must be a scalar.*\(3,\)"),
    "pad_short_pads": ([helper.make_node("Pad", ["x", "p"], ["y"], name="n")], {"p": np.zeros(3, "int64")},
                       r"'n' \(Pad.*3 values.*4 padded axes need 8"),
    "pad_axis_out_of_range": ([helper.make_node("Pad", ["x", "p", "", "a"], ["y"], name="n")],
                              {"p": np.zeros(2, "int64"), "a": np.array([7], "int64")},
                              r"'n' \(Pad.*axes \[7\] are out of range"),
    "expand_negative": ([helper.make_node("Expand", ["x", "s"], ["y"], name="n")], {"s": np.array([-1, 1], "int64")},
                        r"'n' \(Expand.*negative dimension"),
    "expand_incompatible": ([helper.make_node("Expand", ["x", "s"], ["y"], name="n")], {"s": np.array([3, 5], "int64")},
                            r"'n' \(Expand.*\(1, 1, 4, 4\) cannot be broadcast to the shape \[3, 5\]"),
}


@pytest.mark.parametrize("case", sorted(CONVERTER_CASES))
def test_converters_name_invalid_values(case):
    nodes, inits, pattern = CONVERTER_CASES[case]
    m = make_model(nodes, [("x", F, [1, 1, 4, 4])], [("y", F, None)], inits, opset=18)
    m.graph.output[0].type.tensor_type.ClearField("shape")
    with pytest.raises(RelayError, match=pattern) as err:
        relay.frontend.from_onnx(m)
    assert err.value.__cause__ is None or isinstance(err.value.__cause__, RelayError), "not diagnosed by a check"


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_pow_with_a_negative_constant_exponent_matches_onnxruntime(dtype):
    m = make_model([helper.make_node("Pow", ["x", "e"], ["y"])], [("x", dtype, [5])], [("y", dtype, [5])],
                   {"e": np.array([-1, -2, -1, -3, 2], dtype)}, opset=15)
    feeds = {"x": np.array([2, 3, -2, 1, 7], dtype)}
    for kind in ("debug", "graph"):
        assert_close(run_relay(m, feeds, kind), run_ort(m, feeds))


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


def test_a_node_that_crashes_onnx_shape_inference_is_reported_not_a_segfault():
    """After a node fails, the importer types its outputs with ONNX shape inference to keep checking
    the nodes after it; onnx 1.17's inference segfaults on a Conv over a rank-2 input (onnx/onnx#6180).
    The import must survive that (run in a child process here, so a crash cannot take pytest down)."""
    import subprocess
    import sys
    script = (
        "import numpy as np\n"
        "from onnx import helper, numpy_helper\n"
        "import relay_backend as relay\n"
        "g = helper.make_graph([helper.make_node('Conv', ['x', 'w'], ['c'], name='conv'),\n"
        "                       helper.make_node('Relu', ['c'], ['y'])], 'g',\n"
        "                      [helper.make_tensor_value_info('x', 1, [1, 8])], [helper.make_tensor_value_info('y', 1, None)],\n"
        "                      [numpy_helper.from_array(np.zeros((4, 2, 3, 3), 'float32'), 'w')])\n"
        "m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])\n"
        "try:\n"
        "    relay.frontend.from_onnx(m)\n"
        "except relay.errors.RelayError as err:\n"
        "    print('RelayError:', err)\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, f"the import crashed (exit {done.returncode}): {done.stderr[-2000:]}"
    assert "RelayError:" in done.stdout and "'conv' (Conv" in done.stdout, done.stdout + done.stderr[-2000:]
