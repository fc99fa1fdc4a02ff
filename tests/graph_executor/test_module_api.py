"""TVM v0.18's GraphModule / AotModule calls beyond set_input-run-get_output: `.module` (a runtime
module with the functions by name and time_evaluator), input info, share_params (zero copy),
load_params and set_input(**params) ignoring names that are not inputs, and benchmark with TVM's
arguments. Results are checked against numpy."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.aot import AotModule
from relay_backend.errors import InputError
from relay_backend.graph_executor import GraphModule
from relay_backend.runtime.benchmark import BenchmarkResult

X = np.linspace(-1, 1, 12, dtype="float32").reshape(2, 6)
W = np.linspace(0.5, 2, 12, dtype="float32").reshape(2, 6)


def expected(x, w):
    return np.exp(x.astype("float64") * w)


@pytest.fixture(scope="module", params=["graph", "aot"])
def factory(request):
    x, w = relay.var("x", shape=(2, 6)), relay.var("w", shape=(2, 6))
    mod = relay.IRModule.from_expr(relay.Function([x, w], relay.exp(relay.multiply(x, w))))
    return request.param, relay.build(mod, target="llvm", executor=request.param)


def _module(factory):
    kind, lib = factory
    inner = lib["default"](relay.cpu(0))
    return GraphModule(inner) if kind == "graph" else AotModule(inner)


def test_module_exposes_functions_by_name_and_time_evaluator(factory):
    gmod = _module(factory)
    mod = gmod.module
    assert mod.type_key == ("GraphExecutor" if factory[0] == "graph" else "AotExecutor")
    assert {"run", "set_input", "get_output", "get_input_index", "get_num_inputs",
            "load_params", "share_params", "run_from_inputs"} <= set(mod.function_names)
    mod["set_input"]("x", X)
    mod["set_input"]("w", W)
    mod["run"]()
    np.testing.assert_allclose(mod["get_output"](0).numpy(), expected(X, W), rtol=1e-5)
    assert mod["get_num_inputs"]() == 2 and mod["get_input_index"]("w") == 1
    result = mod.time_evaluator("run", relay.cpu(), number=2, repeat=3)()
    assert isinstance(result, BenchmarkResult) and len(result.results) == 3
    assert gmod["run"] == gmod.run and gmod.module is mod


def test_input_info_and_counts(factory):
    gmod = _module(factory)
    assert gmod.get_num_inputs() == 2 and gmod.get_num_outputs() == 1
    assert gmod.get_input_index("x") == 0 and gmod.get_input_index("nope") == -1
    shapes, dtypes = gmod.get_input_info()
    assert {k: tuple(v) for k, v in shapes.items()} == {"x": (2, 6), "w": (2, 6)}
    assert dict(dtypes) == {"x": "float32", "w": "float32"}


def test_set_input_kwargs_and_load_params_ignore_names_that_are_not_inputs(factory):
    gmod = _module(factory)
    gmod.set_input(x=X, w=W, unused=np.zeros(3, "float32"))            # TVM skips 'unused'
    gmod.run()
    np.testing.assert_allclose(gmod.get_output(0).numpy(), expected(X, W), rtol=1e-5)
    gmod.load_params(relay.save_param_dict({"w": 2 * W, "other": np.ones(2, "float32")}))
    gmod.run()
    np.testing.assert_allclose(gmod.get_output(0).numpy(), expected(X, 2 * W), rtol=1e-5)
    with pytest.raises(InputError, match="Could not find 'nope'"):
        gmod.set_input("nope", X)                                       # a named key must exist
    fresh = _module(factory)
    with pytest.raises(InputError, match=r"\['w'\] were never set.*\['wt'\] were ignored"):
        fresh.run(x=X, wt=W)


def test_share_params_uses_the_other_modules_array_without_copying(factory):
    first, second = _module(factory), _module(factory)
    first.set_input("w", W)
    second.share_params(first, relay.save_param_dict({"w": W, "not_an_input": W}))
    second.set_input("x", X)
    second.run()
    np.testing.assert_allclose(second.get_output(0).numpy(), expected(X, W), rtol=1e-5)
    first.set_input("w", 3 * W)                     # writes the shared array in place
    second.run()
    np.testing.assert_allclose(second.get_output(0).numpy(), expected(X, 3 * W), rtol=1e-5)
    assert second.get_input("w").data_ptr == first.get_input("w").data_ptr
    with pytest.raises(InputError, match="other must be a"):
        second.share_params(object(), relay.save_param_dict({"w": W}))


def test_benchmark_takes_tvms_arguments(factory):
    gmod = _module(factory)
    result = gmod.benchmark(relay.cpu(0), func_name="run", repeat=3, number=2, min_repeat_ms=None,
                            limit_zero_time_iterations=10, cooldown_interval_ms=0, repeats_to_cooldown=1,
                            x=X, w=W)
    assert len(result.results) == 3 and result.min <= result.median <= result.max
    end_to_end = gmod.benchmark(relay.cpu(0), repeat=2, number=1, end_to_end=True, x=X, w=W)
    assert len(end_to_end.results) == 2
    np.testing.assert_allclose(gmod.run_from_inputs(1, 0, "x", X, "w", W)[0], expected(X, W), rtol=1e-5)
