"""relay.annotation: stop_fusion splits a fused group (and leaves no trace), on_device /
function_on_device are accepted for the module's one device and rejected for a second one,
compiler_begin / compiler_end / checkpoint run as identities. Values checked against numpy."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import RelayError
from relay_backend.ir.expr import Call, Function
from relay_backend.ir.functor import all_nodes_post_order

X = np.linspace(-1, 1, 12, dtype="float32").reshape(3, 4)


def _fused(expr, params):
    mod = relay.IRModule.from_expr(relay.Function(params, expr))
    return relay.transform.FuseOps(2)(relay.transform.InferType()(mod))


def _primitives(mod):
    return [n for n in all_nodes_post_order(mod["main"]) if isinstance(n, Function) and n.is_primitive]


def _op_names(fn):
    return sorted(n.op.name for n in all_nodes_post_order(fn) if isinstance(n, Call) and hasattr(n.op, "name"))


def _run_all(mod, *args):
    """The result on the debug interpreter, the graph executor and the VM."""
    return {kind: relay.create_executor(kind, mod=mod).evaluate()(*args).numpy()
            for kind in ("debug", "graph", "vm")}


def test_stop_fusion_splits_the_fused_group():
    x = relay.var("x", shape=(3, 4))
    plain = _fused(relay.exp(relay.add(x, x)), [x])
    assert [_op_names(f) for f in _primitives(plain)] == [["add", "exp"]]
    stopped = _fused(relay.exp(relay.annotation.stop_fusion(relay.add(x, x))), [x])
    groups = [_op_names(f) for f in _primitives(stopped)]
    assert sorted(groups) == [["add"], ["exp"]]
    assert "annotation.stop_fusion" not in _op_names(stopped["main"])    # removed after grouping
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(relay.annotation.stop_fusion(relay.add(x, x)))))
    for kind, out in _run_all(mod, X).items():
        np.testing.assert_allclose(out, np.exp(2 * X), rtol=1e-6, err_msg=kind)


def test_stop_fusion_on_a_parameter_or_result_is_harmless():
    x = relay.var("x", shape=(3, 4))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.annotation.stop_fusion(relay.negative(x))))
    for kind, out in _run_all(mod, X).items():
        np.testing.assert_array_equal(out, -X, err_msg=kind)


def test_on_device_for_the_modules_device_is_accepted_and_removed():
    x = relay.var("x", shape=(3, 4))
    body = relay.annotation.on_device(relay.exp(x), relay.cpu())
    func = relay.annotation.function_on_device(relay.Function([x], relay.negative(body)), ["cpu"], relay.cpu())
    assert func.attrs["param_virtual_devices"] == (1,) and func.attrs["result_virtual_device"] == 1
    mod = relay.IRModule.from_expr(func)
    planned = relay.transform.PlanDevices(1)(mod)
    assert "on_device" not in _op_names(planned["main"])
    assert "param_virtual_devices" not in planned["main"].attrs
    for kind, out in _run_all(mod, X).items():
        np.testing.assert_allclose(out, -np.exp(X), rtol=1e-6, err_msg=kind)


def test_a_second_device_is_a_clear_error():
    x = relay.var("x", shape=(3, 4))
    on_cuda = relay.IRModule.from_expr(relay.Function([x], relay.annotation.on_device(relay.exp(x), "cuda")))
    with pytest.raises(RelayError, match=r"on_device in .* puts a value on cuda, but this module runs on cpu"):
        relay.build(on_cuda, target="llvm")
    with pytest.raises(RelayError, match="puts a value on cuda"):
        relay.vm.compile(on_cuda, target="llvm")
    both = relay.IRModule.from_expr(relay.Function([x], relay.add(
        relay.annotation.on_device(x, relay.cpu()), relay.annotation.on_device(relay.exp(x), relay.cuda()))))
    with pytest.raises(RelayError, match=r"cuda, but this module runs on cpu \(from on_device"):
        relay.transform.PlanDevices()(both)
    func = relay.annotation.function_on_device(relay.Function([x], x), ["cuda"], "cuda")
    with pytest.raises(RelayError, match=r"function_on_device \(parameter 0\) puts a value on cuda"):
        relay.build(relay.IRModule.from_expr(func), target="llvm")
    with pytest.raises(RelayError, match=r"0 parameter device\(s\) for a function of 1"):
        relay.annotation.function_on_device(relay.Function([x], x), [], "cpu")
    with pytest.raises(RelayError, match="not a device"):
        relay.annotation.on_device(x, "tpu")


def test_compiler_regions_and_checkpoint_are_identities():
    x = relay.var("x", shape=(3, 4))
    inner = relay.annotation.compiler_begin(x, "ccompiler")
    body = relay.annotation.checkpoint(relay.annotation.compiler_end(relay.exp(inner), "ccompiler"))
    assert body.args[0].attrs.compiler == "ccompiler"
    mod = relay.IRModule.from_expr(relay.Function([x], body))
    for kind, out in _run_all(mod, X).items():
        np.testing.assert_allclose(out, np.exp(X), rtol=1e-6, err_msg=kind)
