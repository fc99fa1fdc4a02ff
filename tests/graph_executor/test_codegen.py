"""Graph codegen: TVM's JSON layout, fused node structure, storage ids and the memory plan,
and outputs equal to independent numpy references and to the debug interpreter."""
import json
import re

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.analysis.memory_plan import check_plan
from relay_backend.graph_executor import GraphCodegenError
from relay_backend.testing import seed_cnn

from .models import abs_reshape_exp, mlp, resnet_block

pytestmark = pytest.mark.compile
RNG = np.random.default_rng(42)


def _kernel_nodes(graph):
    return [n for n in graph["nodes"] if n["op"] == "tvm_op"]


def _interp(mod, params, *args):
    return relay.create_executor("debug", mod=mod, params=params).evaluate()(*args)


def test_json_layout_of_reference_example():
    """fn(x) { relu(add(x, const[(1,3)])) } gives exactly the reference's graph (section 1.2)."""
    x = relay.var("x", shape=(1, 3))
    body = relay.nn.relu(relay.add(x, relay.const(np.ones((1, 3), "float32"))))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], body)))
    g = json.loads(lib.get_graph_json())
    assert list(g) == ["nodes", "arg_nodes", "heads", "attrs", "node_row_ptr"]
    assert g["nodes"][:2] == [{"op": "null", "name": "x", "inputs": []},
                              {"op": "null", "name": "p0", "inputs": []}]
    op = g["nodes"][2]
    assert op["op"] == "tvm_op" and re.fullmatch(r"tvmgen_default_fused_add_nn_relu(_\d+)?", op["name"])
    assert op["inputs"] == [[0, 0, 0], [1, 0, 0]]
    assert {k: op["attrs"][k] for k in ("func_name", "num_inputs", "num_outputs", "flatten_data")} == {
        "func_name": op["name"], "num_inputs": "2", "num_outputs": "1", "flatten_data": "0"}
    assert all(isinstance(v, str) for v in op["attrs"].values()) and len(op["attrs"]["hash"]) == 16
    assert g["arg_nodes"] == [0, 1] and g["heads"] == [[2, 0, 0]] and g["node_row_ptr"] == [0, 1, 2, 3]
    assert g["attrs"] == {"storage_id": ["list_int", [0, 1, 2]],
                          "shape": ["list_shape", [[1, 3], [1, 3], [1, 3]]],
                          "dltype": ["list_str", ["float32"] * 3],
                          "device_index": ["list_int", [1, 1, 1]]}
    assert set(lib.get_params()) == {"p0"}
    np.testing.assert_array_equal(lib.get_params()["p0"].numpy(), np.ones((1, 3), "float32"))


def test_scalar_constant_is_fused_not_a_param():
    x = relay.var("x", shape=(4,))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.multiply(x, relay.const(2.0)))))
    g = json.loads(lib.get_graph_json())
    assert [n["op"] for n in g["nodes"]] == ["null", "tvm_op"] and lib.get_params() == {}


def test_mlp_structure_and_outputs():
    mod, params, forward = mlp()
    lib = relay.build(mod, params=params)
    g = json.loads(lib.get_graph_json())
    kernels = _kernel_nodes(g)
    assert [n["attrs"]["relay_ops"] for n in kernels] == [
        "nn.dense,nn.bias_add,nn.relu", "nn.dense,nn.bias_add", "nn.softmax"]
    assert [n["name"] for n in g["nodes"] if n["op"] == "null"] == ["x", "p0", "p1", "p2", "p3"]
    assert len(g["nodes"]) == 8 and g["arg_nodes"] == [0, 1, 2, 4, 5]
    shapes = g["attrs"]["shape"][1]
    assert shapes == [[4, 16], [32, 16], [32], [4, 32], [10, 32], [10], [4, 10], [4, 10]]
    assert g["attrs"]["dltype"] == ["list_str", ["float32"] * 8]
    # By the planner's rules: x gets sid 0 up front; p0, p1 get 1, 2 when dense1 first reads
    # them; dense1's output (512 B) is requested before any release: 3; p2, p3 -> 4, 5; dense2's
    # output: 6 (sid 3 is still read by dense2); then sid 3 (512 B) is freed; softmax's output
    # (160 B, a graph output, which may reuse) takes the free block 3 (160 <= 512 <= 16 * 160).
    assert g["attrs"]["storage_id"] == ["list_int", [0, 1, 2, 3, 4, 5, 6, 3]]
    data = RNG.standard_normal((4, 16)).astype("float32")
    gmod = lib["default"](relay.cpu(0))
    gmod.run(x=data)
    out = gmod.get_output(0).numpy()
    np.testing.assert_allclose(out, forward(data), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, _interp(mod, params, data).numpy(), rtol=1e-5, atol=1e-6)


