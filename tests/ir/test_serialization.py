"""save_json / load_json: TVM's JSON layout, lossless (sharing, constants, attrs, spans, types),
and a malformed or foreign file is a SerializationError naming what is wrong, never a crash."""
import base64
import json

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.errors import SerializationError
from relay_backend.ir import load_json, save_json
from relay_backend.ir.json_schema import dim_build, dim_fields
from relay_backend.tir.expr import SizeVar

HEADER = '#[version = "0.0.5"]\n'


def test_layout_is_tvms():
    x = relay.var("x", shape=(2,))
    doc = json.loads(save_json(relay.Function([x], relay.nn.relu(x))))
    nodes = doc["nodes"]
    assert nodes[0] == {"type_key": ""} and doc["attrs"]["tvm_version"] == "0.18.0"
    root = nodes[doc["root"]]
    assert root["type_key"] == "relay.Function"
    body = nodes[int(root["attrs"]["body"])]
    assert body["type_key"] == "relay.Call"
    assert nodes[int(body["attrs"]["op"])] == {"type_key": "Op", "global_key": "nn.relu"}
    param = nodes[nodes[int(root["attrs"]["params"])]["data"][0]]
    assert nodes[int(param["attrs"]["vid"])] == {"type_key": "relay.Id", "attrs": {"name_hint": "x"}}


def test_sharing_and_variable_identity_survive():
    x = relay.var("x", shape=(3,))
    shared = relay.exp(x)
    fn = relay.Function([x], relay.add(shared, shared))
    back = load_json(save_json(fn))
    assert back.body.args[0] is back.body.args[1]
    assert back.body.args[0].args[0] is back.params[0]


def test_constants_of_every_dtype_keep_their_bytes():
    for dtype in ("bool", "int8", "int64", "uint8", "uint64", "float16", "float32", "float64"):
        data = np.random.default_rng(1).integers(0, 100, size=(2, 3)).astype(dtype)
        if dtype.startswith("float"):
            data = (data / 7).astype(dtype)
            data[0, 0] = np.nan
        back = load_json(save_json(relay.const(data, dtype)))
        assert back.data.numpy().dtype == dtype
        assert back.data.numpy().tobytes() == data.tobytes()


def test_module_with_adts_attrs_and_spans_round_trips():
    text = HEADER + """
type Pair[A] { MkPair(A, A) }

def @swap[A](%p: Pair[A]) -> Pair[A] {
  match (%p) { MkPair(%a, %b) => MkPair(%b, %a) }
}

def @main(%x: Tensor[(1, 4, 4, 4), float32]) {
  %0 = nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]);
  %1 = fn (%y: Tensor[(1, 4, 2, 2), float32], Primitive=1) { nn.relu(%y) };
  (%1(%0), @swap(MkPair(1, 2)))
}"""
    mod = relay.parse(text, source_name="pair.rly").with_attr("executor", "graph")
    back = load_json(save_json(mod))
    relay.assert_structural_equal(back, mod)
    assert back.get_attr("executor") == "graph"
    pool = back["main"].body.fields[0].args[0]
    assert pool.attrs.pool_size == (2, 2) and type(pool.attrs).__name__ == "MaxPool2DAttrs"
    assert (pool.span.source_name.name, pool.span.line, pool.span.column) == ("pair.rly", 10, 8)
    assert back["main"].body.fields[0].op.attrs["Primitive"] == 1
    out = relay.create_executor("debug", mod=back).evaluate()(np.ones((1, 4, 4, 4), "float32"))
    assert out[0].numpy().shape == (1, 4, 2, 2)


def test_shape_dims_are_encoded_in_one_place():
    n = SizeVar("n")
    for dim in (0, 7, relay.Any()):
        assert dim_build(*dim_fields(dim)) == dim
    key, plain = dim_fields(n)
    back = dim_build(key, plain)
    assert key == "tir.SizeVar" and isinstance(back, SizeVar) and back.name == "n"
    ty = relay.TensorType((relay.Any(), 3))
    assert load_json(save_json(ty)) == ty


