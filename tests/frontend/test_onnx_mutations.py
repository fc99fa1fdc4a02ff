"""Malformed variants of valid models, over every operator the importer converts: from_onnx must
either import the variant or raise a RelayError that diagnoses it.

The valid models are ONNX's own node tests (one per operator from onnx_node_passing.txt). Each
node is mutated one way at a time: an input dropped, emptied or added, an output dropped, added or
renamed onto a graph input, an attribute dropped, given another type or an odd value (negative,
huge, empty, NaN, an unknown string); and every 1-D integer input (shapes, axes, pads, ...) is
bound to odd constant values (negative, huge, empty, the wrong length), as the ONNX backend binds
such inputs. A plain Python exception fails the test,
and so does the importer's last-resort error (an InvalidModelError caused by a plain exception a
converter raised): every variant must be caught by a check that knows what is wrong (the schema
check, a converter's own validation, an op's attrs or type relation).
"""
import copy
import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from relay_backend.errors import RelayError  # noqa: E402
from relay_backend.frontend.onnx import from_onnx  # noqa: E402
from relay_backend.frontend.onnx.node_tests import load_node_test, node_test_root, op_of  # noqa: E402

_LIST = os.path.join(os.path.dirname(__file__), "onnx_node_passing.txt")


def _one_model_per_operator():
    """{node test name: (model, {graph input: value of its first test case})} for the first listed
    passing node test of each operator."""
    root = node_test_root()
    if not os.path.isdir(root):
        return {}
    chosen, seen = {}, set()
    for name in (line.strip() for line in open(_LIST) if line.strip()):
        if not os.path.exists(os.path.join(root, name, "model.onnx")):
            continue
        model, cases = load_node_test(name)
        op = op_of(name, model)
        if op not in seen:
            seen.add(op)
            inits = {t.name for t in model.graph.initializer}
            names = [i.name for i in model.graph.input if i.name not in inits]
            chosen[name] = (model, dict(zip(names, cases[0][0])) if cases else {})
    return chosen


MODELS = _one_model_per_operator()

# an attribute value of each other type, to replace one attribute's value with
_OTHER_TYPE = {
    onnx.AttributeProto.INT: 1.5, onnx.AttributeProto.FLOAT: 2, onnx.AttributeProto.INTS: 1,
    onnx.AttributeProto.FLOATS: "x", onnx.AttributeProto.STRING: [1, 2], onnx.AttributeProto.TENSOR: 0.5,
}
# odd values of the same type
_ODD_VALUES = {
    onnx.AttributeProto.INT: [-100, 100, 0, 2 ** 40], onnx.AttributeProto.INTS: [[], [100], [-100] * 4, [0] * 4],
    onnx.AttributeProto.FLOAT: [float("nan"), -1.0], onnx.AttributeProto.STRING: ["bogus"],
}
_ODD_INTS = [-1, 100, -2 ** 40, 2 ** 40]


def _mutations(model):
    """(description, mutated model) for every single-step malformation of every node."""
    graph_inputs = [i.name for i in model.graph.input]
    for index, node in enumerate(model.graph.node):
        def variant(what, change, index=index, node=node):
            mutated = copy.deepcopy(model)
            change(mutated.graph.node[index])
            return f"node {index} ({node.op_type}): {what}", mutated

        if node.input:
            yield variant("drop the last input", lambda n: n.input.pop())
            yield variant("drop the first input", lambda n: n.input.pop(0))
            for i in range(len(node.input)):
                yield variant(f"empty input {i}", lambda n, i=i: n.input.__setitem__(i, ""))
        if graph_inputs:
            yield variant("add an input", lambda n: n.input.append(graph_inputs[0]))
        yield variant("add an output", lambda n: n.output.append(f"extra_output_{index}"))
        if len(node.output) > 1:
            yield variant("drop the last output", lambda n: n.output.pop())
        if graph_inputs and node.output:
            yield variant("write a graph input", lambda n: n.output.__setitem__(0, graph_inputs[0]))
        for a, attr in enumerate(node.attribute):
            yield variant(f"drop attribute {attr.name!r}", lambda n, a=a: n.attribute.pop(a))
            other = _OTHER_TYPE.get(attr.type, 1)
            yield variant(f"attribute {attr.name!r} as {type(other).__name__}",
                          lambda n, a=a, other=other: n.attribute[a].CopyFrom(
                              onnx.helper.make_attribute(n.attribute[a].name, other)))
            for odd in _ODD_VALUES.get(attr.type, []):
                yield variant(f"attribute {attr.name!r} = {odd!r}",
                              lambda n, a=a, odd=odd, kind=attr.type: n.attribute[a].CopyFrom(
                                  onnx.helper.make_attribute(n.attribute[a].name, odd, attr_type=kind)))


