"""Shape-like inputs supplied at run time (RelayBackend.prepare(bind_inputs=False), the way the
node suite is counted "with every graph input at run time"): the converters that build dyn ops
for them, compared with onnxruntime on the debug interpreter and the VM, and the run-time errors
where their values are invalid."""
import numpy as np
import pytest
from onnx import helper

from .conftest import run_ort
from .test_onnx_sequences import F, I64, _const, _model, _same, _t, _x

import relay_backend as relay  # noqa: E402
from relay_backend.errors import RelayError  # noqa: E402
from relay_backend.frontend.onnx.backend import RelayBackend  # noqa: E402


def test_range_reads_single_value_tensors_as_scalars():
    m = _model([helper.make_node("Range", ["s", "l", "d"], ["y"])], [], [_t("y", I64, [4])],
               [_const("s", np.array([2], "int64")), _const("l", np.array([10], "int64")),
                _const("d", np.array([2], "int64"))], opset=11)
    mod, params = relay.frontend.from_onnx(m)
    out = relay.create_executor("debug", mod=mod).evaluate()()
    np.testing.assert_array_equal(out.numpy(), np.arange(2, 10, 2))


@pytest.mark.parametrize("op, inputs, feeds", [
    ("Squeeze", [("x", F, [2, 1, 3, 1]), ("a", I64, [2])], {"a": np.array([-1, 1], "int64")}),
    ("Expand", [("x", F, [3, 1]), ("a", I64, [3])], {"a": np.array([2, 1, 4], "int64")}),
    ("Expand", [("x", F, [2, 3, 1]), ("a", I64, [2])], {"a": np.array([1, 5], "int64")}),
    ("Tile", [("x", F, [2, 3]), ("a", I64, [2])], {"a": np.array([3, 2], "int64")}),
    ("Unsqueeze", [("x", F, [2, 3]), ("a", I64, [3])], {"a": np.array([-1, 0, 2], "int64")}),
    ("ConstantOfShape", [("a", I64, [3])], {"a": np.array([2, 0, 3], "int64")}),
    ("Range", [("s", I64, []), ("l", I64, []), ("a", I64, [])], {"s": np.array(7), "l": np.array(-4),
                                                                  "a": np.array(-3, "int64")}),
])
def test_shape_like_inputs_at_run_time_use_the_dyn_ops(op, inputs, feeds):
    """Every graph input supplied at run time (bind_inputs=False): (Un)Squeeze's axes, Expand's shape
    (broadcast both ways), Tile's repeats, ConstantOfShape's shape and Range's limits become dyn ops
    that the debug interpreter and the VM run."""
    node = helper.make_node(op, [name for name, _, _ in inputs], ["y"])
    m = _model([node], [_t(*i) for i in inputs], [_t("y", I64 if op == "Range" else F, None)], opset=13)
    m.graph.output[0].type.tensor_type.ClearField("shape")
    m.graph.output[0].type.tensor_type.shape.SetInParent()
    feeds = dict(feeds)
    if any(name == "x" for name, _, _ in inputs):
        feeds["x"] = _x(*[i[2] for i in inputs if i[0] == "x"][0])
    refs = run_ort(m, feeds)
    for kind in ("debug", "vm"):
        _same(RelayBackend.prepare(m, executor=kind, bind_inputs=False).run(feeds), refs)


def test_run_time_unsqueeze_axes_out_of_range_or_repeated_fail_at_run_time():
    m = _model([helper.make_node("Unsqueeze", ["x", "a"], ["y"])], [_t("x", F, [2, 3]), _t("a", I64, [2])],
               [_t("y", F, ["a", "b", "c", "d"])], opset=13)
    for kind in ("debug", "vm"):
        rep = RelayBackend.prepare(m, executor=kind, bind_inputs=False)
        for bad in ([0, 0], [1, 4], [-5, 0]):
            with pytest.raises(RelayError):
                rep.run({"x": _x(2, 3), "a": np.array(bad, "int64")})
