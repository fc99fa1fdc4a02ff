"""node_test_errata: the QLinearMatMul int8 node tests of onnx 1.17 ship wrapped (not saturated)
outputs; the correction applies only when the shipped data is exactly the wrapped spec value, and
our QLinearMatMul agrees with onnxruntime (which saturates) on those very inputs."""
import numpy as np
import pytest

from relay_backend.frontend.onnx.node_test_errata import corrected_expected
from relay_backend.frontend.onnx.node_tests import list_node_tests, load_node_test, node_test_root, run_node_test

from .conftest import run_ort

INT8_CASES = [f"test_qlinearmatmul_{rank}_int8_float{bits}" for rank in ("2D", "3D") for bits in (16, 32)]
_AVAILABLE = set(list_node_tests())


def _inputs(a, b, y_scale=1.0, y_zero=0):
    one = np.array([1.0], np.float32)
    zero = np.array([0], np.int8)
    return [np.array(a, np.int8), one, zero, np.array(b, np.int8), one, zero,
            np.array([y_scale], np.float32), np.array([y_zero], np.int8)]


def test_wrapped_shipped_data_is_replaced_by_the_saturated_value():
    ins = _inputs([[100, 100]], [[100], [100]], y_scale=0.5)    # 20000 / 0.5 = 40000, far above 127
    wrapped = [np.array([[np.int64(40000)]]).astype(np.int8)]   # what numpy's astype gives
    fixed = corrected_expected("test_qlinearmatmul_2D_int8_float32", ins, wrapped)
    np.testing.assert_array_equal(fixed[0], np.array([[127]], np.int8))
    assert fixed[0].dtype == np.int8


def test_other_discrepancies_are_left_to_fail():
    ins = _inputs([[100, 100]], [[100], [100]], y_scale=0.5)
    shipped = [np.array([[5]], np.int8)]                        # neither wrapped nor saturated: untouched
    assert corrected_expected("test_qlinearmatmul_2D_int8_float32", ins, shipped) is shipped


def test_tests_outside_the_errata_are_untouched():
    ins = _inputs([[100, 100]], [[100], [100]], y_scale=0.5)
    shipped = [np.array([[np.int64(40000)]]).astype(np.int8)]
    assert corrected_expected("test_matmul_2d", ins, shipped) is shipped


@pytest.mark.parametrize("name", INT8_CASES)
def test_int8_qlinearmatmul_node_tests_agree_with_onnxruntime(name):
    """The corrected expectation equals onnxruntime's output, the shipped one does not (onnx 1.17),
    and the node test passes on the debug interpreter and the graph executor."""
    if name not in _AVAILABLE:
        pytest.skip(f"{name} is not in this onnx wheel's node test data")
    import onnx
    model, cases = load_node_test(name)
    (ins, outs), = cases
    ort_out = run_ort(onnx.load(f"{node_test_root()}/{name}/model.onnx"),
                      {i.name: v for i, v in zip(model.graph.input, ins)})[0]
    np.testing.assert_array_equal(corrected_expected(name, ins, outs)[0], ort_out)
    assert not np.array_equal(outs[0], ort_out), "the shipped data was fixed: drop this erratum"
    for executor in ("debug", "graph"):
        assert run_node_test(name, executor) == ("QLinearMatMul", None)
