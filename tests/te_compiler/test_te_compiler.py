"""TECompiler: caching by structural equality, selection by plevel and specialization, naming,
jit correctness against numpy, the on-disk cache, and errors that name the function."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import nd
from relay_backend.backend import te_compiler
from relay_backend.errors import CompileError
from relay_backend.strategy import register_strategy, schedule_default, unregister_strategy

pytestmark = pytest.mark.compile


def _primitive(shape=(4, 8), name="x"):
    x = relay.var(name, shape=shape)
    b = relay.var("b", shape=shape[-1:])
    body = relay.nn.relu(relay.add(relay.multiply(x, relay.const(2.0)), b))
    return relay.Function([x, b], body).with_attr("Primitive", 1)


@pytest.fixture
def compiler():
    return te_compiler.TECompiler()


def test_jit_matches_numpy(compiler):
    kernel = compiler.jit(_primitive(), "llvm")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype("float32")
    b = rng.standard_normal(8).astype("float32")
    out = nd.empty((4, 8), "float32")
    kernel(nd.array(x), nd.array(b), out)
    np.testing.assert_allclose(out.numpy(), np.maximum(x * 2 + b, 0), rtol=1e-6)


def test_alpha_equivalent_functions_share_one_entry(compiler):
    f1, f2 = _primitive(name="x"), _primitive(name="renamed")
    c1 = compiler.lower(f1, "llvm")
    c2 = compiler.lower(f2, "llvm")
    assert c1 is c2
    (key, value), = compiler.items()
    # lowered once, or recalled once from a disk record (te_compiler/disk_records.py)
    assert value.use_count == 2 and compiler.stats["lowered"] + compiler.stats["recalled"] == 1


def test_different_targets_do_not_share(compiler):
    compiler.lower(_primitive(), "llvm")
    compiler.lower(_primitive(), "c")
    assert len(compiler.items()) == 2


def test_different_shapes_do_not_share(compiler):
    compiler.lower(_primitive((4, 8)), "llvm")
    compiler.lower(_primitive((2, 8)), "llvm")
    assert len(compiler.items()) == 2
    compiler.clear()
    assert compiler.items() == []


def test_kernel_names_follow_relay(compiler):
    cached = compiler.lower(_primitive(), "llvm", mod_name="default")
    assert cached.func_name == "tvmgen_default_fused_multiply_add_nn_relu"
    other = _primitive((2, 8))
    assert compiler.lower(other, "llvm").func_name == "tvmgen_default_fused_multiply_add_nn_relu_1"
    assert te_compiler.TECompiler().lower(_primitive(), "llvm", mod_name=None).func_name == \
        "fused_multiply_add_nn_relu"


def test_user_implementation_with_higher_plevel_is_chosen(compiler):
    calls = []

    def my_relu_compute(attrs, inputs, out_type):
        calls.append(1)
        return relay.op.get("nn.relu").compute(attrs, inputs, out_type)

    def fstrategy(strategy, attrs, inputs, out_type, target):
        strategy.add_implementation(my_relu_compute, schedule_default, name="relu.mine", plevel=30)

    register_strategy("nn.relu", "x86", fstrategy)
    try:
        op = relay.op.get("nn.relu")
        from relay_backend import te
        x = te.placeholder((4,), "float32", name="x")
        impls = te_compiler.get_valid_implementations(op, None, [x], relay.TensorType((4,)), "llvm")
        assert sorted(i.name for i in impls) == ["injective.generic", "relu.mine"]
        best, outs = te_compiler.select_implementation(op, None, [x], relay.TensorType((4,)), "llvm")
        assert best.name == "relu.mine" and calls
        cached = compiler.lower(_primitive(), "llvm")
        assert ("nn.relu", "relu.mine") in cached.implementations
        # not registered for cuda's keys: the generic GPU schedule is chosen there
        best, _ = te_compiler.select_implementation(op, None, [x], relay.TensorType((4,)), "cuda")
        assert best.name == "injective.gpu"
    finally:
        unregister_strategy("nn.relu", "x86", fstrategy)


def test_specialization_condition_selects(compiler):
    from relay_backend import te

    def fstrategy(strategy, attrs, inputs, out_type, target):
        compute = relay.op.get("exp").compute
        strategy.add_implementation(compute, schedule_default, name="exp.small", plevel=20,
                                    condition=lambda a, ins, ot: int(ins[0].shape[0]) <= 8)
        strategy.add_implementation(compute, schedule_default, name="exp.any", plevel=15)

    register_strategy("exp", "x86", fstrategy)
    try:
        op = relay.op.get("exp")
        small = te.placeholder((8,), name="x")
        big = te.placeholder((64,), name="x")
        assert te_compiler.select_implementation(op, None, [small], relay.TensorType((8,)), "llvm")[0].name == "exp.small"
        assert te_compiler.select_implementation(op, None, [big], relay.TensorType((64,)), "llvm")[0].name == "exp.any"
    finally:
        unregister_strategy("exp", "x86", fstrategy)


def test_lowering_error_names_function_and_op(compiler):
    def broken(attrs, inputs, out_type):
        raise ValueError("deliberately broken compute")

    def fstrategy(strategy, attrs, inputs, out_type, target):
        strategy.add_implementation(broken, schedule_default, name="broken", plevel=99)

    register_strategy("nn.relu", "x86", fstrategy)
    try:
        with pytest.raises(CompileError, match=r"lowering nn.relu failed(.|\n)*nn.relu\(%\d+\)(.|\n)*deliberately broken"):
            compiler.lower(_primitive(), "llvm")
    finally:
        unregister_strategy("nn.relu", "x86", fstrategy)


def test_disk_cache_skips_llvm_in_a_second_process(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, relay_backend as relay
        from relay_backend import nd
        from relay_backend.backend import te_compiler
        x = relay.var("x", shape=(16,))
        f = relay.Function([x], relay.tanh(relay.multiply(x, x))).with_attr("Primitive", 1)
        c = te_compiler.TECompiler()
        k = c.jit(f, "llvm")
        a = np.linspace(-1, 1, 16).astype("float32"); out = nd.empty((16,), "float32")
        k(nd.array(a), out)
        assert np.allclose(out.numpy(), np.tanh(a * a), rtol=1e-6)
        print(c.stats["llvm_builds"], c.stats["disk_hits"])
    """)
    env = dict(os.environ, RB_CACHE_DIR=str(tmp_path), RB_NO_DISK_CACHE="")
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert first.stdout.split() == ["1", "0"]
    assert second.stdout.split() == ["0", "1"]


