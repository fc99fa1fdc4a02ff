"""In-place concatenation in the AOT executor (issue 16): a concatenation whose inputs are each
written by a kernel and read by nothing else, along an axis whose slices are contiguous and
aligned, makes no call in model.c: the producers write straight into their slices of its output
(an arena slot, or the caller's output buffer at a byte offset), as in the graph executor. Every
other concatenation keeps its copy. Outputs are compared with the debug interpreter (the numpy
oracle) within 1e-5 over two runs with fresh inputs (the arena is reused between runs), and with
target "llvm" they equal the graph executor's bit for bit; the memory plan passes
analysis.memory_views.check_views."""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import relay_backend as relay
from relay_backend.analysis.memory_views import check_views

pytestmark = pytest.mark.compile
RNG = np.random.default_rng(0)
X_SHAPE = (1, 4, 4, 4)       # a 1x1 conv to 16 channels makes 16*4*4 floats = 1024 bytes, aligned
TOL = 1e-5
TARGETS = ["llvm", "c-like-llvm"]


def _target(name):
    return relay.aot.c_target_like("llvm") if name == "c-like-llvm" else name


def _conv(data, name, channels=16, in_channels=4):
    return relay.nn.conv2d(data, relay.var(name, shape=(channels, in_channels, 1, 1)), channels=channels,
                           kernel_size=(1, 1))


def _build(body, target="llvm", opt_level=2):
    mod = relay.IRModule.from_expr(relay.Function(relay.analysis.free_vars(body), body))
    with relay.transform.PassContext(opt_level=opt_level):
        factory = relay.build(mod, target=_target(target), executor="aot")
    return mod, factory


def _concat_calls(factory) -> int:
    return sum(1 for c in factory.program.calls if "concatenate" in c.func_name)


def _fresh(mod) -> dict:
    return {v.name_hint: RNG.standard_normal([int(d) for d in v.type_annotation.shape]).astype("float32")
            for v in mod["main"].params}


def _run(module, inputs) -> list:
    for name, value in inputs.items():
        module.set_input(name, value)
    module.run()
    return [module.get_output(i).numpy() for i in range(module.get_num_outputs())]


def _check(mod, factory, target="llvm", opt_level=2, runs=2):
    """AOT equals the interpreter run after run; with LLVM kernels, the graph executor's bits;
    the plan with views is safe."""
    program = factory.program
    check_views(program.steps, program.entries, program.views, program.dropped,
                program.plan.storage_ids, program.plan.storage_sizes)
    module = relay.aot.AotModule(factory["default"](relay.cpu(0)))
    graph = None
    if target == "llvm":
        with relay.transform.PassContext(opt_level=opt_level):
            graph = relay.build(mod, target="llvm")["default"](relay.cpu(0))
    for _ in range(runs):
        inputs = _fresh(mod)
        got = _run(module, inputs)
        expected = relay.create_executor("debug", mod=mod).evaluate()(**inputs)
        expected = [e.numpy() for e in (expected.fields if hasattr(expected, "fields") else [expected])]
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=TOL, atol=TOL)
        if graph is not None:
            for g, b in zip(got, _run(graph, inputs)):
                np.testing.assert_array_equal(g, b)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("opt_level", [2, 3])
def test_producers_write_into_the_concatenation(target, opt_level):
    x = relay.var("x", shape=X_SHAPE)
    body = _conv(relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1), "wc", 4, 32)
    mod, factory = _build(body, target, opt_level)
    program = factory.program
    assert _concat_calls(factory) == 0 and len(program.dropped) == 1
    assert len(program.calls) == 3 or opt_level == 3      # opt_level 3 adds layout transforms
    (index,) = program.dropped
    ins, out = program.steps[index].inputs, program.steps[index].outputs[0]
    places = [program.tensors[e].place for e in ins]
    root = program.tensors[out].place
    assert root[0] == "arena" and places == [("arena", root[1]), ("arena", root[1] + program.tensors[ins[0]].nbytes)]
    _check(mod, factory, target, opt_level)


