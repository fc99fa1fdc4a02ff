"""FoldConstant and the debug interpreter check an op's output size (from its type relation)
with runtime.limits.check_tensor_size before the numpy reference allocates it: a program that
type-checks but asks for terabytes (`ones((2**20, 2**20))`) gets an AllocationError naming the op
and the shape at once, never a bare MemoryError or an OOM kill."""
import time

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import config
from relay_backend.errors import AllocationError, RelayError
from relay_backend.ir import Function, IRModule, var
from relay_backend.transform import FoldConstant, InferType

HUGE = (2 ** 20, 2 ** 20)    # 4 TiB of float32


@pytest.fixture
def limit_of_one_mebibyte(monkeypatch):
    monkeypatch.setenv("RB_MAX_TENSOR_BYTES", str(1 << 20))
    config.reload()
    yield
    monkeypatch.delenv("RB_MAX_TENSOR_BYTES")
    config.reload()


def _sum_of_ones(shape):
    x = var("x", shape=(2,))
    return IRModule.from_expr(Function([x], relay.add(relay.sum(relay.ones(shape, "float32")), x)))


def _fold(mod):
    return FoldConstant()(InferType()(mod))


def test_fold_constant_rejects_a_terabyte_constant_before_allocating():
    start = time.perf_counter()
    with pytest.raises(AllocationError) as info:
        _fold(_sum_of_ones(HUGE))
    assert time.perf_counter() - start < 5
    message = str(info.value)
    assert "FoldConstant" in message and "ones" in message and "(1048576, 1048576)" in message
    assert isinstance(info.value, RelayError) and isinstance(info.value, MemoryError)


def test_interpreter_rejects_it_before_allocating():
    run = relay.create_executor("debug", mod=_sum_of_ones(HUGE)).evaluate()
    with pytest.raises(AllocationError, match=r"ones.*\(1048576, 1048576\)"):
        run(np.ones(2, "float32"))


def test_stated_limit_applies_to_every_output_of_a_fold(limit_of_one_mebibyte):
    # 512 x 1024 float32 = 2 MiB > 1 MiB: broadcast_to of a constant, and split's tuple outputs
    with pytest.raises(AllocationError, match="broadcast_to"):
        _fold(IRModule.from_expr(Function([], relay.broadcast_to(relay.const(1.0), (512, 1024)))))
    big = relay.const(np.zeros((2, 512, 512), "float32"))                 # 2 MiB input, made here
    parts = relay.split(big, 2, axis=0).astuple()                          # 1 MiB each: allowed
    folded = _fold(IRModule.from_expr(Function([], parts)))["main"].body
    assert [f.data.shape for f in folded.fields] == [(1, 512, 512), (1, 512, 512)]


def test_folds_under_the_limit_still_match_numpy(limit_of_one_mebibyte):
    folded = _fold(_sum_of_ones((256, 256)))["main"]              # 256 KiB: allowed
    constant = folded.body.args[0]
    np.testing.assert_array_equal(constant.data.numpy(), np.float32(256 * 256))