def _bound_inputs(model, values):
    """(description, model) with each 1-D integer input bound to an odd constant (the others bound
    to their test values), as the ONNX backend binds shape-like inputs before importing."""
    ints = {k: v for k, v in values.items() if v.dtype.kind in "iu" and v.ndim == 1}
    for name, value in ints.items():
        odd = [np.full(value.shape, v).astype(value.dtype) for v in _ODD_INTS if np.can_cast(np.min_scalar_type(v),
                                                                                             value.dtype)]
        odd += [np.zeros(0, value.dtype), np.ones(2 * value.size + 1, value.dtype)]
        for array in odd:
            mutated = copy.deepcopy(model)
            for other, other_value in ints.items():
                bound = array if other == name else other_value
                mutated.graph.initializer.append(onnx.numpy_helper.from_array(bound, other))
            yield f"input {name!r} = {array.tolist()}", mutated


def _undiagnosed(err) -> bool:
    """True for the importer's last-resort error: a RelayError caused by a plain Python exception."""
    cause = err.__cause__
    return cause is not None and not isinstance(cause, RelayError) and not isinstance(cause, OSError)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_malformed_variants_import_or_raise_a_diagnosing_relay_error(name):
    model, values = MODELS[name]
    problems = []
    for what, mutated in list(_mutations(model)) + list(_bound_inputs(model, values)):
        try:
            from_onnx(mutated)
        except RelayError as err:
            if _undiagnosed(err):
                problems.append(f"{what}: undiagnosed {type(err.__cause__).__name__}: {err}")
        except Exception as err:  # noqa: BLE001 - any other exception is the bug this test looks for
            problems.append(f"{what}: {type(err).__name__}: {err}")
    assert not problems, f"{name}:\n" + "\n".join(problems)


def test_the_mutations_cover_many_operators():
    """The guard is only as good as its coverage: dozens of operators, each mutated several ways."""
    assert len(MODELS) >= 60, sorted(MODELS)
    assert sum(1 for model, _ in MODELS.values() for _ in _mutations(model)) >= 600
    assert sum(1 for model, values in MODELS.values() for _ in _bound_inputs(model, values)) >= 50


def _small_network():
    """A Conv -> Relu -> MaxPool -> Reshape -> Gemm -> Split -> Concat model with initializers."""
    from onnx import helper, numpy_helper
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Reshape", ["p", "s"], ["f"]),
             helper.make_node("Gemm", ["f", "gw", "gb"], ["g"], transB=1),
             helper.make_node("Split", ["g", "sp"], ["y1", "y2"], axis=1),
             helper.make_node("Concat", ["y2", "y1"], ["y"], axis=1)]
    inits = {"w": rng.standard_normal((4, 2, 3, 3)), "b": np.zeros(4), "s": np.array([1, -1]),
             "gw": rng.standard_normal((6, 64)), "gb": np.zeros(6), "sp": np.array([2, 4])}
    inits = [numpy_helper.from_array(v.astype("int64" if v.dtype.kind == "i" else "float32"), k)
             for k, v in inits.items()]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [1, 2, 8, 8])],
                              [helper.make_tensor_value_info("y", 1, [1, 6])], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_corrupted_bytes_import_or_raise_a_diagnosing_relay_error():
    """Truncated files and flipped bytes: protobuf often still parses them, into a model with wrong
    dims, types, names or attributes. Each must import or raise a diagnosing RelayError."""
    model = _small_network()
    from_onnx(model)  # the intact model imports
    data, rng, problems = model.SerializeToString(), np.random.default_rng(1), []
    for trial in range(400):
        corrupt = bytearray(data)
        if trial % 3 == 0:
            corrupt = corrupt[:rng.integers(0, len(corrupt))]
        else:
            for _ in range(rng.integers(1, 4)):
                corrupt[rng.integers(0, len(corrupt))] = rng.integers(0, 256)
        try:
            from_onnx(bytes(corrupt))
        except RelayError as err:
            if _undiagnosed(err) and type(err.__cause__).__name__ != "DecodeError":
                problems.append(f"trial {trial}: undiagnosed {type(err.__cause__).__name__}: {err}")
        except Exception as err:  # noqa: BLE001 - any other exception is the bug this test looks for
            problems.append(f"trial {trial}: {type(err).__name__}: {err}")
    assert not problems, "\n".join(problems)
