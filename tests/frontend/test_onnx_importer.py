"""from_onnx on small hand-built graphs, compared with onnxruntime: attribute and input forms of
the same op across opsets, padding/pooling variants, matmul broadcasting, multiple outputs, shape
overrides, and the errors for unsupported ops, opsets and attributes."""
import numpy as np
import pytest
from onnx import helper

from .conftest import assert_close, make_model, run_ort, run_relay

import relay_backend as relay  # noqa: E402
from relay_backend.errors import OpNotImplemented  # noqa: E402

R = np.random.default_rng(0)
F = "float32"


def _both(model, feeds, **kw):
    refs = run_ort(model, feeds)
    assert_close(run_relay(model, feeds, "debug", **kw), refs)


def _x(*shape):
    return R.standard_normal(shape).astype(F)


@pytest.mark.parametrize("opset", [11, 13])
def test_squeeze_unsqueeze_attr_and_input_forms(opset):
    if opset < 13:
        nodes = [helper.make_node("Unsqueeze", ["x"], ["u"], axes=[0, 3]),
                 helper.make_node("Squeeze", ["u"], ["y"], axes=[0])]
        inits = {}
    else:
        nodes = [helper.make_node("Unsqueeze", ["x", "a"], ["u"]), helper.make_node("Squeeze", ["u", "b"], ["y"])]
        inits = {"a": np.array([0, 3], "int64"), "b": np.array([0], "int64")}
    m = make_model(nodes, [("x", F, [2, 3])], [("y", F, [2, 3, 1])], inits, opset=opset)
    _both(m, {"x": _x(2, 3)})


@pytest.mark.parametrize("opset", [7, 13])
def test_clip_attr_and_input_forms(opset):
    if opset < 11:
        nodes, inits = [helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.25)], {}
    else:
        nodes = [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])]
        inits = {"lo": np.array(-0.5, F), "hi": np.array(0.25, F)}
    _both(make_model(nodes, [("x", F, [4, 5])], [("y", F, [4, 5])], inits, opset=opset), {"x": _x(4, 5)})


@pytest.mark.parametrize("opset,axis", [(11, 1), (11, 2), (13, 1), (13, -1)])
def test_softmax_old_and_new_semantics(opset, axis):
    for op in ("Softmax", "LogSoftmax"):
        m = make_model([helper.make_node(op, ["x"], ["y"], axis=axis)], [("x", F, [2, 3, 4])],
                       [("y", F, [2, 3, 4])], opset=opset)
        _both(m, {"x": _x(2, 3, 4)})


@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[2, 3], strides=[2, 1], auto_pad="SAME_UPPER"),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 1], count_include_pad=1),
])
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool_variants(op, attrs):
    attrs = dict(attrs)
    if op == "MaxPool":
        attrs.pop("count_include_pad", None)
    m = make_model([helper.make_node(op, ["x"], ["y"], **attrs)], [("x", F, [1, 2, 9, 8])], [("y", F, None)])
    m.graph.output[0].type.tensor_type.ClearField("shape")
    _both(m, {"x": _x(1, 2, 9, 8)})


@pytest.mark.parametrize("kw", [dict(strides=[2, 2]), dict(strides=[2, 3], pads=[1, 0, 0, 1], output_padding=[1, 0]),
                                dict(group=2, strides=[1, 2], dilations=[2, 1]),
                                dict(strides=[2, 2], auto_pad="SAME_UPPER")])
def test_conv_transpose(kw):
    group = kw.get("group", 1)
    w = _x(4, 6 // group, 3, 3)
    m = make_model([helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **kw)], [("x", F, [1, 4, 5, 6])],
                   [("y", F, None)], {"w": w, "b": _x(6)})
    m.graph.output[0].type.tensor_type.ClearField("shape")
    _both(m, {"x": _x(1, 4, 5, 6)})


@pytest.mark.parametrize("kw", [dict(), dict(auto_pad="SAME_LOWER", strides=[2, 2]), dict(group=3, dilations=[2, 1])])
def test_conv_variants(kw):
    group = kw.get("group", 1)
    m = make_model([helper.make_node("Conv", ["x", "w"], ["y"], **kw)], [("x", F, [1, 6, 7, 8])], [("y", F, None)],
                   {"w": _x(9, 6 // group, 3, 2)})
    m.graph.output[0].type.tensor_type.ClearField("shape")
    _both(m, {"x": _x(1, 6, 7, 8)})


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)),
                                   ((2, 3, 4), (4,))])