def test_relay_error_in_a_compute_names_function_and_op(compiler):
    from relay_backend import te

    def exp_of_int(attrs, inputs, out_type):           # te.exp on an int32 tensor: CompileError
        x = inputs[0]
        return [te.compute(x.shape, lambda *i: te.exp(x[i]), name="bad_exp")]

    def fstrategy(strategy, attrs, inputs, out_type, target):
        strategy.add_implementation(exp_of_int, schedule_default, name="relu.exp_int", plevel=99)

    x = relay.var("xi", shape=(4,), dtype="int32")
    func = relay.Function([x], relay.nn.relu(relay.add(x, relay.const(1, "int32"))))
    func = func.with_attr("Primitive", 1)
    register_strategy("nn.relu", "x86", fstrategy)
    try:
        with pytest.raises(CompileError) as info:
            compiler.lower(func, "llvm")
    finally:
        unregister_strategy("nn.relu", "x86", fstrategy)
    msg = str(info.value)
    assert msg.startswith("lowering nn.relu failed in"), msg
    assert "%xi" in msg and "nn.relu(" in msg                     # the function excerpt
    assert "CompileError: te.exp: expects a float expression" in msg    # the original message
    assert isinstance(info.value.__cause__, CompileError)              # chained


def test_schedule_error_names_the_anchor_op(compiler):
    def bad_schedule(attrs, outs, target):
        raise ValueError("deliberately broken schedule")

    def fstrategy(strategy, attrs, inputs, out_type, target):
        strategy.add_implementation(relay.op.get("add").compute, bad_schedule,
                                    name="add.bad_schedule", plevel=99)

    register_strategy("add", "x86", fstrategy)     # add (broadcast) is the anchor of _primitive
    try:
        with pytest.raises(CompileError, match=r"failed scheduling anchor op add "
                                               r"\(add.bad_schedule\) \(ValueError: deliberately "
                                               r"broken schedule\)(.|\n)*nn.relu\(") as info:
            compiler.lower(_primitive(), "llvm")
        assert isinstance(info.value.__cause__, ValueError)
    finally:
        unregister_strategy("add", "x86", fstrategy)


