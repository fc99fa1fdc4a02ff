"""Channel blocks as tuning knobs (strategy/x86_blocks.py): a conv2d_NCHWc.x86 record's
block_ic / block_oc and a dense_pack_prepacked.x86 record's block_n choose the layouts
AlterOpLayout makes (visible in the optimized Relay) and the built module stays correct
against numpy at channel counts the SIMD width does not divide; a record never applies to a
workload it was not measured on, and a build whose layouts were picked without a record falls
back to the default tile rather than use a record's tile on other blocks."""
import time

import numpy as np
import pytest

import relay_backend as rb
from relay_backend import autotvm
from relay_backend.autotvm.record import MeasureErrorNo, MeasureInput, MeasureResult
from relay_backend.autotvm.task.dispatcher import recording_queries
from relay_backend.autotvm.task.task import deserialize_args
from relay_backend.strategy.x86_conv_nchwc import CONV_TEMPLATE
from relay_backend.target import as_target
from relay_backend.transform import PassContext
from relay_backend.transform.bind_params import bind_params_to_main
from relay_backend.transform.pipeline import default_pipeline

pytestmark = pytest.mark.compile
TARGET = "llvm"
# the record shipped before AlterOpLayout ran at opt_level 3 (x86_64-znver3.log, 2026-12-02)
STALE_LINE = ('{"input": ["llvm -keys=x86,cpu", "dense_dot.x86", [["ATTRS", "DenseAttrs", [["units", null], '
              '["out_dtype", ""]]], [["TENSOR", [64, 784], "float32"], ["TENSOR", [512, 784], "float32"]], '
              '["TYPE", [64, 512], "float32"]], {}], "config": {"index": 3, "code_hash": null, "entity": '
              '[["tile_y", "sp", [-1, 8]], ["tile_x", "sp", [-1, 1]], ["order", "ot", "rows_outer"]]}, '
              '"result": [[1e-05], 0, 0.1, 0], "version": 0.2, "tvm_version": "relay_backend"}')


@pytest.fixture(autouse=True)
def eight_lane_host(monkeypatch):
    """These tests are written for an AVX2 host: 8 float32 lanes make 12 and 28 channels blocks
    of 6/4 and 7/4 (on AVX-512 12 channels have one block, and the knobs nothing to choose). The
    strategies read the width through x86_common.vector_bytes; the kernels still compile for
    this host (8-lane code runs on any AVX2 or AVX-512 CPU)."""
    from relay_backend.strategy import x86_alter_layout, x86_common, x86_conv_int16
    for module in (x86_common, x86_alter_layout, x86_conv_int16):
        monkeypatch.setattr(module, "vector_bytes", lambda: 32)


def _conv_model(channels=12, out_channels=28, size=7):
    """conv2d 3x3 (pad 1) + relu on constant weights: 12 and 28 channels, whose default blocks
    (6 and 7 on 8 lanes) are not the register width (and 28 channels are not padded to 32 by
    PadConvChannels: blocks of 7 keep as many lanes busy)."""
    rng = np.random.default_rng(0)
    data = rb.var("data", shape=(1, channels, size, size))
    weight = rng.uniform(-1, 1, (out_channels, channels, 3, 3)).astype("float32")
    body = rb.nn.relu(rb.nn.conv2d(data, rb.const(weight), padding=(1, 1)))
    return rb.IRModule.from_expr(rb.Function([data], body)), weight


def _dense_model(rows=6, k=10, units=24):
    rng = np.random.default_rng(1)
    data = rb.var("data", shape=(rows, k))
    weight = rng.uniform(-1, 1, (units, k)).astype("float32")
    return rb.IRModule.from_expr(rb.Function([data], rb.nn.relu(rb.nn.dense(data, rb.const(weight))))), weight


def _conv_ref(data, weight):
    """numpy conv2d NCHW / OIHW, stride 1, pad 1, then relu."""
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))   # n c h w kh kw
    return np.maximum(np.einsum("nchwij,ocij->nohw", windows, weight), 0)


def _record(task, **blocks):
    """A measured record of `task` whose block knobs are `blocks` (other knobs: the first valid)."""
    space = task.config_space
    index = next(i for i in space.valid_indices()
                 if all(space.get(i)[k].size[-1] == v for k, v in blocks.items()))
    return MeasureInput(task.target, task, space.get(index)), MeasureResult((1e-6,), MeasureErrorNo.NO_ERROR,
                                                                            0.1, time.time())


def _task(mod, name):
    """The template task (blocks among its knobs: measured alone, not in the program)."""
    return next(t for t in autotvm.task.extract_from_program(mod, {}, TARGET, measure_in_program=False)
                if t.name == name)


def _optimized_text(mod) -> str:
    with PassContext(opt_level=3):
        return default_pipeline(target=TARGET)(bind_params_to_main(mod, {}, "test")).astext()


def _run(mod, data):
    with PassContext(opt_level=3):
        lib = rb.build(mod, TARGET)
    gmod = rb.graph_executor.GraphModule(lib["default"](rb.cpu()))
    gmod.set_input("data", data)
    gmod.run()
    return gmod.get_output(0).numpy()


