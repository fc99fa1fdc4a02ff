"""from_onnx on invalid models: nodes that break their ONNX schema, values defined twice, Split sizes
that do not add up, inconsistent initializers, sizes too large to allocate, invalid values that
converters check, and bad from_onnx arguments. Each must raise a RelayError that names the node,
tensor or argument at fault (never a bare KeyError, TypeError, ValueError or MemoryError), and the
valid neighbours of these cases still match onnxruntime. (Files, bytes, external data and the
ONNX Backend: test_onnx_model_sources.py.)"""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from .conftest import add_model_with, assert_close, make_model, raises_relay_error, relu_model, run_ort, run_relay

import relay_backend as relay  # noqa: E402
from relay_backend.errors import AllocationError, InputError, RelayError  # noqa: E402

F = "float32"
R = np.random.default_rng(1)


# --- Split sizes and duplicate output names -------------------------------------------------
@pytest.mark.parametrize("opset,sizes", [(13, [2, 2]), (13, [4, 2]), (13, [6, -1]), (11, [2, 2])])
def test_split_sizes_that_do_not_sum_to_the_axis_are_rejected(opset, sizes):
    if opset >= 13:
        node = helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0, name="cut")
        inits = {"s": np.array(sizes, "int64")}
    else:
        node, inits = helper.make_node("Split", ["x"], ["a", "b"], axis=0, split=sizes, name="cut"), {}
    m = make_model([node], [("x", F, [5, 2])], [("a", F, None), ("b", F, None)], inits, opset=opset)
    raises_relay_error(m, r"'cut' \(Split.*split sizes .* axis 0 has length 5")


def test_split_count_must_match_the_outputs():
    node = helper.make_node("Split", ["x", "s"], ["a", "b"], axis=0, name="cut")
    m = make_model([node], [("x", F, [6])], [("a", F, None), ("b", F, None)], {"s": np.array([2, 2, 2], "int64")})
    raises_relay_error(m, r"'cut' \(Split.*3 split sizes.*2 outputs")
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=3, name="cut")
    m = make_model([node], [("x", F, [6])], [("a", F, None), ("b", F, None)], opset=18)
    raises_relay_error(m, r"'cut' \(Split.*num_outputs=3.*2 outputs")


def test_split_into_equal_parts_needs_a_divisible_axis_before_opset_18():
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=1, name="cut")
    m = make_model([node], [("x", F, [2, 5])], [("a", F, None), ("b", F, None)])
    raises_relay_error(m, r"'cut' \(Split.*length 5.*2 equal parts")


def test_split_axis_out_of_range():
    node = helper.make_node("Split", ["x"], ["a", "b"], axis=2, name="cut")
    m = make_model([node], [("x", F, [2, 4])], [("a", F, None), ("b", F, None)])
    raises_relay_error(m, r"'cut' \(Split.*axis=2 is out of range")


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
    raises_relay_error(m, r"'second' \(Neg\).*'y'.*'first' \(Relu\)")


def test_a_node_overwriting_a_graph_input_or_initializer_is_rejected():
    m = make_model([helper.make_node("Relu", ["x"], ["x"], name="loop")], [("x", F, [2])], [("x", F, [2])])
    raises_relay_error(m, r"'loop' \(Relu\).*'x'.*graph input")
    m = make_model([helper.make_node("Neg", ["x"], ["w"], name="over"), helper.make_node("Add", ["w", "x"], ["y"])],
                   [("x", F, [2])], [("y", F, [2])], {"w": np.ones(2, F)})
    raises_relay_error(m, r"'over' \(Neg\).*'w'.*initializer")


def test_duplicate_graph_inputs_and_initializers_are_rejected():
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, [2]), ("x", F, [2])], [("y", F, [2])])
    raises_relay_error(m, r"graph input 'x' is declared twice")
    m = make_model([helper.make_node("Add", ["x", "w"], ["y"])], [("x", F, [2])], [("y", F, [2])], {"w": np.ones(2, F)})
    m.graph.initializer.append(numpy_helper.from_array(np.zeros(2, F), "w"))
    raises_relay_error(m, r"initializer 'w' is declared twice")


# --- nodes that break their schema -------------------------------------------------------------
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
    raises_relay_error(m, pattern)


def test_attribute_without_a_type_and_duplicate_attributes_are_named():
    node = helper.make_node("Relu", ["x"], ["y"], name="n")
    node.attribute.add(name="alpha")  # type UNDEFINED
    m = make_model([node], [("x", F, [2])], [("y", F, [2])])
    raises_relay_error(m, r"'n' \(Relu.*attribute 'alpha' has no type")
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="n", alpha=0.1)
    node.attribute.append(helper.make_attribute("alpha", 0.2))
    m = make_model([node], [("x", F, [2])], [("y", F, [2])])
    raises_relay_error(m, r"'n' \(LeakyRelu.*attribute 'alpha' is given 2 times")


