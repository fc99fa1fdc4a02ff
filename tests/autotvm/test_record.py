"""Tuning records (autotvm/record.py) and dispatch contexts (autotvm/task/dispatcher.py): the
JSON-lines log round trip, malformed logs, pick_best, and which config each context answers."""
import json
import time

import pytest

from relay_backend import autotvm
from relay_backend.autotvm import record
from relay_backend.autotvm.record import MeasureErrorNo, MeasureInput, MeasureResult
from relay_backend.autotvm.task import ApplyHistoryBest, DispatchContext, FallbackConfigEntity
from relay_backend.errors import SerializationError
from relay_backend.target import Target
from relay_backend.testing import autotvm_templates  # noqa: F401  (registers the templates)

TARGET = "llvm"


@pytest.fixture(scope="module")
def task():
    return autotvm.task.create("testing/matmul", (16, 8, 16, "float32"), TARGET)


def _records(task, costs_by_index):
    out = []
    for index, costs in costs_by_index.items():
        error = MeasureErrorNo.NO_ERROR if costs else MeasureErrorNo.RUNTIME_DEVICE
        result = MeasureResult(tuple(costs) if costs else ("traceback", "crashed"), error, 0.5, time.time())
        out.append((MeasureInput(task.target, task, task.config_space.get(index)), result))
    return out


def test_log_round_trip(tmp_path, task):
    records = _records(task, {3: [2e-5, 3e-5], 17: [1e-5], 40: None})
    path = tmp_path / "tune.log"
    with open(path, "w") as f:
        for inp, res in records:
            f.write(record.encode(inp, res) + "\n")
    back = list(record.load_from_file(path))
    assert len(back) == 3
    for (inp, res), (inp2, res2) in zip(records, back):
        assert str(inp2.target) == str(inp.target) and inp2.task.workload == inp.task.workload
        assert inp2.config.index == inp.config.index and repr(inp2.config) == repr(inp.config)
        assert res2.error_no == res.error_no
        if res.error_no == 0:
            assert res2.costs == res.costs
        else:
            assert res2.costs == (1e9,)
    line = json.loads(path.read_text().splitlines()[0])
    assert line["version"] == 0.2 and line["input"][1] == "testing/matmul"
    assert line["config"]["entity"][0] == ["tile_y", "sp", [-1, task.config_space.get(3)["tile_y"].size[1]]]


def test_apply_history_best_picks_lowest_cost_and_skips_errors(task):
    records = _records(task, {3: [2e-5], 17: [1e-5], 40: None, 41: [3e-5]})
    ctx = ApplyHistoryBest(records)
    target = Target(TARGET)
    assert ctx.query(target, task.workload).index == 17
    assert ctx.query(target, task.workload).cost == pytest.approx(1e-5)
    other = ("testing/matmul", 32, 8, 16, "float32")
    assert isinstance(ctx.query(target, other), FallbackConfigEntity)       # falls through
    with ctx:
        assert DispatchContext.current is ctx
        assert autotvm.task.dispatcher.query_config(target, task.workload).index == 17
    assert DispatchContext.current is not ctx


def test_records_match_by_target_key_not_by_other_kinds(task):
    ctx = ApplyHistoryBest(_records(task, {5: [1e-5]}))
    assert ctx.query(Target("llvm -mcpu=skylake"), task.workload).index == 5     # key x86 / cpu
    assert isinstance(ctx.query(Target("cuda"), task.workload), FallbackConfigEntity)


def test_pick_best(tmp_path, task):
    log, best = tmp_path / "all.log", tmp_path / "best.log"
    with open(log, "w") as f:
        for inp, res in _records(task, {3: [2e-5], 17: [1e-5], 40: None}):
            f.write(record.encode(inp, res) + "\n")
    assert record.pick_best(str(log), str(best)) == 1
    (inp, res), = record.load_from_file(best)
    assert inp.config.index == 17


def test_bad_lines_name_the_file_and_line(tmp_path, task):
    good = record.encode(*_records(task, {1: [1e-5]})[0])
    path = tmp_path / "bad.log"
    path.write_text(good + "\n" + "{not json\n" + good + "\n")
    with pytest.raises(SerializationError, match=r"bad.log:2: not a JSON record"):
        list(record.load_from_file(path))
    path.write_text(good + "\n" + json.dumps({"input": [1, 2]}) + "\n")
    with pytest.raises(SerializationError, match=r"bad.log:2: malformed record"):
        list(record.load_from_file(path))
    path.write_text(good.replace('"llvm', '"nosuchkind') + "\n")
    with pytest.raises(SerializationError, match="invalid record"):
        list(record.load_from_file(path))


def test_unfinished_last_line_is_skipped_with_a_warning(tmp_path, task):
    good = record.encode(*_records(task, {1: [1e-5]})[0])
    path = tmp_path / "cut.log"
    path.write_text(good + "\n" + good[: len(good) // 2])
    with pytest.warns(RuntimeWarning, match="unfinished last line 2"):
        assert len(list(record.load_from_file(path))) == 1


def test_workloads_with_attrs_and_types_survive_the_log():
    from relay_backend import te
    from relay_backend.autotvm.task import args_to_workload, deserialize_args
    from relay_backend.autotvm.task.task import clean_json
    from relay_backend.ir.types import TensorType
    from relay_backend.op.nn.conv import Conv2DAttrs
    attrs = Conv2DAttrs(strides=(2, 2), padding=(1, 1, 1, 1), kernel_size=(3, 3), channels=8)
    args = (te.placeholder((1, 4, 9, 9)), attrs, TensorType((1, 8, 5, 5), "float32"))
    workload = args_to_workload(args, "conv")
    assert hash(workload) == hash(clean_json(json.loads(json.dumps(workload))))
    back = deserialize_args(clean_json(json.loads(json.dumps(workload)))[1:])
    assert back[1] == attrs and back[2] == args[2]
    assert tuple(int(d.value) for d in back[0].shape) == (1, 4, 9, 9)


def test_command_line_picks_the_best(tmp_path, task):
    import pathlib
    import subprocess
    import sys
    log, best = tmp_path / "all.log", tmp_path / "best.log"
    with open(log, "w") as f:
        for inp, res in _records(task, {3: [2e-5], 17: [1e-5]}):
            f.write(record.encode(inp, res) + "\n")
    out = subprocess.run([sys.executable, "-m", "relay_backend.autotvm", "--mode", "pick", "--i", str(log),
                          "--o", str(best)], capture_output=True, text=True,
                         cwd=str(pathlib.Path(autotvm.__file__).resolve().parents[2]))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1 records written"
    assert [inp.config.index for inp, _ in record.load_from_file(best)] == [17]


def test_a_user_attrs_class_sharing_a_builtin_name_does_not_break_decoding():
    """A program (or a test module) may define its own `Conv2DAttrs`: a workload naming the
    attrs class still decodes to the library's class, whose module is relay_backend's."""
    from relay_backend import ir
    from relay_backend.autotvm.task.task import _decode_attrs
    from relay_backend.op.nn.conv import Conv2DAttrs as LibraryConv2DAttrs

    class Conv2DAttrs(ir.Attrs):   # noqa: F841  (its existence as a subclass is the point)
        pass
    decoded = _decode_attrs("Conv2DAttrs", (("strides", (2, 2)),))
    assert type(decoded) is LibraryConv2DAttrs and tuple(decoded.strides) == (2, 2)
