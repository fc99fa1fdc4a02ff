"""Shared helpers for the ONNX frontend tests: build one-node models, run them through
onnxruntime (the independent reference) and through our executors."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def available_executors():
    """The executors the ONNX tests run models through (AOT has its own tests in tests/aot)."""
    return ["debug", "graph", "vm"]


def run_ort(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def run_relay(model, feeds, kind="debug", **kw):
    import relay_backend as relay
    mod, params = relay.frontend.from_onnx(model, **kw)
    out = relay.create_executor(kind, mod=mod, params=params or None).evaluate()(**feeds)
    from relay_backend.frontend.onnx.backend import _flatten
    return _flatten(out, [])


def assert_close(outs, refs, rtol=1e-5, atol=1e-5):
    """Tolerance scaled to the output magnitude: |out - ref| <= atol * max(1, max|ref|) + rtol * |ref|."""
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        assert o.shape == r.shape, (o.shape, r.shape)
        if r.dtype.kind in "fc":
            scale = max(1.0, float(np.abs(r).max())) if r.size else 1.0
            np.testing.assert_allclose(o, r, rtol=rtol, atol=atol * scale)
        else:
            np.testing.assert_array_equal(o, r)


def make_model(nodes, inputs, outputs, inits=(), opset=13):
    """inputs/outputs: [(name, np dtype str, shape)]; inits: {name: array}."""
    from onnx import helper, numpy_helper
    vi = lambda n, d, s: helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(d)), s)  # noqa: E731
    graph = helper.make_graph(nodes, "g", [vi(*i) for i in inputs], [vi(*o) for o in outputs],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in dict(inits).items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def relu_model():
    """A one-node model: y = Relu(x), x of shape (2, 3), the node named 'act'."""
    from onnx import helper
    return make_model([helper.make_node("Relu", ["x"], ["y"], name="act")], [("x", "float32", [2, 3])],
                      [("y", "float32", [2, 3])])


def add_model_with(tensor):
    """y = x + w for x of shape (4,), with `tensor` (named 'w') as the initializer."""
    from onnx import helper
    model = make_model([helper.make_node("Add", ["x", "w"], ["y"])], [("x", "float32", [4])], [("y", "float32", [4])])
    model.graph.initializer.append(tensor)
    return model


def raises_relay_error(model, pattern, error=None, **kw):
    """Assert that from_onnx(model, **kw) raises `error` (default RelayError) matching `pattern`."""
    import relay_backend as relay
    with pytest.raises(error or relay.errors.RelayError, match=pattern):
        relay.frontend.from_onnx(model, **kw)
