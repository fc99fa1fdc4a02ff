"""The x86 implementations as tuning templates (strategy/x86_*.py): every config of a small
space of each one, compiled with LLVM and run, matches the op's numpy reference; the spaces
contain the hand-picked default; configs outside what a template accepts are rejected."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import autotvm, te
from relay_backend.codegen import build
from relay_backend.autotvm.task.task import tensor_layout
from relay_backend.ir.types import TensorType
from relay_backend.op.layout import transform_array
from relay_backend.op.nn.conv import Conv2DAttrs
from relay_backend.op.nn.dense import BatchMatmulAttrs, DenseAttrs
from relay_backend.op.nn.pool import AvgPool2DAttrs, GlobalPool2DAttrs, MaxPool2DAttrs
from relay_backend.op.registry import get as get_op
from relay_backend.runtime import nd

pytestmark = pytest.mark.compile

CONV3 = Conv2DAttrs(padding=(1, 1, 1, 1), kernel_size=(3, 3))
# (task, op, attrs, input shapes): shapes small enough that the whole space is a few configs
CASES = [
    ("dense_pack.x86", "nn.dense", DenseAttrs(), [(2, 2), (8, 2)]),
    ("dense_dot.x86", "nn.dense", DenseAttrs(), [(2, 8), (4, 8)]),
    ("dense_batch1.x86", "nn.dense", DenseAttrs(), [(1, 8), (16, 8)]),
    ("batch_matmul.x86", "nn.batch_matmul", BatchMatmulAttrs(), [(2, 2, 3), (2, 8, 3)]),
    ("conv2d_nchw.x86", "nn.conv2d", CONV3.with_(kernel_size=(1, 3), padding=(0, 1, 0, 1)), [(1, 1, 2, 2), (8, 1, 1, 3)]),
    ("depthwise_conv2d_nchw.x86", "nn.conv2d", CONV3.with_(groups=4), [(1, 4, 2, 12), (4, 1, 3, 3)]),
    ("max_pool2d.x86", "nn.max_pool2d", MaxPool2DAttrs(pool_size=(3, 3), padding=(1, 1, 1, 1)), [(1, 2, 2, 12)]),
    ("avg_pool2d.x86", "nn.avg_pool2d", AvgPool2DAttrs(pool_size=(2, 2), strides=(2, 2)), [(1, 2, 2, 24)]),
    ("global_avg_pool2d.x86", "nn.global_avg_pool2d", GlobalPool2DAttrs(), [(1, 3, 4, 5)]),
]
# the layouts AlterOpLayout makes at opt_level 3 (attrs taken from the relay constructors)
_X = relay.var("x", shape=(1, 1))
BLOCKED_CASES = [
    ("conv2d_NCHWc.x86", "nn.contrib_conv2d_NCHWc",
     relay.nn.contrib_conv2d_nchwc(_X, _X, (1, 1), (1, 1, 1, 1), (1, 1), 1, data_layout="NCHW4c",
                                   kernel_layout="OIHW4i4o", out_layout="NCHW4c").attrs,
     [(1, 1, 3, 4, 4), (2, 1, 3, 3, 4, 4)]),
    ("depthwise_conv2d_NCHWc.x86", "nn.contrib_depthwise_conv2d_NCHWc",
     relay.nn.contrib_depthwise_conv2d_nchwc(_X, _X, (1, 1), (1, 1, 1, 1), (1, 1), groups=8, data_layout="NCHW4c",
                                             kernel_layout="OIHW1i4o", out_layout="NCHW4c").attrs,
     [(1, 2, 3, 4, 4), (2, 1, 3, 3, 1, 4)]),
    ("dense_pack_prepacked.x86", "nn.contrib_dense_pack", relay.nn.contrib_dense_pack(_X, _X, "NC4n").attrs,
     [(4, 6), (2, 6, 4)]),
    ("max_pool2d.x86", "nn.max_pool2d",
     MaxPool2DAttrs(pool_size=(3, 3), padding=(1, 1, 1, 1), layout="NCHW4c", out_layout="NCHW4c"),
     [(1, 2, 3, 6, 4)]),
    # K = 16: tile_k 8 (K-blocked: partial sums in memory between two panels) and 16 (none);
    # 4 rows: tile_y 3 pads them to 6 (a row panel); one 4-wide column block keeps the space at
    # 16 configs with AVX2 or AVX-512 packing candidates
    ("dense_pack_prepacked.x86", "nn.contrib_dense_pack", relay.nn.contrib_dense_pack(_X, _X, "NC4n").attrs,
     [(4, 16), (1, 16, 4)]),
]
CASES += BLOCKED_CASES
IDS = [f"{c[0]}-{'x'.join(map(str, c[3][0]))}" for c in CASES]


def _task(name, op_name, attrs, shapes):
    op = get_op(op_name)
    out_type = op.rel([TensorType(s, "float32") for s in shapes], attrs)
    inputs = [te.placeholder(s, "float32", name=f"in{k}") for k, s in enumerate(shapes)]
    return autotvm.task.create(name, (attrs, inputs, out_type), "llvm"), op, out_type


@pytest.mark.parametrize("name, op_name, attrs, shapes", CASES, ids=IDS)
def test_every_config_of_a_small_space_matches_numpy(name, op_name, attrs, shapes):
    task, op, out_type = _task(name, op_name, attrs, shapes)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    want = np.maximum(op.ref(*arrays, attrs), 0)       # a task ends with a relu (task.with_epilogue)
    space = task.config_space
    assert 1 <= len(space) <= 40, space
    given = _given_layouts(attrs)
    tried = set()
    for index in space.valid_indices():
        config = space.get(index)
        sch, args = task.instantiate(config)
        assert config.valid()
        # a config may block channels differently (conv2d_NCHWc's block_ic / block_oc): the
        # kernel then takes and returns tensors in the layouts it marked
        inputs = [_relayout(a, layout, tensor_layout(t)) for a, layout, t in zip(arrays, given, args)]
        out = nd.empty([int(d.value) for d in args[-1].shape], "float32")
        build(te.lower(sch, args, "kernel"))["kernel"](*[nd.array(a) for a in inputs], out)
        got = _relayout(out.numpy(), tensor_layout(args[-1]), given[-1])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{name} config {config}")
        tried.add(repr(config))
    assert len(tried) == len(space)


def _given_layouts(attrs) -> list:
    """(data, kernel, out) layouts a channel-blocked convolution's attrs name, (data, weight, out)
    of a packed dense; Nones otherwise."""
    if hasattr(attrs, "weight_layout"):
        return [None, attrs.weight_layout, None]
    if not hasattr(attrs, "kernel_layout") or "c" not in getattr(attrs, "data_layout", ""):
        return [None, None, None]
    return [attrs.data_layout, attrs.kernel_layout, attrs.out_layout or attrs.data_layout]


def _relayout(array, src, dst):
    return array if src is None or dst is None or src == dst else transform_array(array, src, dst)


DEFAULT_CASES = CASES[:5] + BLOCKED_CASES[:3]


@pytest.mark.parametrize("name, op_name, attrs, shapes", DEFAULT_CASES, ids=[c[0] for c in DEFAULT_CASES])
def test_the_space_holds_the_default(name, op_name, attrs, shapes):
    """The fallback config (the hand-picked schedule) is one of the space's points, so a tuner
    can find it again and compare with it."""
    task, _, _ = _task(name, op_name, attrs, shapes)
    fallback = autotvm.task.FallbackConfigEntity()
    task.instantiate(fallback)
    chosen = {k: repr(fallback[k]) for k in fallback}
    space = task.config_space
    assert any({k: repr(space.get(i)[k]) for k in chosen} == chosen for i in space.valid_indices())


def test_a_config_missing_a_knob_is_named():
    task, _, _ = _task(*CASES[0])
    partial = autotvm.task.ConfigEntity(0, None, {"tile_y": task.config_space.get(0)["tile_y"]}, [])
    with pytest.raises(autotvm.task.space.TuningError, match="no knob 'tile_x'"):
        task.instantiate(partial)


def test_a_dense_pack_record_from_before_the_order_knob_keeps_rows_outside():
    """dense_pack_prepacked.x86's col_outer knob came after records were shipped: a config
    without it instantiates (rows outside, the old order) instead of failing."""
    task, _, _ = _task(*BLOCKED_CASES[2])
    space = task.config_space
    old = next(space.get(i) for i in space.valid_indices() if space.get(i)["col_outer"].val is False)
    entities = {k: old[k] for k in old if k != "col_outer"}
    stale = autotvm.task.ConfigEntity(old.index, None, entities, [])
    lowered = [str(te.lower(*task.instantiate(config), "kernel")) for config in (stale, old)]
    assert lowered[0] == lowered[1]
    assert "col_outer" in [k for k in old] and len({space.get(i)["col_outer"].val for i in space.valid_indices()}) == 2


@pytest.mark.parametrize("rows, units, col_outer", [(4, 8, True), (8, 8, False), (16, 8, False)])
def test_dense_pack_default_order_puts_the_larger_operand_outside(rows, units, col_outer):
    """The fallback tile order (default_col_outer): column blocks outside rows, the parallel axis,
    exactly when the weight has more rows (units) than the data, so each thread streams its own
    share of the larger operand."""
    from relay_backend.strategy.x86_blocks import default_block
    block = default_block(units)
    attrs = relay.nn.contrib_dense_pack(_X, _X, f"NC{block}n").attrs
    task, _, _ = _task("dense_pack_prepacked.x86", "nn.contrib_dense_pack", attrs,
                       [(rows, 16), (units // block, 16, block)])
    fallback = autotvm.task.FallbackConfigEntity()
    task.instantiate(fallback)
    assert fallback["col_outer"].val is col_outer


def test_dense_pack_k_blocking_is_a_knob_whose_default_is_no_blocking():
    """tile_k (K-blocking) defaults to the whole reduction: the fallback kernel is the one from
    before the knob, and a record without the knob (shipped before it) lowers to the same code;
    a config with tile_k < K runs the K panels between the tile axes, inside the one parallel loop."""
    task, _, _ = _task(*BLOCKED_CASES[-1])
    fallback = autotvm.task.FallbackConfigEntity()
    task.instantiate(fallback)
    assert fallback["tile_k"].size[-1] == 16
    space = task.config_space
    whole = next(space.get(i) for i in space.valid_indices() if space.get(i)["tile_k"].size[-1] == 16)
    stale = autotvm.task.ConfigEntity(whole.index, None, {k: whole[k] for k in whole if k != "tile_k"}, [])
    lowered = [str(te.lower(*task.instantiate(config), "kernel")) for config in (stale, whole)]
    assert lowered[0] == lowered[1] and "k.outer" not in lowered[0]
    blocked = next(space.get(i) for i in space.valid_indices() if space.get(i)["tile_k"].size[-1] == 8)
    text = str(te.lower(*task.instantiate(blocked), "kernel"))
    assert text.index("for k.outer in range(0, 2)") < text.index("k.inner")


def test_a_k_blocked_dense_pack_without_an_epilogue_matches_numpy():
    """The dense as the kernel's own output (no fused epilogue: the tiles accumulate in a local
    cache stage copied out after the last K panel) is correct K-blocked too."""
    from relay_backend.autotvm.task.dispatcher import ApplyConfig
    from relay_backend.strategy.x86_blocks import default_block
    from relay_backend.strategy.x86_dense_pack import dense_pack_compute, dense_pack_schedule
    block = default_block(8)             # the weight packed as this host's default: no re-packing
    attrs = relay.nn.contrib_dense_pack(_X, _X, f"NC{block}n").attrs
    shapes = [(4, 16), (8 // block, 16, block)]
    task, op, out_type = _task("dense_pack_prepacked.x86", "nn.contrib_dense_pack", attrs, shapes)
    space = task.config_space
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    blocked = [space.get(i) for i in space.valid_indices()
               if space.get(i)["tile_k"].size[-1] == 8 and space.get(i)["block_n"].size[-1] == block]
    assert blocked
    for config in blocked:
        inputs = [te.placeholder(s, "float32", name=f"in{k}") for k, s in enumerate(shapes)]
        with ApplyConfig(config):
            outs = dense_pack_compute(attrs, inputs, out_type)
        assert "k.outer" in str(te.lower(dense_pack_schedule(attrs, outs, "llvm"), [*inputs, outs[0]], "kernel"))
        sch = dense_pack_schedule(attrs, outs, "llvm")
        out = nd.empty([int(d) for d in out_type.concrete_shape], "float32")
        build(te.lower(sch, [*inputs, outs[0]], "kernel"))["kernel"](*[nd.array(a) for a in arrays], out)
        np.testing.assert_allclose(out.numpy(), op.ref(*arrays, attrs), rtol=1e-4, atol=1e-4, err_msg=str(config))
