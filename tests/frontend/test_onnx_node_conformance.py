"""ONNX's own backend node tests (data shipped in the onnx 1.17 wheel) through relay_backend.

onnx_node_passing.txt is the curated list of tests that pass on both the debug interpreter and
the graph executor (regenerate it with scripts/onnx_node_report.py --passing-list). Every listed
test runs on the debug interpreter; every 8th also through the default compiled executor. The
default suite takes every 2nd of the one and every 16th of the other; -m slow runs the rest. Expected outputs come from ONNX's reference data; tolerances are
ONNX's (rtol 1e-3, atol 1e-7).
"""
import os

import pytest

pytest.importorskip("onnx")

from relay_backend.frontend.onnx.node_tests import list_node_tests, run_node_test  # noqa: E402

_LIST = os.path.join(os.path.dirname(__file__), "onnx_node_passing.txt")
PASSING = [line.strip() for line in open(_LIST) if line.strip()]
_AVAILABLE = set(list_node_tests()) if PASSING else set()


def _check(name, executor):
    if name not in _AVAILABLE:
        pytest.skip(f"{name} is not in this onnx wheel's node test data")
    op, err = run_node_test(name, executor)
    assert err is None, f"{name} ({op}) on {executor}: {err}"


def _half_slow(names, step):
    """Every `step`-th name in the default suite, the ones halfway between under -m slow (CI
    runs both), so the default suite stays short as the list grows."""
    return [pytest.param(n, marks=[pytest.mark.slow] if i % 2 else []) for i, n in enumerate(names[::step // 2])]


@pytest.mark.parametrize("name", _half_slow(PASSING, 2))
def test_node_debug(name):
    _check(name, "debug")


@pytest.mark.parametrize("name", _half_slow(PASSING, 16))
def test_node_compiled(name):
    from relay_backend.frontend.onnx.backend import default_executor
    kind = default_executor()
    if kind == "debug":
        pytest.skip("no compiled executor in this build")
    _check(name, kind)


def test_curated_list_covers_the_issue_operators():
    """Every operator the frontend issue names has at least one passing node test listed."""
    want = ["conv", "convtranspose", "gemm", "matmul", "add", "sub", "mul", "div", "pow", "relu", "leakyrelu",
            "prelu", "sigmoid", "tanh", "softmax", "logsoftmax", "batchnorm", "instancenorm", "layer_normalization",
            "maxpool", "averagepool", "globalaveragepool", "globalmaxpool", "flatten", "reshape", "transpose",
            "concat", "split", "squeeze", "unsqueeze", "gather", "slice", "constant", "constantofshape", "shape",
            "cast", "clip", "dropout", "lrn", "sum", "mean", "max", "min", "reduce_mean", "reduce_sum",
            "reduce_max", "reduce_min", "constant_pad", "edge_pad", "reflect_pad", "identity", "erf", "sqrt", "exp", "log", "where", "equal", "less",
            "greater", "not", "and", "or", "expand", "tile", "argmax", "gelu", "hardsigmoid", "hardswish"]
    missing = [w for w in want if not any(n.startswith(f"test_{w}") for n in PASSING)]
    assert not missing, f"no passing node test for {missing}"