def test_seed_cnn_structure_and_outputs():
    mod, params = seed_cnn.get_workload()
    lib = relay.build(mod, params=params)
    g = json.loads(lib.get_graph_json())
    # kernel names are unique per build (not per process), as in TVM
    names = [n["attrs"]["func_name"] for n in _kernel_nodes(g)]
    # batch_flatten only reshapes: FuseOps marks it relay.reshape_only and it runs as a __nop
    assert names == ["tvmgen_default_fused_nn_conv2d_nn_relu", "tvmgen_default_fused_nn_global_avg_pool2d",
                     "__nop", "tvmgen_default_fused_nn_dense_nn_bias_add"]
    assert g["attrs"]["shape"][1] == [[1, 3, 32, 32], [16, 3, 3, 3], [1, 16, 32, 32], [1, 16, 1, 1],
                                      [1, 16], [10, 16], [10], [1, 10]]
    assert g["node_row_ptr"] == list(range(9))
    assert g["attrs"]["dltype"] == ["list_str", ["float32"] * 8]
    # data: 0; p0: 1 (first read by the conv); conv out (64 KiB): 2; pool out (64 B): 3, then
    # sid 2 is freed; the flatten (a __nop) aliases sid 3, which stays live until the dense has
    # read it; p1, p2: 4, 5; dense out (40 B, a graph output): 6 (the free 64 KiB block is more
    # than 16x too big, and sid 3 is still its input).
    assert g["attrs"]["storage_id"] == ["list_int", [0, 1, 2, 3, 3, 4, 5, 6]]
    data = RNG.standard_normal((1, 3, 32, 32)).astype("float32")
    gmod = lib["default"](relay.cpu(0))
    gmod.set_input("data", data)
    gmod.run()
    out = gmod.get_output(0).numpy()
    np.testing.assert_allclose(out, seed_cnn.numpy_forward(data, params), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out, _interp(mod, params, data).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_resnet_block_with_batch_norm_matches_interpreter(opt_level):
    mod, params = resnet_block()
    data = RNG.standard_normal((1, 8, 8, 8)).astype("float32")
    with relay.transform.PassContext(opt_level=opt_level):
        lib = relay.build(mod, params=params)
    kernels = _kernel_nodes(json.loads(lib.get_graph_json()))
    assert not any("batch_norm" in n["attrs"]["relay_ops"] for n in kernels)  # SimplifyInference
    if opt_level == 3:      # conv+bn+relu ; conv+bn+add+relu, channel-blocked (AlterOpLayout), and
        ops = sorted(n["attrs"]["relay_ops"] for n in kernels)      # the data's transform in and out
        convs = [o for o in ops if "conv2d" in o]
        assert len(convs) == 2 and all("contrib_conv2d_NCHWc" in o for o in convs), ops
        assert not any("multiply" in o for o in ops), ops   # bn's scale folded into the weights
        assert [o for o in ops if "conv2d" not in o] == ["layout_transform"] * 2, ops
    gmod = lib["default"](relay.cpu(0))
    gmod.run(data=data)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), _interp(mod, params, data).numpy(),
                               rtol=1e-4, atol=1e-4)


