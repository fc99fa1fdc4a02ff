"""Tuning records in builds (te_compiler/select.py, te_compiler/compiler.py, autotvm/env.py):
apply_history_best changes the schedule a kernel is built with (visible in its TIR) and still
computes the right answer; the kernel cache keys on the config; Relay's untuned warning is
logged once per build; task extraction finds one task per tunable implementation and shape."""
import logging
import time

import numpy as np
import pytest

import relay_backend as rb
from relay_backend import autotvm
from relay_backend.autotvm.env import UNTUNED_WARNING
from relay_backend.autotvm.record import MeasureErrorNo, MeasureInput, MeasureResult
from relay_backend.autotvm.task.space import SplitEntity
from relay_backend.backend import te_compiler
from relay_backend.codegen.llvm_cache import target_kernel_key
from relay_backend.te_compiler.compiler import TUNING_ATTR
from relay_backend.tir.prim_func import PrimFunc
from relay_backend.tir.printer import func_to_str
from relay_backend.transform.pipeline import default_pipeline

from .plain_layout import extract_plain_layout

pytestmark = pytest.mark.compile
TARGET = "llvm"


def _dense_relu(m=24, k=40, n=20):
    x = rb.var("x", shape=(m, k))
    w = rb.var("w", shape=(n, k))
    return rb.IRModule.from_expr(rb.Function([x, w], rb.nn.relu(rb.nn.dense(x, w))))


def _record(task, tile_y, cost=1e-5):
    """A measured record of `task` with knob tile_y forced to `tile_y` (the rest default)."""
    space = task.config_space
    index = next(i for i in range(len(space)) if space.get(i)["tile_y"].size[-1] == tile_y)
    config = space.get(index)
    return MeasureInput(task.target, task, config), MeasureResult((cost,), MeasureErrorNo.NO_ERROR, 0.1, time.time())


def _prim_func(mod):
    """The TIR text of the one kernel of `mod` (the primitive function main calls)."""
    opt = default_pipeline()(mod)
    call = opt["main"].body
    cached = te_compiler.get().lower(call.op, TARGET)
    return cached, func_to_str(next(iter(cached.funcs.values())))


def _disk_key(cached):
    """The on-disk cache key of a CachedFunc's one kernel (codegen/llvm_cache.py)."""
    return target_kernel_key(next(iter(cached.funcs.values())), TARGET)


def test_the_disk_key_names_the_tuning_configs_even_for_equal_code():
    """Two configs that happen to give the same loops still get their own entries: the configs
    are a PrimFunc attribute the content digest covers."""
    mod = _dense_relu()
    pack = next(t for t in extract_plain_layout(mod, TARGET) if t.name == "dense_pack.x86")
    with autotvm.apply_history_best([_record(pack, tile_y=3)]):
        tuned, _ = _prim_func(mod)
    prim = next(iter(tuned.funcs.values()))
    assert len(prim.attrs[TUNING_ATTR]) == 32
    other = PrimFunc(prim.params, prim.body, prim.name, {**prim.attrs, TUNING_ATTR: "0" * 32})
    assert target_kernel_key(other, TARGET) != target_kernel_key(prim, TARGET)


def test_extract_finds_one_task_per_tunable_implementation():
    tasks = extract_plain_layout(_dense_relu(), TARGET)
    assert sorted(t.name for t in tasks) == ["dense_dot.x86", "dense_pack.x86"]
    for task in tasks:
        assert len(task.config_space) > 1 and task.flop >= 2 * 24 * 40 * 20
        attrs, inputs, out_type = task.args
        assert inputs == (("TENSOR", (24, 40), "float32"), ("TENSOR", (20, 40), "float32"))
    assert autotvm.task.extract_from_program(_dense_relu(), {}, TARGET, ops=["nn.conv2d"]) == []


