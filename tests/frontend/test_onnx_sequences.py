"""ONNX sequences and optionals (Relay List / Option values), If and Loop, compared with
onnxruntime: models built with onnx.helper, run on the debug interpreter and the VM (the graph
executor too where everything folds to static dataflow). Tolerance: rtol 1e-5, atol 1e-5 scaled to
the output magnitude (conftest.assert_close); integer outputs exactly."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from .conftest import assert_close, run_ort

import relay_backend as relay  # noqa: E402
from relay_backend.errors import InputError, RelayError  # noqa: E402
from relay_backend.frontend.onnx.backend import NeedsVMError, RelayBackend  # noqa: E402
from relay_backend.frontend.onnx.common import InvalidModelError  # noqa: E402

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
RNG = np.random.default_rng(7)


def _model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _t(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _seq(name, elem, shape):
    return helper.make_tensor_sequence_value_info(name, elem, shape)


def _const(name, value):
    from onnx import numpy_helper
    return numpy_helper.from_array(np.asarray(value), name)


def _x(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _same(outs, refs):
    """Outputs of RelayBackend.run against onnxruntime's: arrays, lists of arrays, None."""
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        if r is None or isinstance(r, list):
            assert (o is None) == (r is None), (o, r)
            if isinstance(r, list):
                assert isinstance(o, list) and len(o) == len(r), (o, r)
                assert_close([np.asarray(a) for a in o], r)
        else:
            assert_close([np.asarray(o)], [r])


def _check(model, feeds, executors=("debug", "vm")):
    refs = run_ort(model, feeds)
    for kind in executors:
        _same(RelayBackend.prepare(model, executor=kind).run(feeds), refs)


def test_sequence_construct_then_sequence_at_matches_onnxruntime():
    """A constant position picks the element at import (the graph executor runs it); a run-time one
    reads the List with @nth (negative positions count from the back)."""
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             helper.make_node("SequenceAt", ["s", "k"], ["y"]),
             helper.make_node("SequenceAt", ["s", "p"], ["z"])]
    m = _model(nodes, [_t("a", F, [2, 3]), _t("b", F, [4, 3]), _t("c", F, [1, 3]), _t("p", I64, [])],
               [_t("y", F, ["r", 3]), _t("z", F, ["r", 3])], [_const("k", np.int64(-2))])
    for p in (0, 2, -1, -3):
        _check(m, {"a": _x(2, 3), "b": _x(4, 3), "c": _x(1, 3), "p": np.array(p, "int64")})
    static = _model(nodes[:2], [_t("a", F, [2, 3]), _t("b", F, [4, 3]), _t("c", F, [1, 3])], [_t("y", F, ["r", 3])],
                    [_const("k", np.int64(-2))])
    _check(static, {"a": _x(2, 3), "b": _x(4, 3), "c": _x(1, 3)}, ("debug", "graph", "vm"))
    mod, _ = relay.frontend.from_onnx(static)
    assert "Cons" not in mod["main"].astext() and "Tensor[(4, 3), float32]" in mod["main"].astext()


@pytest.mark.parametrize("split, keepdims", [(None, 1), (None, 0), (np.int64(2), 1), (np.array([1, 3, 1], "int64"), 1)])
def test_split_to_sequence_then_concat_from_sequence_matches_onnxruntime(split, keepdims):
    inputs = ["x"] + ([] if split is None else ["split"])
    nodes = [helper.make_node("SplitToSequence", inputs, ["s"], axis=1, keepdims=keepdims),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=1, new_axis=0 if keepdims else 1),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    inits = [] if split is None else [_const("split", split)]
    m = _model(nodes, [_t("x", F, [2, 5, 3])], [_t("y", F, ["a", "b", "c"]), _t("n", I64, [])], inits)
    _check(m, {"x": _x(2, 5, 3)}, ("debug", "graph", "vm"))
    with_seq = _model(nodes[:1], [_t("x", F, [2, 5, 3])], [_seq("s", F, None)], inits)
    _check(with_seq, {"x": _x(2, 5, 3)})