def test_matmul_broadcasting(sa, sb):
    ref = np.matmul(np.zeros(sa), np.zeros(sb)).shape
    m = make_model([helper.make_node("MatMul", ["a", "b"], ["y"])], [("a", F, list(sa)), ("b", F, list(sb))],
                   [("y", F, list(ref))])
    _both(m, {"a": _x(*sa), "b": _x(*sb)})


def test_gemm_alpha_beta_transposes():
    m = make_model([helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0, transA=1, transB=1)],
                   [("a", F, [4, 3]), ("b", F, [5, 4])], [("y", F, [3, 5])], {"c": _x(5)})
    _both(m, {"a": _x(4, 3), "b": _x(5, 4)})


def test_split_multiple_outputs_become_a_tuple():
    m = make_model([helper.make_node("Split", ["x"], ["y", "z"], axis=1, split=[1, 3])], [("x", F, [2, 4])],
                   [("y", F, [2, 1]), ("z", F, [2, 3])], opset=11)
    mod, _ = relay.frontend.from_onnx(m)
    assert "Tensor[(2, 1), float32], Tensor[(2, 3), float32]" in mod.astext()
    _both(m, {"x": _x(2, 4)})


def test_shape_override_for_symbolic_batch():
    m = make_model([helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Reshape", ["x", "s"], ["y"])],
                   [("x", F, ["N", 3])], [("y", F, ["N", 3])])
    mod, _ = relay.frontend.from_onnx(m, shape={"x": (5, 3)})
    assert "Tensor[(5, 3), float32]" in mod.astext()
    # without the override the shape is read at run time (shape_of -> dyn.reshape), on the VM
    for n in (1, 4):
        feeds = {"x": _x(n, 3)}
        assert_close(run_relay(m, feeds, "vm"), run_ort(m, feeds))


def test_unsupported_ops_are_listed_at_once():
    # ops without a converter (MaxRoiPool; ImageDecoder, which decodes image files), so the test keeps two
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("MaxRoiPool", ["a", "rois"], ["b"],
                                                                      pooled_shape=[2, 2]),
             helper.make_node("ImageDecoder", ["bytes"], ["c"]),
             helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[2, 2])]
    m = make_model(nodes, [("x", F, [1, 1, 3, 3]), ("rois", F, [1, 5]), ("bytes", "uint8", [16])],
                   [("y", F, None), ("b", F, None), ("c", "uint8", None)], opset=20)
    with pytest.raises(OpNotImplemented) as err:
        relay.frontend.from_onnx(m)
    msg = str(err.value)
    assert "2 operator(s)" in msg and "ImageDecoder" in msg and "MaxRoiPool" in msg and "Relu" not in msg


def test_unsupported_opset_names_the_op_and_versions():
    m = make_model([helper.make_node("Add", ["x", "x"], ["y"])], [("x", F, [2])], [("y", F, [2])], opset=6)
    with pytest.raises(OpNotImplemented, match=r"Add \(opset 6 uses version 6; supported versions 7\.\.22\)"):
        relay.frontend.from_onnx(m)


def test_unsupported_attribute_values_and_unknown_attributes():
    m = make_model([helper.make_node("LRN", ["x"], ["y"], size=2)],
                   [("x", F, [1, 1, 4, 4])], [("y", F, [1, 1, 4, 4])])
    with pytest.raises(OpNotImplemented, match="even window size=2"):
        relay.frontend.from_onnx(m)
    m = make_model([helper.make_node("Relu", ["x"], ["y"], bogus=3)], [("x", F, [2])], [("y", F, [2])])
    with pytest.raises(OpNotImplemented, match=r"Relu.*attribute\(s\) \['bogus'\]"):
        relay.frontend.from_onnx(m)


def test_custom_domain_is_unsupported():
    node = helper.make_node("FusedThing", ["x"], ["y"], domain="com.example")
    m = make_model([node], [("x", F, [2])], [("y", F, [2])])
    with pytest.raises(OpNotImplemented, match="com.example.FusedThing"):
        relay.frontend.from_onnx(m)


def test_activations_and_variadic_ops():
    nodes = [helper.make_node("HardSwish", ["x"], ["a"]), helper.make_node("HardSigmoid", ["x"], ["b"], alpha=0.3),
             helper.make_node("LeakyRelu", ["x"], ["c"], alpha=0.2), helper.make_node("Mean", ["a", "b", "c"], ["d"]),
             helper.make_node("Max", ["a", "b"], ["e"]), helper.make_node("PRelu", ["x", "s"], ["f"]),
             helper.make_node("Sum", ["d", "e", "f"], ["y"])]
    m = make_model(nodes, [("x", F, [2, 3, 4])], [("y", F, [2, 3, 4])], {"s": _x(3, 1)}, opset=14)
    _both(m, {"x": _x(2, 3, 4)})


