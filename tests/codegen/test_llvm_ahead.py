"""Kernels compiled while the model is still being lowered (codegen/llvm_ahead.py): relay.build,
the AOT build and vm.compile hand each freshly lowered kernel to the compile pool and then take
its object code instead of compiling it again (every kernel compiled once, counted), with
results equal to numpy; nothing goes ahead for a small model (few kernels or little IR: compiled
in-process from the IR made ahead), with one compile job, for kernels already on disk or for a
rebuild served from memory; a kernel whose compile fails in the pool is compiled by the build
itself; the heap is frozen only while the session lasts."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend import config
from relay_backend.codegen import llvm as llvm_codegen, llvm_ahead, llvm_pool, llvm_target
from relay_backend.te_compiler import get as get_te_compiler

pytestmark = pytest.mark.compile
LAYERS = llvm_ahead.AHEAD_MIN_KERNELS + 2


@pytest.fixture
def two_jobs(cache_dir, monkeypatch):
    """Two compile jobs, an empty disk cache and an empty in-memory compiler; any amount of IR
    is worth the pool (normally PARALLEL_MIN_IR_BYTES, more than these small kernels make)."""
    monkeypatch.setattr(llvm_pool, "PARALLEL_MIN_IR_BYTES", 0)
    monkeypatch.setenv("RB_COMPILE_JOBS", "2")
    config.reload()
    get_te_compiler().clear()
    yield
    monkeypatch.undo()
    config.reload()
    get_te_compiler().clear()


def _dense_layers(y, width: int, layers: int, seed: int):
    """dense + bias + relu `layers` times on `y` (`width` features), each a kernel of its own
    shape; the result and its numpy reference (float64 in, float64 out)."""
    rng = np.random.default_rng(seed)
    widths = [width + 2 * k for k in range(layers + 1)]
    weights = []
    for k in range(layers):
        w = (rng.standard_normal((widths[k + 1], widths[k])) / np.sqrt(widths[k])).astype("float32")
        b = rng.standard_normal(widths[k + 1]).astype("float32")
        weights.append((w, b))
        y = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(y, relay.const(w)), relay.const(b)))

    def reference(data):
        out = data.astype("float64")
        for w, b in weights:
            out = np.maximum(out @ w.T + b, 0)
        return out
    return y, reference


def _chain(layers: int):
    """A model of `layers` dense layers on a (2, 8) input, and its numpy reference."""
    x = relay.var("x", shape=(2, 8))
    y, reference = _dense_layers(x, 8, layers, seed=layers)
    return relay.IRModule.from_expr(relay.Function([x], y)), reference


def _run(mod, data, executor: str):
    if executor == "vm":
        machine = relay.vm.VirtualMachine(relay.vm.compile(mod, target="llvm"), relay.cpu())
        return machine.invoke("main", data).numpy()
    factory = relay.build(mod, target="llvm", executor=executor)
    if executor == "aot":
        module = relay.aot.AotModule(factory["default"](relay.cpu()))
    else:
        module = relay.graph_executor.GraphModule(factory["default"](relay.cpu()))
    module.set_input("x", data)
    module.run()
    return module.get_output(0).numpy()


def _delta(before: dict) -> dict:
    return {k: v - before[k] for k, v in llvm_ahead.stats().items()}


@pytest.mark.parametrize("executor", ["graph", "aot", "vm"])
def test_every_kernel_is_compiled_once_ahead_and_taken(two_jobs, executor):
    mod, reference = _chain(LAYERS)
    data = np.random.default_rng(0).standard_normal((2, 8)).astype("float32")
    before, compiles = llvm_ahead.stats(), llvm_target.compile_count()
    out = _run(mod, data, executor)
    compiled = llvm_target.compile_count() - compiles
    assert _delta(before) == {"sessions": 1, "submitted": compiled, "taken": compiled}
    assert compiled >= LAYERS
    np.testing.assert_allclose(out, reference(data), rtol=1e-4, atol=1e-4)


def test_a_small_model_compiles_as_before(two_jobs):
    mod, reference = _chain(llvm_ahead.AHEAD_MIN_KERNELS - 2)
    data = np.ones((2, 8), "float32")
    before = llvm_ahead.stats()
    out = _run(mod, data, "graph")
    assert _delta(before) == {"sessions": 1, "submitted": 0, "taken": 0}
    np.testing.assert_allclose(out, reference(data), rtol=1e-4, atol=1e-4)


def test_little_ir_compiles_in_process_from_the_ir_made_ahead(two_jobs, monkeypatch):
    """Enough kernels but less IR than PARALLEL_MIN_IR_BYTES: nothing goes to the pool, and
    each kernel's IR, made while lowering, is the one compiled (made once per kernel)."""
    monkeypatch.setattr(llvm_pool, "PARALLEL_MIN_IR_BYTES", 1 << 30)
    made, codegen = [], llvm_codegen.codegen_llvm
    monkeypatch.setattr(llvm_codegen, "codegen_llvm",
                        lambda funcs, *args: made.append(funcs[0].name) or codegen(funcs, *args))
    mod, reference = _chain(LAYERS)
    data = np.ones((2, 8), "float32")
    before, compiles = llvm_ahead.stats(), llvm_target.compile_count()
    out = _run(mod, data, "graph")
    compiled = llvm_target.compile_count() - compiles
    assert _delta(before) == {"sessions": 1, "submitted": 0, "taken": 0}
    assert compiled >= LAYERS and len(made) == len(set(made)) == compiled
    np.testing.assert_allclose(out, reference(data), rtol=1e-4, atol=1e-4)


