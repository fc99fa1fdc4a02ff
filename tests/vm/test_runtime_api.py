"""TVM v0.18's VirtualMachine and Executable calls beyond run(): incremental inputs, caller-provided
outputs written in place, invoke of other functions, benchmark and time_evaluator, the
executable's inspection properties and runtime module, and late-bound constants that round-trip
through a file. Results are checked against numpy."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.errors import InputError, SerializationError
from relay_backend.runtime.benchmark import BenchmarkResult

X = np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3)
Y = np.linspace(2, 3, 6, dtype="float32").reshape(2, 3)
BIG = np.arange(64 * 64, dtype="float32").reshape(64, 64) / 100


@pytest.fixture(scope="module")
def two_functions():
    """main(x, y) = (exp(x) * y, @double(x) - @identity(y)); @double(x) = x + x; @identity(x) = x."""
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(2, 3))
    mod = relay.IRModule()
    double = relay.GlobalVar("double")
    mod[double] = relay.Function([x], relay.add(x, x))
    ident = relay.GlobalVar("identity")
    mod[ident] = relay.Function([x], x)
    mod["main"] = relay.Function([x, y], relay.Tuple([relay.multiply(relay.exp(x), y),
                                                      relay.subtract(double(x), ident(y))]))
    exe = rvm.compile(mod, target="llvm")
    return exe


def _const_exe():
    """main(x: (64, 64)) = x * BIG + [0.5, 1.5] broadcast (a big and a small constant)."""
    x = relay.var("x", shape=(64, 64))
    small = relay.const(np.array([0.5, 1.5] * 32, dtype="float32"))
    body = relay.add(relay.multiply(x, relay.const(BIG)), small)
    return rvm.compile(relay.IRModule.from_expr(relay.Function([x], body)), target="llvm")


def _expected(x):
    return x * BIG + np.array([0.5, 1.5] * 32, dtype="float32")


def test_set_one_input_builds_up_the_inputs(two_functions):
    machine = rvm.VirtualMachine(two_functions, relay.cpu())
    machine.set_one_input("main", "y", Y)
    with pytest.raises(InputError, match=r"input\(s\) \['x'\] were never set"):
        machine.invoke("main")
    machine.set_one_input("main", 0, X)
    out = machine.invoke("main")
    np.testing.assert_allclose(out[0].numpy(), np.exp(X) * Y, rtol=1e-6)
    machine.set_one_input("main", y=2 * Y)              # replaces one input, keeps the other
    np.testing.assert_allclose(machine.invoke("main")[0].numpy(), np.exp(X) * 2 * Y, rtol=1e-6)
    with pytest.raises(InputError, match="no parameter 'z'"):
        machine.set_one_input("main", "z", X)
    with pytest.raises(InputError, match="neither a parameter name nor an index"):
        machine.set_one_input("main", 5, X)
    with pytest.raises(InputError, match=r"parameter 'x'.*shape"):
        machine.set_one_input("main", "x", np.ones(3, "float32"))


def test_set_input_follows_tvms_keyword_rules(two_functions):
    machine = rvm.VirtualMachine(two_functions, relay.cpu())
    machine.set_input("main", Y, x=X, unused=X)          # names fill first; extra names ignored
    np.testing.assert_allclose(machine.invoke("main")[1].numpy(), 2 * X - Y, rtol=1e-6)
    assert machine.get_input_index("y") == 1 and machine.get_input_index("w") == -1
    assert two_functions.get_function_params("main") == ["x", "y"]


def test_invoke_runs_any_global_function(two_functions):
    machine = rvm.VirtualMachine(two_functions, relay.cpu())
    np.testing.assert_allclose(machine.invoke("double", X).numpy(), 2 * X, rtol=1e-6)
    machine.invoke_stateful("double", X)
    np.testing.assert_allclose(machine.get_outputs()[0].numpy(), 2 * X, rtol=1e-6)
    assert sorted(two_functions.globals) == ["double", "identity", "main"]


def test_invoke_with_outputs_writes_the_callers_tensors_in_place(two_functions):
    machine = rvm.VirtualMachine(two_functions, relay.cpu())
    outs = [relay.nd.empty((2, 3), "float32"), relay.nd.empty((2, 3), "float32")]
    ptrs = [o.data_ptr for o in outs]
    machine.invoke_with_outputs("main", {"x": X, "y": Y}, outs)
    np.testing.assert_allclose(outs[0].numpy(), np.exp(X) * Y, rtol=1e-6)
    np.testing.assert_allclose(outs[1].numpy(), 2 * X - Y, rtol=1e-6)
    assert [o.data_ptr for o in outs] == ptrs
    # the kernels wrote into the caller's memory: the result the VM returns *is* that memory
    machine.set_outputs("main", *outs)
    result = machine.invoke("main", 2 * X, Y)
    assert result[0].data_ptr == outs[0].data_ptr and result[1].data_ptr == outs[1].data_ptr
    np.testing.assert_allclose(outs[1].numpy(), 4 * X - Y, rtol=1e-6)
    # input_args=None: the inputs set before are used
    machine.set_input("main", X, 3 * Y)
    machine.invoke_with_outputs("main", None, outs)
    np.testing.assert_allclose(outs[0].numpy(), np.exp(X) * 3 * Y, rtol=1e-6)


def test_invoke_with_outputs_copies_results_no_kernel_writes(two_functions):
    machine = rvm.VirtualMachine(two_functions, relay.cpu())
    out = relay.nd.empty((2, 3), "float32")
    machine.invoke_with_outputs("identity", {"x": X}, [out])     # a parameter returned as is
    np.testing.assert_array_equal(out.numpy(), X)


def test_invoke_with_outputs_rejects_bad_outputs(two_functions):
    machine = rvm.VirtualMachine(two_functions, relay.cpu())
    with pytest.raises(InputError, match="lacks parameter"):
        machine.invoke_with_outputs("main", {"x": X}, [relay.nd.empty((2, 3), "float32")] * 2)
    with pytest.raises(InputError, match=r"output 0 is Tensor\[\(4,\), float32\]"):
        machine.invoke_with_outputs("main", {"x": X, "y": Y},
                                    [relay.nd.empty((4,), "float32"), relay.nd.empty((2, 3), "float32")])
    with pytest.raises(InputError, match="returns 2 output"):
        machine.invoke_with_outputs("main", {"x": X, "y": Y}, [relay.nd.empty((2, 3), "float32")])
    shared = relay.nd.array(X)
    with pytest.raises(InputError, match="shares memory with an input"):
        machine.invoke_with_outputs("double", {"x": shared}, [shared])


def test_benchmark_and_time_evaluator(two_functions):
    machine = rvm.VirtualMachine(two_functions, relay.cpu())
    result = machine.benchmark(relay.cpu(), X, Y, func_name="main", repeat=3, number=2, min_repeat_ms=None,
                               limit_zero_time_iterations=10, cooldown_interval_ms=0, repeats_to_cooldown=1)
    assert isinstance(result, BenchmarkResult) and len(result.results) == 3
    assert len(machine.benchmark(relay.cpu(), func_name="double", repeat=2, number=1, end_to_end=True,
                                 x=X).results) == 2
    evaluate = machine.module.time_evaluator("invoke", relay.cpu(), number=2, repeat=2)
    assert len(evaluate("main").results) == 2
    assert machine.module.type_key == "VirtualMachine" and "invoke_stateful" in machine.module


def test_executable_inspection_and_runtime_module(two_functions):
    exe = two_functions
    assert exe.globals == [exe.globals[i] for i in range(3)] and set(exe.globals) == {"main", "double", "identity"}
    assert all(f"VM PackedFunc[{i}]: {n}" in exe.primitives for i, n in enumerate(exe.primitive_names))
    assert "device type 1" in exe.virtual_devices
    assert "Relay VM executable statistics" in exe.stats and "invoke_packed" in exe.bytecode
    code, lib = exe.save()
    assert isinstance(code, bytearray) and lib is exe.lib
    assert exe.mod is exe.module and exe.mod.type_key == "VMExecutable"
    assert exe.mod["get_bytecode"]() == exe.bytecode and exe.mod["get_function_arity"]("main") == 2
    assert exe.mod.imported_modules == [exe.lib]
    machine = rvm.VirtualMachine(exe.mod, relay.cpu())          # TVM accepts the raw module too
    np.testing.assert_allclose(machine.invoke("double", X).numpy(), 2 * X, rtol=1e-6)
    loaded = rvm.Executable.load_exec(code, lib)
    np.testing.assert_allclose(rvm.VirtualMachine(loaded, relay.cpu()).run(X, Y)[1].numpy(), 2 * X - Y, rtol=1e-6)


def test_constants_description_lists_every_constant():
    exe = _const_exe()
    text = exe.constants
    assert "VM Const[" in text and "Tensor[(64, 64), float32]" in text and len(text.splitlines()) == 2


def test_late_bound_constants_round_trip_through_a_file(tmp_path):
    exe = _const_exe()
    full, _ = exe.save()
    path = str(tmp_path / "consts.params")
    exe.move_late_bound_consts(path, byte_limit=1024)
    assert "late-bound as 'const_" in exe.constants and "(not loaded)" in exe.constants
    code, lib = exe.save()
    # the 16 KiB weight is in the params file, not in the code blob; the small one stays
    assert len(full) - len(code) >= BIG.nbytes and BIG.tobytes() not in bytes(code)
    loaded = rvm.Executable.load_exec(code, lib)
    with pytest.raises(SerializationError, match="late-bound constant.*not loaded.*load_late_bound_consts"):
        rvm.VirtualMachine(loaded, relay.cpu())
    loaded.load_late_bound_consts(path)
    data = np.random.default_rng(0).standard_normal((64, 64)).astype("float32")
    out = rvm.VirtualMachine(loaded, relay.cpu()).run(data).numpy()
    np.testing.assert_allclose(out, _expected(data), rtol=1e-5, atol=1e-5)
    # loading again re-embeds the constants: the executable saves whole again
    assert len(loaded.save()[0]) == len(full)


def test_late_bound_constants_from_a_map_and_their_errors():
    exe = _const_exe()
    consts = exe.get_late_bound_consts(1024)
    assert list(consts) == [n for n in consts if n.startswith("const_")] and len(consts) == 1
    name, value = next(iter(consts.items()))
    np.testing.assert_array_equal(value.numpy(), BIG)
    with pytest.raises(SerializationError, match="already late-bound"):
        exe.get_late_bound_consts(1024)
    with pytest.raises(SerializationError, match=f"no value for '{name}'"):
        exe.load_late_bound_consts_from_map({})
    with pytest.raises(SerializationError, match=r"must be Tensor\[\(64, 64\), float32\]"):
        exe.load_late_bound_consts_from_map({name: np.zeros((2, 2), "float32")})
    with pytest.raises(SerializationError, match="are not constants of this executable"):
        exe.load_late_bound_consts_from_map({name: BIG, "const_99": BIG})
    exe.load_late_bound_consts_from_map({name: BIG})
    data = np.ones((64, 64), "float32")
    np.testing.assert_allclose(rvm.VirtualMachine(exe, relay.cpu()).run(data).numpy(), _expected(data),
                               rtol=1e-6)
    assert exe.get_late_bound_consts(1 << 30) == {}          # nothing that big: nothing moves
