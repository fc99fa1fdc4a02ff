"""The AOT executor on whole models: outputs equal the debug interpreter (and numpy), the exported
standalone program builds with make/cc and reproduces them, the C never allocates, the static
workspace is no larger than the graph executor's plan, and bad inputs raise InputError."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.aot import AotModule
from relay_backend.errors import InputError
from relay_backend.testing import mlp, resnet, seed_cnn

pytestmark = pytest.mark.compile
RTOL = ATOL = 1e-4          # float32 kernels (reassociated sums) vs float64-ish references


def _models():
    return {
        "mlp": (mlp.get_workload(batch_size=2, image_shape=(1, 8, 8), num_hidden=(32, 16)), (2, 1, 8, 8)),
        "seed_cnn": (seed_cnn.get_workload(), (1, 3, 32, 32)),
        "resnet_block": (resnet.get_block_workload(channels=8, image_size=8), (1, 8, 8, 8)),
    }


@pytest.fixture(scope="module", params=["mlp", "seed_cnn", "resnet_block"])
def model(request):
    (mod, params), shape = _models()[request.param]
    data = np.random.default_rng(1).standard_normal(shape).astype("float32")
    factory = relay.build(mod, target="llvm", params=params, executor="aot")
    return request.param, mod, params, data, factory


def _interpret(mod, params, data):
    return relay.create_executor("debug", mod=mod, params=params).evaluate()(data).numpy()


def test_matches_interpreter(model):
    name, mod, params, data, factory = model
    amod = AotModule(factory["default"](relay.cpu(0)))
    amod.set_input("data", data)
    amod.run()
    out = amod.get_output(0).numpy()
    np.testing.assert_allclose(out, _interpret(mod, params, data), rtol=RTOL, atol=ATOL, err_msg=name)
    if name == "seed_cnn":
        np.testing.assert_allclose(out, seed_cnn.numpy_forward(data, params), rtol=RTOL, atol=ATOL)


def test_generated_c_never_allocates(model):
    _, _, _, _, factory = model
    for text in (factory.get_source("c"), factory.get_source("h")):
        assert not re.search(r"\b(malloc|calloc|realloc|free|alloca)\s*\(", text)
    assert "tvmgen_default_run(struct tvmgen_default_inputs* inputs, struct tvmgen_default_outputs* outputs)" \
        in factory.get_source("c")
    assert "void* data;" in factory.get_source("h") and "void* output0;" in factory.get_source("h")


def test_workspace_no_larger_than_graph_plan(model):
    """AOT's arena holds intermediates only (inputs, constants and outputs are elsewhere), so it is
    compared with what the graph plan spends on intermediates, not with its total (which counts
    params, inputs and outputs too); slack: 64-byte alignment of each arena slot."""
    name, mod, params, _, factory = model
    graph = relay.build(mod, target="llvm", params=params)
    program = factory.program
    intermediates = sum(e.nbytes for e in factory.memory_plan[1] if e.kind == "intermediate")
    slots = {program.plan.storage_ids[i] for i, t in enumerate(program.tensors) if t.kind == "intermediate"}
    assert 0 < graph.intermediate_bytes < graph.planned_bytes, name
    arena = factory.workspace_size - program.kernel_ws_bytes
    assert 0 < arena <= graph.intermediate_bytes + 63 * len(slots), name
    assert factory.workspace_size <= intermediates + 64 * len(program.calls) + program.kernel_ws_bytes


def test_exported_program_builds_and_matches(model, tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    name, mod, params, data, factory = model
    out_dir = factory.export_library(str(tmp_path / "model"))
    kernel_files = ["kernels.o"] if factory.kernel_kind == "llvm" else []
    assert sorted(os.listdir(out_dir)) == sorted(["Makefile", "main.c", "model.c", "model.h",
                                                  "model_params.bin", *kernel_files])
    assert not re.search(r"\b(malloc|calloc|free)\s*\(", open(os.path.join(out_dir, "main.c")).read())
    proc = subprocess.run(["make", "-s", "model_run"], cwd=out_dir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    np.ascontiguousarray(data).tofile(os.path.join(out_dir, "inputs.bin"))
    proc = subprocess.run(["./model_run", "inputs.bin", "outputs.bin"], cwd=out_dir,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = np.fromfile(os.path.join(out_dir, "outputs.bin"), dtype="float32")
    expected = _interpret(mod, params, data)
    np.testing.assert_allclose(out.reshape(expected.shape), expected, rtol=RTOL, atol=ATOL, err_msg=name)
    # a short input file is reported, not read past
    open(os.path.join(out_dir, "short.bin"), "wb").write(b"\0" * 4)
    proc = subprocess.run(["./model_run", "short.bin", "o.bin"], cwd=out_dir, capture_output=True, text=True)
    assert proc.returncode != 0 and "too short" in proc.stderr


def test_set_input_rejects_bad_inputs():
    (mod, params), shape = _models()["seed_cnn"]
    amod = AotModule(relay.build(mod, params=params, executor="aot")["default"](relay.cpu(0)))
    assert amod.get_num_inputs() == 1 and amod.get_num_outputs() == 1
    with pytest.raises(InputError, match=r"expects Tensor\[\(1, 3, 32, 32\), float32\].*\(1, 3, 16, 16\)"):
        amod.set_input("data", np.zeros((1, 3, 16, 16), "float32"))
    with pytest.raises(InputError, match=r"float64.*astype"):
        amod.set_input("data", np.zeros(shape, "float64"))
    with pytest.raises(InputError, match="valid names are \\['data'\\]"):
        amod.set_input("image", np.zeros(shape, "float32"))
    with pytest.raises(InputError, match="out of range"):
        amod.set_input(3, np.zeros(shape, "float32"))
    with pytest.raises(InputError, match="out of range"):
        amod.get_output(1)


def test_outputs_that_are_inputs_constants_or_repeats():
    """Outputs that no kernel writes (an input, a constant, a repeated value) are copied."""
    x = relay.var("x", shape=(4, 5))
    y = relay.exp(x)
    c = relay.const(np.arange(3, dtype="float32"))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Tuple([y, x, y, c, relay.reshape(y, (20,))])))
    data = np.random.default_rng(0).standard_normal((4, 5)).astype("float32")
    out = relay.create_executor("aot", mod=mod).evaluate()(data)
    ref = relay.create_executor("debug", mod=mod).evaluate()(data)
    assert len(out) == 5
    for a, e in zip(out, ref):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)


def test_create_executor_keywords_and_tuple_args():
    x = relay.var("x", shape=(3,))
    w = relay.var("w", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(x * w + x)))
    f = relay.create_executor("aot", mod=mod, target="c").evaluate()
    a, b = np.array([1, -2, 3], "float32"), np.array([2, 2, -5], "float32")
    np.testing.assert_allclose(f(a, w=b).numpy(), np.maximum(a * b + a, 0))
    with pytest.raises(InputError):
        f(a)


def test_target_c_matches_llvm():
    (mod, params), shape = _models()["mlp"]
    data = np.random.default_rng(2).standard_normal(shape).astype("float32")
    outs = []
    for target in ("c", "llvm"):
        amod = relay.build(mod, target=target, params=params, executor="aot")["default"](relay.cpu(0))
        amod.run(data=data)
        outs.append(amod.get_output(0).numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[0], mlp.numpy_forward(data, params), rtol=RTOL, atol=ATOL)


def test_kernel_scratch_lives_in_the_static_workspace():
    """A C kernel (target "c") whose temporary exceeds the C backend's stack limit gets scratch
    in the arena."""
    (mod, params) = resnet.get_block_workload(channels=16, image_size=64)
    data = np.random.default_rng(3).standard_normal((1, 16, 64, 64)).astype("float32")
    factory = relay.build(mod, target="c", params=params, executor="aot")
    program = factory.program
    assert program.kernel_ws_bytes > 0, "expected a kernel temporary above the stack limit"
    assert factory.workspace_size == program.kernel_ws_offset + program.kernel_ws_bytes
    assert "_ws(args, NULL, tvmgen_default_workspace + " in factory.get_source("c")
    amod = factory["default"](relay.cpu(0))
    amod.run(data=data)
    np.testing.assert_allclose(amod.get_output(0).numpy(), _interpret(mod, params, data), rtol=RTOL, atol=ATOL)


def test_get_output_into_out_checks_shape_and_dtype():
    x = relay.var("x", shape=(2, 3))
    amod = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))),
                       executor="aot")["default"](relay.cpu(0))
    amod.run(x=np.zeros((2, 3), "float32"))
    out = relay.nd.empty((2, 3))
    np.testing.assert_array_equal(amod.get_output(0, out).numpy(), np.ones((2, 3)))
    with pytest.raises(InputError, match=r"out is Tensor\[\(2, 3\), float64\], but the output is "
                                         r"Tensor\[\(2, 3\), float32\]"):
        amod.get_output(0, relay.nd.empty((2, 3), "float64"))
    with pytest.raises(InputError, match=r"out is Tensor\[\(6,\), float32\]"):
        amod.get_output(0, relay.nd.empty((6,)))


def test_input_names_that_are_c_keywords_compile():
    names = ["int", "for", "return", "class", "NULL", "RB_OK", "__x"]
    xs = [relay.var(n, shape=(3,)) for n in names]
    body = xs[0]
    for v in xs[1:]:
        body = relay.add(body, v)
    mod = relay.IRModule.from_expr(relay.Function(xs, relay.multiply(body, relay.const(2.0))))
    factory = relay.build(mod, target="c", executor="aot")
    header = factory.get_source("h")
    for fld in ("int_", "for_", "return_", "class_", "NULL_", "RB_OK_", "v__x"):
        assert f"  void* {fld};" in header
    amod = factory["default"](relay.cpu(0))
    data = {n: np.full(3, i + 1, "float32") for i, n in enumerate(names)}
    amod.run(**data)                                    # set_input keeps the Relay names
    np.testing.assert_allclose(amod.get_output(0).numpy(), np.full(3, 2.0 * sum(range(1, 8))))


def test_inputs_differing_only_by_case_get_distinct_macros(tmp_path):
    a, A = relay.var("a", shape=(2,)), relay.var("A", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([a, A], relay.Tuple([relay.exp(a), relay.exp(A)])))
    factory = relay.build(mod, executor="aot")
    header = factory.get_source("h")
    macros = re.findall(r"#define (\w+_INPUT_\w+_SIZE) ", header)
    assert len(macros) == 2 and len(set(macros)) == 2, macros
    assert "TVMGEN_DEFAULT_INPUT_A_SIZE 8 " in header and "TVMGEN_DEFAULT_INPUT_A_1_SIZE 12 " in header
    amod = factory["default"](relay.cpu(0))
    amod.run(a=np.zeros(2, "float32"), A=np.ones(3, "float32"))
    np.testing.assert_allclose(amod.get_output(1).numpy(), np.full(3, np.e), rtol=1e-6)
    if shutil.which("make") is not None:              # main.c's buffers use the macros
        out_dir = factory.export_library(str(tmp_path / "model"))
        proc = subprocess.run(["make", "-s", "model_run", "CFLAGS=-O1 -std=c99 -Werror"], cwd=out_dir,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_cuda_target_is_rejected():
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    with pytest.raises(relay.RelayError, match=r"the AOT executor .*supports targets \[.c., .llvm.\], not .cuda."):
        relay.build(mod, target="cuda", executor="aot")


def test_static_graph_errors_name_the_aot_executor():
    c = relay.var("c", shape=(), dtype="bool")
    x = relay.var("x", shape=(3,))
    mod = relay.IRModule.from_expr(relay.Function([c, x], relay.If(c, relay.exp(x), relay.log(x))))
    with pytest.raises(relay.RelayError, match=r"^the AOT executor does not support control flow \(If\)"):
        relay.build(mod, executor="aot")
    n = relay.var("n", shape=(relay.Any(), 3))
    with pytest.raises(relay.RelayError, match=r"^the AOT executor needs static shapes.*vm"):
        relay.build(relay.IRModule.from_expr(relay.Function([n], relay.exp(n))), executor="aot")


def test_the_process_folder_of_model_libraries_is_removed_at_exit(tmp_path):
    """Each process builds its model libraries in one temporary folder, gone when it exits."""
    script = ("import relay_backend as relay\n"
              "from relay_backend.aot import build\n"
              "x = relay.var('x', shape=(4,))\n"
              "mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, relay.const(1.0))))\n"
              "factory = relay.build(mod, executor='aot')\n"
              "print(build._cache_dir())\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "RB_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    folder = proc.stdout.strip().splitlines()[-1]
    assert folder and "rb_aot_" in folder and not os.path.exists(folder)
