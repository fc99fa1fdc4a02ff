"""AOT with target "llvm" links the graph executor's LLVM-compiled kernels into the model library
(so it computes the same bits as the graph executor), while target "c" keeps the portable C
kernels; both are checked against the debug interpreter, and the exported llvm project (model.c
+ kernels.o) builds with make and reproduces the in-process bits."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.testing import resnet

pytestmark = pytest.mark.compile
RTOL = ATOL = 1e-4


def _ops_module():
    """A few ops whose kernels use LLVM's polynomial math, reductions and FMA-able loops."""
    x = relay.var("x", shape=(4, 37))
    w = relay.var("w", shape=(19, 37))
    img = relay.var("img", shape=(1, 3, 9, 9))
    k = relay.var("k", shape=(5, 3, 3, 3))
    dense = relay.tanh(relay.nn.dense(x, w))
    soft = relay.nn.softmax(relay.exp(relay.sigmoid(x)) * x)
    conv = relay.nn.relu(relay.nn.conv2d(img, k, padding=(1, 1), channels=5, kernel_size=(3, 3)))
    body = relay.Tuple([dense, soft, relay.erf(x), conv])
    rng = np.random.default_rng(7)
    inputs = {"x": rng.standard_normal((4, 37)), "w": rng.standard_normal((19, 37)),
              "img": rng.standard_normal((1, 3, 9, 9)), "k": rng.standard_normal((5, 3, 3, 3))}
    mod = relay.IRModule.from_expr(relay.Function([x, w, img, k], body))
    return mod, None, {n: v.astype("float32") for n, v in inputs.items()}


def _resnet_block():
    mod, params = resnet.get_block_workload(channels=8, image_size=8)
    data = np.random.default_rng(1).standard_normal((1, 8, 8, 8)).astype("float32")
    return mod, params, {"data": data}


def _outputs(module, inputs):
    for name, value in inputs.items():
        module.set_input(name, value)
    module.run()
    return [module.get_output(i).numpy() for i in range(module.get_num_outputs())]


def _interpret(mod, params, inputs):
    out = relay.create_executor("debug", mod=mod, params=params).evaluate()(**inputs)
    return [o.numpy() for o in (out if isinstance(out, (list, tuple)) or hasattr(out, "fields") else [out])]


@pytest.fixture(scope="module", params=["resnet_block", "ops"])
def model(request):
    return _resnet_block() if request.param == "resnet_block" else _ops_module()


def test_llvm_target_computes_the_graph_executors_bits(model):
    mod, params, inputs = model
    aot = relay.build(mod, target="llvm", params=params, executor="aot")
    graph = relay.build(mod, target="llvm", params=params)
    got = _outputs(aot["default"](relay.cpu(0)), inputs)
    want = _outputs(relay.graph_executor.GraphModule(graph["default"](relay.cpu(0))), inputs)
    reference = _interpret(mod, params, inputs)
    assert len(got) == len(want) == len(reference)
    for a, g, r in zip(got, want, reference):
        np.testing.assert_array_equal(a, g)                  # the same kernels, the same bits
        np.testing.assert_allclose(a, r, rtol=RTOL, atol=ATOL)


def test_llvm_target_links_kernels_and_c_target_keeps_c_kernels(model):
    mod, params, inputs = model
    llvm_factory = relay.build(mod, target="llvm", params=params, executor="aot")
    c_factory = relay.build(mod, target="c", params=params, executor="aot")
    assert llvm_factory.kernel_kind == "llvm" and c_factory.kernel_kind == "c"
    llvm_source, c_source = llvm_factory.get_source("c"), c_factory.get_source("c")
    assert "extern void rb_" in llvm_source and "_ws(void* const* args" not in llvm_source
    assert "extern void rb_" not in c_source and "_ws(void* const* args" in c_source
    assert llvm_factory.kernel_objects and not c_factory.kernel_objects
    for a, r in zip(_outputs(c_factory["default"](relay.cpu(0)), inputs), _interpret(mod, params, inputs)):
        np.testing.assert_allclose(a, r, rtol=RTOL, atol=ATOL)


def test_exported_llvm_project_links_the_kernel_object(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    mod, params, inputs = _resnet_block()
    factory = relay.build(mod, target="llvm", params=params, executor="aot")
    out_dir = factory.export_library(str(tmp_path / "model"))
    assert sorted(os.listdir(out_dir)) == ["Makefile", "kernels.o", "main.c", "model.c", "model.h",
                                           "model_params.bin"]
    proc = subprocess.run(["make", "-s", "model_run"], cwd=out_dir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    inputs["data"].tofile(os.path.join(out_dir, "inputs.bin"))
    proc = subprocess.run(["./model_run", "inputs.bin", "outputs.bin"], cwd=out_dir,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = np.fromfile(os.path.join(out_dir, "outputs.bin"), dtype="float32")
    in_process = _outputs(factory["default"](relay.cpu(0)), inputs)[0]
    np.testing.assert_array_equal(out.reshape(in_process.shape), in_process)


def test_c_target_like_llvm_keeps_the_llvm_schedules():
    """Plain "c" selects the generic schedules; c_target_like("llvm") the llvm target's
    (NCHWc convolutions on x86 at opt_level 3), as C kernels that agree with the interpreter."""
    mod, params, inputs = _resnet_block()
    factories = {}
    with relay.transform.PassContext(opt_level=3):
        for name, target in (("llvm", "llvm"), ("like", relay.aot.c_target_like("llvm"))):
            factories[name] = relay.build(mod, target=target, params=params, executor="aot")
    like = factories["like"]
    assert like.kernel_kind == "c" and like.target.kind.name == "c"
    assert set(like.program.prim_funcs) == set(factories["llvm"].program.prim_funcs)
    for a, r in zip(_outputs(like["default"](relay.cpu(0)), inputs), _interpret(mod, params, inputs)):
        np.testing.assert_allclose(a, r, rtol=RTOL, atol=ATOL)
