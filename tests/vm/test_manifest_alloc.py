"""ManifestAlloc: VMCompiler.optimize returns the module the bytecode is generated from, with every
kernel call's memory explicit (memory.alloc_storage / memory.alloc_tensor / vm.invoke_tvm_op,
vm.shape_of / vm.shape_func for `Any` outputs, vm.reshape_tensor for reshape-only functions), as
Relay's VM does. The manifested module type-checks, and each dialect call becomes its
instruction; results are checked against numpy."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.ir.expr import Call, Function
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.vm import dialect

RNG = np.random.default_rng(0)


def _optimized(func):
    mod, _ = rvm.VMCompiler().optimize(relay.IRModule.from_expr(func))
    return mod


def _dialect_calls(mod):
    calls = [n for n in all_nodes_post_order(mod["main"]) if isinstance(n, Call)]
    return [c.op.name for c in calls if isinstance(c.op, dialect.DialectOp)]


def _static():
    x, w = relay.var("x", shape=(4, 8)), relay.var("w", shape=(6, 8))
    return relay.Function([x, w], relay.nn.relu(relay.nn.dense(relay.exp(x), w)))


def test_static_calls_get_storage_tensor_and_invoke():
    mod = _optimized(_static())
    text = mod.astext()
    for name in ("memory.alloc_storage", "memory.alloc_tensor", "vm.invoke_tvm_op"):
        assert name in text, text
    names = _dialect_calls(mod)
    kernels = names.count("vm.invoke_tvm_op")
    assert kernels == 2 and names.count("memory.alloc_storage") == kernels == names.count("memory.alloc_tensor")
    assert "vm.shape_func" not in names
    # every primitive function is only ever the callee of a dialect call, never called directly
    for node in all_nodes_post_order(mod["main"]):
        if isinstance(node, Call) and isinstance(node.op, Function):
            pytest.fail(f"a primitive is called directly: {node.op.astext()[:200]}")
    typed = relay.transform.InferType()(mod)
    assert typed["main"].body.checked_type == relay.TensorType((4, 6), "float32")
    exe = rvm.compile(relay.IRModule.from_expr(_static()))
    assert exe.bytecode.count("invoke_packed") == kernels == exe.bytecode.count("alloc_storage")
    x, w = RNG.standard_normal((4, 8)).astype("float32"), RNG.standard_normal((6, 8)).astype("float32")
    np.testing.assert_allclose(rvm.VirtualMachine(exe).run(x, w).numpy(), np.maximum(np.exp(x) @ w.T, 0),
                               rtol=1e-4, atol=1e-4)


def test_dynamic_outputs_get_shape_functions():
    x = relay.var("x", shape=(relay.Any(), 3))
    func = relay.Function([x], relay.Tuple([relay.exp(x), relay.reshape(x, (-1,))]))
    mod = _optimized(func)
    names = _dialect_calls(mod)
    assert names.count("vm.shape_of") == 2 and names.count("vm.shape_func") == 2
    assert names.count("vm.reshape_tensor") == 1 and names.count("vm.invoke_tvm_op") == 1
    text = mod.astext()
    assert "is_inputs=[0]" in text and "newshape=[-1]" in text
    relay.transform.InferType()(mod)
    exe = rvm.compile(relay.IRModule.from_expr(func))
    assert "shape_of" in exe.bytecode and "alloc_tensor_reg" in exe.bytecode and "reshape_tensor" in exe.bytecode
    data = RNG.standard_normal((5, 3)).astype("float32")
    exp, flat = rvm.VirtualMachine(exe).run(data)
    np.testing.assert_allclose(exp.numpy(), np.exp(data), rtol=1e-6)
    np.testing.assert_array_equal(flat.numpy(), data.reshape(-1))


def test_static_output_from_any_inputs_checks_the_inputs_first():
    x = relay.var("x", shape=(relay.Any(), 4))
    func = relay.Function([x], relay.reshape(x, (2, 8)))
    names = _dialect_calls(_optimized(func))
    assert names == ["vm.check_shapes", "vm.reshape_tensor"]
    exe = rvm.compile(relay.IRModule.from_expr(func))
    with pytest.raises(relay.InputError, match=r"reshape rejects the run-time input shapes \(3, 4\)"):
        rvm.VirtualMachine(exe).run(np.ones((3, 4), "float32"))


def test_tuple_arguments_and_results_are_flat_for_kernels():
    t = relay.var("t", relay.TupleType([relay.TensorType((3,), "float32"), relay.TensorType((3,), "float32")]))
    split = relay.split(relay.add(relay.TupleGetItem(t, 0), relay.TupleGetItem(t, 1)), 3)
    func = relay.Function([t], split.astuple())
    mod = _optimized(func)
    (invoke,) = [n for n in all_nodes_post_order(mod["main"])
                 if isinstance(n, Call) and n.op is dialect.INVOKE_TVM_OP]
    assert len(invoke.args[1].fields) == 2 and len(invoke.args[2].fields) == 3
    a, b = np.arange(3, dtype="float32"), np.full(3, 10.0, "float32")
    out = rvm.VirtualMachine(rvm.compile(relay.IRModule.from_expr(func))).run((a, b))
    assert [o.numpy().tolist() for o in out] == [[10.0], [11.0], [12.0]]       # split(a + b, 3)


def test_symbolic_outputs_get_shape_functions_and_run_for_two_sizes():
    """Size variables are dynamic dims for ManifestAlloc: a kernel over `n` gets its output from a
    shape function reading the input shapes, dyn.arange one reading its inputs' values."""
    from relay_backend import te
    n = te.size_var("n")
    x, y = relay.var("x", shape=(n, 3)), relay.var("y", shape=(n * 2, 3))
    stop = relay.var("stop", shape=(), dtype="int32")
    both = relay.concatenate([relay.exp(x), y], 0)
    func = relay.Function([x, y, stop], relay.Tuple([both, relay.reshape(both, (-1,)),
                                                     relay.arange(stop, dtype="int32")]))
    mod = _optimized(func)
    names = _dialect_calls(mod)
    assert "vm.check_shapes" not in names and names.count("vm.shape_func") == 3
    assert names.count("vm.reshape_tensor") == 1
    assert "is_inputs=[1, 1, 1]" in mod.astext()   # dyn.arange: the values of start, stop, step
    relay.transform.InferType()(mod)
    vm = rvm.VirtualMachine(rvm.compile(relay.IRModule.from_expr(func)))
    for size in (1, 4):
        xv = RNG.standard_normal((size, 3)).astype("float32")
        yv = RNG.standard_normal((2 * size, 3)).astype("float32")
        joined, flat, counted = vm.run(xv, yv, np.array(size + 2, "int32"))
        expected = np.concatenate([np.exp(xv), yv])
        np.testing.assert_allclose(joined.numpy(), expected, rtol=1e-6)
        np.testing.assert_allclose(flat.numpy(), expected.reshape(-1), rtol=1e-6)
        np.testing.assert_array_equal(counted.numpy(), np.arange(size + 2, dtype="int32"))
