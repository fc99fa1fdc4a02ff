"""Profiles: GraphModuleDebug.profile() and VirtualMachineProfiler.profile() report every kernel
with its Relay ops, shapes, share of the time and GFLOP/s for matrix products, and export CSV,
JSON and a Chrome trace whose files load with the expected fields."""
import csv
import io
import json

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.graph_executor import debug_executor
from relay_backend.vm import VirtualMachineProfiler

BATCH, IN_CH, OUT_CH, SIZE, UNITS = 1, 3, 8, 8, 5


def _model():
    data = relay.var("data", shape=(BATCH, IN_CH, SIZE, SIZE))
    weight = relay.var("weight", shape=(OUT_CH, IN_CH, 3, 3))
    dense_w = relay.var("dense_w", shape=(UNITS, OUT_CH * SIZE * SIZE))
    y = relay.nn.relu(relay.nn.conv2d(data, weight, padding=(1, 1), kernel_size=(3, 3), channels=OUT_CH))
    y = relay.nn.dense(relay.nn.batch_flatten(y), dense_w)
    mod = relay.IRModule.from_expr(relay.Function([data, weight, dense_w], y))
    rng = np.random.default_rng(0)
    params = {"weight": rng.standard_normal((OUT_CH, IN_CH, 3, 3)).astype("float32"),
              "dense_w": rng.standard_normal((UNITS, OUT_CH * SIZE * SIZE)).astype("float32")}
    return mod, params, rng.standard_normal((BATCH, IN_CH, SIZE, SIZE)).astype("float32")


# multiply-adds by the textbook formulas, independent of the compiler
CONV_MACS = BATCH * OUT_CH * SIZE * SIZE * IN_CH * 3 * 3
DENSE_MACS = BATCH * UNITS * OUT_CH * SIZE * SIZE


def _kernel_nodes(factory) -> list:
    """The graph's nodes that run a kernel (a "__nop" reshape aliases its input and runs none)."""
    return [n for n in json.loads(factory.get_graph_json())["nodes"]
            if n["op"] == "tvm_op" and n["attrs"]["func_name"] != "__nop"]


@pytest.fixture(scope="module")
def graph_report():
    mod, params, data = _model()
    factory = relay.build(mod, params=params)
    gmod = factory.create(relay.cpu(), debug=True)
    report = gmod.profile(repeat=3, data=data)
    kernels = _kernel_nodes(factory)
    return report, kernels


@pytest.fixture(scope="module")
def vm_report():
    mod, params, data = _model()
    exe = relay.vm.compile(mod, params=params)
    vm = VirtualMachineProfiler(exe, relay.cpu())
    report = vm.profile(data, repeat=2)
    np.testing.assert_allclose(vm.run(data).numpy(),                     # still a working VM
                               relay.create_executor("debug", mod=mod, params=params).evaluate()(data).numpy(),
                               rtol=1e-4, atol=1e-4)
    return report, exe


def _check_json_schema(doc: dict, executor: str, runs: int) -> None:
    assert doc["executor"] == executor and doc["runs"] == runs
    assert isinstance(doc["kernel_us"], float) and doc["wall_us"] >= doc["kernel_us"] > 0
    for row in doc["rows"]:
        assert {"name", "kernel", "ops", "calls", "total_us", "mean_us", "percent", "gflops", "shape",
                "macs"} <= set(row)
        assert isinstance(row["ops"], list) and row["calls"] == runs
    for call in doc["calls"]:
        assert {"name", "kernel", "ops", "start_us", "duration_us", "shapes", "macs"} == set(call)


def _check_trace(trace: dict, names: set, runs: int) -> None:
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(events) == len(names) * runs
    assert {e["name"] for e in events} == names
    for e in events:
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0
        assert {"pid", "tid", "args", "cat"} <= set(e)
    starts = [e["ts"] for e in events]
    assert starts == sorted(starts)                       # calls in the order they ran


def test_graph_profile_names_every_kernel_with_its_ops(graph_report):
    report, kernels = graph_report
    assert {r["name"] for r in report.rows} == {n["name"] for n in kernels}
    by_name = {r["name"]: r for r in report.rows}
    for node in kernels:
        assert by_name[node["name"]]["ops"] == node["attrs"]["relay_ops"].split(",")
    assert sum(r["percent"] for r in report.rows) == pytest.approx(100.0)
    text = str(report)
    assert all(n["name"] in text for n in kernels) and "GFLOP/s" in text


def test_graph_profile_counts_multiply_adds_for_gflops(graph_report):
    report, _ = graph_report
    macs = sorted(r["macs"] for r in report.rows if r["macs"])
    assert macs == sorted([CONV_MACS, DENSE_MACS])
    for row in report.rows:
        if row["macs"]:
            assert row["gflops"] == pytest.approx(2 * row["macs"] / (row["mean_us"] * 1e3))
        else:
            assert row["gflops"] is None


def test_graph_profile_exports_load(graph_report, tmp_path):
    report, kernels = graph_report
    report.save_json(tmp_path / "p.json")
    report.save_chrome_trace(tmp_path / "t.json")
    report.save_csv(tmp_path / "p.csv")
    _check_json_schema(json.loads((tmp_path / "p.json").read_text()), "graph", 3)
    _check_trace(json.loads((tmp_path / "t.json").read_text()), {n["name"] for n in kernels}, 3)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "p.csv").read_text())))
    assert [r["Name"] for r in rows] == [r["name"] for r in report.rows]
    assert all(float(r["Percent"]) >= 0 for r in rows)


def test_vm_profile_reports_every_kernel(vm_report, tmp_path):
    report, exe = vm_report
    kernels = set(exe.primitive_ops)
    assert {r["name"] for r in report.rows} == kernels
    assert sorted(r["macs"] for r in report.rows if r["macs"]) == sorted([CONV_MACS, DENSE_MACS])
    assert any("nn.conv2d" in r["ops"] for r in report.rows)
    report.save_json(tmp_path / "vm.json")
    report.save_chrome_trace(tmp_path / "vm_trace.json")
    _check_json_schema(json.loads((tmp_path / "vm.json").read_text()), "vm", 2)
    _check_trace(json.loads((tmp_path / "vm_trace.json").read_text()), kernels, 2)
    assert "vm profile" in str(report)


def test_debug_create_profile_matches_the_tvm_entry_point():
    mod, params, data = _model()
    factory = relay.build(mod, params=params)
    gmod = debug_executor.create(factory.get_graph_json(), factory.get_lib(), relay.cpu())
    gmod.set_input(**factory.get_params())
    report = gmod.profile(data=data)
    assert len(report.rows) == len(_kernel_nodes(factory))
