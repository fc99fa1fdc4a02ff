"""Programs with size variables (`te.size_var`) in their types, run end to end.

Kernels are compiled once with the size variables as parameters and run for any size; the VM
allocates outputs with shape functions; the debug interpreter replays relations on the run-time
shapes. Inputs that break a size variable's constraint (two inputs sharing `n` with different
sizes, `n` meeting a fixed 8 that the run-time size is not) raise InputError on every executor;
the graph and AOT executors refuse symbolic inputs, naming the input and pointing to the VM.
References are numpy, tolerance 1e-4 relative (float32 sums of up to 512 terms).
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te
from relay_backend import vm as rvm
from relay_backend.errors import InputError, RelayError, SerializationError
from relay_backend.te_compiler.lower import lower_to_primfunc
from relay_backend.vm.executable import Executable

from ..artifact_edit import edit_vm

pytestmark = pytest.mark.compile

BATCHES = (1, 7, 64)


def _relu(x):
    return np.maximum(x, 0)


def _mlp():
    n = te.size_var("n")
    x = relay.var("x", shape=(n, 32))
    w1, b1 = relay.var("w1", shape=(64, 32)), relay.var("b1", shape=(64,))
    w2, b2 = relay.var("w2", shape=(10, 64)), relay.var("b2", shape=(10,))
    hidden = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w1), b1))
    out = relay.nn.softmax(relay.nn.bias_add(relay.nn.dense(hidden, w2), b2))
    return relay.IRModule.from_expr(relay.Function([x, w1, b1, w2, b2], out))


def _mlp_ref(x, w1, b1, w2, b2):
    logits = _relu(x @ w1.T + b1) @ w2.T + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_dynamic_batch_mlp_runs_on_debug_and_vm_for_three_batches():
    mod = _mlp()
    assert str(relay.transform.InferType()(mod)["main"].ret_type) == "Tensor[(n, 10), float32]"
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(s).astype("float32") * 0.2 for s in ((64, 32), (64,), (10, 64), (10,))]
    vm_fn = relay.create_executor("vm", mod=mod).evaluate()
    debug_fn = relay.create_executor("debug", mod=mod).evaluate()
    for batch in BATCHES:
        x = rng.standard_normal((batch, 32)).astype("float32")
        want = _mlp_ref(x, *weights)
        for fn in (vm_fn, debug_fn):
            got = fn(x, *weights).numpy()
            assert got.shape == (batch, 10)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _resnet_block():
    """conv-bn-relu-conv-bn + identity, relu; symbolic batch and spatial size."""
    n, h, w = te.size_var("n"), te.size_var("h"), te.size_var("w")
    x = relay.var("x", shape=(n, 8, h, w))
    params = {name: relay.var(name, shape=shape) for name, shape in (
        ("k1", (8, 8, 3, 3)), ("g1", (8,)), ("be1", (8,)), ("m1", (8,)), ("v1", (8,)),
        ("k2", (8, 8, 3, 3)), ("g2", (8,)), ("be2", (8,)), ("m2", (8,)), ("v2", (8,)))}
    p = params
    y = relay.nn.conv2d(x, p["k1"], padding=(1, 1))
    y = relay.nn.relu(relay.nn.batch_norm(y, p["g1"], p["be1"], p["m1"], p["v1"])[0])
    y = relay.nn.conv2d(y, p["k2"], padding=(1, 1))
    y = relay.nn.batch_norm(y, p["g2"], p["be2"], p["m2"], p["v2"])[0]
    out = relay.nn.relu(relay.add(y, x))
    return relay.IRModule.from_expr(relay.Function([x] + list(params.values()), out)), list(params)


def _conv_ref(x, k):
    n, c, h, w = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, k.shape[0], h, w), dtype=np.float64)
    for p in range(3):
        for q in range(3):
            out += np.einsum("nchw,oc->nohw", padded[:, :, p:p + h, q:q + w], k[:, :, p, q])
    return out


def _bn_ref(x, g, b, m, v):
    shape = (1, -1, 1, 1)
    return (x - m.reshape(shape)) / np.sqrt(v.reshape(shape) + 1e-5) * g.reshape(shape) + b.reshape(shape)


def test_resnet_block_with_symbolic_batch_and_size_runs_on_the_vm_for_three_batches():
    mod, names = _resnet_block()
    assert str(relay.transform.InferType()(mod)["main"].ret_type) == "Tensor[(n, 8, h, w), float32]"
    rng = np.random.default_rng(1)
    values = {}
    for name in names:
        shape = (8, 8, 3, 3) if name.startswith("k") else (8,)
        values[name] = (rng.uniform(0.5, 1.5, shape) if name.startswith("v") else
                        rng.standard_normal(shape) * 0.3).astype("float32")
    fn = relay.create_executor("vm", mod=mod).evaluate()
    for batch, (h, w) in zip(BATCHES, ((5, 6), (4, 4), (3, 2))):
        x = rng.standard_normal((batch, 8, h, w)).astype("float32")
        v = values
        y = _relu(_bn_ref(_conv_ref(x, v["k1"]), v["g1"], v["be1"], v["m1"], v["v1"]))
        want = _relu(_bn_ref(_conv_ref(y, v["k2"]), v["g2"], v["be2"], v["m2"], v["v2"]) + x)
        got = fn(x, *(values[k] for k in names)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_symbolic_kernel_is_compiled_once_with_the_size_variable_as_a_parameter():
    n = te.size_var("n")
    x, w = relay.var("x", shape=(n, 16)), relay.var("w", shape=(4, 16))
    prim = relay.Function([x, w], relay.nn.dense(x, w)).with_attr("Primitive", 1)
    prim = relay.transform.InferType()(relay.IRModule.from_expr(prim))["main"]
    assert [v.name for v in lower_to_primfunc(prim, "llvm").shape_vars] == ["n"]
    exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w))))
    kernels = list(exe.primitive_ops)
    vm = rvm.VirtualMachine(exe)
    rng = np.random.default_rng(2)
    wv = rng.standard_normal((4, 16)).astype("float32")
    for batch in BATCHES:
        xv = rng.standard_normal((batch, 16)).astype("float32")
        np.testing.assert_allclose(vm.run(xv, wv).numpy(), xv @ wv.T, rtol=1e-4, atol=1e-5)
    assert len(kernels) == 1 and list(exe.primitive_ops) == kernels   # one kernel served every size


def _shared_n():
    n = te.size_var("n")
    x, y = relay.var("x", shape=(n, 4)), relay.var("y", shape=(n, 4))
    return relay.IRModule.from_expr(relay.Function([x, y], relay.add(x, y)))


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_inputs_sharing_a_size_variable_must_agree(kind):
    fn = relay.create_executor(kind, mod=_shared_n()).evaluate()
    a, b = np.ones((3, 4), "float32"), np.ones((5, 4), "float32")
    with pytest.raises(InputError, match=r"parameter 'y'.*dimension 0 is 5, but n = 3"):
        fn(a, b)
    np.testing.assert_array_equal(fn(b, b).numpy(), 2 * b)


def test_set_one_input_checks_shared_size_variables_once_every_input_is_set():
    vm = rvm.VirtualMachine(rvm.compile(_shared_n()), relay.cpu())
    a, b = np.ones((3, 4), "float32"), np.ones((5, 4), "float32")
    with pytest.raises(InputError, match=r"parameter 'x'.*got shape \(3, 5\)"):
        vm.set_one_input("main", "x", np.ones((3, 5), "float32"))
    vm.set_one_input("main", "x", a)
    with pytest.raises(InputError, match=r"parameter 'y'.*dimension 0 is 5, but n = 3"):
        vm.set_one_input("main", "y", b)
    vm.set_one_input("main", 1, a)
    np.testing.assert_array_equal(vm.invoke("main").numpy(), 2 * a)


@pytest.mark.parametrize("kind", ["graph", "aot"])
def test_graph_and_aot_refuse_symbolic_inputs_naming_the_input(kind):
    with pytest.raises(RelayError, match=r"needs static shapes, but input 'x' has type Tensor\[\(n, 4\), "
                                         r"float32\].*kind=\"vm\""):
        relay.create_executor(kind, mod=_shared_n()).evaluate()(np.ones((3, 4), "float32"),
                                                               np.ones((3, 4), "float32"))


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_a_size_variable_meeting_a_fixed_dim_is_checked_at_run_time(kind):
    """dense(x: (2, n), w: (4, 8)) type-checks (n may be 8, TVM's AssertEQ); n = 5 is an error."""
    n = te.size_var("n")
    x, w = relay.var("x", shape=(2, n)), relay.var("w", shape=(4, 8))
    fn = relay.create_executor(kind, mod=relay.IRModule.from_expr(relay.Function([x, w], relay.nn.dense(x, w))))
    fn = fn.evaluate()
    wv = np.ones((4, 8), "float32")
    with pytest.raises(InputError, match="input has 5 features but weight expects 8"):
        fn(np.ones((2, 5), "float32"), wv)
    np.testing.assert_allclose(fn(np.ones((2, 8), "float32"), wv).numpy(), np.full((2, 4), 8.0))


def test_expression_dims_of_an_input_are_checked_against_its_size_variables():
    n = te.size_var("n")
    x, y = relay.var("x", shape=(n,)), relay.var("y", shape=(n * 2,))
    mod = relay.IRModule.from_expr(relay.Function([x, y], relay.concatenate([x, x, y], 0)))
    for kind in ("debug", "vm"):
        fn = relay.create_executor(kind, mod=mod).evaluate()
        xv, yv = np.arange(3, dtype="float32"), np.arange(6, dtype="float32")
        np.testing.assert_array_equal(fn(xv, yv).numpy(), np.concatenate([xv, xv, yv]))
        with pytest.raises(InputError, match=r"parameter 'y'.*n \* 2 = 6"):
            fn(xv, np.arange(5, dtype="float32"))


def test_executable_with_symbolic_parameter_types_saves_loads_and_checks():
    exe = rvm.compile(_shared_n())
    code, lib = exe.save()
    loaded = Executable.load_exec(code, lib)
    vm = rvm.VirtualMachine(loaded)
    a = np.arange(8, dtype="float32").reshape(2, 4)
    np.testing.assert_array_equal(vm.run(a, a).numpy(), 2 * a)
    with pytest.raises(InputError, match="but n = 2"):
        vm.run(a, np.ones((3, 4), "float32"))
    for dim in (["?", "n", 1], [], ["+", "n"], -1, True):
        bad = edit_vm(code, lambda meta, dim=dim: meta["functions"][0]["param_types"][1]["shape"].__setitem__(0, dim))
        with pytest.raises(SerializationError, match="parameter|malformed|bad shape dim"):
            Executable.load_exec(bad, lib)


def test_a_dim_that_is_only_an_expression_compiles_over_a_fresh_variable():
    """x: (n * 2, 3) with n bound by no whole dim: the kernel takes that dim as its own variable."""
    n = te.size_var("n")
    x = relay.var("x", shape=(n * 2, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(relay.concatenate([x, x], 0))))
    assert str(relay.transform.InferType()(mod)["main"].ret_type) == "Tensor[(n * 4, 3), float32]"
    fn = relay.create_executor("vm", mod=mod).evaluate()
    for rows in (2, 6):
        xv = np.arange(rows * 3, dtype="float32").reshape(rows, 3) - 4
        np.testing.assert_array_equal(fn(xv).numpy(), np.maximum(np.concatenate([xv, xv]), 0))