def test_the_arena_shrinks_by_the_concatenated_inputs():
    x = relay.var("x", shape=X_SHAPE)
    _, in_place = _build(_conv(relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1), "wc", 4, 32))
    # the two 1024-byte slices live inside the 2048-byte concatenation: one 2048-byte slot
    assert in_place.workspace_size - in_place.program.kernel_ws_bytes == 2048


@pytest.mark.parametrize("target", TARGETS)
def test_a_concatenation_that_is_the_model_output(target):
    """The producers write at byte offsets of the caller's output buffer."""
    x = relay.var("x", shape=X_SHAPE)
    mod, factory = _build(relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1), target)
    assert _concat_calls(factory) == 0 and len(factory.program.calls) == 2
    assert re.search(r"\(uint8_t\*\)outputs->output0 \+ 1024\)", factory.get_source("c"))
    _check(mod, factory, target)


def test_a_concatenation_among_tuple_outputs():
    x = relay.var("x", shape=X_SHAPE)
    a, b = _conv(x, "wa"), _conv(x, "wb")
    body = relay.Tuple([relay.nn.relu(_conv(x, "wc")), relay.concatenate([a, b], axis=1)])
    mod, factory = _build(body)
    assert _concat_calls(factory) == 0
    assert "(uint8_t*)outputs->output1 + 1024" in factory.get_source("c")
    _check(mod, factory)


@pytest.mark.parametrize("opt_level, dropped", [(0, 2), (2, 1)])
def test_nested_concatenations_are_in_place(opt_level, dropped):
    """Unfused (opt_level 0) the inner concatenation is a view of the outer one and its inputs
    views of it; fused, one function concatenates twice along one axis."""
    x = relay.var("x", shape=X_SHAPE)
    inner = relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1)
    outer = relay.concatenate([inner, _conv(x, "wc")], axis=-3)
    mod, factory = _build(_conv(outer, "wd", 4, 48), opt_level=opt_level)
    assert len(factory.program.dropped) == dropped and _concat_calls(factory) == 0
    _check(mod, factory, opt_level=opt_level)


def _not_in_place(body, target="llvm"):
    mod, factory = _build(body, target)
    assert not factory.program.dropped and not factory.program.views and _concat_calls(factory) >= 1
    _check(mod, factory, target)


@pytest.mark.parametrize("target", TARGETS)
def test_inputs_shared_by_two_concatenations_keep_the_copies(target):
    """DenseNet's pattern: every layer concatenates all earlier features again."""
    x = relay.var("x", shape=X_SHAPE)
    a, b = _conv(x, "wa"), _conv(x, "wb")
    first = relay.concatenate([a, b], axis=1)
    second = relay.concatenate([a, b, _conv(_conv(first, "wc", 16, 32), "wd", 16, 16)], axis=1)
    _not_in_place(relay.Tuple([_conv(second, "we", 4, 48), relay.nn.relu(first)]), target)


def test_inputs_used_twice_read_elsewhere_or_not_kernel_made_keep_the_copy():
    x = relay.var("x", shape=X_SHAPE)
    a = _conv(x, "wa")
    _not_in_place(_conv(relay.concatenate([a, a], axis=1), "wc", 4, 32))
    _not_in_place(relay.Tuple([_conv(relay.concatenate([a, _conv(x, "wb")], axis=1), "wc", 4, 32),
                               _conv(a, "wd", 4, 16)]))
    y = relay.var("y", shape=(1, 16, 4, 4))
    _not_in_place(_conv(relay.concatenate([_conv(x, "wa"), y], axis=1), "wc", 4, 32))
    const = relay.const(RNG.standard_normal((1, 16, 4, 4)).astype("float32"))
    _not_in_place(_conv(relay.concatenate([const, _conv(x, "wa")], axis=1), "wc", 4, 32))