def test_every_schema_problem_is_listed_at_once():
    nodes = [helper.make_node("Add", ["x"], ["a"], name="first"),
             helper.make_node("Concat", ["a", "a"], ["y"], name="second")]
    m = make_model(nodes, [("x", F, [2])], [("y", F, [4])])
    with pytest.raises(RelayError) as err:
        relay.frontend.from_onnx(m)
    assert "2 node(s)" in str(err.value) and "'first' (Add" in str(err.value) and "'second' (Concat" in str(err.value)


# --- initializers and Constant tensors ----------------------------------------------------------
def _tensor(dims, raw=None, floats=None):
    """A float TensorProto named 'w' whose data need not match its dims (helper.make_tensor checks)."""
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=dims)
    if raw is not None:
        t.raw_data = raw
    t.float_data.extend(floats or [])
    return t


def test_raw_data_length_must_match_the_dims():
    raises_relay_error(add_model_with(_tensor([4], raw=b"\0" * 10)),
            r"initializer 'w'.*10 bytes.*\(4,\) float32 needs 16")


def test_typed_data_count_must_match_the_dims():
    raises_relay_error(add_model_with(_tensor([4], floats=[1.0, 2.0])), r"initializer 'w'.*2 value")


def test_unknown_data_type_is_named():
    t = helper.make_tensor("w", TensorProto.FLOAT, [4], b"\0" * 16, raw=True)
    t.data_type = 99
    raises_relay_error(add_model_with(t), r"initializer 'w'.*element type 99")


def test_negative_and_huge_initializer_dims_are_rejected_before_allocating():
    raises_relay_error(add_model_with(_tensor([-4], raw=b"\0" * 16)), r"initializer 'w'.*negative")
    raises_relay_error(add_model_with(_tensor([1 << 20, 1 << 20, 1 << 10], raw=b"")), r"initializer 'w'",
                       error=AllocationError)


def test_bad_constant_node_tensor_names_the_node():
    m = make_model([helper.make_node("Constant", [], ["y"], value=_tensor([4], raw=b"\0" * 10), name="k")], [],
                   [("y", F, [4])])
    raises_relay_error(m, r"'k' \(Constant.*10 bytes")


# --- ConstantOfShape and Range --------------------------------------------------------------------
def _cos(dims):
    return make_model([helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill")], [], [("y", F, None)],
                      {"s": np.array(dims, "int64")})


def test_constant_of_shape_rejects_negative_and_huge_dims():
    raises_relay_error(_cos([2, -3]), r"'fill' \(ConstantOfShape.*negative")
    raises_relay_error(_cos([1 << 20, 1 << 20, 1 << 10]), r"'fill' \(ConstantOfShape", error=AllocationError)
    assert_close(run_relay(_cos([2, 0, 3]), {}), run_ort(_cos([2, 0, 3]), {}))


def _range(start, limit, delta, dtype=F):
    inits = {"a": np.array(start, dtype), "b": np.array(limit, dtype), "c": np.array(delta, dtype)}
    return make_model([helper.make_node("Range", ["a", "b", "c"], ["y"], name="rng")], [], [("y", dtype, None)], inits)


def test_range_rejects_a_zero_delta_and_a_huge_length():
    raises_relay_error(_range(0, 5, 0), r"'rng' \(Range.*delta is 0")
    raises_relay_error(_range(0, 5, 0, "int64"), r"'rng' \(Range.*delta is 0")
    raises_relay_error(_range(0, 1e15, 1), r"'rng' \(Range", error=AllocationError)
    raises_relay_error(_range(0, np.inf, 1), r"'rng' \(Range.*finite")
    for args in ((0, 5, 2), (5, 0, -1.5), (3, 1, 1)):
        assert_close(run_relay(_range(*args), {}), run_ort(_range(*args), {}))


# --- from_onnx arguments ------------------------------------------------------------------------
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
    raises_relay_error(relu_model(), pattern, error=InputError, **kw)


def test_model_opset_beyond_the_installed_onnx_is_rejected():
    m = relu_model()
    m.opset_import[0].version = 1000
    raises_relay_error(m, r"opset 1000.*up to")


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
        "                      [helper.make_tensor_value_info('x', 1, [1, 8])],\n"
        "                      [helper.make_tensor_value_info('y', 1, None)],\n"
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


def test_negative_declared_input_dims_are_rejected():
    m = relu_model()
    m.graph.input[0].type.tensor_type.shape.dim[1].dim_value = -3
    raises_relay_error(m, r"graph input 'x' declares a negative dimension")


def test_outputs_a_converter_does_not_produce_are_reported_not_dropped():
    """The guard behind every converter: a requested output it does not return is an error."""
    from relay_backend.frontend.onnx.importer import Converter, OnnxImporter
    m = make_model([helper.make_node("Dropout", ["x"], ["y", "mask"], name="drop")], [("x", F, [2])],
                   [("y", F, [2]), ("mask", "bool", [2])])
    importer = OnnxImporter({"Dropout": Converter(lambda ctx, inputs: inputs[0])})
    with pytest.raises(RelayError, match=r"'drop' \(Dropout.*output\(s\) \['mask'\] are not supported"):
        importer.import_model(m)
