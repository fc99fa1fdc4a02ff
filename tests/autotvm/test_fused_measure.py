"""Measuring a task inside its program (issue 17): extract_from_program keeps, for each task,
the program's fused functions whose anchor it is (with their call counts); a measurement
builds those functions, epilogues included (bias, residual add, relu), with the config applied
to the task's op only, and weights their times by their calls. Every config of the (layout-
restricted) space must give the numpy result of the whole fused function; a config whose
channel blocks are not the function's is an instantiation error, never a silent default; the
runner's cache flush and thread CPU time options give sane costs. With per_fused_function, two
kernels of one convolution shape are two tasks, and a record of one changes only its kernel."""
import numpy as np
import pytest

import relay_backend as rb
from relay_backend import autotvm
from relay_backend.autotvm.measure import jobs
from relay_backend import te_compiler
from relay_backend.autotvm.record import MeasureErrorNo, MeasureInput, MeasureResult
from relay_backend.autotvm.task.dispatcher import op_workload
from relay_backend.autotvm.task.task import layout_knobs_of
from relay_backend.ir.expr import Call, Function
from relay_backend.ir.functor import all_nodes_post_order
from relay_backend.runtime import ndarray as nd
from relay_backend.tir.printer import func_to_str
from relay_backend.transform import PassContext
from relay_backend.transform.bind_params import bind_params_to_main
from relay_backend.transform.pipeline import default_pipeline

pytestmark = pytest.mark.compile
TARGET = "llvm"
CHANNELS, SIZE = 16, 6


def _block_model():
    """Two 3x3 convolutions of one shape (one task), bias + relu, then bias + residual + relu
    (two fused functions with different epilogues), as in a ResNet basic block."""
    rng = np.random.default_rng(0)
    data = rb.var("data", shape=(1, CHANNELS, SIZE, SIZE))
    params = {name: rng.uniform(-1, 1, shape).astype("float32") for name, shape in
              (("w1", (CHANNELS, CHANNELS, 3, 3)), ("w2", (CHANNELS, CHANNELS, 3, 3)),
               ("b1", (CHANNELS, 1, 1)), ("b2", (CHANNELS, 1, 1)))}
    c = {k: rb.const(v) for k, v in params.items()}
    y = rb.nn.relu(rb.add(rb.nn.conv2d(data, c["w1"], padding=(1, 1)), c["b1"]))
    y = rb.nn.relu(rb.add(rb.add(rb.nn.conv2d(y, c["w2"], padding=(1, 1)), c["b2"]), data))
    return rb.IRModule.from_expr(rb.Function([data], y))


def _dense_model(rows=8, k=12, units=16):
    rng = np.random.default_rng(1)
    data = rb.var("data", shape=(rows, k))
    weight, bias = rng.uniform(-1, 1, (units, k)).astype("float32"), rng.uniform(-1, 1, units).astype("float32")
    body = rb.nn.relu(rb.nn.bias_add(rb.nn.dense(data, rb.const(weight)), rb.const(bias)))
    return rb.IRModule.from_expr(rb.Function([data], body))


def _task(mod, name, **kwargs):
    return next(t for t in autotvm.task.extract_from_program(mod, {}, TARGET, **kwargs) if t.name == name)


def _numpy_outputs(text, inputs):
    """The fused function run by the debug interpreter (the numpy oracle)."""
    func = rb.ir.serialization.load_json(text)
    mod = rb.IRModule.from_expr(rb.Function(func.params, func.body))
    result = rb.create_executor("debug", mod=mod, target=TARGET).evaluate()(*inputs)
    return [result.numpy()]


def test_a_task_keeps_the_fused_functions_it_anchors_with_their_epilogues():
    task = _task(_block_model(), "conv2d_NCHWc.x86")
    assert len(task.fused_functions) == 2
    assert all(calls == 1 for _, calls in task.fused_functions)
    texts = [rb.ir.serialization.load_json(text).astext() for text, _ in task.fused_functions]
    assert sum("nn.relu" in t for t in texts) == 2
    assert sorted(t.count("add(") for t in texts) == [1, 2]          # bias; bias + residual
    # the space keeps only the configs on the functions' (default) blocks
    layouts = {tuple(layout_knobs_of(task.config_space.get(i)).items()) for i in task.config_space.valid_indices()}
    assert len(layouts) == 1 and len(task.config_space) > 1
    alone = _task(_block_model(), "conv2d_NCHWc.x86", measure_in_program=False)
    assert alone.fused_functions == () and len(alone.config_space) > len(task.config_space)


@pytest.mark.parametrize("model, name", [  # the conv space builds ~20 kernels: -m slow
    pytest.param(_block_model, "conv2d_NCHWc.x86", marks=pytest.mark.slow),
    (_dense_model, "dense_pack_prepacked.x86")])
def test_every_config_builds_the_real_fused_kernels_and_matches_numpy(model, name):
    task = _task(model(), name)
    payload = jobs.task_payload(task)
    space = task.config_space
    rng = np.random.default_rng(2)
    checked = 0
    for index in space.valid_indices():
        built, kernels = jobs._kernels(payload, space.get(index).to_json_dict())
        module, info = jobs._compile(built, kernels)
        assert [n for n, _, _ in info] == [f"fused_{k}" for k in range(len(task.fused_functions))]
        for (text, calls), (kernel, weight, arg_info) in zip(task.fused_functions, info):
            assert weight == calls
            inputs = [rng.uniform(-1, 1, shape).astype(dtype) for shape, dtype, is_out, _ in arg_info if not is_out]
            outputs = [nd.empty(shape, dtype) for shape, dtype, is_out, _ in arg_info if is_out]
            module[kernel](*[nd.array(a) for a in inputs], *outputs)
            for got, want in zip(outputs, _numpy_outputs(text, inputs)):
                np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
        checked += 1
    assert checked == len(space) > 1


