"""External codegens through the global registry: a function marked Compiler="<name>" is compiled
by the global function relay.ext.<name>, as Relay does; the graph executor and the VM call the
module it returns. A missing or misbehaving codegen is a CompileError naming the fix."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import tir
from relay_backend.codegen import build
from relay_backend.errors import CompileError, SerializationError

N = 6


def _partitioned(symbol, compiler):
    """main(x) = exp(f(x)) where f(p) = p * 2 + 1 is marked for `compiler` with `symbol`."""
    p = relay.var("p", shape=(N,))
    f = relay.Function([p], relay.add(relay.multiply(p, relay.const(2.0)), relay.const(1.0)))
    f = f.with_attr("Primitive", 1).with_attr("Compiler", compiler).with_attr("global_symbol", symbol)
    x = relay.var("x", shape=(N,))
    return relay.IRModule.from_expr(relay.Function([x], relay.exp(relay.Call(f, [x]))))


def _codegen(calls):
    """An external codegen that hand-writes TIR for `p * 2 + 1` under the function's symbol."""
    def codegen(func):
        calls.append(func)
        symbol = func.attrs["global_symbol"]
        a, b = tir.Buffer("A", (N,), "float32"), tir.Buffer("B", (N,), "float32")
        i = tir.Var("i")
        body = tir.For(i, 0, N, "serial", tir.BufferStore(b, a[i] * tir.const(2.0, "float32")
                                                         + tir.const(1.0, "float32"), (i,)))
        return build([tir.PrimFunc([a, b], body, symbol, {"num_outputs": 1})], target="llvm")
    return codegen


def test_graph_and_vm_call_the_external_module(scratch_names):
    calls = []
    scratch_names.append("relay.ext.testcc")
    relay.register_func("relay.ext.testcc", _codegen(calls))
    mod = _partitioned("testcc_main_0", "testcc")
    data = np.linspace(-1, 1, N, dtype="float32")
    expected = np.exp(data * 2 + 1)
    factory = relay.build(mod, target="llvm")
    lib = factory.get_lib()
    assert "testcc_main_0" not in lib.function_names                    # not a TECompiler kernel
    assert lib.has_function("testcc_main_0", query_imports=True)        # but imported from the codegen
    gmod = factory["default"](relay.cpu())
    gmod.run(x=data)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), expected, rtol=1e-5)
    out = relay.create_executor("vm", mod=mod).evaluate()(data).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-5)
    assert len(calls) == 1 and calls[0].attrs["Compiler"] == "testcc"    # compiled once, then cached
    with pytest.raises(CompileError, match="external codegen"):
        relay.build(mod, target="llvm", executor="aot")
    with pytest.raises(SerializationError, match="imports modules of external codegens"):
        lib.export_library("/tmp/never_written.so")


def test_missing_scratch_namess_the_global_function():
    with pytest.raises(CompileError, match=r"Compiler='nosuchcc'.*'relay.ext.nosuchcc' is registered.*"
                                           r"register_func"):
        relay.build(_partitioned("nosuchcc_main_0", "nosuchcc"), target="llvm")


def test_codegen_must_return_a_module_with_the_symbol(scratch_names):
    scratch_names.append("relay.ext.badcc")
    relay.register_func("relay.ext.badcc", lambda func: "not a module")
    with pytest.raises(CompileError, match=r"must return a runtime Module defining 'badcc_main_0'.*str"):
        relay.build(_partitioned("badcc_main_0", "badcc"), target="llvm")
    relay.register_func("relay.ext.badcc", lambda func: 1 / 0, override=True)
    with pytest.raises(CompileError, match=r"'relay.ext.badcc' failed.*ZeroDivisionError"):
        relay.build(_partitioned("badcc_main_1", "badcc"), target="llvm")