def _families_program():
    x = relay.var("x", shape=(2, 6, 4))
    y = relay.var("y", shape=(6, 4), dtype="float32")
    a = relay.transpose(relay.tanh(relay.add(x, y)), axes=(0, 2, 1))          # broadcast + injective
    parts = relay.split(a, indices_or_sections=2, axis=2)                       # tuple-valued op
    cat = relay.concatenate([parts[1], relay.negative(parts[0])], axis=1)
    r = relay.reshape(relay.sum(cat, axis=1, keepdims=True), newshape=(2, 3))  # reduce + reshape
    idx = relay.argmax(cat, axis=1)                                             # int output
    mask = relay.greater(r, relay.const(0.0))                                   # bool output
    sel = relay.where(mask, r, relay.exp(relay.cast(idx, "float32")))
    return relay.IRModule.from_expr(relay.Function([x, y], relay.Tuple([sel, idx, mask, parts[1]])))


def test_op_families_and_tuple_outputs_match_interpreter():
    mod = _families_program()
    x = RNG.standard_normal((2, 6, 4)).astype("float32")
    y = RNG.standard_normal((6, 4)).astype("float32")
    want = relay.create_executor("debug", mod=mod).evaluate()(x, y)
    got = relay.create_executor("graph", mod=mod).evaluate()(x, y)
    assert type(got) is type(want) and len(got) == len(want) == 4
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    g = json.loads(relay.build(mod).get_graph_json())
    assert "int32" in g["attrs"]["dltype"][1]
    assert "bool" in g["attrs"]["dltype"][1] and len(g["heads"]) == 4


def _chain(length, shape=(64,)):
    x = relay.var("x", shape=shape)
    y = x
    for i in range(length):
        y = relay.exp(y) if i % 2 else relay.tanh(y)
    return relay.IRModule.from_expr(relay.Function([x], y))


def test_long_chain_uses_constant_number_of_storages():
    counts = []
    for length in (10, 40):
        with relay.transform.PassContext(opt_level=0):          # no fusion: one kernel per op
            lib = relay.build(_chain(length))
        g = json.loads(lib.get_graph_json())
        assert len(_kernel_nodes(g)) == length
        counts.append(len(set(g["attrs"]["storage_id"][1])))
        assert lib.planned_bytes < lib.no_reuse_bytes
        steps, entries, plan = lib.memory_plan
        check_plan(steps, entries, plan)
    assert counts[0] == counts[1] <= 4
    data = np.linspace(-1, 1, 64).astype("float32")
    ref = data.astype("float64")
    for i in range(40):
        ref = np.exp(ref) if i % 2 else np.tanh(ref)
    gmod = lib["default"](relay.cpu(0))
    gmod.run(x=data)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), ref, rtol=1e-5)


def test_check_plan_on_models_and_no_in_place_writes():
    for mod, params in (seed_cnn.get_workload(), resnet_block()):
        lib = relay.build(mod, params=params)
        steps, entries, plan = lib.memory_plan
        check_plan(steps, entries, plan)
        sids = json.loads(lib.get_graph_json())["attrs"]["storage_id"][1]
        assert list(plan.storage_ids) == sids
        for s in steps:                          # a kernel never writes over its own inputs
            if s.alias_of is None:               # (a reshape __nop writes nothing: it aliases)
                assert not {sids[i] for i in s.inputs} & {sids[o] for o in s.outputs}


def test_ten_thousand_op_chain_codegen_is_iterative():
    with relay.transform.PassContext(opt_level=0):
        lib = relay.build(_chain(10000, shape=(4,)))
    g = json.loads(lib.get_graph_json())
    assert len(g["nodes"]) == 10001 and len(set(g["attrs"]["storage_id"][1])) <= 4


def test_control_flow_and_dynamic_shapes_point_to_vm():
    c = relay.var("c", shape=(), dtype="bool")
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([c, x], relay.If(c, relay.exp(x), relay.log(x))))
    with pytest.raises(GraphCodegenError, match=r"the graph executor does not support .*If.*kind=\"vm\""):
        relay.build(mod)
    n = relay.var("n", shape=(relay.Any(), 3))
    with pytest.raises(GraphCodegenError, match="the graph executor needs static shapes.*vm"):
        relay.build(relay.IRModule.from_expr(relay.Function([n], relay.exp(n))))