def test_apply_history_best_changes_the_kernels_tir_and_result():
    mod = _dense_relu()
    pack = next(t for t in extract_plain_layout(mod, TARGET) if t.name == "dense_pack.x86")
    default_cached, default_tir = _prim_func(mod)
    assert "dense_pack" not in default_cached.implementations[0][1]     # plevel picks dense_dot
    with autotvm.apply_history_best([_record(pack, tile_y=3)]):
        tuned_cached, tuned_tir = _prim_func(mod)
    assert tuned_cached is not default_cached
    assert tuned_cached.implementations[0] == ("nn.dense", "dense_pack.x86")
    assert "dense = allocate((3, " in tuned_tir and "for i0 in unrolled(0, 3)" in tuned_tir   # tile_y = 3
    assert "weight_pack" in tuned_tir and "unrolled(0, 3)" not in default_tir
    assert _disk_key(tuned_cached) != _disk_key(default_cached)      # the disk key differs
    # outside the context the first variant is served again, without lowering anew
    lowered = te_compiler.get().stats["lowered"]
    again, _ = _prim_func(mod)
    assert again is default_cached and te_compiler.get().stats["lowered"] == lowered
    # and the tuned build computes the same function
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 40)).astype("float32")
    w = rng.standard_normal((20, 40)).astype("float32")
    with autotvm.apply_history_best([_record(pack, tile_y=3)]):
        lib = rb.build(mod, TARGET)
    gm = rb.graph_executor.GraphModule(lib["default"](rb.cpu()))
    gm.set_input("x", x)
    gm.set_input("w", w)
    gm.run()
    np.testing.assert_allclose(gm.get_output(0).numpy(), np.maximum(x @ w.T, 0), rtol=1e-4, atol=1e-4)


def test_lowest_cost_implementation_wins():
    mod = _dense_relu()
    tasks = {t.name: t for t in extract_plain_layout(mod, TARGET)}
    dot = tasks["dense_dot.x86"]
    dot_record = (MeasureInput(dot.target, dot, dot.config_space.get(1)),
                  MeasureResult((2e-6,), MeasureErrorNo.NO_ERROR, 0.1, time.time()))
    with autotvm.apply_history_best([_record(tasks["dense_pack.x86"], 3, cost=5e-6), dot_record]):
        cached, _ = _prim_func(mod)
    assert cached.implementations[0] == ("nn.dense", "dense_dot.x86")
    with autotvm.apply_history_best([_record(tasks["dense_pack.x86"], 3, cost=1e-6), dot_record]):
        cached, _ = _prim_func(mod)
    assert cached.implementations[0] == ("nn.dense", "dense_pack.x86")


def test_untuned_warning_is_logged_once_per_build(caplog):
    x = rb.var("x", shape=(8, 16))
    w1, w2 = rb.var("w1", shape=(12, 16)), rb.var("w2", shape=(20, 12))
    mod = rb.IRModule.from_expr(rb.Function([x, w1, w2], rb.nn.dense(rb.nn.relu(rb.nn.dense(x, w1)), w2)))
    for build in range(2):                  # the second build reuses the cached kernels
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="relay_backend.autotvm"):
            rb.build(mod, TARGET)
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING and r.name == "relay_backend.autotvm"]
        assert [r.getMessage() for r in warnings] == [UNTUNED_WARNING], build
        details = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG
                   and "Cannot find tuning records" in r.getMessage()]
        assert len(details) == 2, details    # one per untuned dense, at DEBUG level
    tasks = extract_plain_layout(mod, TARGET)
    records = []
    for task in tasks:
        config = task.config_space.get(0)
        records.append((MeasureInput(task.target, task, config),
                        MeasureResult((1e-5,), MeasureErrorNo.NO_ERROR, 0.1, time.time())))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="relay_backend.autotvm"), autotvm.apply_history_best(records):
        rb.build(mod, TARGET)
    assert not [r for r in caplog.records if r.name == "relay_backend.autotvm"]


