"""GraphModule runtime: input checks, outputs and aliasing, params blobs, the single-file export
loaded in a fresh process, graph JSON validation, benchmark, and the debug executor."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import graph_executor
from relay_backend.errors import InputError, SerializationError
from relay_backend.graph_executor import debug_executor
from relay_backend.runtime.params import load_param_dict, save_param_dict
from relay_backend.testing import seed_cnn

from .models import mlp

pytestmark = pytest.mark.compile
DATA = np.random.default_rng(7).standard_normal((1, 3, 32, 32)).astype("float32")


@pytest.fixture(scope="module")
def cnn():
    mod, params = seed_cnn.get_workload()
    return relay.build(mod, params=params), seed_cnn.numpy_forward(DATA, params)


def test_wrong_inputs_raise_clear_errors(cnn):
    lib, _ = cnn
    gmod = lib["default"](relay.cpu(0))
    with pytest.raises(InputError, match=r"Could not find 'dat' in graph's inputs; valid names are \['data'"):
        gmod.set_input("dat", DATA)
    with pytest.raises(InputError, match=r"input 'data' expects Tensor\[\(1, 3, 32, 32\), float32\], got "
                                         r"Tensor\[\(1, 3, 16, 16\)"):
        gmod.set_input("data", DATA[:, :, :16, :16])
    with pytest.raises(InputError, match=r"float64.*astype"):
        gmod.set_input("data", DATA.astype("float64"))
    with pytest.raises(InputError, match="out of range"):
        gmod.set_input(99, DATA)
    with pytest.raises(InputError, match="valid names"):
        gmod.run(image=DATA)
    with pytest.raises(InputError, match="out of range"):
        gmod.get_output(1)
    assert gmod.get_input_index("data") == 0 and gmod.get_input_index("nope") == -1


def test_outputs_alias_internal_storage_and_out_copies(cnn):
    lib, expected = cnn
    gmod = lib["default"](relay.cpu(0))
    assert gmod.get_num_outputs() == 1 and gmod.get_num_inputs() == 4    # data + p0..p2
    gmod.run(data=DATA)
    view = gmod.get_output(0)
    out = relay.nd.empty((1, 10))
    gmod.get_output(0, out)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)
    gmod.run(data=np.zeros_like(DATA))
    assert not np.allclose(view.numpy(), out.numpy())          # the view was overwritten by run()
    with pytest.raises(InputError, match=r"out is Tensor\[\(1, 10\), float64\], but the output is "
                                         r"Tensor\[\(1, 10\), float32\]"):
        gmod.get_output(0, relay.nd.empty((1, 10), "float64"))
    with pytest.raises(InputError, match=r"out is Tensor\[\(10,\), float32\]"):
        gmod.get_output(0, relay.nd.empty((10,)))
    with pytest.raises(InputError, match="out must be an NDArray"):
        gmod.get_output(0, np.empty((1, 10), "float32"))
    np.testing.assert_array_equal(gmod.get_input("data").numpy(), np.zeros_like(DATA))
    shapes, dtypes = gmod.get_input_info()
    assert shapes == {"data": (1, 3, 32, 32)} and dtypes == {"data": "float32"}


def test_params_round_trip_through_load_params(cnn):
    lib, expected = cnn
    blob = save_param_dict(lib.get_params())
    assert set(load_param_dict(blob)) == {"p0", "p1", "p2"}
    gmod = graph_executor.create(lib.get_graph_json(), lib.get_lib(), relay.cpu(0))  # no params set
    gmod.load_params(blob)
    gmod.run(data=DATA)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-5)
    assert gmod.get_input_info()[0] == {"data": (1, 3, 32, 32)}


def test_export_library_loads_in_a_fresh_process(cnn, tmp_path):
    lib, expected = cnn
    path = str(tmp_path / "cnn.so")
    lib.export_library(path)
    np.save(tmp_path / "data.npy", DATA)
    script = textwrap.dedent(f"""
        import numpy as np, relay_backend as relay
        from relay_backend import graph_executor
        lib = relay.runtime.load_module({path!r})
        gmod = graph_executor.GraphModule(lib["default"](relay.cpu(0)))
        gmod.set_input("data", np.load({str(tmp_path / 'data.npy')!r}))
        gmod.run()
        np.save({str(tmp_path / 'out.npy')!r}, gmod.get_output(0).numpy())
        print(sorted(lib.get_params()), lib.planned_bytes, lib.no_reuse_bytes)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "RB_NO_DISK_CACHE": "1"})
    assert done.returncode == 0, done.stderr
    assert f"['p0', 'p1', 'p2'] {lib.planned_bytes} {lib.no_reuse_bytes}" in done.stdout
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), expected, rtol=1e-4, atol=1e-5)


def test_corrupt_export_is_rejected(cnn, tmp_path):
    lib, _ = cnn
    path = tmp_path / "cnn.so"
    lib.export_library(str(path))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(SerializationError, match="checksum"):
        relay.runtime.load_module(str(path))