def test_a_conv_record_with_other_blocks_changes_the_layout_and_stays_correct():
    mod, weight = _conv_model()
    task = _task(mod, "conv2d_NCHWc.x86")
    space = task.config_space
    assert {space.get(i)["block_ic"].size[-1] for i in space.valid_indices()} == {4, 6}
    assert {space.get(i)["block_oc"].size[-1] for i in space.valid_indices()} == {4, 7}
    data = np.random.default_rng(2).uniform(-1, 1, (1, 12, 7, 7)).astype("float32")
    want = _conv_ref(data, weight)
    default_text = _optimized_text(mod)
    assert "NCHW6c" in default_text and "OIHW6i7o" in default_text and "NCHW4c" not in default_text
    np.testing.assert_allclose(_run(mod, data), want, rtol=1e-4, atol=1e-4)
    with autotvm.apply_history_best([_record(task, block_ic=4, block_oc=4)]):
        tuned_text = _optimized_text(mod)
        got = _run(mod, data)
    assert "NCHW4c" in tuned_text and "OIHW4i4o" in tuned_text and "NCHW6c" not in tuned_text
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_dense_record_chooses_the_packing_block():
    mod, weight = _dense_model()
    task = _task(mod, "dense_pack_prepacked.x86")
    assert {task.config_space.get(i)["block_n"].size[-1] for i in task.config_space.valid_indices()} == {4, 8}
    data = np.random.default_rng(3).uniform(-1, 1, (6, 10)).astype("float32")
    assert "Tensor[(3, 10, 8), float32]" in _optimized_text(mod)        # the weight packed in 8s
    with autotvm.apply_history_best([_record(task, block_n=4)]):
        text = _optimized_text(mod)
        got = _run(mod, data)
    assert "Tensor[(6, 10, 4), float32]" in text and "(3, 10, 8)" not in text
    np.testing.assert_allclose(got, np.maximum(data @ weight.T, 0), rtol=1e-4, atol=1e-4)


def test_a_record_is_named_by_the_default_blocking_whatever_its_blocks():
    """One task per convolution: extraction under a record that re-blocks it finds the same
    workload, so the record keeps applying (and is not duplicated by a second tuning)."""
    mod, _ = _conv_model()
    task = _task(mod, "conv2d_NCHWc.x86")
    with autotvm.apply_history_best([_record(task, block_ic=4, block_oc=4)]):
        again = _task(mod, "conv2d_NCHWc.x86")
    assert again.workload == task.workload


def test_a_record_measured_on_other_blocks_than_the_build_picked_falls_back():
    """A kernel whose layouts were picked without the record (its inputs have the default
    blocks, the record asks for others) uses the default config, not the record's tile measured
    on other blocks; a record on the inputs' own blocks is used."""
    mod, _ = _conv_model()
    task = _task(mod, "conv2d_NCHWc.x86")
    compute = CONV_TEMPLATE[0]
    for blocks, fallback in (({"block_ic": 4, "block_oc": 4}, True), ({"block_ic": 6, "block_oc": 7}, False)):
        attrs, inputs, out_type = deserialize_args(task.args)       # a build's tensors: 6 / 5 blocks
        with autotvm.apply_history_best([_record(task, **blocks)]), as_target(TARGET):
            (out,) = compute(attrs, inputs, out_type)
        assert out.op.attrs["workload"] == task.workload
        assert out.op.attrs["autotvm_config"].is_fallback == fallback, blocks


def test_a_stale_record_applies_to_nothing(tmp_path):
    """The record shipped before AlterOpLayout (dense_dot.x86 on the plain 784->512 weight)
    names a task an opt_level 3 build never selects: under it every query is the fallback
    and the build's layouts are the default ones."""
    path = tmp_path / "stale.log"
    path.write_text(STALE_LINE + "\n")
    mod, _ = _dense_model(rows=64, k=784, units=512)
    with autotvm.apply_history_best(str(path)), recording_queries() as queries:
        text = _optimized_text(mod)
    assert "Tensor[(64, 784, 8), float32]" in text and queries and all(fp == "fallback" for _, fp in queries)


def test_measurements_of_other_blocks_pass_the_reference_check():
    """The reference check compares every candidate in NCHW / OIHW, whatever its blocks: the
    default (6 / 5) and a re-blocked config (4 / 4) both count."""
    pytest.importorskip("pebble", reason="measuring needs pebble (pip install relay_backend[tune])")
    mod, _ = _conv_model()
    task = _task(mod, "conv2d_NCHWc.x86")
    builder = autotvm.LocalBuilder(timeout=60, n_parallel=2)
    runner = autotvm.LocalRunner(timeout=10, number=1, repeat=1, cooldown_interval=0)
    try:
        batch = autotvm.measure.create_measure_batch(task, autotvm.measure_option(builder, runner))
        inputs = [_record(task, block_ic=6, block_oc=7)[0], _record(task, block_ic=4, block_oc=4)[0]]
        assert [r.error_no for r in batch(inputs)] == [MeasureErrorNo.NO_ERROR] * 2
    finally:
        builder.close()
        runner.close()
