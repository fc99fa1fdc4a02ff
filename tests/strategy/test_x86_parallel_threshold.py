"""Small kernels run single-threaded: the x86 fast paths (conv2d_NCHWc.x86,
depthwise_conv2d_NCHWc.x86, dense_pack_prepacked.x86) open a parallel region only from
generic.PARALLEL_MIN_WORK multiply-adds (signalling the thread pool costs more than a small
kernel gains), as the generic schedules do. The lowered tir is inspected for a loop of kind
"parallel" on each side of the threshold, and both sides' compiled results match numpy."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te
from relay_backend.op.nn.conv_nchwc import pack_oihw
from relay_backend.op.nn.dense_pack import pack_weight
from relay_backend.op.nn.layout_view import pack_nchw
from relay_backend.op.registry import get as get_op
from relay_backend.strategy.generic import PARALLEL_MIN_WORK
from relay_backend.te_compiler.select import select_implementation
from relay_backend.tir import stmt as tir_stmt
from relay_backend.tir.functor import walk

from ..op.blocked_refs import direct_conv_nchwc, direct_dense_pack

pytestmark = pytest.mark.compile


def _loop_kinds(call, name: str) -> set:
    """The loop kinds of `call`'s x86 kernel (chosen implementation, lowered), checking that
    the implementation is `name`."""
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(call),
                                                                              call)))
    typed = mod["main"].body
    op = get_op(typed.op.name)
    phs = [te.placeholder(tuple(int(d) for d in a.checked_type.shape), a.checked_type.dtype)
           for a in typed.args]
    out_type = typed.checked_type
    impl, outs = select_implementation(op, typed.attrs, phs, out_type, "llvm")
    assert impl.name == name
    func = te.lower(impl.schedule(typed.attrs, outs, "llvm"), phs + list(outs), "kernel")
    return {node.kind for node in walk(func.body) if isinstance(node, tir_stmt.For)}


def _conv(c, h, w, o, ib=8, ob=8):
    data = relay.var("x", shape=(1, c // ib, h, w, ib))
    kernel = relay.var("k", shape=(o // ob, c // ib, 3, 3, ib, ob))
    return relay.nn.contrib_conv2d_nchwc(data, kernel, (1, 1), (1, 1, 1, 1), (1, 1), 1,
                                         data_layout=f"NCHW{ib}c", kernel_layout=f"OIHW{ib}i{ob}o",
                                         out_layout=f"NCHW{ob}c")


def _dense(rows, k, units, block=8):
    return relay.nn.contrib_dense_pack(relay.var("x", shape=(rows, k)),
                                       relay.var("w", shape=(units // block, k, block)), f"NC{block}n")


@pytest.mark.parametrize("rows,k,units,parallel", [
    (64, 63, 64, False),         # 64 * 64 * 63 multiply-adds: just under the threshold
    (64, 64, 64, True),          # exactly PARALLEL_MIN_WORK
    (4, 16, 16, False),
])
def test_dense_pack_parallel_only_from_the_threshold(rows, k, units, parallel):
    assert (rows * k * units >= PARALLEL_MIN_WORK) == parallel
    kinds = _loop_kinds(_dense(rows, k, units), "dense_pack_prepacked.x86")
    assert ("parallel" in kinds) == parallel, kinds
    assert "vectorized" in kinds


@pytest.mark.parametrize("c,h,w,o,parallel", [
    (8, 8, 8, 8, False),         # 8*8*8 outputs x 72 taps: 37K multiply-adds
    (8, 14, 14, 16, False),      # 16*14*14 x 72 = 226K
    (16, 14, 14, 16, True),      # 16*14*14 x 144 = 452K
])
def test_conv2d_nchwc_parallel_only_from_the_threshold(c, h, w, o, parallel):
    assert (o * h * w * c * 9 >= PARALLEL_MIN_WORK) == parallel
    kinds = _loop_kinds(_conv(c, h, w, o), "conv2d_NCHWc.x86")
    assert ("parallel" in kinds) == parallel, kinds


def test_depthwise_nchwc_small_is_serial():
    data = relay.var("x", shape=(1, 2, 10, 10, 8))
    kernel = relay.var("k", shape=(2, 1, 3, 3, 1, 8))
    call = relay.nn.contrib_depthwise_conv2d_nchwc(data, kernel, (1, 1), (1, 1, 1, 1), (1, 1), groups=16,
                                                   data_layout="NCHW8c", kernel_layout="OIHW1i8o",
                                                   out_layout="NCHW8c")
    assert "parallel" not in _loop_kinds(call, "depthwise_conv2d_NCHWc.x86")


def _build_run(call, inputs: dict):
    mod = relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(call), call))
    gmod = relay.build(mod, target="llvm")["default"](relay.cpu())
    gmod.set_input(**inputs)
    gmod.run()
    return gmod.get_output(0).numpy()


@pytest.mark.parametrize("c,h,w,o", [(8, 8, 8, 8), (16, 28, 28, 16)], ids=["serial", "parallel"])
def test_conv2d_nchwc_serial_and_parallel_results_match_numpy(c, h, w, o):
    rng = np.random.default_rng(0)
    x = pack_nchw(rng.standard_normal((1, c, h, w)).astype("float32"), 8)
    k = pack_oihw(rng.standard_normal((o, c, 3, 3)).astype("float32"), 8, 8)
    got = _build_run(_conv(c, h, w, o), {"x": x, "k": k})
    want = direct_conv_nchwc(x, k, (1, 1), (1, 1, 1, 1), (1, 1), 1)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows,k,units", [(64, 127, 128), (64, 128, 128)], ids=["serial", "parallel"])
def test_dense_pack_serial_and_parallel_results_match_numpy(rows, k, units):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((rows, k)).astype("float32")
    packed = pack_weight(rng.standard_normal((units, k)).astype("float32"), 8)
    got = _build_run(_dense(rows, k, units), {"x": x, "w": packed})
    np.testing.assert_allclose(got, direct_dense_pack(x, packed), rtol=1e-4, atol=1e-4)