def test_disk_key_depends_on_the_lowered_code_and_host_cpu():
    from dataclasses import replace
    from relay_backend.codegen import llvm_cache, llvm_target

    def key(func, spec):                                              # lowered afresh each time
        (prim,) = te_compiler.TECompiler().lower(func, "llvm").funcs.values()
        return llvm_cache.kernel_key(prim, spec, "llvm", True)

    spec = llvm_target.machine_spec("llvm")
    here = key(_primitive(), spec)
    assert here == key(_primitive(), spec)                            # rebuilt: the same key
    x = relay.var("x", shape=(2, 3))                                  # another kernel
    other = relay.Function([x], relay.nn.relu(x)).with_attr("Primitive", 1)
    assert key(other, spec) != here
    assert key(_primitive(), replace(spec, cpu="othercpu")) != here
    assert key(_primitive(), replace(spec, schedule_cpu="othercpu")) != here
    assert key(_primitive(), replace(spec, features=spec.features + ",-avx2")) != here
    assert key(_primitive(), replace(spec, opt_level=2)) != here


def test_disk_cache_never_serves_a_kernel_built_with_another_implementation(tmp_path):
    # the first process registers a (deliberately different) tanh implementation; the second
    # does not: it must rebuild, not load the first one's kernel, and get the real tanh
    script = textwrap.dedent("""
        import sys
        import numpy as np, relay_backend as relay
        from relay_backend import nd, te
        from relay_backend.backend import te_compiler
        from relay_backend.strategy import register_strategy, schedule_default
        if sys.argv[1] == "user":
            def tanh_plus_one(attrs, inputs, out_type):
                x = inputs[0]
                return [te.compute(x.shape, lambda *i: te.tanh(x[i]) + 1.0, name="t1")]
            def fstrategy(strategy, attrs, inputs, out_type, target):
                strategy.add_implementation(tanh_plus_one, schedule_default, name="tanh.user",
                                            plevel=50)
            register_strategy("tanh", "x86", fstrategy)
        x = relay.var("x", shape=(16,))
        f = relay.Function([x], relay.tanh(relay.multiply(x, x))).with_attr("Primitive", 1)
        c = te_compiler.TECompiler()
        k = c.jit(f, "llvm")
        a = np.linspace(-1, 1, 16).astype("float32"); out = nd.empty((16,), "float32")
        k(nd.array(a), out)
        want = np.tanh(a * a) + (1.0 if sys.argv[1] == "user" else 0.0)
        assert np.allclose(out.numpy(), want, rtol=1e-6, atol=1e-6), out.numpy()
        print(c.stats["llvm_builds"], c.stats["disk_hits"])
    """)
    env = dict(os.environ, RB_CACHE_DIR=str(tmp_path), RB_NO_DISK_CACHE="")
    runs = [subprocess.run([sys.executable, "-c", script, which], env=env, capture_output=True,
                           text=True) for which in ("user", "builtin", "builtin", "user")]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert [r.stdout.split() for r in runs] == [["1", "0"], ["1", "0"], ["0", "1"], ["0", "1"]]


def test_cache_key_and_cached_func_compare_as_tvm_objects(compiler):
    """As TVM Objects: `==`, same_as and hash go by identity; the cache still matches keys
    structurally, and lower() takes a CCacheKey (its target wins) as well as a Function."""
    key1 = te_compiler.CCacheKey(_primitive(name="x"), "llvm")
    key2 = te_compiler.CCacheKey(_primitive(name="renamed"), "llvm")
    assert key1.same_as(key1) and key1 == key1 and not key1.same_as(key2) and key1 != key2
    assert len({key1, key2, key1}) == 2 and hash(key1) == hash(key1)
    cached = compiler.lower(key1)
    assert compiler.lower(key2, target="c") is cached            # structurally equal: one entry
    assert compiler.lower(_primitive(name="y"), "llvm") is cached
    assert cached.same_as(cached) and cached == cached and {cached: 1}[cached] == 1
    (stored_key, value), = compiler.items()
    assert stored_key is key1 and value.cached_func is cached and value.use_count == 3
    other = compiler.lower(te_compiler.CCacheKey(_primitive(), "c"))
    assert other != cached and not other.same_as(cached) and other.target.kind.name == "c"
    with pytest.raises(CompileError, match="a primitive relay Function or a CCacheKey"):
        compiler.lower("not a function")
