"""ONNX semantics where a quick conversion gets it wrong, compared with onnxruntime (or its error):
Gather's index range (constant indices checked at import, run-time indices never read out of
bounds) and Pow with mixed base/exponent types (the result has the base's type)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from onnx import helper

from .conftest import assert_close, make_model, run_ort, run_relay

import relay_backend as relay  # noqa: E402
from relay_backend.errors import OpNotImplemented  # noqa: E402

F = "float32"
X = np.arange(12, dtype=F).reshape(4, 3)


def _gather(indices=None, axis=0):
    """Gather over X's 4 rows; constant `indices` become an initializer, else a run-time input."""
    node = helper.make_node("Gather", ["x", "i"], ["y"], axis=axis, name="pick")
    if indices is None:
        return make_model([node], [("x", F, [4, 3]), ("i", "int64", [3])], [("y", F, None)])
    return make_model([node], [("x", F, [4, 3])], [("y", F, None)], {"i": np.asarray(indices, "int64")})


@pytest.mark.parametrize("bad", [-5, 4, 7])
def test_gather_constant_index_out_of_range_raises_at_import(bad):
    """onnxruntime rejects the index; we must not wrap -5 twice (to row 3) or read past the end."""
    m = _gather([0, bad])
    with pytest.raises(Exception, match="out of data bounds"):
        run_ort(m, {"x": X})
    with pytest.raises(OpNotImplemented, match=rf"'pick' \(Gather.*index {bad} is out of range .*\[-4, 3\]"):
        relay.frontend.from_onnx(m)


def test_gather_constant_indices_in_range_match_onnxruntime():
    m = _gather([[-4, 3], [-1, 0]])
    assert_close(run_relay(m, {"x": X}), run_ort(m, {"x": X}))


def test_gather_runtime_indices_in_range_match_onnxruntime():
    m = _gather()
    for kind in ("debug", "graph"):
        for idx in ([0, -1, 3], [-4, 2, -2]):
            feeds = {"x": X, "i": np.array(idx, "int64")}
            assert_close(run_relay(m, feeds, kind), run_ort(m, feeds))


def test_gather_over_a_symbolic_axis_wraps_negative_indices_once():
    m = make_model([helper.make_node("Gather", ["x", "i"], ["y"])], [("x", F, ["N", 3]), ("i", "int64", [3])],
                   [("y", F, None)])
    feeds = {"x": X, "i": np.array([-4, 3, -1], "int64")}
    for kind in ("debug", "vm"):
        assert_close(run_relay(m, feeds, kind), run_ort(m, feeds))


def test_gather_runtime_out_of_range_indices_clamp_in_graph_executor(tmp_path):
    """A compiled kernel cannot raise, so out-of-range run-time indices are clamped (onnxruntime
    raises). Run in a subprocess: an out-of-bounds read would crash the interpreter."""
    m = _gather()
    for idx in ([4, 0, 1], [1000000, 0, 1]):
        with pytest.raises(Exception, match="out of data bounds"):
            run_ort(m, {"x": X, "i": np.array(idx, "int64")})
    path = tmp_path / "gather.onnx"
    path.write_bytes(m.SerializeToString())
    script = textwrap.dedent(f"""
        import numpy as np, onnx, relay_backend as relay
        mod, params = relay.frontend.from_onnx(onnx.load({str(path)!r}))
        run = relay.create_executor("graph", mod=mod, params=params or None).evaluate()
        x = np.arange(12, dtype="float32").reshape(4, 3)
        for idx in ([4, 0, 1], [1000000, 0, 1], [-5, 3, -1000000]):
            print(run(x, np.array(idx, "int64")).numpy()[:, 0].astype(int).tolist())
    """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(relay.__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    # first column of row r is 3 * r: 4 and 10**6 clamp to row 3; -5 and -10**6 (after +4) clamp to row 0
    assert done.stdout.split("\n")[:3] == ["[9, 0, 3]", "[9, 0, 3]", "[0, 9, 0]"], done.stdout


@pytest.mark.parametrize("ta,tb,a,b", [
    ("int32", F, [3, 1, 2, -3], [1.5, 0.5, 4.0, 3.0]),     # 3 ** 1.5 = 5.19 -> 5, not 3 ** 1
    ("int64", F, [3, 7, 2, 10], [1.5, 0.5, 2.7, 1.99]),
    ("int64", "float64", [9, 2, 5, 4], [0.5, 10.5, 1.2, 2.25]),
    (F, "int32", [1.5, -2.0, 0.5, 3.0], [2, 3, -1, 0]),
    (F, "int64", [1.5, -2.0, 0.5, 3.0], [2, 3, -2, 1]),
    ("float64", "int64", [1.5, -2.0, 0.5, 3.0], [2, 3, -2, 1]),
])
def test_pow_mixed_types_match_onnxruntime(ta, tb, a, b):
    m = make_model([helper.make_node("Pow", ["a", "b"], ["y"])], [("a", ta, [4]), ("b", tb, [4])],
                   [("y", ta, [4])], opset=15)
    feeds = {"a": np.array(a, ta), "b": np.array(b, tb)}
    ref = run_ort(m, feeds)
    for kind in ("debug", "graph"):
        out = run_relay(m, feeds, kind)
        assert out[0].dtype == ref[0].dtype
        assert_close(out, ref)
