"""The VM's per-call fast paths (issue 16) keep every result and every error of the plain path.

Storages of static size are reused across runs (vm/storage.py) only when nothing references
them: a result the caller holds, a numpy view of it, or a tensor still in a register is never
overwritten. Input checks are remembered per (dtype, shape) signature: a call with another
dtype, shape or size-variable binding is still checked and refused. Results against numpy."""

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te
from relay_backend import vm as rvm
from relay_backend.errors import InputError
from relay_backend.vm.storage import MAX_BLOCKS_PER_SIZE

from ..threads import failures_in_threads

N = 8


def _vm(body_of=lambda x: relay.add(x, x), shape=(N,)):
    x = relay.var("x", shape=shape)
    mod = relay.IRModule.from_expr(relay.Function([x], body_of(x)))
    return rvm.VirtualMachine(rvm.compile(mod, target="llvm"), relay.cpu())


def _pooled_blocks(machine) -> int:
    return sum(len(blocks) for blocks in machine._storage_pool().by_size.values())


def test_dropped_results_storage_is_reused():
    machine = _vm()
    for k in range(20):
        out = machine.run(np.full(N, k, "float32"))
        np.testing.assert_array_equal(out.numpy(), np.full(N, 2 * k, "float32"))
        del out
    assert _pooled_blocks(machine) == 1


@pytest.mark.parametrize("keep", ["ndarray", "numpy_view", "asarray", "slice"])
def test_held_results_are_never_overwritten(keep):
    machine = _vm()
    held = []
    for k in range(3 * MAX_BLOCKS_PER_SIZE):
        out = machine.run(np.full(N, k, "float32"))
        held.append({"ndarray": lambda: out, "numpy_view": lambda: out.view_numpy(),
                     "asarray": lambda: np.asarray(out), "slice": lambda: out.view_numpy()[1:]}[keep]())
        del out
    for k, value in enumerate(held):
        array = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
        np.testing.assert_array_equal(array, np.full(array.shape, 2 * k, "float32"))


def test_tuple_results_and_intermediates_stay_distinct():
    """exp(x) and (x + x) * 3 share no storage while both are alive, run after run."""
    machine = _vm(lambda x: relay.Tuple([relay.exp(x), relay.multiply(relay.add(x, x), relay.const(3.0))]))
    results = []
    for k in range(4):
        data = np.linspace(-1, 1, N, dtype="float32") + k
        results.append((data, machine.run(data)))
    for data, out in results:
        np.testing.assert_allclose(out[0].numpy(), np.exp(data), rtol=1e-5)
        np.testing.assert_allclose(out[1].numpy(), 6 * data, rtol=1e-6)


def test_threads_do_not_share_storages():
    machine = _vm(lambda x: relay.multiply(x, x), shape=(256,))

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            data = rng.standard_normal(256).astype("float32")
            if not np.allclose(machine.run(data).numpy(), data * data, rtol=1e-6):
                return False
        return True
    assert not failures_in_threads(work, 4)


def test_a_checked_signature_does_not_admit_other_inputs():
    machine = _vm()
    good = relay.nd.array(np.ones(N, "float32"))
    for _ in range(3):
        machine.run(good)
    with pytest.raises(InputError, match="float32"):
        machine.run(relay.nd.array(np.ones(N, "float64")))
    with pytest.raises(InputError, match=r"shape \(9,\)"):
        machine.run(relay.nd.array(np.ones(N + 1, "float32")))
    with pytest.raises(InputError, match="number of provided parameters"):
        machine.run(good, good)
    np.testing.assert_array_equal(machine.run(good).numpy(), np.full(N, 2, "float32"))


def test_size_variables_are_checked_per_binding():
    """f(x: (n,), y: (n,)): once (4,), (4,) is remembered, (4,), (5,) is still refused."""
    n = te.size_var("n")
    x, y = relay.var("x", shape=(n,)), relay.var("y", shape=(n,))
    machine = rvm.VirtualMachine(rvm.compile(relay.IRModule.from_expr(relay.Function([x, y], relay.add(x, y)))),
                                 relay.cpu())
    a = np.arange(4, dtype="float32")
    np.testing.assert_array_equal(machine.run(a, a).numpy(), 2 * a)
    with pytest.raises(InputError, match="n = 4"):
        machine.run(a, np.arange(5, dtype="float32"))
