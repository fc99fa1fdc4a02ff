"""A fused reshape_like (marked relay.reshape_only by FuseOps) runs no kernel in the VM: its data
operand is re-viewed by vm.reshape_tensor, its second operand only gives the shape, as the
graph executor's __nop does. Results match the interpreter (the numpy oracle), for static
shapes and for an `Any` batch whose shape comes from the shape function."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.errors import InputError
from relay_backend.vm.profiler import VirtualMachineProfiler

RNG = np.random.default_rng(0)


def _model(batch):
    """dense(reshape_like(sum(relu(x)), like), w): the reshape_like sits between a reduction and
    a dense, neither of which fuses with it, so it is a primitive function of its own."""
    x = relay.var("x", shape=(batch, 3, 4, 4))
    like = relay.var("like", shape=(batch, 12))
    w = relay.var("w", shape=(5, 12))
    pooled = relay.sum(relay.nn.relu(x), axis=(3,))
    out = relay.nn.dense(relay.reshape_like(pooled, like), w)
    return relay.IRModule.from_expr(relay.Function([x, like, w], out))


def _inputs(n):
    return [RNG.standard_normal(s).astype("float32") for s in ((n, 3, 4, 4), (n, 12), (5, 12))]


def _oracle(mod, args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args).numpy()


@pytest.mark.parametrize("batch, sizes", [(2, [2]), (relay.Any(), [2, 3])], ids=["static", "any_batch"])
def test_reshape_like_runs_no_kernel_and_matches_the_interpreter(batch, sizes):
    mod = _model(batch)
    exe = rvm.compile(mod, target="llvm")
    assert "reshape_tensor" in exe.bytecode
    assert not any("reshape" in name for name in exe.primitive_ops), exe.primitive_ops
    vm = VirtualMachineProfiler(exe, relay.cpu())
    for n in sizes:
        args = _inputs(n)
        report = vm.profile(*args, warmup=0)
        ops = [op for call in report.calls for op in call.ops]
        assert len(report.calls) == 2, [c.kernel for c in report.calls]     # relu+sum, dense
        assert "reshape_like" not in ops, ops
        want = _oracle(mod, args)
        np.testing.assert_allclose(vm.run(*args).numpy(), want, rtol=1e-5, atol=1e-5)


def test_reshape_like_of_an_input_returned_as_output():
    """The function's result is a re-view of its first parameter; the VM returns it with the
    new shape and the parameter's values, as the interpreter does."""
    x, like = relay.var("x", shape=(2, 6)), relay.var("like", shape=(3, 4))
    mod = relay.IRModule.from_expr(relay.Function([x, like], relay.reshape_like(x, like)))
    args = [np.arange(12, dtype="float32").reshape(2, 6), np.zeros((3, 4), "float32")]
    exe = rvm.compile(mod, target="llvm")
    assert "invoke_packed" not in exe.bytecode, exe.bytecode
    out = rvm.VirtualMachine(exe, relay.cpu()).run(*args).numpy()
    np.testing.assert_array_equal(out, _oracle(mod, args))


def test_a_static_reshape_like_of_a_dynamic_operand_checks_the_element_count():
    """`like` fixes the output shape but x's batch is Any: the re-view is guarded by the shape
    check, so data of the wrong size is an InputError naming both shapes, not a bad view."""
    x, like, w = relay.var("x", shape=(relay.Any(), 12)), relay.var("like", shape=(4, 6)), relay.var("w", shape=(5, 6))
    mod = relay.IRModule.from_expr(relay.Function([x, like, w], relay.nn.dense(
        relay.reshape_like(relay.nn.softmax(x), like), w)))
    exe = rvm.compile(mod, target="llvm")
    assert "reshape_tensor" in exe.bytecode and "shape_check_reshape_like" in exe.bytecode
    vm = rvm.VirtualMachine(exe, relay.cpu())
    good = [RNG.standard_normal(s).astype("float32") for s in ((2, 12), (4, 6), (5, 6))]
    np.testing.assert_allclose(vm.run(*good).numpy(), _oracle(mod, good), rtol=1e-5, atol=1e-5)
    with pytest.raises(InputError, match=r"data has 36 elements but the shape \(4, 6\) holds 24"):
        vm.run(RNG.standard_normal((3, 12)).astype("float32"), *good[1:])
