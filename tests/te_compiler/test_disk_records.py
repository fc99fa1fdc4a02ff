"""Relay-level disk records (te_compiler/disk_records.py): a TECompiler that finds a primitive
function's record recalls it without lowering, and lowers only when its tir is asked for; the
recalled kernel computes what numpy computes. Anything that could change the lowering misses:
another target, another PassContext, another package digest, other autotvm configs, an operator
changed by user code, a damaged record. Each "process" is a fresh TECompiler sharing the disk."""
import time

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import autotvm, cache, nd
from relay_backend.autotvm.record import MeasureErrorNo, MeasureInput, MeasureResult
from relay_backend.codegen import llvm_cache
from relay_backend.backend import te_compiler
from relay_backend.op import TempOpAttr, op_attrs
from relay_backend.target import Target
from relay_backend.te_compiler import disk_records
from relay_backend.te_compiler.cache import ensure_typed
from relay_backend.te_compiler.compiler import TECompiler
from relay_backend.transform import PassContext

from ..autotvm.plain_layout import extract_plain_layout

pytestmark = pytest.mark.compile
RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 6)).astype("float32")
W = RNG.standard_normal((5, 6)).astype("float32")


@pytest.fixture(autouse=True)
def library_definitions():
    """Records on: the operators as they are now count as the package's own (an earlier test's
    TempOpAttr, restored or not, turned them off for the rest of its process)."""
    was = op_attrs.definitions_are_library_only()
    op_attrs.mark_library_defined()
    yield
    if not was:                                # as it was: off until the process ends
        op_attrs.bump_generation()


def _dense_relu():
    """A primitive relu(dense(x, w)): nn.dense has tunable implementations (autotvm queries)."""
    x, w = relay.var("x", shape=(4, 6)), relay.var("w", shape=(5, 6))
    return relay.Function([x, w], relay.nn.relu(relay.nn.dense(x, w))).with_attr("Primitive", 1)


def _run(kernel) -> np.ndarray:
    out = nd.empty((4, 5), "float32")
    kernel(nd.array(X), nd.array(W), out)
    return out.numpy()


def _expected() -> np.ndarray:
    return np.maximum(X @ W.T, 0.0)


def _lower_in_a_new_compiler(target="llvm"):
    compiler = TECompiler()
    return compiler, compiler.lower(_dense_relu(), target, mod_name=None)


def _build_in_a_new_compiler(target="llvm"):
    """Lower and compile (a build writes the records of what it lowered)."""
    compiler, cached = _lower_in_a_new_compiler(target)
    compiler.jit(_dense_relu(), target)
    return compiler, cached


def test_a_recalled_function_runs_without_lowering_and_lowers_only_when_asked(cache_dir):
    first, cached = _lower_in_a_new_compiler()
    assert first.stats["lowered"] == 1 and first.stats["recalled"] == 0
    assert _lower_in_a_new_compiler()[0].stats["recalled"] == 0     # no build yet: nothing written
    np.testing.assert_allclose(_run(first.jit(_dense_relu(), "llvm")), _expected(), rtol=1e-5, atol=1e-5)
    second = TECompiler()
    kernel = second.jit(_dense_relu(), "llvm")
    assert second.stats == {"lowered": 0, "recalled": 1, "llvm_builds": 0, "disk_hits": 1}
    np.testing.assert_array_equal(_run(kernel), _run(first.jit(_dense_relu(), "llvm")))
    recalled = second.lower(_dense_relu(), "llvm", mod_name=None)
    assert recalled.is_deferred and recalled.implementations == cached.implementations
    (prim,) = recalled.funcs.values()                       # asking for the tir lowers it now
    assert second.stats["lowered"] == 1 and not recalled.is_deferred
    (original,) = cached.funcs.values()
    assert llvm_cache.kernel_content_digest(prim) == llvm_cache.kernel_content_digest(original)


def test_a_record_recalled_under_another_kernel_name_compiles_under_that_name(cache_dir):
    """Executors name kernels differently (vm_mod_..., tvmgen_default_...): the object code's key
    has the symbol, so a record recalled under a new name lowers and compiles the kernel once
    more under that name, and it computes the same."""
    x = relay.var("x", shape=(1, 3, 8, 8))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x) * relay.const(2.0)))
    data = RNG.standard_normal((1, 3, 8, 8)).astype("float32")
    first = relay.create_executor("vm", mod=mod).evaluate()(data).numpy()
    np.testing.assert_allclose(first, np.maximum(data, 0) * 2.0, rtol=1e-6)
    compiler = te_compiler.get()
    compiler.clear()
    before = dict(compiler.stats)
    again = relay.create_executor("graph", mod=mod).evaluate()(data).numpy()
    np.testing.assert_array_equal(again, first)
    assert compiler.stats["recalled"] - before["recalled"] == 1
    assert compiler.stats["lowered"] - before["lowered"] == 1