def test_one_compile_job_opens_no_session(two_jobs, monkeypatch):
    monkeypatch.setenv("RB_COMPILE_JOBS", "1")
    config.reload()
    mod, reference = _chain(LAYERS)
    data = np.ones((2, 8), "float32")
    before = llvm_ahead.stats()
    out = _run(mod, data, "graph")
    assert _delta(before) == {"sessions": 0, "submitted": 0, "taken": 0}
    np.testing.assert_allclose(out, reference(data), rtol=1e-4, atol=1e-4)


def test_kernels_on_disk_or_in_memory_are_not_handed_over(two_jobs):
    """The same model again: from the in-memory compiler (nothing lowered), then lowered afresh
    by an empty compiler but found on disk: no kernel goes to the pool, none is compiled."""
    mod, reference = _chain(LAYERS)
    data = np.ones((2, 8), "float32")
    _run(mod, data, "graph")
    for clear in (False, True):
        if clear:
            get_te_compiler().clear()
        before, compiles = llvm_ahead.stats(), llvm_target.compile_count()
        out = _run(mod, data, "graph")
        assert _delta(before)["submitted"] == 0 and llvm_target.compile_count() == compiles
        np.testing.assert_allclose(out, reference(data), rtol=1e-4, atol=1e-4)


def test_a_kernel_that_fails_in_the_pool_is_compiled_by_the_build(two_jobs, monkeypatch):
    """The pool is handed IR LLVM rejects: no result is taken, and the build compiles every
    kernel itself, correctly."""
    submit = llvm_pool.submit
    monkeypatch.setattr(llvm_pool, "submit",
                        lambda ir_text, spec, what, jobs=None: submit("not llvm ir", spec, what, jobs))
    mod, reference = _chain(LAYERS)
    data = np.ones((2, 8), "float32")
    before, compiles = llvm_ahead.stats(), llvm_target.compile_count()
    out = _run(mod, data, "graph")
    delta = _delta(before)
    assert delta["submitted"] >= LAYERS and delta["taken"] == 0
    assert llvm_target.compile_count() - compiles == delta["submitted"]
    np.testing.assert_allclose(out, reference(data), rtol=1e-4, atol=1e-4)


def test_the_heap_is_unfrozen_after_the_build(two_jobs, monkeypatch):
    """The session keeps the heap frozen while it lowers (gc.freeze) and leaves nothing frozen."""
    import gc
    assert gc.get_freeze_count() == 0
    mod, _ = _chain(LAYERS)
    seen, hand_over = [], llvm_ahead._hand_over
    monkeypatch.setattr(llvm_ahead, "_hand_over",
                        lambda session: seen.append(gc.get_freeze_count()) or hand_over(session))
    _run(mod, np.ones((2, 8), "float32"), "graph")
    assert seen and min(seen) > 0 and gc.get_freeze_count() == 0


def test_a_concatenation_run_in_place_is_never_compiled(two_jobs):
    """Two producers of one concatenation write into its slices (graph __nop): the
    concatenation's kernel is not handed over, and the build compiles only the kernels it runs."""
    rng = np.random.default_rng(1)
    x = relay.var("x", shape=(1, 16))
    w1, w2 = (rng.standard_normal((n, 16)).astype("float32") for n in (32, 48))
    both = relay.concatenate([relay.nn.relu(relay.nn.dense(x, relay.const(w1))),
                              relay.nn.relu(relay.nn.dense(x, relay.const(w2)))], axis=1)
    y, tail = _dense_layers(both, 80, LAYERS, seed=2)
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    data = rng.standard_normal((1, 16)).astype("float32")
    before, compiles = llvm_ahead.stats(), llvm_target.compile_count()
    factory = relay.build(mod, target="llvm")
    compiled = llvm_target.compile_count() - compiles
    assert "concatenate_nop" in factory.get_graph_json()
    assert _delta(before) == {"sessions": 1, "submitted": compiled, "taken": compiled}
    module = relay.graph_executor.GraphModule(factory["default"](relay.cpu()))
    module.set_input("x", data)
    module.run()
    d = data.astype("float64")
    first = np.concatenate([np.maximum(d @ w1.T, 0), np.maximum(d @ w2.T, 0)], axis=1)
    np.testing.assert_allclose(module.get_output(0).numpy(), tail(first), rtol=1e-4, atol=1e-4)