def test_slice_gather_expand_tile_pad():
    nodes = [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["a"]),
             helper.make_node("Gather", ["a", "idx"], ["b"], axis=1),
             helper.make_node("Expand", ["b", "shp"], ["c"]), helper.make_node("Tile", ["c", "rep"], ["d"]),
             helper.make_node("Pad", ["d", "pads", "cv"], ["y"], mode="constant")]
    inits = {"st": np.array([-1, 0], "int64"), "en": np.array([-100, 5], "int64"), "ax": np.array([0, 1], "int64"),
             "sp": np.array([-2, 2], "int64"), "idx": np.array([[2, -1]], "int64"), "shp": np.array([2, 1, 1, 1], "int64"),
             "rep": np.array([1, 2, 1, 1], "int64"), "pads": np.array([0, 1, 0, 0, 0, 0, 0, 2], "int64"),
             "cv": np.array(1.5, F)}
    m = make_model(nodes, [("x", F, [5, 6])], [("y", F, None)], inits)
    m.graph.output[0].type.tensor_type.ClearField("shape")
    _both(m, {"x": _x(5, 6)})


@pytest.mark.parametrize("op,kw", [("Conv", dict(auto_pad="SAME_UPPER")),
                                   ("Conv", dict(auto_pad="SAME_LOWER", strides=[2, 2])),
                                   ("MaxPool", dict(auto_pad="SAME_UPPER", kernel_shape=[3, 3], strides=[2, 2])),
                                   ("AveragePool", dict(auto_pad="SAME_LOWER", kernel_shape=[2, 2]))])
def test_same_padding_with_symbolic_spatial_dims(op, kw):
    """SAME pads depend on the input size: a symbolic H/W is a clear error; a shape override fixes it."""
    ins, inits = (["x", "w"], {"w": _x(2, 2, 3, 3)}) if op == "Conv" else (["x"], {})
    m = make_model([helper.make_node(op, ins, ["y"], **kw)], [("x", F, [1, 2, "H", "W"])], [("y", F, None)], inits)
    m.graph.output[0].type.tensor_type.ClearField("shape")
    with pytest.raises(OpNotImplemented, match=rf"{op}.*auto_pad=SAME_\w+ needs static spatial dims.*shape="):
        relay.frontend.from_onnx(m)
    _both(m, {"x": _x(1, 2, 7, 6)}, shape={"x": (1, 2, 7, 6)})


def test_unsupported_attributes_of_several_nodes_are_listed_at_once():
    """Every unsupported op and attribute (value) is reported in one error, even on nodes that
    come after a node that failed (its output is typed by ONNX shape inference)."""
    nodes = [helper.make_node("LRN", ["x"], ["a"], size=2, name="pool"),
             helper.make_node("MaxRoiPool", ["a", "rois"], ["b"], pooled_shape=[3, 3]),   # no converter
             helper.make_node("Relu", ["b"], ["c"], bogus=3, name="act"),
             helper.make_node("Gelu", ["x"], ["d"], approximate="fast", name="gelu"),
             helper.make_node("Add", ["c", "d"], ["y"])]
    m = make_model(nodes, [("x", F, [1, 1, 3, 3]), ("rois", F, [1, 5])], [("y", F, [1, 1, 3, 3])], opset=20)
    with pytest.raises(OpNotImplemented) as err:
        relay.frontend.from_onnx(m)
    msg = str(err.value)
    assert "1 operator(s)" in msg and "MaxRoiPool" in msg, msg
    assert "3 node(s)" in msg, msg
    assert "'pool' (LRN" in msg and "even window size=2" in msg, msg
    assert "'act' (Relu" in msg and "['bogus']" in msg, msg
    assert "'gelu' (Gelu" in msg and "approximate='fast'" in msg, msg
    assert "Add" not in msg, msg


def test_run_time_inputs_of_several_nodes_stay_a_dynamic_input_error():
    """Only run-time shape inputs missing: still a DynamicInputError (the ONNX backend then binds
    the integer inputs per run), now naming both nodes."""
    from relay_backend.frontend.onnx.common import DynamicInputError
    # antialiased Resize: the number of taps depends on the sizes, so they must be known at import
    nodes = [helper.make_node("Resize", ["x", "", "", "s"], ["a"], name="r", mode="linear", antialias=1),
             helper.make_node("Resize", ["x", "", "", "t"], ["y"], name="t", mode="linear", antialias=1)]
    m = make_model(nodes, [("x", F, [1, 1, 4, 4]), ("s", "int64", [4]), ("t", "int64", [4])],
                   [("a", F, [1, 1, 3, 3]), ("y", F, [1, 1, 2, 2])], opset=18)
    with pytest.raises(DynamicInputError) as err:
        relay.frontend.from_onnx(m)
    assert "'r' (Resize" in str(err.value) and "'t' (Resize" in str(err.value), str(err.value)
    from relay_backend.frontend.onnx.backend import RelayBackend
    feeds = {"x": _x(1, 1, 4, 4), "s": np.array([1, 1, 3, 3], "int64"), "t": np.array([1, 1, 2, 2], "int64")}
    out = RelayBackend.prepare(m, executor="debug").run([feeds["x"], feeds["s"], feeds["t"]])
    assert_close(out, run_ort(m, feeds))


