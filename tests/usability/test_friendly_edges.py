"""The friendlier edges a new user runs into (issue: command line, docs and usability).

Each mistake is answered by a RelayError that names what was wrong and the fix, or, where TVM
accepts the call, accepted as TVM does."""
import inspect
import logging

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import InputError, IRConstructionError, RelayError
from relay_backend.testing import resnet


def _onnx_identity_model():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    node = helper.make_node("Relu", ["data"], ["out"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_from_onnx_misspelled_shape_key_lists_the_inputs():
    model = _onnx_identity_model()
    with pytest.raises(InputError, match=r"'dat'.*not an input of the model.*\['data'\]"):
        relay.frontend.from_onnx(model, shape={"dat": (1, 4)})


@pytest.mark.parametrize("build, wrong, right", [
    (lambda x, w: relay.nn.conv2d(x, w, stride=(1, 1)), "stride", "strides"),
    (lambda x, w: relay.nn.max_pool2d(x, pool_sizes=(2, 2)), "pool_sizes", "pool_size"),
    (lambda x, w: relay.sum(x, axes=1), "axes", "axis"),
    (lambda x, w: relay.reshape(x, new_shape=(3, 8, 8)), "new_shape", "newshape"),
])
def test_misspelled_op_keyword_names_the_valid_ones(build, wrong, right):
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    with pytest.raises(IRConstructionError) as info:
        build(x, w)
    text = str(info.value)
    assert f"{wrong!r}" in text and f"did you mean {right!r}" in text and "valid keywords" in text
    assert isinstance(info.value, TypeError)          # what Python raised before, still catchable


def test_every_public_op_constructor_checks_its_keywords():
    """The guard covers the class: every constructor in relay_backend.op and relay_backend.nn."""
    from relay_backend import op
    namespaces = [(op, op.__all__), (op.nn, op.nn.__all__)]
    unchecked = []
    for namespace, names in namespaces:
        for name in names:
            fn = getattr(namespace, name)
            if inspect.isfunction(fn) and not getattr(fn, "checks_keywords", False):
                unchecked.append(f"{namespace.__name__}.{name}")
    assert not unchecked, f"constructors without the keyword check: {unchecked}"


def test_static_shape_error_gives_the_hint_before_the_program():
    n = relay.var("n", shape=(relay.Any(), 3))
    with pytest.raises(RelayError) as info:
        relay.build(relay.IRModule.from_expr(relay.Function([n], relay.exp(n))))
    text = str(info.value)
    assert text.index('kind="vm"') < text.index("found in: ") < text.index("fn (")


def test_unsupported_program_error_gives_the_hint_before_the_program():
    c = relay.var("c", shape=(), dtype="bool")
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([c, x], relay.If(c, relay.exp(x), relay.log(x))))
    with pytest.raises(RelayError) as info:
        relay.build(mod)
    text = str(info.value)
    assert text.index('kind="vm"') < text.index("found in: ")


def test_resnet_get_workload_takes_tvms_positional_order():
    params = list(inspect.signature(resnet.get_workload).parameters)
    assert params[:6] == ["batch_size", "num_classes", "num_layers", "image_shape", "layout", "dtype"]
    mod, _ = resnet.get_workload(1, 10, 18, (3, 32, 32), "NCHW", "float32")
    assert relay.transform.InferType()(mod)["main"].checked_type.ret_type.shape == (1, 10)


def _built_with_param():
    x = relay.var("x", shape=(1, 4))
    w = relay.var("w", shape=(3, 4))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w)))
    params = {"w": np.arange(12, dtype="float32").reshape(3, 4)}
    return mod, params


@pytest.mark.parametrize("executor", ["graph", "aot"])
def test_set_input_accepts_bound_param_names_as_tvm_does(executor, caplog):
    mod, params = _built_with_param()
    factory = relay.build(mod, params=params, executor=executor)
    module = factory["default"](relay.cpu())
    x = np.ones((1, 4), "float32")
    with caplog.at_level(logging.DEBUG, logger="relay_backend"):
        module.set_input(x=x, **params)
    assert any("'w'" in r.getMessage() and "bound" in r.getMessage() for r in caplog.records)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), x @ params["w"].T, rtol=1e-6)
    with caplog.at_level(logging.DEBUG, logger="relay_backend"):
        module.set_input(y=x)                    # neither an input nor a bound param: TVM ignores it
    assert any("'y'" in r.getMessage() and "ignored" in r.getMessage() for r in caplog.records)


def test_bound_param_names_survive_export_and_load(tmp_path):
    mod, params = _built_with_param()
    factory = relay.build(mod, params=params)
    path = str(tmp_path / "model.so")
    factory.export_library(path)
    module = relay.runtime.load_module(path)["default"](relay.cpu())
    x = np.ones((1, 4), "float32")
    module.set_input(x=x, **params)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), x @ params["w"].T, rtol=1e-6)
