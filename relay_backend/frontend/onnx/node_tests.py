"""ONNX's backend node tests (the data shipped in the onnx wheel), run one by one.

The conformance test and scripts/onnx_node_report.py share this: `list_node_tests()` names every
test directory, `run_node_test(name, executor)` imports and runs one and compares each output
with the expected one (ONNX's tolerances: rtol 1e-3, atol 1e-7, looser for a few known cases).
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


def _load_tensor(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type == 0 or not t.name and not t.dims and not t.raw_data and not t.float_data and \
            not t.int64_data and not t.int32_data and not t.double_data and t.data_type == 0:
        raise ValueError("not a tensor")
    return numpy_helper.to_array(t)


def load_node_test(name):
    """(model, [(inputs, outputs)]) of one node test."""
    import onnx
    d = os.path.join(node_test_root(), name)
    model = onnx.load(os.path.join(d, "model.onnx"))
    cases = []
    for ds in sorted(glob.glob(os.path.join(d, "test_data_set_*"))):
        ins = [_load_tensor(p) for p in sorted(glob.glob(os.path.join(ds, "input_*.pb")),
                                                key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))]
        outs = [_load_tensor(p) for p in sorted(glob.glob(os.path.join(ds, "output_*.pb")),
                                                 key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))]
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
        o = np.asarray(o)
        if o.shape != e.shape:
            raise AssertionError(f"output {i}: shape {o.shape}, expected {e.shape}")
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(o.astype(e.dtype), e, rtol=rtol, atol=atol, err_msg=f"output {i}")
        else:
            if o.dtype != e.dtype:
                raise AssertionError(f"output {i}: dtype {o.dtype}, expected {e.dtype}")
            np.testing.assert_array_equal(o, e, err_msg=f"output {i}")


def run_node_test(name: str, executor: str = "debug"):
    """Run one node test; returns (op, None) on success, (op, 'unsupported: ...' | 'fail: ...')."""
    from ...errors import OpNotImplemented
    from .backend import RelayBackend
    try:
        model, cases = load_node_test(name)
    except Exception as err:  # sequences / optionals as inputs
        return "?", f"unsupported: test data ({type(err).__name__}: {err})"
    op = op_of(name, model)
    drawn = sorted({n.op_type for n in model.graph.node} & RANDOM_OPS)
    if drawn:
        return op, (f"unsupported: the expected outputs are values ONNX's reference drew from numpy's random "
                    f"generator ({', '.join(drawn)}); no other generator can reproduce them")
    try:
        rep = RelayBackend.prepare(model, executor=executor)
        for ins, outs in cases:
            compare(name, rep.run(ins), outs)
    except OpNotImplemented as err:
        return op, f"unsupported: {str(err)[:300]}"
    except Exception as err:
        return op, f"fail: {type(err).__name__}: {str(err)[:300]}"
    return op, None
