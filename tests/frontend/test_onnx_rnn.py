"""ONNX RNN / GRU / LSTM (unrolled over the sequence) against onnxruntime: every direction, the
activation attributes, clip, initial states, peepholes, sequence_lens, GRU's linear_before_reset
and LSTM's input_forget; layout 1 against onnxruntime on the time-major twin (it refuses layout 1).
Random weights (seeded), 3 steps, batch 2, input 3, hidden 4. Tolerance: rtol 1e-5, atol 1e-5
scaled to the output magnitude (conftest.assert_close)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from .conftest import assert_close, run_ort

import relay_backend as relay  # noqa: E402
from relay_backend.errors import RelayError  # noqa: E402
from relay_backend.frontend.onnx.backend import RelayBackend  # noqa: E402

T, B, I, H = 3, 2, 3, 4
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
F = TensorProto.FLOAT


def _model(kind, direction="forward", layout=0, bias=True, initial=False, peephole=False, seq_lens=None,
           runtime_lens=False, batch=B, **attrs):
    """(model, feeds): X and W/R/B... as initializers except X (and sequence_lens when run-time)."""
    rng = np.random.default_rng(hash((kind, direction, layout)) % 2 ** 32)
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[kind]
    x_shape = (batch, T, I) if layout else (T, batch, I)
    feeds = {"X": rng.standard_normal((B, T, I) if layout else (T, B, I)).astype("float32")}
    inits = {"W": rng.standard_normal((dirs, g * H, I)) * 0.5, "R": rng.standard_normal((dirs, g * H, H)) * 0.5}
    names = ["X", "W", "R"]
    names.append("B" if bias else "")
    if bias:
        inits["B"] = rng.standard_normal((dirs, 2 * g * H)) * 0.5
    names.append("" if seq_lens is None else "lens")
    inputs = [helper.make_tensor_value_info("X", F, list(x_shape))]
    if seq_lens is not None:
        lens = np.asarray(seq_lens, "int32")
        if runtime_lens:
            feeds["lens"] = lens
            inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, [batch]))
        else:
            inits["lens"] = lens
    state = (batch, dirs, H) if layout else (dirs, batch, H)
    if initial:
        names.append("h0")
        inits["h0"] = rng.standard_normal(state)
        if kind == "LSTM":
            names.append("c0")
            inits["c0"] = rng.standard_normal(state)
    if peephole:
        names += [""] * (7 - len(names)) + ["P"]
        inits["P"] = rng.standard_normal((dirs, 3 * H)) * 0.5
    while names and names[-1] == "":
        names.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    node = helper.make_node(kind, names, outs, hidden_size=H, direction=direction, layout=layout, **attrs)
    tensors = [numpy_helper.from_array(np.asarray(v, "int32" if k == "lens" else "float32"), k)
               for k, v in inits.items() if k in names]
    y_shape = [batch, T, dirs, H] if layout else [T, dirs, "b", H]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info(o, F, y_shape if o == "Y" else
                                                                                     ["a", "b", "c"]) for o in outs],
                              initializer=tensors)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model, feeds


def _reference(model, feeds):
    """onnxruntime's outputs. onnxruntime 1.x refuses batch-major recurrences (layout=1), so those
    run as the time-major twin (same weights, X and the initial states transposed) and the
    outputs are transposed back."""
    node = model.graph.node[0]
    if not any(a.name == "layout" and a.i == 1 for a in node.attribute):
        return run_ort(model, feeds)
    twin = onnx.ModelProto()
    twin.CopyFrom(model)
    for attr in twin.graph.node[0].attribute:
        if attr.name == "layout":
            attr.i = 0
    for tensor in twin.graph.initializer:
        if tensor.name in ("h0", "c0"):
            tensor.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(tensor).transpose(1, 0, 2), tensor.name))
    for value in list(twin.graph.input) + list(twin.graph.output):
        value.type.tensor_type.ClearField("shape")
    outs = run_ort(twin, {"X": feeds["X"].transpose(1, 0, 2)})
    return [outs[0].transpose(2, 0, 1, 3)] + [o.transpose(1, 0, 2) for o in outs[1:]]


def _check(model, feeds, executors=("debug",)):
    refs = _reference(model, feeds)
    for kind in executors:
        assert_close(RelayBackend.prepare(model, executor=kind).run(feeds), refs)


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_directions_with_initial_state_match_onnxruntime(kind, direction):
    _check(*_model(kind, direction, initial=True))


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_compiled_executors_match_onnxruntime(kind):
    _check(*_model(kind, "bidirectional", initial=True, seq_lens=[3, 1]), executors=("graph", "vm"))


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_sequence_lens_match_onnxruntime(kind, direction):
    _check(*_model(kind, direction, seq_lens=[2, 3]))
    _check(*_model(kind, direction, seq_lens=[1, 3], runtime_lens=True))


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_layout_1_matches_onnxruntime(kind):
    _check(*_model(kind, "bidirectional", layout=1, initial=True))


@pytest.mark.parametrize("kind, activations, alpha, beta", [
    ("RNN", ["Relu", "LeakyRelu"], [0.3], None),
    ("GRU", ["HardSigmoid", "Softsign", "Sigmoid", "Elu"], [0.3, 0.7], [0.4]),
    ("LSTM", ["Sigmoid", "Tanh", "ScaledTanh", "HardSigmoid", "Softplus", "ThresholdedRelu"], [0.8, 0.2, 0.1],
     [1.2, 0.6]),
])
def test_activation_attributes_match_onnxruntime(kind, activations, alpha, beta):
    attrs = {"activations": activations}
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    _check(*_model(kind, "bidirectional", **attrs))


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_clip_and_no_bias_match_onnxruntime(kind):
    _check(*_model(kind, "forward", bias=False, clip=0.5))


def test_gru_linear_before_reset_and_lstm_peepholes_match_onnxruntime():
    _check(*_model("GRU", "bidirectional", initial=True, linear_before_reset=1))
    _check(*_model("LSTM", "bidirectional", initial=True, peephole=True))
    _check(*_model("LSTM", "forward", peephole=True, input_forget=1))


def test_dynamic_batch_runs_on_the_vm():
    model, feeds = _model("LSTM", "bidirectional", batch="batch")
    refs = run_ort(model, feeds)
    rep = RelayBackend.prepare(model, executor="vm")
    assert_close(rep.run(feeds), refs)
    wide = {"X": np.random.default_rng(3).standard_normal((T, 5, I)).astype("float32")}
    assert_close(rep.run(wide), run_ort(model, wide))


def test_bad_rnn_attributes_are_clear_errors():
    model, _ = _model("GRU", "forward", activations=["Sigmoid"])
    with pytest.raises(RelayError, match="GRU needs 2 per direction"):
        RelayBackend.prepare(model, executor="debug")
    model, _ = _model("RNN", "forward", activations=["Swish"])
    with pytest.raises(RelayError, match="activation 'Swish' is not supported"):
        RelayBackend.prepare(model, executor="debug")
    model, _ = _model("LSTM", "forward")
    with pytest.raises(RelayError, match="0 steps"):
        relay.frontend.from_onnx(model, shape={"X": (0, B, I)})
