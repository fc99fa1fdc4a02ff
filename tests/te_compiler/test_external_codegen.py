"""External codegens through the global registry: a function marked Compiler="<name>" is compiled
by the global function relay.ext.<name>, as Relay does; the graph executor and the VM call the
module it returns. A missing or misbehaving codegen is a CompileError naming the fix."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import CompileError, SerializationError
from relay_backend.testing.external_codegen import partitioned_module, register_tir_codegen, sample_io


def test_graph_and_vm_call_the_external_module(scratch_names):
    scratch_names.append("relay.ext.testcc")
    calls = register_tir_codegen("testcc")
    mod = partitioned_module("testcc_main_0", "testcc")
    data, expected = sample_io()
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


def test_missing_codegen_names_the_global_function():
    with pytest.raises(CompileError, match=r"Compiler='nosuchcc'.*'relay.ext.nosuchcc' is registered.*"
                                           r"register_func"):
        relay.build(partitioned_module("nosuchcc_main_0", "nosuchcc"), target="llvm")


def test_codegen_must_return_a_module_with_the_symbol(scratch_names):
    scratch_names.append("relay.ext.badcc")
    relay.register_func("relay.ext.badcc", lambda func: "not a module")
    with pytest.raises(CompileError, match=r"must return a runtime Module defining 'badcc_main_0'.*str"):
        relay.build(partitioned_module("badcc_main_0", "badcc"), target="llvm")
    relay.register_func("relay.ext.badcc", lambda func: 1 / 0, override=True)
    with pytest.raises(CompileError, match=r"'relay.ext.badcc' failed.*ZeroDivisionError"):
        relay.build(partitioned_module("badcc_main_1", "badcc"), target="llvm")