def test_sequence_inputs_and_outputs_are_python_lists():
    """A sequence graph input takes a list of arrays (of different lengths along a dim), and the run-time
    ops (insert / erase at a run-time position, length, concat) give what onnxruntime gives."""
    nodes = [helper.make_node("SequenceInsert", ["s", "t", "p"], ["s1"]),
             helper.make_node("SequenceErase", ["s1", "q"], ["s2"]),
             helper.make_node("SequenceLength", ["s2"], ["n"]),
             helper.make_node("ConcatFromSequence", ["s2"], ["cat"], axis=0),
             helper.make_node("SequenceInsert", ["s2", "t"], ["s3"])]
    m = _model(nodes, [_seq("s", F, ["N", 2]), _t("t", F, [3, 2]), _t("p", I64, []), _t("q", I64, [])],
               [_seq("s3", F, None), _t("n", I64, []), _t("cat", F, ["r", 2])])
    seq = [_x(1, 2), _x(4, 2), _x(2, 2)]
    for p, q in ((0, 1), (3, -1), (-1, 0), (2, -4)):
        _check(m, {"s": seq, "t": _x(3, 2), "p": np.array(p, "int64"), "q": np.array(q, "int64")})


def test_sequence_map_over_a_sequence_input_matches_onnxruntime():
    body = helper.make_graph([helper.make_node("Mul", ["e", "w"], ["o"]), helper.make_node("Shape", ["e"], ["sh"])],
                             "body", [_t("e", F, ["N"]), _t("w", F, ["N"])], [_t("o", F, ["N"]), _t("sh", I64, [1])])
    m = _model([helper.make_node("SequenceMap", ["xs", "w"], ["ys", "shapes"], body=body)],
               [_seq("xs", F, ["N"]), _t("w", F, [3])], [_seq("ys", F, None), _seq("shapes", I64, None)])
    _check(m, {"xs": [_x(3), _x(3), _x(3)], "w": _x(3)})
    _check(m, {"xs": [], "w": _x(3)})


