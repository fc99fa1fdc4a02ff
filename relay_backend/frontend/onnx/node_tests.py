"""ONNX's backend node tests (the data shipped in the onnx wheel), run one by one.

The conformance test and scripts/onnx_node_report.py share this: `list_node_tests()` names every
test directory, `run_node_test(name, executor)` imports and runs one and compares each output
with the expected one (ONNX's tolerances: rtol 1e-3, atol 1e-7, looser for a few known cases; the
expected data of a few tests is corrected to the op's spec where onnx's generator had a documented
bug, see node_test_errata.py).
"""
import glob
import os
import re

import numpy as np

# tests whose expected outputs need looser tolerances (as onnx.backend.test.case's own overrides)
# ops whose outputs are random draws: a test comparing them with fixed expected values cannot pass
RANDOM_OPS = {"RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike", "Multinomial", "Bernoulli"}
LOOSE = {"test_gelu": (1e-3, 1e-5), "test_layer_normalization": (1e-3, 1e-5), "test_erf": (1e-3, 1e-6),
         "test_dft": (1e-3, 1e-5)}   # the expected zeros hold float32 rounding noise (~2e-7)


def node_test_root() -> str:
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")


def list_node_tests() -> list:
    root = node_test_root()
    return sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))


def _load_value(path, type_proto):
    """The value in a test-data file: a numpy array, a list (an ONNX sequence) or None / a value
    (an optional), read as the proto the graph's declared type says (as onnx's own runner does)."""
    import onnx
    from onnx import numpy_helper
    kind = type_proto.WhichOneof("value") if type_proto is not None else "tensor_type"
    proto = {"sequence_type": onnx.SequenceProto, "optional_type": onnx.OptionalProto}.get(kind, onnx.TensorProto)()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    if isinstance(proto, onnx.SequenceProto):
        return numpy_helper.to_list(proto)
    if isinstance(proto, onnx.OptionalProto):
        return numpy_helper.to_optional(proto)
    if proto.data_type == 0:
        raise ValueError("not a tensor")
    return numpy_helper.to_array(proto)


def _numbered(directory, prefix):
    return sorted(glob.glob(os.path.join(directory, f"{prefix}_*.pb")),
                  key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))


def load_node_test(name):
    """(model, [(inputs, outputs)]) of one node test."""
    import onnx
    d = os.path.join(node_test_root(), name)
    model = onnx.load(os.path.join(d, "model.onnx"))
    inits = {t.name for t in model.graph.initializer}
    in_types = [i.type for i in model.graph.input if i.name not in inits]
    out_types = [o.type for o in model.graph.output]
    cases = []
    for ds in sorted(glob.glob(os.path.join(d, "test_data_set_*"))):
        ins = [_load_value(p, in_types[i] if i < len(in_types) else None)
               for i, p in enumerate(_numbered(ds, "input"))]
        outs = [_load_value(p, out_types[i] if i < len(out_types) else None)
                for i, p in enumerate(_numbered(ds, "output"))]
        cases.append((ins, outs))
    return model, cases


def op_of(name: str, model) -> str:
    """The ONNX operator a node test is about (the node whose type the test name spells)."""
    key = name[len("test_"):].replace("_", "").lower()
    types = [n.op_type for n in model.graph.node]
    for t in sorted(set(types), key=len, reverse=True):
        if key.startswith(t.lower()):
            return t
    return types[0] if len(types) == 1 else f"{types[-1]} (+{len(types) - 1} nodes)"


def compare(name, outs, expected):
    rtol, atol = 1e-3, 1e-7
    for prefix, tol in LOOSE.items():
        if name.startswith(prefix):
            rtol, atol = tol
    if len(outs) != len(expected):
        raise AssertionError(f"{len(outs)} outputs, expected {len(expected)}")
    for i, (o, e) in enumerate(zip(outs, expected)):
        _compare_value(o, e, f"output {i}", rtol, atol)


def _compare_value(o, e, where, rtol, atol):
    """One output: an array, a list of them (a sequence) or None (an empty optional)."""
    if e is None or isinstance(e, list):
        if e is None and o is not None:
            raise AssertionError(f"{where}: a value, expected an empty optional")
        if isinstance(e, list):
            if not isinstance(o, list) or len(o) != len(e):
                raise AssertionError(f"{where}: {type(o).__name__} {len(o) if isinstance(o, list) else ''}, "
                                     f"expected a sequence of {len(e)} tensors")
            for k, (a, b) in enumerate(zip(o, e)):
                _compare_value(a, b, f"{where}[{k}]", rtol, atol)
        return
    o = np.asarray(o)
    if o.shape != e.shape:
        raise AssertionError(f"{where}: shape {o.shape}, expected {e.shape}")
    if e.dtype.kind in "fc":
        np.testing.assert_allclose(o.astype(e.dtype), e, rtol=rtol, atol=atol, err_msg=where)
    else:
        if o.dtype != e.dtype:
            raise AssertionError(f"{where}: dtype {o.dtype}, expected {e.dtype}")
        np.testing.assert_array_equal(o, e, err_msg=where)


def _training_dropouts(model, cases) -> list:
    """["Dropout in training mode"] when a Dropout node of `model` drops values at random in some
    case (training_mode true and a ratio above 0, read from the case's inputs or the initializers):
    ONNX's expected outputs are then numpy's draws, like RANDOM_OPS'."""
    from onnx import numpy_helper
    known = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in known]
    for node in model.graph.node:
        if node.op_type != "Dropout" or len(node.input) < 3 or not node.input[2]:
            continue
        for ins, _outs in cases:
            values = {**known, **dict(zip(inputs, ins))}
            training = values.get(node.input[2])
            ratio = values.get(node.input[1], 0.5) if node.input[1] else 0.5
            if training is not None and bool(np.asarray(training).reshape(-1)[0]) and \
                    float(np.asarray(ratio).reshape(-1)[0]) > 0:
                return ["Dropout in training mode"]
    return []


def run_node_test(name: str, executor: str = "debug", bind_inputs: bool = True):
    """Run one node test; returns (op, None) on success, (op, 'unsupported: ...' | 'fail: ...').
    bind_inputs=False supplies every graph input at run time (no re-import with the integer inputs'
    values bound as constants; see RelayBackend.prepare)."""
    from ...errors import OpNotImplemented
    from .backend import RelayBackend
    from .node_test_errata import corrected_expected, corrected_model
    try:
        model, cases = load_node_test(name)
    except Exception as err:  # data the loader cannot read (e.g. a map)
        return "?", f"unsupported: test data ({type(err).__name__}: {err})"
    op = op_of(name, model)
    drawn = sorted({n.op_type for n in model.graph.node} & RANDOM_OPS) + _training_dropouts(model, cases)
    if drawn:
        return op, (f"unsupported: the expected outputs are values ONNX's reference drew from numpy's random "
                    f"generator ({', '.join(drawn)}); no other generator can reproduce them")
    try:
        rep = RelayBackend.prepare(corrected_model(name, model), executor=executor, bind_inputs=bind_inputs)
        for ins, outs in cases:
            compare(name, rep.run(ins), corrected_expected(name, ins, outs))
    except OpNotImplemented as err:
        return op, f"unsupported: {str(err)[:300]}"
    except Exception as err:
        return op, f"fail: {type(err).__name__}: {str(err)[:300]}"
    return op, None
