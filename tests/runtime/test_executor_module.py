"""The set_input / run / get_output protocol of GraphModule and AotModule (runtime.ExecutorModule):
unset inputs are refused by name, inputs sharing a name work by index and are ambiguous by
name, and API misuse is a clear RelayError. Results are checked against numpy."""
import json

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import graph_executor
from relay_backend.errors import InputError, RelayError, SerializationError
from relay_backend.runtime.params import save_param_dict

pytestmark = pytest.mark.compile
EXECUTORS = ["graph", "aot"]
A = np.array([1.0, 2.0, 3.0], "float32")
B = np.array([0.5, -1.0, 4.0], "float32")
W = np.array([2.0, 3.0, 4.0], "float32")


def _two_input_model():
    """(x - y) * w with w a parameter of main (bound with params=)."""
    x, y, w = relay.var("x", shape=(3,)), relay.var("y", shape=(3,)), relay.var("w", shape=(3,))
    return relay.IRModule.from_expr(relay.Function([x, y, w], relay.multiply(relay.subtract(x, y), w)))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_run_refuses_unset_inputs_and_names_them(executor):
    module = relay.build(_two_input_model(), params={"w": W}, executor=executor)["default"](relay.cpu(0))
    with pytest.raises(InputError, match=r"input\(s\) \['x', 'y'\] were never set"):
        module.run()
    module.set_input("x", A)
    with pytest.raises(InputError, match=r"\['y'\] were never set.*set_input"):
        module.run()
    module.set_input("y", B)            # w was bound at build time: counts as set
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), (A - B) * W, rtol=1e-6)


def test_graph_params_set_by_the_factory_or_load_params_count_as_set():
    x, w = relay.var("x", shape=(3,)), relay.var("w", shape=(3,))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x, w], relay.add(x, w))))
    module = graph_executor.GraphModule(lib.get_graph_json(), lib.get_lib(), relay.cpu(0))
    with pytest.raises(InputError, match=r"\['x', 'w'\] were never set"):
        module.run()
    module.load_params(save_param_dict({"w": W}))
    module.run(x=A)
    np.testing.assert_allclose(module.get_output(0).numpy(), A + W, rtol=1e-6)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_inputs_sharing_a_name_work_by_index_and_are_ambiguous_by_name(executor):
    x1, x2 = relay.var("x", shape=(3,)), relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x1, x2], relay.subtract(x1, x2)))
    module = relay.build(mod, executor=executor)["default"](relay.cpu(0))
    module.set_input(0, A)
    module.set_input(1, B)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), A - B, rtol=1e-6)
    with pytest.raises(InputError, match=r"input name 'x' is ambiguous: inputs \[0, 1\].*set_input\(0, value\)"):
        module.set_input("x", A)
    with pytest.raises(InputError, match="ambiguous"):
        module.get_input_index("x")
    fresh = relay.build(mod, executor=executor)["default"](relay.cpu(0))
    fresh.set_input(0, A)
    with pytest.raises(InputError, match=r"\['x \(index 1\)'\] were never set"):
        fresh.run()
    # create_executor passes arguments by position; by keyword the name is ambiguous
    run = relay.create_executor(executor, mod=mod).evaluate()
    np.testing.assert_allclose(run(A, B).numpy(), A - B, rtol=1e-6)
    with pytest.raises(InputError, match=r"several parameters are named 'x'.*by position"):
        run(A, x=B)


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_keyword_for_a_shared_parameter_name_is_ambiguous(kind):
    x1, x2 = relay.var("x", shape=(3,)), relay.var("x", shape=(3,))
    run = relay.create_executor(kind, mod=relay.IRModule.from_expr(relay.Function([x1, x2], relay.subtract(x1, x2)))).evaluate()
    np.testing.assert_allclose(run(A, B).numpy(), A - B, rtol=1e-6)
    with pytest.raises(InputError, match=r"several parameters are named 'x'"):
        run(x=A)


def test_virtual_machine_keyword_for_a_shared_parameter_name_is_ambiguous():
    from relay_backend import vm as relay_vm
    x1, x2 = relay.var("x", shape=(3,)), relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x1, x2], relay.subtract(x1, x2)))
    machine = relay_vm.VirtualMachine(relay_vm.compile(mod, target="llvm"), relay.cpu(0))
    np.testing.assert_allclose(machine.run(A, B).numpy(), A - B, rtol=1e-6)
    with pytest.raises(InputError, match=r"several parameters are named 'x'"):
        machine.run(A, x=B)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_misused_api_gives_clear_relay_errors(executor):
    module = relay.build(_two_input_model(), params={"w": W}, executor=executor)["default"](relay.cpu(0))
    module.run(x=A, y=B)
    for bad in (None, 0.5, True, [0]):
        with pytest.raises(InputError, match=r"get_output: an output is numbered by an int"):
            module.get_output(bad)
    with pytest.raises(InputError, match=r"output|outputs"):
        module.get_output("a")
    with pytest.raises(RelayError, match=r"looks up a function by name.*get_output\(0\)"):
        module[0]
    assert module["run"] == module.run
    for bad in (0.5, None, b"x"):
        with pytest.raises(InputError, match="named by a string or numbered by an int"):
            module.set_input(bad, A)
    with pytest.raises(InputError, match="named by a string or numbered by an int"):
        module.get_input(1.0)
    np.testing.assert_allclose(module.get_output(0).numpy(), (A - B) * W, rtol=1e-6)


def test_graph_load_params_takes_bytes():
    x, w = relay.var("x", shape=(3,)), relay.var("w", shape=(3,))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x, w], relay.add(x, w))))
    module = lib["default"](relay.cpu(0))
    with pytest.raises(InputError, match=r"got str: that looks like a file name.*open\(path, 'rb'\)\.read\(\)"):
        module.load_params("model.params")
    with pytest.raises(InputError, match="expects the bytes of a params blob.*got NoneType"):
        module.load_params(None)
    module.load_params(bytearray(save_param_dict({"w": W})))
    module.run(x=A)
    np.testing.assert_allclose(module.get_output(0).numpy(), A + W, rtol=1e-6)


def test_graph_json_mismatch_names_the_first_differing_index():
    """A long list that differs late: the message shows where, not two equal truncated prefixes."""
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(12):
        y = relay.exp(y)
    config = relay.transform.PassContext(opt_level=0)        # no fusion: one node per exp
    with config:
        lib = relay.build(relay.IRModule.from_expr(relay.Function([x], y)))
    graph = json.loads(lib.get_graph_json())
    assert len(graph["node_row_ptr"]) > 12
    graph["node_row_ptr"][11] += 1
    with pytest.raises(SerializationError, match=r"node_row_ptr.*first differs at index 11: "
                                                 r"\d+ where the nodes' num_outputs give \d+"):
        graph_executor.create(json.dumps(graph), lib.get_lib(), relay.cpu(0))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_get_input_into_out_checks_it(executor):
    module = relay.build(_two_input_model(), params={"w": W}, executor=executor)["default"](relay.cpu(0))
    module.set_input("x", A)
    with pytest.raises(InputError, match=r"get_input\('x', out\): out must be an NDArray"):
        module.get_input("x", np.empty(3, "float32"))
    with pytest.raises(InputError, match=r"out is Tensor\[\(4,\), float32\], but the input is Tensor\[\(3,\)"):
        module.get_input("x", relay.nd.empty((4,)))
    out = relay.nd.empty((3,))
    np.testing.assert_array_equal(module.get_input("x", out).numpy(), A)
    with pytest.raises(InputError, match="an input name is a string"):
        module.get_input_index(["x"])
