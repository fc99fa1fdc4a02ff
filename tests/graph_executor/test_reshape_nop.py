"""A fused function that only changes a shape (reshape, squeeze, expand_dims, batch_flatten,
reshape_like, whose second operand only gives the shape) is marked relay.reshape_only by FuseOps
and runs no kernel: the graph executor makes it a __nop
whose output shares its input's storage id, AOT aliases it in the workspace, the VM emits
reshape_tensor. The memory plan stays provably safe (check_plan) and results match numpy."""
import json

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.analysis.memory_plan import check_plan
from relay_backend.ir.expr import Function
from relay_backend.ir.functor import all_nodes_post_order

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4, 4)).astype("float32")
W = RNG.standard_normal((5, 12)).astype("float32")


LIKE = relay.var("like", shape=(2, 12))          # reshape_like's shape operand, a graph input


def _model(shape_op):
    """dense(shape_op(sum(relu(x)))): the shape-only op sits between a reduction and a dense,
    neither of which fuses with it, so it is a group of its own."""
    x = relay.var("x", shape=(2, 3, 4, 4))
    w = relay.var("w", shape=(5, 12))
    pooled = relay.sum(relay.nn.relu(x), axis=(3,))                   # (2, 3, 4), a reduction
    flat = shape_op(pooled)                                            # (2, 12)
    params = [x, w, LIKE] if LIKE in relay.analysis.free_vars(flat) else [x, w]
    return relay.IRModule.from_expr(relay.Function(params, relay.nn.dense(flat, w)))


def _numpy(x, w):
    return np.maximum(x, 0).sum(axis=3).reshape(2, 12) @ w.T


SHAPE_OPS = {
    "reshape": lambda t: relay.reshape(t, (2, 12)),
    "batch_flatten": relay.nn.batch_flatten,
    "expand_squeeze": lambda t: relay.squeeze(relay.expand_dims(relay.reshape(t, (2, 12)), 1), axis=(1,)),
    "reshape_like": lambda t: relay.reshape_like(t, LIKE),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_fuse_ops_marks_shape_only_functions(name):
    mod = relay.transform.FuseOps(2)(relay.transform.InferType()(_model(SHAPE_OPS[name])))
    prims = [f for f in all_nodes_post_order(mod["main"]) if isinstance(f, Function) and f.is_primitive]
    marked = [f for f in prims if int(f.attrs.get("relay.reshape_only", 0)) == 1]
    assert len(marked) == 1 and len(prims) == 3
    assert all(int(f.attrs.get("relay.reshape_only", 0)) == 0 for f in prims if f is not marked[0])


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_graph_executor_runs_no_kernel_and_shares_the_storage(name):
    factory = relay.build(_model(SHAPE_OPS[name]), target="llvm")
    graph = json.loads(factory.get_graph_json())
    nops = [i for i, n in enumerate(graph["nodes"]) if n.get("attrs", {}).get("func_name") == "__nop"]
    assert len(nops) == 1
    (nop,) = nops
    sids = graph["attrs"]["storage_id"][1]
    src = graph["nodes"][nop]["inputs"][0][0]
    row = graph["node_row_ptr"]
    assert sids[row[nop]] == sids[row[src]], "the reshape's output must share its input's storage"
    kernels = set(factory.get_lib().function_names)
    assert not any(k.endswith(("reshape", "batch_flatten", "squeeze")) for k in kernels), kernels
    codegen = factory._codegen
    check_plan(codegen.steps, codegen.entries, codegen.plan)
    assert len(graph["nodes"][nop]["inputs"]) == 1, "the nop reads only the reshaped data"
    gmod = factory["default"](relay.cpu())
    inputs = {"x": X, "w": W, "like": np.zeros((2, 12), "float32")} if name == "reshape_like" else {"x": X, "w": W}
    gmod.run(**inputs)
    np.testing.assert_allclose(gmod.get_output(0).numpy(), _numpy(X, W), rtol=1e-4, atol=1e-4)


def test_aot_aliases_the_reshape_in_its_workspace():
    factory = relay.build(_model(SHAPE_OPS["batch_flatten"]), target="llvm", executor="aot")
    program = factory.program
    assert all("batch_flatten" not in call.func_name for call in program.calls)
    assert len(program.calls) == 2                                     # sum+relu, dense
    check_plan(program.steps, program.entries, program.plan)
    module = factory["default"](relay.cpu())
    module.run(x=X, w=W)
    np.testing.assert_allclose(module.get_output(0).numpy(), _numpy(X, W), rtol=1e-4, atol=1e-4)


def test_vm_reshapes_without_a_kernel_or_a_copy():
    exe = relay.vm.compile(_model(SHAPE_OPS["reshape"]), target="llvm")
    assert "reshape_tensor" in exe.bytecode
    assert not any("reshape" in name for name in exe.primitive_ops), exe.primitive_ops
    out = relay.vm.VirtualMachine(exe, relay.cpu()).run(X, W).numpy()
    np.testing.assert_allclose(out, _numpy(X, W), rtol=1e-4, atol=1e-4)


def test_a_reshaped_input_returned_as_output_aliases_the_input():
    x = relay.var("x", shape=(2, 6))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.reshape(x, (3, 4))))
    data = np.arange(12, dtype="float32").reshape(2, 6)
    for kind in ("graph", "aot", "vm"):
        out = relay.create_executor(kind, mod=mod).evaluate()(data).numpy()
        np.testing.assert_array_equal(out, data.reshape(3, 4), err_msg=kind)