def test_loop_carrying_a_sequence_and_a_scan_output_matches_onnxruntime():
    """The body appends x * iteration to a sequence that starts empty (its element type comes from the
    body) and scans the same value; trip count and condition are run-time inputs."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["x", "fi"], ["v"]),
         helper.make_node("SequenceInsert", ["seq_in", "v"], ["seq_out"]),
         helper.make_node("ReduceSum", ["v"], ["total"], keepdims=0),
         helper.make_node("Less", ["total", "limit"], ["cond_out"])],
        "body", [_t("i", I64, []), _t("cond_in", B, []), _seq("seq_in", F, None)],
        [_t("cond_out", B, []), _seq("seq_out", F, None), _t("v", F, [2])])
    nodes = [helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
             helper.make_node("Loop", ["m", "c", "empty"], ["seq", "scan"], body=body),
             helper.make_node("SequenceLength", ["seq"], ["n"])]
    m = _model(nodes, [_t("x", F, [2]), _t("m", I64, []), _t("c", B, []), _t("limit", F, [])],
               [_seq("seq", F, None), _t("scan", F, ["t", 2]), _t("n", I64, [])], opset=13)
    x = np.array([1.0, 2.0], "float32")
    for trip, cond, limit in ((3, True, 100.0), (0, True, 100.0), (5, True, 7.0), (4, False, 100.0)):
        _check(m, {"x": x, "m": np.array(trip, "int64"), "c": np.array(cond), "limit": np.array(limit, "float32")})


def test_loop_carried_tensor_that_grows_gets_a_dynamic_dim():
    body = helper.make_graph([helper.make_node("Concat", ["acc_in", "x"], ["acc_out"], axis=0),
                              helper.make_node("Identity", ["cond_in"], ["cond_out"])],
                             "body", [_t("i", I64, []), _t("cond_in", B, []), _t("acc_in", F, None)],
                             [_t("cond_out", B, []), _t("acc_out", F, None)])
    m = _model([helper.make_node("Loop", ["m", "", "x"], ["y"], body=body)], [_t("x", F, [2, 3]), _t("m", I64, [])],
               [_t("y", F, ["r", 3])], opset=13)
    for trip in (0, 1, 4):
        _check(m, {"x": _x(2, 3), "m": np.array(trip, "int64")})


def test_if_with_sequence_branches_matches_onnxruntime():
    then_g = helper.make_graph([helper.make_node("SequenceConstruct", ["a", "b"], ["s_then"])], "then", [],
                               [_seq("s_then", F, None)])
    else_g = helper.make_graph([helper.make_node("SplitToSequence", ["a"], ["s_else"], axis=0)], "else", [],
                               [_seq("s_else", F, None)])
    m = _model([helper.make_node("If", ["c"], ["s"], then_branch=then_g, else_branch=else_g)],
               [_t("c", B, []), _t("a", F, [3, 2]), _t("b", F, [1, 2])], [_seq("s", F, None)], opset=13)
    for c in (True, False):
        _check(m, {"c": np.array(c), "a": _x(3, 2), "b": _x(1, 2)})


def test_optionals_in_and_out_match_onnxruntime():
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [3]))
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["has"]),
             helper.make_node("Optional", ["x"], ["made"]),
             helper.make_node("OptionalGetElement", ["made"], ["got"])]
    m = _model(nodes, [helper.make_value_info("o", opt_t), _t("x", F, [3])],
               [_t("has", B, []), helper.make_value_info("made", opt_t), _t("got", F, [3])], opset=18)
    _check(m, {"o": None, "x": _x(3)})
    _check(m, {"o": _x(3), "x": _x(3)})
    get = _model([helper.make_node("OptionalGetElement", ["o"], ["y"])], [helper.make_value_info("o", opt_t)],
                 [_t("y", F, [3])], opset=18)
    _check(get, {"o": _x(3)})
    with pytest.raises(RelayError):
        RelayBackend.prepare(get, executor="debug").run({"o": None})


def test_graph_executor_refuses_adt_values_naming_the_vm():
    m = _model([helper.make_node("SequenceConstruct", ["a"], ["s"])], [_t("a", F, [2])], [_seq("s", F, None)])
    with pytest.raises(NeedsVMError, match="executor='vm'"):
        RelayBackend.prepare(m, executor="graph")
    mod, params = relay.frontend.from_onnx(m)
    for kind in ("graph", "aot"):
        with pytest.raises(RelayError, match='kind="vm"'):
            relay.create_executor(kind, mod=mod).evaluate()


def test_bad_sequence_use_is_a_clear_error():
    at = _model([helper.make_node("SequenceConstruct", ["a", "a"], ["s"]),
                 helper.make_node("SequenceAt", ["s", "k"], ["y"])],
                [_t("a", F, [2])], [_t("y", F, [2])], [_const("k", np.int64(2))])
    with pytest.raises(InvalidModelError, match=r"position 2 is out of range .*\[-2, 1\]"):
        relay.frontend.from_onnx(at)
    untyped = _model([helper.make_node("SequenceLength", ["s"], ["n"])],
                     [helper.make_tensor_sequence_value_info("s", F, None)], [_t("n", I64, [])])
    untyped.graph.input[0].type.sequence_type.elem_type.tensor_type.ClearField("shape")
    with pytest.raises(InputError, match=r"shape=\{'s': \(\.\.\.\)\}"):
        relay.frontend.from_onnx(untyped)
    mod, _ = relay.frontend.from_onnx(untyped, shape={"s": (None, 4)})
    assert "List[Tensor[(?, 4), float32]]" in mod["main"].astext()
    ranks = _model([helper.make_node("SequenceConstruct", ["a", "b"], ["s"])], [_t("a", F, [2]), _t("b", F, [2, 2])],
                   [_seq("s", F, None)])
    with pytest.raises(RelayError, match="cannot cover a different rank"):
        relay.frontend.from_onnx(ranks)
    seq_in = _model([helper.make_node("SequenceLength", ["s"], ["n"])], [_seq("s", F, [2])], [_t("n", I64, [])])
    with pytest.raises(InputError, match=r"input 's'\[1\] expects Tensor\[\(2\), float32\]"):
        RelayBackend.prepare(seq_in, executor="vm").run({"s": [_x(2), _x(3)]})


def test_unsupported_node_read_only_inside_a_branch_is_reported_as_unsupported():
    """A value that only an If branch reads counts as consumed: when the node making it cannot be
    converted, the report names that node's op, not a missing value inside the branch."""
    custom = helper.make_node("Frobnicate", ["x"], ["a"], domain="com.example")
    then_g = helper.make_graph([helper.make_node("Identity", ["a"], ["t"])], "then", [], [_t("t", F, [2])])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [], [_t("e", F, [2])])
    m = _model([custom, helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
               [_t("x", F, [2]), _t("c", B, [])], [_t("y", F, [2])])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(relay.errors.OpNotImplemented, match="custom domain") as err:
        relay.frontend.from_onnx(m)
    assert "no earlier node" not in str(err.value)



def test_unsupported_op_inside_a_branch_is_reported_as_unsupported():
    then_g = helper.make_graph([helper.make_node("Frobnicate", ["x"], ["t"], domain="com.example")], "then", [],
                               [_t("t", F, [2])])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [], [_t("e", F, [2])])
    m = _model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
               [_t("x", F, [2])], [_t("y", F, [2])], [_const("c", np.array(True))])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(relay.errors.OpNotImplemented, match="custom domain"):
        relay.frontend.from_onnx(m)
