"""bfloat16 tensors (frontend/onnx/bfloat16.py): carried as uint16 bit patterns (onnx's numpy
form), converted only by Cast / CastLike (exact bits, checked against numpy bit arithmetic and
onnx's reference evaluator), passed by Identity, refused with OpNotImplemented anywhere else.

Node tests it makes pass: test_cast_BFLOAT16_to_FLOAT, test_cast_FLOAT_to_BFLOAT16,
test_castlike_{BFLOAT16_to_FLOAT,FLOAT_to_BFLOAT16}{,_expanded}."""
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from relay_backend.errors import OpNotImplemented

from .conftest import raises_relay_error, run_relay

EXECUTORS = ("debug", "graph", "vm")


def _model(nodes, inputs, outputs):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


def _truncated_bits(x):
    bits = (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), bits)


VALUES = np.array([0.0, -0.0, 1.0, 0.48033667, -3.1415927, 1e-40, 3.4e38, np.inf, -np.inf, np.nan,
                   np.float32(1.0) + np.float32(2 ** -9)], np.float32)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_cast_float_to_bfloat16_keeps_the_top_bits(executor):
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)],
                   [("x", TensorProto.FLOAT, [VALUES.size])], [("y", TensorProto.BFLOAT16, [VALUES.size])])
    got = run_relay(model, {"x": VALUES}, executor)[0]
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, _truncated_bits(VALUES))
    finite = ~np.isnan(VALUES)                     # onnx's reference agrees where it has no NaN payload quirk
    np.testing.assert_array_equal(got[finite], ReferenceEvaluator(model).run(None, {"x": VALUES})[0][finite])


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("to,dtype", [(TensorProto.FLOAT, "float32"), (TensorProto.DOUBLE, "float64"),
                                      (TensorProto.INT32, "int32")])
def test_cast_bfloat16_to_other_types_is_exact(executor, to, dtype):
    """The bits are the float32's top half; infinities only where the target can hold them."""
    bits = np.array([0x3F80, 0xC049, 0x3EF5, 0x0000, 0x8000, 0x4120] + ([0x7F80, 0xFF80] if dtype != "int32" else []),
                    np.uint16)
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=to)], [("x", TensorProto.BFLOAT16, [bits.size])],
                   [("y", to, [bits.size])])
    got = run_relay(model, {"x": bits}, executor)[0]
    np.testing.assert_array_equal(got, (bits.astype(np.uint32) << 16).view(np.float32).astype(dtype))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_castlike_both_ways_and_identity(executor):
    nodes = [helper.make_node("CastLike", ["x", "like"], ["b"]), helper.make_node("Identity", ["b"], ["c"]),
             helper.make_node("CastLike", ["c", "x"], ["y"])]
    model = _model(nodes, [("x", TensorProto.FLOAT, [VALUES.size]), ("like", TensorProto.BFLOAT16, [1])],
                   [("c", TensorProto.BFLOAT16, [VALUES.size]), ("y", TensorProto.FLOAT, [VALUES.size])])
    bits, back = run_relay(model, {"x": VALUES, "like": np.zeros(1, np.uint16)}, executor)
    np.testing.assert_array_equal(bits, _truncated_bits(VALUES))
    np.testing.assert_array_equal(back, (bits.astype(np.uint32) << 16).view(np.float32))


def test_arithmetic_on_bfloat16_is_refused():
    model = _model([helper.make_node("Add", ["x", "x"], ["y"])], [("x", TensorProto.BFLOAT16, [3])],
                   [("y", TensorProto.BFLOAT16, [3])])
    raises_relay_error(model, r"reads bfloat16 tensor\(s\) \['x', 'x'\].*cast it to float32 first", OpNotImplemented)
