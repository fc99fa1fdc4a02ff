"""The VM's straight-line specialisation (vm/straight_line.py) keeps every result and error.

A function with no jumps runs as steps with its constants bound at build time; allocation
sites whose tensor only kernels read (and that is not returned) reuse one tensor per thread
without reference counting; kernel calls reuse their pointer array while the addresses repeat.
Every check is against numpy, over repeated runs, with results held, inputs alternated and
threads, since a wrong reuse shows only there."""

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import vm as rvm
from relay_backend.errors import InputError, RelayError
from relay_backend.vm.storage import Storage

from ..threads import failures_in_threads

N = 16


def _vm(body_of, params=None, opt_level=0, shape=(N,)):
    """A VM of fn(x) = body_of(x); opt_level 0 keeps every op a kernel of its own, so the
    intermediates are allocation sites between kernels."""
    x = relay.var("x", shape=shape)
    mod = relay.IRModule.from_expr(relay.Function([x], body_of(x)))
    with relay.transform.PassContext(opt_level=opt_level):
        exe = rvm.compile(mod, target="llvm", params=params)
    return rvm.VirtualMachine(exe, relay.cpu())


def _chain(x):
    """tanh(exp(x) * 3 + 1) * 2: four intermediates that only kernels read, five kernels (one
    batch, kernel_batches.py: the first reads the input, the last writes the result)."""
    y = relay.tanh(relay.add(relay.multiply(relay.exp(x), relay.const(3.0)), relay.const(1.0)))
    return relay.multiply(y, relay.const(2.0))


def _want_chain(x):
    return np.tanh(np.exp(x) * 3 + 1) * 2


def test_internal_sites_hold_only_the_intermediates():
    from relay_backend.codegen.kernel_sequence import KernelSequence
    machine = _vm(_chain)
    machine.run(np.zeros(N, "float32"))
    pool = machine._storage_pool()
    batches = [v[0] for v in pool.sites.values() if isinstance(v, tuple) and isinstance(v[0], KernelSequence)]
    blocks = [v for v in pool.sites.values() if isinstance(v, Storage)]
    sites = [v for v in pool.sites.values() if isinstance(v, tuple) and isinstance(v[1], relay.nd.NDArray)]
    assert len(sites) == 4                       # sites: exp(x), * 3, + 1, tanh
    # each lives from its kernel to the next one: two planned blocks serve them, in turn
    assert len(blocks) == 2
    assert [s[1].data_ptr for s in sites[:2]] == [s[1].data_ptr for s in sites[2:]]
    assert [len(b) for b in batches] == [5]      # the five kernels: one native call
    assert sum(len(b) for b in pool.by_size.values()) == 1       # the result: pooled, counted


def test_held_results_of_a_chain_keep_their_values():
    machine = _vm(_chain)
    held = []
    for k in range(24):
        data = np.linspace(-1, 1, N, dtype="float32") + k / 8
        held.append((data, machine.run(data)))
    for data, out in held:
        np.testing.assert_allclose(out.numpy(), _want_chain(data), rtol=1e-5)


def test_alternating_inputs_update_the_kernels_addresses():
    """The pointer array is reused only while the addresses repeat: two inputs in turn."""
    machine = _vm(_chain)
    a = relay.nd.array(np.linspace(0, 1, N, dtype="float32"))
    b = relay.nd.array(np.linspace(-2, 0, N, dtype="float32"))
    for _ in range(3):
        for arg in (a, b, a, a, b):
            np.testing.assert_allclose(machine.run(arg).numpy(), _want_chain(arg.numpy()), rtol=1e-5)


def test_an_intermediate_also_returned_is_not_internal():
    """exp(x) feeds a kernel and is a field of the result: it must survive the next runs."""
    machine = _vm(lambda x: relay.Tuple([relay.exp(x), relay.multiply(relay.exp(x), relay.const(2.0))]))
    runs = [np.full(N, k / 4, "float32") for k in range(6)]
    outs = [machine.run(data) for data in runs]
    for data, out in zip(runs, outs):
        np.testing.assert_allclose(out[0].numpy(), np.exp(data), rtol=1e-5)
        np.testing.assert_allclose(out[1].numpy(), 2 * np.exp(data), rtol=1e-5)