def test_graph_json_validation():
    x = relay.var("x", shape=(2,))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))))
    good = json.loads(lib.get_graph_json())
    for mutate, pattern in [
        (lambda g: g.update(extra=1), r"key\(s\) \['extra'\] are not supported"),
        (lambda g: g.pop("heads"), r"missing key\(s\) \['heads'\]"),
        (lambda g: g["nodes"][1]["attrs"].pop("func_name"), r"lacks attrs \['func_name'\]"),
        (lambda g: g["attrs"].update(dltype=["list_int", [1, 1]]), "dltype"),
        (lambda g: g["nodes"][1].update(inputs=[[5, 0, 0]]), "not an earlier node's output"),
        # wrong types anywhere are SerializationErrors naming the field, never TypeError/ValueError
        (lambda g: g["attrs"]["dltype"][1].__setitem__(0, "object"), r"attrs\['dltype'\]\[0\] is 'object'"),
        (lambda g: g["attrs"]["dltype"][1].__setitem__(1, 32), r"attrs\['dltype'\]\[1\] is 32"),
        (lambda g: g["attrs"]["shape"][1].__setitem__(0, 2), r"attrs\['shape'\]\[0\] must be a list"),
        (lambda g: g["attrs"]["shape"][1].__setitem__(0, [2.0]), r"attrs\['shape'\]\[0\].*integers"),
        (lambda g: g["attrs"]["shape"][1].__setitem__(1, [2 ** 62, 4]), r"attrs\['shape'\]\[1\].*overflow int64"),
        (lambda g: g["attrs"]["shape"][1].__setitem__(1, [2 ** 70]), r"attrs\['shape'\]\[1\].*overflow int64"),
        (lambda g: g.update(arg_nodes=["0"]), r"arg_nodes\[0\] must be an integer, got '0'"),
        (lambda g: g.update(node_row_ptr=[0, 1, "2"]), r"node_row_ptr\[2\] must be an integer"),
        (lambda g: g["attrs"]["storage_id"][1].__setitem__(0, "0"), r"attrs\['storage_id'\]\[0\]"),
        (lambda g: g["attrs"]["storage_id"][1].__setitem__(0, True), r"attrs\['storage_id'\]\[0\]"),
        (lambda g: g["nodes"][1].update(inputs=7), r"node 1 .*'inputs' must be a list"),
        (lambda g: g["nodes"][0].update(name=3), r"node 0: 'name' must be a string"),
        (lambda g: g.update(heads=0), "heads must be a list"),
        (lambda g: g["nodes"][1]["attrs"].update(num_outputs="0"), "num_outputs >= 1"),
        (lambda g: g["attrs"]["device_index"][1].__setitem__(1, 2),
         r"attrs\['device_index'\]\[1\] is 2, but this runtime executes a graph on one device"),
        (lambda g: g["attrs"]["device_index"][1].__setitem__(1, 7),
         r"attrs\['device_index'\]\[1\] is 7, .* the CPU \(1\) or a CUDA GPU \(2\)"),
        (lambda g: g["attrs"].update(device_index=["list_int", [1]]), r"attrs\['device_index'\] has 1 items"),
    ]:
        bad = json.loads(json.dumps(good))
        mutate(bad)
        with pytest.raises(SerializationError, match=pattern):
            graph_executor.create(json.dumps(bad), lib.get_lib(), relay.cpu(0))
    bad = json.loads(json.dumps(good))
    bad["nodes"][1]["attrs"]["func_name"] = "missing_kernel"
    with pytest.raises(relay.RelayError, match="no such function in module: missing_kernel"):
        graph_executor.create(json.dumps(bad), lib.get_lib(), relay.cpu(0))


def test_benchmark_reports_statistics(cnn):
    lib, _ = cnn
    gmod = lib["default"](relay.cpu(0))
    result = gmod.benchmark(relay.cpu(0), repeat=3, number=2, data=DATA)
    assert len(result.results) == 3 and result.min <= result.median <= result.max
    assert result.std >= 0 and "mean (ms)" in str(result)
    assert len(gmod.benchmark(relay.cpu(0), repeat=2, number=1, end_to_end=True, data=DATA).results) == 2


def test_debug_executor_report_dump_and_layer_check(cnn, tmp_path):
    lib, expected = cnn
    dbg = lib["debug_create"]("default", relay.cpu(0), dump_root=str(tmp_path))
    report = dbg.run(number=2, repeat=2, data=DATA)
    names = [n["name"] for n in json.loads(lib.get_graph_json())["nodes"] if n["op"] == "tvm_op"]
    assert sorted(r["name"] for r in report.rows) == sorted(names)
    assert abs(sum(r["percent"] for r in report.rows) - 100) < 1e-6
    conv = next(r for r in report.rows if "conv2d" in r["func_name"])
    assert conv["ops"] == "nn.conv2d,nn.relu" and conv["shape"] == [1, 16, 32, 32]
    assert len(conv["measurements"]) == 2
    text, csv = str(report), report.csv()
    assert "Node Name" in text and "Total_time" in text and len(csv.splitlines()) == len(names) + 2
    np.testing.assert_allclose(dbg.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-5)
    npz = np.load(dbg.dump_outputs(tmp_path / "acts.npz"))
    assert set(npz.files) == {f"{n}:0" for n in ["data", "p0", "p1", "p2", *names]}
    np.testing.assert_allclose(npz[f"{names[-1]}:0"], expected, rtol=1e-4, atol=1e-5)
    assert os.path.exists(tmp_path / "_tvmdbg_device_CPU_0" / "_tvmdbg_graph_dump.json")
    rows = debug_executor.compare_with_interpreter(lib, {"data": DATA})
    kernels = [n for n in json.loads(lib.get_graph_json())["nodes"]
               if n["op"] == "tvm_op" and n["attrs"]["func_name"] != "__nop"]    # a __nop runs nothing
    assert len(rows) == len(kernels) and all(r["ok"] for r in rows)


def test_create_executor_graph_matches_debug_with_keywords():
    mod, params, forward = mlp()
    x = np.random.default_rng(3).standard_normal((4, 16)).astype("float32")
    graph = relay.create_executor("graph", mod=mod, params=params).evaluate()
    out = graph(x=x)
    assert isinstance(out, relay.nd.NDArray)
    np.testing.assert_allclose(out.numpy(), forward(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(InputError, match="insufficient arguments"):
        graph()
    with pytest.raises(InputError, match="input 'x' expects"):
        graph(x[:2])