@pytest.mark.parametrize("change", ["nothing", "target", "pass context", "package digest"])
def test_a_changed_input_of_lowering_misses(cache_dir, monkeypatch, change):
    _build_in_a_new_compiler()
    target = "llvm"
    context = PassContext.current()
    if change == "target":
        target = "llvm -opt-level=2"
    elif change == "pass context":
        context = PassContext(opt_level=3 if context.opt_level != 3 else 2)
    elif change == "package digest":
        monkeypatch.setattr(disk_records, "package_digest", lambda: "another package")
    with context:
        compiler, _ = _lower_in_a_new_compiler(target)
    if change == "nothing":
        assert compiler.stats["lowered"] == 0 and compiler.stats["recalled"] == 1
    else:
        assert compiler.stats["lowered"] == 1 and compiler.stats["recalled"] == 0


def _tuned_dense_pack(tile_y: int):
    """A tuning record forcing dense_pack.x86 with tile_y = `tile_y` for _dense_relu's dense."""
    x, w = relay.var("x", shape=(4, 6)), relay.var("w", shape=(5, 6))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(relay.nn.dense(x, w))))
    task = next(t for t in extract_plain_layout(mod) if t.name == "dense_pack.x86")
    space = task.config_space
    config = space.get(next(i for i in range(len(space)) if space.get(i)["tile_y"].size[-1] == tile_y))
    return MeasureInput(task.target, task, config), MeasureResult((1e-5,), MeasureErrorNo.NO_ERROR, 0.1,
                                                                  time.time())


def test_other_autotvm_configs_miss(cache_dir):
    """A record holds the configs its lowering was answered; under a context answering others it
    misses, and the new lowering's record replaces it (one record per function and target)."""
    _, default = _build_in_a_new_compiler()
    assert default.tuning_queries                              # the dense asked the dispatch context
    records = [_tuned_dense_pack(tile_y=2)]
    with autotvm.apply_history_best(records):
        tuned_compiler, tuned = _lower_in_a_new_compiler()
        assert tuned_compiler.stats["lowered"] == 1 and tuned_compiler.stats["recalled"] == 0
        assert tuned.implementations[0] == ("nn.dense", "dense_pack.x86")
        np.testing.assert_allclose(_run(tuned_compiler.jit(_dense_relu(), "llvm")), _expected(),
                                   rtol=1e-5, atol=1e-5)
    with autotvm.apply_history_best(records):
        compiler, recalled = _lower_in_a_new_compiler()
        assert compiler.stats["recalled"] == 1 and recalled.implementations == tuned.implementations
    compiler, _ = _lower_in_a_new_compiler()                   # the default configs: lowered again
    assert compiler.stats["lowered"] == 1 and compiler.stats["recalled"] == 0


def test_an_operator_changed_by_user_code_turns_records_off(cache_dir):
    _build_in_a_new_compiler()
    with TempOpAttr("nn.relu", "TOpPattern", relay.op.OpPattern.ELEMWISE):
        assert disk_records.record_key(_dense_relu(), Target("llvm")) is None
        compiler, _ = _lower_in_a_new_compiler()
    assert compiler.stats["lowered"] == 1 and compiler.stats["recalled"] == 0


def test_a_damaged_record_is_a_miss(cache_dir):
    _build_in_a_new_compiler()
    key = disk_records.record_key(ensure_typed(_dense_relu()), Target("llvm"))   # typed, as lowered
    cache.store(disk_records.CACHE_KIND, key, {"record": b'{"content": 1, "signature": []}'})
    compiler, _ = _lower_in_a_new_compiler()
    assert compiler.stats["lowered"] == 1 and compiler.stats["recalled"] == 0
    np.testing.assert_allclose(_run(compiler.jit(_dense_relu(), "llvm")), _expected(), rtol=1e-5, atol=1e-5)




def test_a_kernel_over_symbolic_shapes_is_recalled_and_runs_at_any_size(cache_dir):
    """Signature dims that are expressions of shape variables (a dynamic concatenate's n + m)
    survive the record: the first process's kernel and a recalled one both run every size."""
    x, y = relay.var("x", shape=(relay.Any(), 3)), relay.var("y", shape=(relay.Any(), 3))
    mod = relay.IRModule.from_expr(relay.Function([x, y], relay.concatenate([x, y], axis=0)))
    compiler = te_compiler.get()
    for attempt in range(2):
        compiler.clear()
        before = dict(compiler.stats)
        run = relay.create_executor("vm", mod=mod).evaluate()
        for n, m in ((2, 5), (7, 1)):
            a, b = RNG.standard_normal((n, 3)).astype("float32"), RNG.standard_normal((m, 3)).astype("float32")
            np.testing.assert_array_equal(run(a, b).numpy(), np.concatenate([a, b]))
        if attempt == 1:
            assert compiler.stats["recalled"] > before["recalled"] and compiler.stats["lowered"] == before["lowered"]