def test_a_config_on_other_blocks_is_an_instantiation_error_in_the_program():
    task = _task(_block_model(), "conv2d_NCHWc.x86")
    alone = _task(_block_model(), "conv2d_NCHWc.x86", measure_in_program=False)
    default = layout_knobs_of(task.config_space.get(task.config_space.valid_indices()[0]))
    other = next(alone.config_space.get(i) for i in alone.config_space.valid_indices()
                 if layout_knobs_of(alone.config_space.get(i)) != default)
    result = jobs.build_job(jobs.task_payload(task), other.to_json_dict())
    assert result.error is not None and result.error[0] == "instantiation"
    assert "layouts" in result.error[2]


def test_runner_times_the_fused_kernels_with_flush_and_thread_time():
    pytest.importorskip("pebble", reason="measuring needs pebble (pip install relay_backend[tune])")
    task = _task(_block_model(), "conv2d_NCHWc.x86")
    builder = autotvm.LocalBuilder(timeout=60, n_parallel=1)
    runner = autotvm.LocalRunner(timeout=30, number=1, repeat=3, enable_cpu_cache_flush=True,
                                 cache_flush_bytes=1 << 20, thread_time=True, cooldown_interval=0)
    try:
        batch = autotvm.measure.create_measure_batch(task, autotvm.measure_option(builder, runner))
        space = task.config_space
        inputs = [MeasureInput(task.target, task, space.get(i)) for i in space.valid_indices()[:2]]
        results = batch(inputs)
    finally:
        builder.close()
        runner.close()
    assert [r.error_no for r in results] == [MeasureErrorNo.NO_ERROR] * 2
    assert all(len(r.costs) == 1 and 0 < r.costs[0] < 1 for r in results)   # repeat 3, extremes dropped


def test_time_evaluator_reads_the_clock_it_is_given():
    ticks = iter(range(0, 1000, 5))
    calls = []
    evaluator = rb.runtime.benchmark.time_evaluator(lambda: calls.append(1), number=2, repeat=3,
                                                    clock=lambda: next(ticks))
    assert evaluator().results == [2.5, 2.5, 2.5]      # 5 ticks per 2 calls
    assert len(calls) == 1 + 2 * 3


def _conv_kernels_tir(mod):
    """{number of adds in the function: TIR text} of the convolution kernels a build of `mod`
    at opt_level 3 lowers (the TECompiler's own lowering, under the current dispatch context)."""
    with PassContext(opt_level=3):
        opt = default_pipeline(target=TARGET)(bind_params_to_main(mod, {}, "test"))
    out = {}
    for node in all_nodes_post_order(opt["main"]):
        func = node.op if isinstance(node, Call) else None
        if isinstance(func, Function) and func.is_primitive and "conv2d_NCHWc" in func.astext():
            cached = te_compiler.get().lower(func, TARGET)
            out[func.astext().count("add(")] = func_to_str(next(iter(cached.funcs.values())))
    return out


def test_per_fused_function_tasks_tune_each_kernel_apart():
    mod = _block_model()
    tasks = [t for t in autotvm.task.extract_from_program(mod, {}, TARGET, per_fused_function=True)
             if t.name == "conv2d_NCHWc.x86"]
    assert len(tasks) == 2 and [len(t.fused_functions) for t in tasks] == [1, 1]
    assert tasks[0].workload[:-1] == tasks[1].workload[:-1] and tasks[0].workload != tasks[1].workload
    plain = _task(mod, "conv2d_NCHWc.x86").workload
    assert op_workload(tasks[0].workload) == op_workload(tasks[1].workload) == op_workload(plain) == plain
    residual = next(t for t in tasks if rb.ir.serialization.load_json(t.fused_functions[0][0]).astext().count("add(") == 2)
    space = residual.config_space
    fallback = autotvm.task.FallbackConfigEntity()
    residual.instantiate(fallback)
    other = next(space.get(i) for i in space.valid_indices()
                 if space.get(i)["tile_ow"].size[-1] != fallback["tile_ow"].size[-1])
    record = (MeasureInput(residual.target, residual, other), MeasureResult((1e-6,), MeasureErrorNo.NO_ERROR, 0.1, 0.0))
    untuned = _conv_kernels_tir(mod)
    with autotvm.apply_history_best([record]):
        tuned = _conv_kernels_tir(mod)
        lib = rb.build(mod, TARGET)
    assert tuned[1] == untuned[1]                     # the bias + relu kernel keeps its default
    assert tuned[2] != untuned[2]                     # the residual kernel takes its own record
    data = np.random.default_rng(3).uniform(-1, 1, (1, CHANNELS, SIZE, SIZE)).astype("float32")
    gm = rb.graph_executor.GraphModule(lib["default"](rb.cpu()))
    gm.set_input("data", data)
    gm.run()
    want = rb.create_executor("debug", mod=mod, target=TARGET).evaluate()(data).numpy()
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, rtol=1e-4, atol=1e-4)
