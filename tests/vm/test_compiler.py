"""Compiler passes and traversal limits: LambdaLift's output, a 10,000-op chain, PassContext."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.ir import Call, Function, GlobalVar, IRModule
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.transform.lambda_lift import lambda_lift

pytestmark = pytest.mark.compile


def test_lambda_lift_makes_closures_globals():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    z = relay.var("z", shape=(2,))
    f = relay.var("f")
    inner = Function([y], relay.add(x, y))          # captures x
    closed = Function([z], relay.negative(z))       # captures nothing
    body = relay.Let(f, inner, Call(f, [Call(closed, [x])]))
    mod = relay.transform.InferType()(IRModule.from_expr(Function([x], body)))
    lifted = lambda_lift(mod)
    names = sorted(gv.name_hint for gv in lifted.functions)
    assert names[-1] == "main" and len(names) == 3 and all(n.startswith("lifted_name") for n in names[:2])
    closures = [fn for gv, fn in lifted.functions.items() if fn.attrs.get("Closure") == 1]
    assert len(closures) == 1 and [p.name_hint for p in closures[0].params] == ["x"]
    assert isinstance(closures[0].body, Function)
    literals = [n for n in all_nodes_post_order(lifted["main"].body) if isinstance(n, Function)]
    assert literals == []                              # no function literal left in main
    data = np.arange(2, dtype="float32")
    out = relay.create_executor("vm", mod=mod).evaluate()(data)
    np.testing.assert_array_equal(out.numpy(), data - data)


def test_ten_thousand_op_chain_compiles_without_recursion_limit():
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(10_000):
        y = relay.add(y, x)
    exe = rvm.compile(IRModule.from_expr(Function([x], y)))
    out = rvm.VirtualMachine(exe, relay.cpu()).run(np.ones(2, "float32"))
    np.testing.assert_array_equal(out.numpy(), [10_001.0, 10_001.0])


def test_opt_level_zero_runs_every_op_as_its_own_kernel(rng):
    x = relay.var("x", shape=(3,))
    y = relay.nn.relu(relay.multiply(relay.exp(x), x))
    mod = IRModule.from_expr(Function([x], y))
    with relay.transform.PassContext(opt_level=0):
        exe = rvm.compile(mod)
    assert len(exe.primitive_ops) == 3
    fused = rvm.compile(mod)
    assert len(fused.primitive_ops) == 1
    data = rng.standard_normal(3).astype("float32")
    for e in (exe, fused):
        np.testing.assert_allclose(rvm.VirtualMachine(e).run(data).numpy(), np.maximum(np.exp(data) * data, 0),
                                   rtol=1e-5)


def test_vm_compiler_steps_and_params():
    x = relay.var("x", shape=(2,))
    w = relay.var("w", shape=(2,))
    mod = IRModule.from_expr(Function([x, w], relay.add(x, w)))
    compiler = rvm.VMCompiler()
    compiler.set_params({"w": np.full(2, 5.0, "float32")})
    compiler.lower(mod, "llvm")
    compiler.codegen()
    exe = compiler.get_exec()
    assert exe.get_function_arity("main") == 1 and "load_const" in exe.bytecode
    np.testing.assert_array_equal(rvm.VirtualMachine(exe).run(np.ones(2, "float32")).numpy(), [6.0, 6.0])


def test_global_function_called_from_main():
    mod = IRModule()
    sq = GlobalVar("square")
    a = relay.var("a", shape=(4,))
    mod[sq] = Function([a], relay.multiply(a, a))
    x = relay.var("x", shape=(4,))
    mod["main"] = Function([x], relay.add(Call(sq, [x]), Call(sq, [relay.negative(x)])))
    exe = rvm.compile(mod)
    assert "invoke $" in exe.bytecode and set(exe.global_map) == {"square", "main"}
    data = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(rvm.VirtualMachine(exe).run(data).numpy(), 2 * data * data)
