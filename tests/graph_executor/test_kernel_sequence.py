"""One native call for a run of kernels (codegen/kernel_sequence.py), as the graph executor's
run() uses it: the kernels run in order on the buffers planned once, the results equal numpy,
and RB_DEBUG=2 (every kernel timed on its own) gives the same results."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import config
from relay_backend.codegen.kernel_sequence import KernelSequence
from relay_backend.graph_executor.runtime import _batched

N = 64


def _lib():
    """Two kernels: x + x and exp, as a build compiles them (opt_level 0: one each)."""
    x = relay.var("x", shape=(N,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(relay.add(x, x))))
    with relay.transform.PassContext(opt_level=0):
        return relay.build(mod, target="llvm")


def test_a_sequence_runs_its_kernels_in_order():
    lib = _lib().get_lib()
    exp_name = next(n for n in lib.function_names if n.endswith("_exp"))
    exp = lib.get_function(exp_name)           # the other one is x + x (simplified to x * 2)
    add = lib.get_function(next(n for n in lib.function_names if n != exp_name))
    data = np.linspace(-1, 1, N, dtype="float32")
    x, mid, out = relay.nd.array(data), relay.nd.empty((N,)), relay.nd.empty((N,))
    two = relay.nd.array(np.array(2, "float32"))
    calls = [add.prepare(x, two, mid), exp.prepare(mid, out)]
    run = KernelSequence([c.native_args for c in calls], keep=calls)
    assert len(run) == 2
    run()
    np.testing.assert_allclose(out.numpy(), np.exp(2 * data), rtol=1e-6)
    x.copyfrom(data + 1)                       # same buffers, new values: the next run sees them
    run()
    np.testing.assert_allclose(out.numpy(), np.exp(2 * (data + 1)), rtol=1e-6)


def test_an_empty_sequence_does_nothing():
    KernelSequence([])()


def test_batching_keeps_python_calls_between_native_stretches():
    class Native:
        native_args = (0, 0, 0)               # never called here

        def __call__(self):
            raise AssertionError("batched calls run through the sequence")

    def copy():
        pass

    runs = _batched([Native(), copy, Native()])
    assert runs[1] is copy and len(runs) == 3      # single native calls stay as they are
    runs = _batched([Native(), Native(), copy, Native(), Native(), Native()])
    assert [len(r) if isinstance(r, KernelSequence) else r for r in runs] == [2, copy, 3]


@pytest.mark.parametrize("debug", ["0", "2"])
def test_graph_run_matches_numpy_with_and_without_per_kernel_timing(monkeypatch, debug):
    monkeypatch.setenv("RB_DEBUG", debug)
    config.reload()
    try:
        module = _lib()["default"](relay.cpu())
        for k in range(3):
            data = np.linspace(-1, 1, N, dtype="float32") * (k + 1) / 3
            module.set_input("x", data)
            module.run()
            np.testing.assert_allclose(module.get_output(0).numpy(), np.exp(2 * data), rtol=1e-6)
    finally:
        monkeypatch.delenv("RB_DEBUG")
        config.reload()
