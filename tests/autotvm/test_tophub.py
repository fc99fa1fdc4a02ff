"""Shipped tuning records (autotvm/tophub.py): a build applies the records of this host's CPU
family by default, skips other families' with one note, and leaves them alone when the user set
a dispatch context or RB_TOPHUB=0."""
import logging
import time

import pytest

import relay_backend as rb
from relay_backend import autotvm, config
from relay_backend.autotvm import record, tophub
from relay_backend.autotvm.record import MeasureErrorNo, MeasureInput, MeasureResult
from relay_backend.te_compiler.lower_main import lower_main
from relay_backend.tir.printer import func_to_str
from relay_backend.transform.pipeline import default_pipeline

from .plain_layout import extract_plain_layout

pytestmark = pytest.mark.compile


def _model():
    x, w = rb.var("x", shape=(12, 36)), rb.var("w", shape=(20, 36))
    return rb.IRModule.from_expr(rb.Function([x, w], rb.nn.dense(x, w)))


def _kernel_tir(mod) -> str:
    lowered = lower_main(default_pipeline()(mod)["main"], "llvm")
    (cached,) = lowered.cached.values()
    return cached.implementations[0][1] + "\n" + func_to_str(next(iter(cached.funcs.values())))


def _write_records(path, mod, tile_y):
    task = next(t for t in extract_plain_layout(mod) if t.name == "dense_pack.x86")
    space = task.config_space
    index = next(i for i in range(len(space)) if space.get(i)["tile_y"].size[-1] == tile_y)
    inp = MeasureInput(task.target, task, space.get(index))
    res = MeasureResult((1e-6,), MeasureErrorNo.NO_ERROR, 0.1, time.time())
    path.write_text(record.encode(inp, res) + "\n")


@pytest.fixture
def records_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(tophub, "RECORDS_DIR", tmp_path)
    monkeypatch.setattr(tophub, "_NOTED", set())
    tophub._records.cache_clear()
    yield tmp_path
    tophub._records.cache_clear()


def test_records_of_this_cpu_family_apply_by_default(records_dir):
    mod = _model()
    _write_records(records_dir / f"{tophub.host_family()}.log", mod, tile_y=3)
    tir = _kernel_tir(mod)
    assert tir.startswith("dense_pack.x86") and "unrolled(0, 3)" in tir
    with autotvm.apply_history_best([]):          # the user's own context: the shipped ones stay out
        assert _kernel_tir(mod).startswith("dense_dot.x86")


def test_rb_tophub_0_turns_them_off(records_dir, monkeypatch):
    mod = _model()
    _write_records(records_dir / f"{tophub.host_family()}.log", mod, tile_y=3)
    monkeypatch.setenv("RB_TOPHUB", "0")
    config.reload()
    try:
        assert _kernel_tir(mod).startswith("dense_dot.x86")
    finally:
        monkeypatch.delenv("RB_TOPHUB")
        config.reload()


def test_other_families_are_skipped_with_one_note(records_dir, caplog):
    mod = _model()
    _write_records(records_dir / "x86_64-some-other-cpu.log", mod, tile_y=3)
    with caplog.at_level(logging.INFO, logger="relay_backend.autotvm"):
        assert _kernel_tir(mod).startswith("dense_dot.x86")
        _kernel_tir(mod)
    notes = [r.getMessage() for r in caplog.records if "tophub" in r.getMessage()]
    assert len(notes) == 1 and "no shipped tuning records for this CPU" in notes[0]
    assert "x86_64-some-other-cpu" in notes[0]


def test_shipped_files_parse_and_name_their_family():
    """Every shipped file decodes, and every record in it is a measured success."""
    for family in tophub.available_families():
        records = list(record.load_from_file(tophub.record_file(family)))
        assert records and all(res.error_no == 0 for _, res in records), family


@pytest.mark.slow
def test_shipped_records_name_tasks_the_benchmark_workloads_still_have():
    """A shipped record is only worth shipping while an opt_level 3 build of a benchmark
    workload still selects its task: a record of a task no longer extracted (e.g. the plain
    dense_dot.x86 record shipped before AlterOpLayout made the dense a contrib_dense_pack) is
    stale and must be regenerated (python -m benchmarks.tune_tophub). Only this host's family
    is checked: the tasks extracted here carry this CPU's blocks (a znver3 record names 8-lane
    packings, an AVX-512 host extracts 16-lane ones)."""
    from relay_backend.frontend import from_onnx
    from relay_backend.testing import onnx_models

    family = tophub.host_family()
    if family not in tophub.available_families():
        pytest.skip(f"no records ship for this host's CPU family ({family})")
    wanted = set()
    for builder, kwargs in ((onnx_models.mlp, {"batch": 64}), (onnx_models.resnet_block, {}),
                            (onnx_models.resnet50, {"image": 224})):
        mod, params = from_onnx(builder(**kwargs)[0])
        for per_function in (False, True):       # a record may name an op's task or a fused function's
            wanted |= {t.workload for t in autotvm.task.extract_from_program(mod, params, "llvm",
                                                                             per_fused_function=per_function)}
    stale = [inp.task.name for inp, _ in record.load_from_file(tophub.record_file(family))
             if inp.task.workload not in wanted]
    assert not stale, f"{family}: stale records of {stale}"