def test_reads_a_tvm_written_graph():
    # what tvm.ir.save_json(relay.Function([x], relay.nn.relu(x))) writes in TVM v0.18
    tvm_json = {"root": 1, "nodes": [
        {"type_key": ""},
        {"type_key": "relay.Function", "attrs": {"_checked_type_": "0", "attrs": "0", "body": "8",
                                                 "params": "2", "ret_type": "0", "span": "0",
                                                 "type_params": "12", "virtual_device_": "0"}},
        {"type_key": "Array", "data": [3]},
        {"type_key": "relay.Var", "attrs": {"_checked_type_": "0", "span": "0", "type_annotation": "5",
                                            "vid": "4", "virtual_device_": "0"}},
        {"type_key": "relay.Id", "attrs": {"name_hint": "x"}},
        {"type_key": "relay.TensorType", "attrs": {"dtype": "float32", "shape": "6", "span": "0"}},
        {"type_key": "Array", "data": [7]},
        {"type_key": "IntImm", "attrs": {"dtype": "int32", "span": "0", "value": "2"}},
        {"type_key": "relay.Call", "attrs": {"_checked_type_": "0", "args": "10", "attrs": "0",
                                             "op": "9", "span": "0", "type_args": "11",
                                             "virtual_device_": "0"}},
        {"type_key": "Op", "global_key": "nn.relu"},
        {"type_key": "Array", "data": [3]},
        {"type_key": "Array"},
        {"type_key": "Array"}],
        "b64ndarrays": [], "attrs": {"tvm_version": "0.18.0"}}
    fn = load_json(json.dumps(tvm_json))
    x = relay.var("x", shape=(2,))
    relay.assert_structural_equal(fn, relay.Function([x], relay.nn.relu(x)))


def _saved(expr):
    return json.loads(save_json(expr))


def _corrupt(edit):
    x = relay.var("x", shape=(2,))
    doc = _saved(relay.Function([x], relay.add(x, relay.const(np.ones(2, "float32")))))
    edit(doc)
    return json.dumps(doc)


def _find(doc, key):
    return next(n for n in doc["nodes"] if n.get("type_key") == key)


BAD = {
    "not json": ("{nodes: ", "not valid JSON"),
    "no nodes": (json.dumps({"root": 1}), "expected an object with a 'nodes' list"),
    "root out of range": (_corrupt(lambda d: d.update(root=999)), "refers to node 999"),
    "unknown node type": (_corrupt(lambda d: _find(d, "relay.Call").update(type_key="os.system")),
                          "unknown node type 'os.system'"),
    "unknown op": (_corrupt(lambda d: _find(d, "Op").update(global_key="no.such_op")),
                   "operator 'no.such_op' is not registered"),
    "cycle": (_corrupt(lambda d: _find(d, "relay.Call")["attrs"].update(
        op=str(d["nodes"].index(_find(d, "relay.Call"))))), "cycle"),
    "bad base64": (_corrupt(lambda d: d.update(b64ndarrays=["!!"])), "not a valid entry of b64ndarrays"),
    "bad ndarray": (_corrupt(lambda d: d.update(b64ndarrays=[base64.b64encode(b"\0" * 40).decode()])),
                    "bad NDArray magic"),
    "bad index text": (_corrupt(lambda d: _find(d, "relay.Call")["attrs"].update(args="two")),
                       "should be a node index"),
    "unknown attrs class": (json.dumps({"root": 1, "nodes": [{"type_key": ""}, {
        "type_key": "relay.attrs.NoSuchAttrs", "attrs": {}}]}), "unknown attrs type 'NoSuchAttrs'"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_malformed_json_is_a_serialization_error(name):
    text, fragment = BAD[name]
    with pytest.raises(SerializationError, match=fragment.replace("(", r"\(").replace("'", "'")):
        load_json(text)


def test_saving_a_non_ir_value_is_a_clear_error():
    with pytest.raises(SerializationError, match="cannot save a value of type object"):
        save_json(object())


def test_text_with_a_tvm_json_metadata_section():
    values = np.arange(6, dtype="float32").reshape(2, 3) / 3
    meta = save_json({"relay.Constant": [relay.const(values)]})
    text = (HEADER + "def @main(%x: Tensor[(2, 3), float32]) {\n"
            "  add(%x, meta[relay.Constant][0])\n}\n#[metadata]\n" + meta)
    mod = relay.parse(text)
    out = relay.create_executor("debug", mod=mod).evaluate()(np.ones((2, 3), "float32"))
    np.testing.assert_array_equal(out.numpy(), values + 1)
