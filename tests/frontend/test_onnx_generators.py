"""EyeLike, the window functions and MelWeightMatrix (converters/generators.py) against
onnxruntime (rtol 1e-5, atol 1e-5 scaled to |ref|). A window size given at run time runs on the
debug interpreter and the VM (dyn.arange); MelWeightMatrix takes its sample rate and edge
frequencies at run time.

Node tests they make pass: test_eyelike_* (3), test_{hann,hamming,blackman}window{,_symmetric}
(6; also with every input at run time on debug and vm), test_melweightmatrix."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from relay_backend.errors import RelayError

from .conftest import assert_close, make_model, raises_relay_error, run_ort, run_relay


@pytest.mark.parametrize("executor", ["debug", "graph"])
@pytest.mark.parametrize("shape,k,dtype", [((3, 4), 0, None), ((4, 3), 2, None), ((3, 5), -1, TensorProto.INT32),
                                            ((2, 2), 5, TensorProto.DOUBLE)])
def test_eye_like(executor, shape, k, dtype):
    attrs = {"k": k} | ({"dtype": dtype} if dtype is not None else {})
    out_dtype = {None: "float32", TensorProto.INT32: "int32", TensorProto.DOUBLE: "float64"}[dtype]
    model = make_model([helper.make_node("EyeLike", ["x"], ["y"], **attrs)], [("x", "float32", list(shape))],
                       [("y", out_dtype, list(shape))])
    x = np.zeros(shape, "float32")
    assert_close(run_relay(model, {"x": x}, executor), run_ort(model, {"x": x}))


def test_eye_like_rejects_a_3d_input():
    model = make_model([helper.make_node("EyeLike", ["x"], ["y"])], [("x", "float32", [2, 2, 2])],
                       [("y", "float32", [2, 2, 2])])
    raises_relay_error(model, "must be 2-D", RelayError)


def _window_model(op, periodic):
    return make_model([helper.make_node(op, ["size"], ["y"], periodic=periodic)], [("size", "int64", [])],
                      [("y", "float32", [None])], opset=17)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
@pytest.mark.parametrize("size", [1, 2, 10])
def test_window_with_a_constant_size(op, periodic, size):
    """The size bound at import: the window is a constant on every executor."""
    from relay_backend.frontend.onnx.backend import RelayBackend
    model = _window_model(op, periodic)
    feeds = {"size": np.array(size, np.int64)}
    want = run_ort(model, feeds)
    for executor in ("debug", "graph"):
        assert_close(RelayBackend.prepare(model, executor=executor).run([feeds["size"]]), want)


@pytest.mark.parametrize("executor", ["debug", "vm"])
@pytest.mark.parametrize("op", ["HannWindow", "BlackmanWindow"])
def test_window_with_a_run_time_size(executor, op):
    model = _window_model(op, 1)
    for size in (3, 16):
        feeds = {"size": np.array(size, np.int64)}
        assert_close(run_relay(model, feeds, executor), run_ort(model, feeds))


@pytest.mark.parametrize("executor", ["debug", "graph"])
@pytest.mark.parametrize("bins,dft_length,rate,low,high", [(8, 16, 8192, 0.0, 4096.0), (5, 64, 16000, 100.0, 7000.0),
                                                           (20, 32, 8000, 0.0, 4000.0)])
def test_mel_weight_matrix_with_run_time_frequencies(executor, bins, dft_length, rate, low, high):
    node = helper.make_node("MelWeightMatrix", ["bins", "dft", "rate", "low", "high"], ["y"])
    model = make_model([node], [("rate", "int64", []), ("low", "float32", []), ("high", "float32", [])],
                       [("y", "float32", [dft_length // 2 + 1, bins])],
                       inits={"bins": np.array(bins, np.int64), "dft": np.array(dft_length, np.int64)}, opset=17)
    feeds = {"rate": np.array(rate, np.int64), "low": np.array(low, np.float32), "high": np.array(high, np.float32)}
    assert_close(run_relay(model, feeds, executor), run_ort(model, feeds))
