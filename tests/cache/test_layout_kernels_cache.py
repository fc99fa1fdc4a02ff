"""The disk cache and AlterOpLayout: the same model built at opt_level 2 (NCHW kernels) and then
at opt_level 3 (x86: channel-blocked NCHWc kernels, packed dense) never serves one level's
kernels or AOT library to the other: the opt_level 3 build compiles its own (counted), both
agree with the independent numpy forward pass, and a rebuild at opt_level 3 with a fresh
in-memory compiler compiles nothing."""
import numpy as np
import pytest

import relay_backend as relay
from relay_backend.aot.build import cc_compile_count
from relay_backend.codegen import llvm_target
from relay_backend.te_compiler import get as get_compiler
from relay_backend.testing import seed_cnn

pytestmark = pytest.mark.compile


def _build_and_run(mod, params, x, level, executor):
    get_compiler().clear()                      # only the disk cache carries kernels over
    with relay.transform.PassContext(opt_level=level):
        factory = relay.build(mod, target="llvm", params=params, executor=executor)
    module = factory["default"](relay.cpu())
    if executor == "aot":
        module = relay.aot.AotModule(module)
    else:
        module = relay.graph_executor.GraphModule(module)
    module.set_input("data", x)
    module.run()
    return module.get_output(0).numpy()


@pytest.mark.parametrize("executor", ["graph", "aot"])
def test_opt_level_3_layouts_are_cached_apart_from_opt_level_2(cache_dir, executor):
    mod, params = seed_cnn.get_workload()
    x = np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype("float32")
    want = seed_cnn.numpy_forward(x, params)
    with relay.transform.PassContext(opt_level=3):
        altered, _ = relay.build_module.optimize(mod, target="llvm", params=params)
    assert "nn.contrib_conv2d_NCHWc" in altered.astext()    # the levels really differ
    counts = []
    for level in (2, 3, 3):
        before = llvm_target.compile_count(), cc_compile_count()
        out = _build_and_run(mod, params, x, level, executor)
        counts.append((llvm_target.compile_count() - before[0], cc_compile_count() - before[1]))
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    compiled = [llvm + cc for llvm, cc in counts]
    assert compiled[0] > 0 and compiled[1] > 0, counts       # level 3 was not served level 2's code
    assert compiled[2] == 0, counts                           # and its own code is served again
