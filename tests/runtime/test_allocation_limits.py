"""Shapes that type-check but cannot be allocated give an AllocationError naming the tensor.

A conv2d with padding 1e6 has a 16 TB output; a parameter of 2**70 elements cannot exist.
Graph and AOT check every tensor of the planned program (and the planned storage together)
when they build; the VM checks each storage it allocates at run time, where dynamic shapes
become known. Nothing is allocated first, so the error is an AllocationError (also a
MemoryError), never numpy's bare MemoryError, a C compiler failure or a crash.
"""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import config
from relay_backend.errors import AllocationError

COMPILED = ["graph", "vm", "aot"]


@pytest.fixture
def tensor_limit(monkeypatch):
    """Set RB_MAX_TENSOR_BYTES for one test."""
    def set_limit(nbytes: int):
        monkeypatch.setenv("RB_MAX_TENSOR_BYTES", str(nbytes))
        config.reload()
    yield set_limit
    monkeypatch.delenv("RB_MAX_TENSOR_BYTES", raising=False)
    config.reload()


def _evaluate(kind, params, body, *args):
    mod = relay.IRModule.from_expr(relay.Function(params, body))
    return relay.create_executor(kind, mod=mod).evaluate()(*args)


@pytest.mark.parametrize("kind", COMPILED)
def test_conv2d_with_huge_padding(kind):
    x, w = relay.var("x", shape=(1, 1, 4, 4)), relay.var("w", shape=(1, 1, 3, 3))
    with pytest.raises(AllocationError, match=r"nn[._]conv2d.*\(1, 1, 2000002, 2000002\).*float32"):
        _evaluate(kind, [x, w], relay.nn.conv2d(x, w, padding=(10**6, 10**6)),
                  np.ones((1, 1, 4, 4), "float32"), np.ones((1, 1, 3, 3), "float32"))


@pytest.mark.parametrize("kind", ["graph", "aot"])
def test_a_parameter_of_2_to_the_70_elements(kind):
    v = relay.var("v", shape=(2**35, 2**35))
    with pytest.raises(AllocationError, match=r"input 'v'.*\(34359738368, 34359738368\)"):
        _evaluate(kind, [v], relay.add(v, relay.const(1.0)), np.ones((1, 1), "float32"))


@pytest.mark.parametrize("kind", ["graph", "aot"])
def test_tensors_that_fit_one_by_one_but_not_together(kind, tensor_limit):
    """Three 400 KB results (and the 400 KB input), all live at the end, under a 1 MB limit."""
    tensor_limit(1_000_000)
    x = relay.var("x", shape=(100_000,))
    parts = relay.Tuple([relay.multiply(x, relay.const(float(k + 2))) for k in range(3)])
    with pytest.raises(AllocationError, match=r"storages together need 1,600,000 bytes"):
        _evaluate(kind, [x], parts, np.ones(100_000, "float32"))


def test_vm_checks_storage_sized_at_run_time(tensor_limit):
    tensor_limit(1_000_000)
    x = relay.var("x", shape=(relay.Any(),))
    run = relay.create_executor("vm", mod=relay.IRModule.from_expr(
        relay.Function([x], relay.nn.pad(x, ((1000, 1000),))))).evaluate()
    np.testing.assert_array_equal(run(np.ones(3, "float32")).numpy()[999:1004], [0, 1, 1, 1, 0])
    with pytest.raises(AllocationError, match=r"nn\.pad.*\(300000,\)|\(300000,\).*nn\.pad|300000"):
        run(np.ones(298_000, "float32"))


@pytest.mark.parametrize("kind", COMPILED)
def test_programs_within_the_limit_still_run(kind, tensor_limit):
    tensor_limit(1_000_000)
    x = relay.var("x", shape=(1000,))
    out = _evaluate(kind, [x], relay.add(relay.exp(x), x), np.zeros(1000, "float32"))
    np.testing.assert_array_equal(out.numpy(), np.ones(1000, "float32"))