@pytest.mark.parametrize("batch", ["te.size_var", "tir.Var int64", "name", "Any"])
def test_shape_argument_takes_symbolic_dims_and_runs_on_the_vm_for_several_sizes(batch):
    """from_onnx(shape=...) takes what TVM's frontends take for a dynamic dim: a size variable
    (te.size_var, a tir.Var of any integer dtype), relay.Any(), or a name, which stands for one
    size variable across the inputs that use it."""
    from relay_backend import te
    dim = {"te.size_var": te.size_var("n"), "tir.Var int64": te.var("n", "int64"), "name": "n",
           "Any": relay.Any()}[batch]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Shape", ["r"], ["s"]), helper.make_node("Reshape", ["r", "s"], ["a"]),
             helper.make_node("Add", ["a", "b"], ["y"])]
    m = make_model(nodes, [("x", F, ["N", 4]), ("b", F, ["N", 3])], [("y", F, ["N", 3])], {"w": _x(4, 3)})
    mod, _ = relay.frontend.from_onnx(m, shape={"x": (dim, 4), "b": (dim, 3)})
    text = mod["main"].astext()
    shown = {"Any": "Tensor[(?, 4), float32]", "tir.Var int64": "Tensor[(n: int64, 4), float32]"}
    assert shown.get(batch, "Tensor[(n, 4), float32]") in text, text
    run = relay.create_executor("vm", mod=mod).evaluate()
    for n in (1, 3, 8):
        feeds = {"x": _x(n, 4), "b": _x(n, 3)}
        assert_close([run(**feeds).numpy()], run_ort(m, feeds))
    if batch != "Any":  # both inputs share n: different sizes are a clear error, not a wrong answer
        with pytest.raises(relay.errors.InputError):
            run(x=_x(2, 4), b=_x(5, 3))


def test_shape_argument_rejects_what_is_not_a_dim():
    m = make_model([helper.make_node("Relu", ["x"], ["y"])], [("x", F, ["N", 3])], [("y", F, ["N", 3])])
    for bad in ((2.5, 3), ("not a name", 3), (True, 3)):
        with pytest.raises(relay.errors.InputError, match="is not a shape"):
            relay.frontend.from_onnx(m, shape={"x": bad})


def test_backend_with_every_input_at_run_time_uses_the_dyn_ops_or_says_unsupported():
    """prepare(bind_inputs=False) never re-imports with integer inputs bound: Reshape's run-time shape
    runs through dyn.reshape on debug and the VM; the graph executor (static shapes only) and a
    converter that still needs the value (an antialiased Resize's sizes) report OpNotImplemented instead of
    binding."""
    from relay_backend.frontend.onnx.backend import NeedsVMError, RelayBackend
    from relay_backend.frontend.onnx.common import DynamicInputError
    m = make_model([helper.make_node("Reshape", ["x", "s"], ["y"])], [("x", F, [2, 6]), ("s", "int64", [3])],
                   [("y", F, [3, 2, 2])])
    feeds = {"x": _x(2, 6), "s": np.array([3, -1, 2], "int64")}
    for kind in ("debug", "vm"):
        rep = RelayBackend.prepare(m, executor=kind, bind_inputs=False)
        assert_close(rep.run(feeds), run_ort(m, feeds))
    with pytest.raises(NeedsVMError, match="executor='vm'"):
        RelayBackend.prepare(m, executor="graph", bind_inputs=False)
    assert_close(RelayBackend.prepare(m, executor="graph").run(feeds), run_ort(m, feeds))  # bound per run
    e = make_model([helper.make_node("Resize", ["x", "", "", "s"], ["y"], mode="linear", antialias=1)],
                   [("x", F, [1, 1, 4, 4]), ("s", "int64", [4])], [("y", F, [1, 1, 3, 3])], opset=18)
    with pytest.raises(DynamicInputError):
        RelayBackend.prepare(e, executor="debug", bind_inputs=False)