def test_non_contiguous_or_unaligned_slices_keep_the_copy():
    x2 = relay.var("x", shape=(2, 4, 4, 4))                  # batch 2: channel slices interleave
    _not_in_place(_conv(relay.concatenate([_conv(x2, "wa"), _conv(x2, "wb")], axis=1), "wc", 4, 32))
    x3 = relay.var("x", shape=(1, 4, 3, 3))                  # one 3x3 channel: 36 bytes, unaligned
    _not_in_place(_conv(relay.concatenate([_conv(x3, "wa", 1), _conv(x3, "wb", 16)], axis=1), "wc", 4, 17))


def test_a_reshape_of_the_concatenation_shares_its_slot():
    """A reshape-only kernel of the concatenation's output aliases the root of the views."""
    x = relay.var("x", shape=X_SHAPE)
    cat = relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1)
    body = relay.nn.softmax(relay.reshape(cat, (1, 32 * 16)))
    mod, factory = _build(body, opt_level=0)           # unfused: the reshape is its own call
    program = factory.program
    assert _concat_calls(factory) == 0 and program.dropped
    _check(mod, factory, opt_level=0)


def test_exported_in_place_program_builds_and_matches(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    x = relay.var("x", shape=X_SHAPE)
    mod, factory = _build(relay.Tuple([_conv(relay.concatenate([_conv(x, "wa"), _conv(x, "wb")], axis=1),
                                             "wc", 4, 32),
                                       relay.concatenate([_conv(x, "wd"), _conv(x, "we")], axis=1)]))
    assert _concat_calls(factory) == 0 and len(factory.program.dropped) == 2
    out_dir = factory.export_library(str(tmp_path / "model"))
    proc = subprocess.run(["make", "-s", "model_run"], cwd=out_dir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    inputs = _fresh(mod)
    with open(os.path.join(out_dir, "inputs.bin"), "wb") as f:
        for name in factory.input_names:
            f.write(np.ascontiguousarray(inputs[name]).tobytes())
    proc = subprocess.run(["./model_run", "inputs.bin", "outputs.bin"], cwd=out_dir,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    flat = np.fromfile(os.path.join(out_dir, "outputs.bin"), dtype="float32")
    expected = relay.create_executor("debug", mod=mod).evaluate()(**inputs).fields
    sizes = np.cumsum([0] + [int(e.numpy().size) for e in expected])
    assert flat.size == sizes[-1]
    for k, e in enumerate(expected):
        np.testing.assert_allclose(flat[sizes[k]:sizes[k + 1]].reshape(e.shape), e.numpy(), rtol=TOL, atol=TOL)


@pytest.mark.parametrize("opt_level", [2, 3])
def test_squeezenet_fires_concatenate_in_place_and_match_onnxruntime(opt_level):
    """SqueezeNet 1.1 (64x64): eight fire modules, each a concatenation of two convolutions
    (NCHW{c}c at opt_level 3), 30-odd kernels in one run function. AOT makes no concatenate
    call, matches onnxruntime within 1e-4 (relative to the output's scale) and equals the
    graph executor's bits."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from relay_backend.frontend import from_onnx
    from relay_backend.testing import onnx_models
    model, shape = onnx_models.squeezenet(image=64)
    mod, params = from_onnx(model)
    data = RNG.standard_normal(shape).astype("float32")
    with relay.transform.PassContext(opt_level=opt_level):
        factory = relay.build(mod, target="llvm", params=params, executor="aot")
        graph = relay.build(mod, target="llvm", params=params)["default"](relay.cpu(0))
    assert _concat_calls(factory) == 0 and len(factory.program.dropped) == 8
    module = relay.aot.AotModule(factory["default"](relay.cpu(0)))
    got = _run(module, {"data": data})[0]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, {"data": data})[0]
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * scale)
    np.testing.assert_array_equal(got, _run(graph, {"data": data})[0])
