"""relay_backend.InferenceSession answers like onnxruntime.InferenceSession: same inputs and
outputs described, same results (checked against onnxruntime), symbolic dims on the VM."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import relay_backend as relay  # noqa: E402
from relay_backend.errors import InputError  # noqa: E402

RNG = np.random.default_rng(0)


def _model(batch):
    """data [batch, 4] -> (relu(data * w + b), sum over axis 1) : two outputs."""
    w = RNG.standard_normal((4,)).astype("float32")
    b = RNG.standard_normal((4,)).astype("float32")
    nodes = [helper.make_node("Mul", ["data", "w"], ["mm"]),
             helper.make_node("Add", ["mm", "b"], ["pre"]),
             helper.make_node("Relu", ["pre"], ["act"]),
             helper.make_node("ReduceSum", ["act"], ["total"], axes=[1], keepdims=0)]
    graph = helper.make_graph(
        nodes, "small", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("act", TensorProto.FLOAT, [batch, 4]),
         helper.make_tensor_value_info("total", TensorProto.FLOAT, [batch])],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def _ort(model):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("executor", ["graph", "vm", "aot"])
def test_results_and_descriptions_match_onnxruntime(executor, tmp_path):
    model = _model(2)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    sess, ref = relay.InferenceSession(str(path), executor=executor), _ort(model)
    assert [(i.name, i.shape, i.type) for i in sess.get_inputs()] == \
           [(i.name, i.shape, i.type) for i in ref.get_inputs()]
    assert [(o.name, o.shape, o.type) for o in sess.get_outputs()] == \
           [(o.name, o.shape, o.type) for o in ref.get_outputs()]
    data = RNG.standard_normal((2, 4)).astype("float32")
    for got, want in zip(sess.run(None, {"data": data}), ref.run(None, {"data": data})):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    only_total = sess.run(["total"], {"data": data})
    np.testing.assert_allclose(only_total[0], ref.run(["total"], {"data": data})[0], rtol=1e-5, atol=1e-6)
    assert sess.executor == executor


def test_symbolic_dims_go_to_the_vm():
    model = _model("N")
    sess, ref = relay.InferenceSession(model), _ort(model)
    assert sess.executor == "vm" and sess.get_inputs()[0].shape == ["N", 4]
    for rows in (1, 5):
        data = RNG.standard_normal((rows, 4)).astype("float32")
        for got, want in zip(sess.run(None, {"data": data}), ref.run(None, {"data": data})):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_bad_feeds_providers_and_executors_are_named():
    sess = relay.InferenceSession(_model(2).SerializeToString())
    with pytest.raises(InputError, match=r"missing \['data'\]"):
        sess.run(None, {"dta": np.zeros((2, 4), "float32")})
    with pytest.raises(InputError, match=r"unknown output name\(s\) \['nope'\]"):
        sess.run(["nope"], {"data": np.zeros((2, 4), "float32")})
    with pytest.raises(InputError, match=r"expects Tensor\[\(2, 4\), float32\]"):
        sess.run(None, {"data": np.zeros((3, 4), "float32")})
    with pytest.raises(InputError, match="providers"):
        relay.InferenceSession(_model(2), providers=["TensorrtExecutionProvider"])
    with pytest.raises(InputError, match="executor="):
        relay.InferenceSession(_model(2), executor="interpreter")
    assert sess.get_providers() == ["CPUExecutionProvider"]
