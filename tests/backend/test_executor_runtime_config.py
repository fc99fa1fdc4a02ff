"""relay.backend.Executor / Runtime as TVM v0.18: registries with typed options and defaults,
accepted by relay.build; options relay_backend cannot honour are errors, never ignored."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.backend import Executor, Runtime
from relay_backend.errors import OpNotImplemented, RelayError


def _add_one():
    x = relay.var("x", shape=(4,))
    return relay.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(1.0))))


def test_registries_list_names_and_typed_options():
    assert Executor.list_registered() == ["graph", "aot"]
    assert Runtime.list_registered() == ["cpp", "crt"]
    assert Executor.list_registered_options("graph") == {"link-params": "runtime.BoxBool"}
    assert Executor.list_registered_options("aot") == {
        "link-params": "runtime.BoxBool", "unpacked-api": "runtime.BoxBool",
        "interface-api": "runtime.String", "workspace-byte-alignment": "runtime.BoxInt",
        "constant-byte-alignment": "runtime.BoxInt"}
    assert Runtime.list_registered_options("crt") == {"system-lib": "runtime.BoxBool"}


def test_defaults_and_item_access():
    assert Executor("graph")["link-params"] is False
    aot = Executor("aot", {"interface-api": "c", "unpacked-api": True})
    assert aot["link-params"] is True and aot["interface-api"] == "c" and "unpacked-api" in aot
    assert "workspace-byte-alignment" not in aot
    assert Executor("aot", {"interface-api": "c"}) == Executor("aot", {"interface-api": "c"})
    assert Executor("aot") != Executor("graph")


@pytest.mark.parametrize("make, message", [
    (lambda: Executor("tensorrt"), r"executor 'tensorrt' is not registered; valid executors are \['graph', 'aot'\]"),
    (lambda: Executor("graph", {"link-parms": True}), r"has no option 'link-parms'; its options are \['link-params'\]"),
    (lambda: Executor("aot", {"unpacked-api": "yes"}), r"option 'unpacked-api' must be a bool, got str"),
    (lambda: Executor("aot", {"workspace-byte-alignment": True}), r"must be a int, got bool"),
    (lambda: Runtime("cxx"), r"runtime 'cxx' is not registered; valid runtimes are \['cpp', 'crt'\]"),
])
def test_bad_names_options_and_types_are_errors(make, message):
    with pytest.raises(RelayError, match=message):
        make()


@pytest.mark.parametrize("make, message", [
    (lambda: Executor("aot", {"interface-api": "packed"}), "emits the C interface"),
    (lambda: Executor("aot", {"unpacked-api": False}), "takes its tensors unpacked"),
    (lambda: Executor("aot", {"link-params": False}), "always links params"),
    (lambda: Executor("aot", {"workspace-byte-alignment": 128}), "aligns every buffer to 64 bytes"),
    (lambda: Executor("aot", {"constant-byte-alignment": 24}), "power of two"),
    (lambda: Executor("graph", {"link-params": True}), "keeps params outside the kernels"),
    (lambda: Runtime("cpp", {"system-lib": True}), "loaded with dlopen"),
])
def test_options_we_cannot_honour_are_refused_not_ignored(make, message):
    with pytest.raises(OpNotImplemented, match=message):
        make()


def test_build_takes_executor_and_runtime_objects():
    data = np.arange(4, dtype="float32")
    graph = relay.build(_add_one(), target="llvm", executor=Executor("graph"), runtime=Runtime("cpp"))
    module = graph["default"](relay.cpu())
    module.set_input("x", data)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), data + 1)
    aot = relay.build(_add_one(), target="llvm",
                      executor=Executor("aot", {"interface-api": "c", "unpacked-api": True,
                                                "workspace-byte-alignment": 16}),
                      runtime=Runtime("crt", {"system-lib": True}))
    assert "tvmgen_default_run" in aot.get_source("c")
    module = aot["default"](relay.cpu())
    module.set_input("x", data)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), data + 1)


def test_build_refuses_crt_for_the_graph_executor_and_unknown_names():
    with pytest.raises(OpNotImplemented, match=r"Runtime\('crt'\) needs Executor\('aot'\)"):
        relay.build(_add_one(), executor="graph", runtime="crt")
    with pytest.raises(RelayError, match="executor 'vm' is not registered"):
        relay.build(_add_one(), executor="vm")


def test_backend_is_reachable_from_the_package():
    assert relay.backend.Executor is Executor and relay.backend.Runtime is Runtime
    assert relay.backend.te_compiler.get() is relay.backend.te_compiler.get()