def test_input_named_like_a_param_keeps_its_own_storage():
    """A var named "p0" must not share its name with constant p0: set_input("p0") would write
    into the constant's storage and run() would silently use the wrong values."""
    x = relay.var("p0", shape=(3,))
    c = np.arange(3, dtype="float32")
    lib = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(c)))))
    g = json.loads(lib.get_graph_json())
    assert [n["name"] for n in g["nodes"] if n["op"] == "null"] == ["p0", "p1"]
    assert set(lib.get_params()) == {"p1"}
    gmod = lib["default"](relay.cpu(0))
    gmod.set_input("p0", np.ones(3, "float32"))
    gmod.run()
    np.testing.assert_array_equal(gmod.get_output(0).numpy(), 1 + c)
    # several inputs and constants: constants take the next free names, in first-use order
    a, b = relay.var("p0", shape=(3,)), relay.var("p2", shape=(3,))
    body = relay.multiply(relay.add(a, relay.const(c)), relay.add(b, relay.const(2 * c)))
    lib = relay.build(relay.IRModule.from_expr(relay.Function([a, b], body)))
    g = json.loads(lib.get_graph_json())
    assert [n["name"] for n in g["nodes"] if n["op"] == "null"] == ["p0", "p2", "p1", "p3"]
    gmod = lib["default"](relay.cpu(0))
    gmod.run(p0=np.full(3, 2, "float32"), p2=np.full(3, 3, "float32"))
    np.testing.assert_array_equal(gmod.get_output(0).numpy(), (2 + c) * (3 + 2 * c))


def test_inputs_sharing_a_name_build_and_run_by_index():
    """Relay allows two parameters with one name hint: both executors build them, inputs are set
    by index, and only a by-name use is refused as ambiguous (tests/runtime/test_executor_module)."""
    x1, x2 = relay.var("x", shape=(3,)), relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x1, x2], relay.subtract(x1, x2)))
    g = json.loads(relay.build(mod).get_graph_json())
    assert [g["nodes"][nid]["name"] for nid in g["arg_nodes"]] == ["x", "x"]
    # a tuple parameter t flattens to inputs t_0, t_1: a var named t_1 shares a name with one
    t = relay.var("t", relay.TupleType([relay.TensorType((3,)), relay.TensorType((3,))]))
    t1 = relay.var("t_1", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([t, t1], relay.add(relay.TupleGetItem(t, 1), t1)))
    a, b = np.arange(3, dtype="float32"), np.full(3, 10, "float32")
    for executor in ("graph", "aot"):
        module = relay.build(mod, executor=executor)["default"](relay.cpu(0))
        for i, value in enumerate([a, a, b]):
            module.set_input(i, value)
        module.run()
        np.testing.assert_array_equal(module.get_output(0).numpy(), a + b)
        with pytest.raises(relay.RelayError, match=r"input name 't_1' is ambiguous: inputs \[1, 2\]"):
            module.set_input("t_1", b)


def test_build_executor_argument():
    mod, _, _ = mlp()
    with pytest.raises(relay.RelayError, match=r"valid executors are \['graph', 'aot'\]"):
        relay.build(mod, executor="vm2")
    with pytest.raises(relay.RelayError, match="must be tvm.IRModule"):
        relay.build("not a module")


def test_reshape_only_primitive_becomes_nop_sharing_storage():
    """A primitive marked relay.reshape_only aliases its input: same storage id, "__nop" node."""
    lib = relay.build(abs_reshape_exp())
    g = json.loads(lib.get_graph_json())
    assert [n["name"] for n in g["nodes"]][2] == "reshape_nop"
    assert g["nodes"][2]["attrs"]["func_name"] == "__nop"
    sids = g["attrs"]["storage_id"][1]
    assert sids[1] == sids[2] and sids[3] != sids[2]
    data = np.arange(-6, 6, dtype="float32").reshape(2, 6)
    gmod = lib["default"](relay.cpu(0))
    gmod.run(x=data)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), np.exp(np.abs(data)).reshape(3, 4), rtol=1e-6)