def test_untuned_ops_without_templates_never_warn(caplog):
    x = rb.var("x", shape=(4, 4))
    mod = rb.IRModule.from_expr(rb.Function([x], rb.exp(rb.add(x, x))))
    with caplog.at_level(logging.WARNING, logger="relay_backend.autotvm"):
        rb.build(mod, TARGET)
    assert not [r for r in caplog.records if r.name == "relay_backend.autotvm"]


def test_use_autotvm_false_ignores_records():
    from relay_backend import te
    from relay_backend.op.nn.dense import DenseAttrs
    from relay_backend.op.registry import get as get_op
    from relay_backend.te_compiler.select import select_implementation
    mod = _dense_relu()
    pack = next(t for t in extract_plain_layout(mod, TARGET) if t.name == "dense_pack.x86")
    op = get_op("nn.dense")
    data, weight = te.placeholder((24, 40)), te.placeholder((20, 40))
    out_type = op.rel([rb.TensorType((24, 40), "float32"), rb.TensorType((20, 40), "float32")], DenseAttrs())
    with autotvm.apply_history_best([_record(pack, tile_y=3)]):
        tuned, _ = select_implementation(op, DenseAttrs(), [data, weight], out_type, TARGET)
        plain, _ = select_implementation(op, DenseAttrs(), [data, weight], out_type, TARGET, use_autotvm=False)
    assert (tuned.name, plain.name) == ("dense_pack.x86", "dense_dot.x86")


def test_a_fallback_config_is_the_hand_picked_schedule():
    """No record: the template's knobs hold the values the schedule had before tuning existed."""
    task = autotvm.task.create("dense_pack.x86", (
        ("ATTRS", "DenseAttrs", (("units", None), ("out_dtype", ""))),
        (("TENSOR", (24, 40), "float32"), ("TENSOR", (20, 40), "float32")), ("TYPE", (24, 20), "float32")), TARGET)
    fallback = autotvm.task.FallbackConfigEntity()
    task.instantiate(fallback)
    from relay_backend.strategy.x86_common import lanes
    assert fallback["tile_y"].size[-1] == 8 and fallback["tile_x"].size[-1] == lanes("float32")
    assert fallback["tile_k"].size[-1] == 1
    assert isinstance(fallback["tile_y"], SplitEntity)


def test_kernel_cache_keys_on_op_definitions_and_tuning_configs_together():
    """The cache key holds the operator-definition generation (issue 14) and the configs the
    kernel was built with (tuning): a changed op definition relowers even under the same
    records, and within one generation other records get their own variant."""
    from relay_backend.strategy.base import register_strategy, unregister_strategy
    mod = _dense_relu(m=12)
    pack = next(t for t in extract_plain_layout(mod, TARGET) if t.name == "dense_pack.x86")
    records = [_record(pack, tile_y=3)]
    with autotvm.apply_history_best(records):
        before, before_tir = _prim_func(mod)

    def adds_nothing(strategy, attrs, inputs, out_type, target):
        """A user strategy registration: the op definitions change (a new generation)."""

    register_strategy("nn.dense", "x86", adds_nothing)
    try:
        with autotvm.apply_history_best(records):
            tuned, tuned_tir = _prim_func(mod)
        assert tuned is not before                                      # relowered, same schedule
        assert tuned_tir.replace(tuned.func_name, "kernel") == before_tir.replace(before.func_name, "kernel")
        default, default_tir = _prim_func(mod)
        assert default is not tuned and "unrolled(0, 3)" not in default_tir and "unrolled(0, 3)" in tuned_tir
        lowered = te_compiler.get().stats["lowered"]
        with autotvm.apply_history_best(records):
            again, _ = _prim_func(mod)
        assert again is tuned and te_compiler.get().stats["lowered"] == lowered     # its variant, reused
    finally:
        unregister_strategy("nn.dense", "x86", adds_nothing)