def test_a_reshaped_intermediate_that_is_returned_is_not_internal():
    """reshape(sum(exp(x)) ...) views a kernel's output; the view is the result."""
    def body(x):
        pooled = relay.sum(relay.exp(x), axis=(1,))
        return relay.reshape(pooled, newshape=(2, 2))
    machine = _vm(body, opt_level=3, shape=(4, 3))
    held = []
    for k in range(10):
        data = np.full((4, 3), k / 10, "float32")
        held.append((data, machine.run(data)))
    for data, out in held:
        np.testing.assert_allclose(out.numpy(), np.exp(data).sum(axis=1).reshape(2, 2), rtol=1e-5)


def test_threads_running_a_chain_do_not_share_intermediates():
    machine = _vm(_chain, shape=(256,))

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(150):
            data = rng.uniform(-1, 1, 256).astype("float32")
            if not np.allclose(machine.run(data).numpy(), _want_chain(data), rtol=1e-5):
                return False
        return True
    assert not failures_in_threads(work, 4)


def test_dense_with_bound_weights_matches_numpy():
    """Weights bound as params become load_const inputs bound into the kernel call."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((8, N)).astype("float32")
    b = rng.standard_normal(8).astype("float32")
    wv, bv = relay.var("w", shape=(8, N)), relay.var("b", shape=(8,))
    x = relay.var("x", shape=(2, N))
    body = relay.nn.relu(relay.add(relay.nn.dense(relay.exp(x), wv), bv))
    with relay.transform.PassContext(opt_level=3):
        exe = rvm.compile(relay.IRModule.from_expr(relay.Function([x, wv, bv], body)), target="llvm",
                          params={"w": w, "b": b})
    machine = rvm.VirtualMachine(exe, relay.cpu())
    for k in range(5):
        data = rng.standard_normal((2, N)).astype("float32")
        want = np.maximum(np.exp(data) @ w.T + b, 0)
        np.testing.assert_allclose(machine.run(data).numpy(), want, rtol=1e-4, atol=1e-5)


def test_tuple_fields_and_a_bound_constant_feed_one_kernel():
    """concatenate of a tuple parameter's fields (get_field registers, read at run time) plus a
    constant (bound into the call at build time), run on changing inputs. At opt_level 3, so
    AlterOpLayout's concatenate rule meets a tuple no rewritten op made (it crashed on one)."""
    t = relay.var("t", type_annotation=relay.TupleType([relay.TensorType((N,), "float32")] * 2))
    c = np.arange(2 * N, dtype="float32")
    body = relay.add(relay.concatenate(t, axis=0), relay.const(c))
    with relay.transform.PassContext(opt_level=3):
        exe = rvm.compile(relay.IRModule.from_expr(relay.Function([t], body)), target="llvm")
    machine = rvm.VirtualMachine(exe, relay.cpu())
    for k in range(3):
        a, b = np.full(N, k, "float32"), np.full(N, -k, "float32")
        np.testing.assert_array_equal(machine.run((a, b)).numpy(), np.concatenate([a, b]) + c)


@pytest.mark.parametrize("bad, match", [
    (lambda: np.ones(N, "float64"), "float64"),
    (lambda: relay.nd.array(np.ones(N, "int32")), "int32"),
    (lambda: np.ones(N + 1, "float32"), r"shape \(17,\)"),
    (lambda: relay.nd.array(np.ones((N, 1), "float32")), r"shape \(16, 1\)"),
])
def test_a_warm_vm_still_refuses_wrong_inputs(bad, match):
    """After many good calls (every fast path warm), a wrong dtype or shape is an InputError (a
    RelayError) naming it, and the VM still runs good inputs afterwards."""
    machine = _vm(_chain)
    good = relay.nd.array(np.zeros(N, "float32"))
    for _ in range(5):
        machine.run(good)
    with pytest.raises(InputError, match=match) as err:
        machine.run(bad())
    assert isinstance(err.value, RelayError)
    np.testing.assert_allclose(machine.run(good).numpy(), _want_chain(np.zeros(N)), rtol=1e-6)
