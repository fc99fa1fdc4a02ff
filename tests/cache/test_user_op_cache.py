"""The disk cache and user-registered operators: a kernel is keyed by what it compiles (the
content of its lowered loop nest), so a process that registers an op under the same name with
another compute never receives the kernel another process built from the old definition, while
a process with the same definition loads it without compiling. Expected values are numpy's."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.compile
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Registers my.cached_op with the compute named by argv[1] ("double": 2x + 1, "triple": 3x),
# builds relu -> my.cached_op with the graph executor, checks it against numpy and prints the
# number of LLVM compiles this process ran.
_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import relay_backend as relay
    from relay_backend import te
    from relay_backend.codegen import llvm_target
    from relay_backend.op import OpPattern
    from relay_backend.op import op as reg

    definition = sys.argv[1]
    reg.register("my.cached_op", "a user op whose compute this process chooses")
    op = reg.get("my.cached_op")
    op.set_num_inputs(1)
    op.add_argument("data", "Tensor", "the input tensor")
    op.add_type_rel("Identity")
    reg.register_pattern("my.cached_op", OpPattern.ELEMWISE)

    @reg.register_compute("my.cached_op")
    def _compute(attrs, inputs, out_type):
        x, = inputs
        if definition == "double":
            return [te.compute(x.shape, lambda *i: x[i] * te.const(2, x.dtype) + te.const(1, x.dtype))]
        return [te.compute(x.shape, lambda *i: x[i] * te.const(3, x.dtype))]

    reg.register_injective_schedule("my.cached_op")
    x = relay.var("x", shape=(16,), dtype="float32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Call(op, [relay.nn.relu(x)])))
    data = np.linspace(-2, 2, 16, dtype="float32")
    gmod = relay.build(mod)["default"](relay.cpu())
    gmod.set_input("x", data)
    gmod.run()
    relu = np.maximum(data, 0)
    want = 2 * relu + 1 if definition == "double" else 3 * relu
    np.testing.assert_allclose(gmod.get_output(0).numpy(), want, rtol=1e-6)
    print(json.dumps({"llvm": llvm_target.compile_count()}))
""")


def _build_in_a_new_process(cache_dir, definition) -> dict:
    env = {**os.environ, "RB_CACHE_DIR": str(cache_dir), "RB_NO_DISK_CACHE": "", "RB_DEBUG": "0",
           "RB_PROGRESS": "0"}
    proc = subprocess.run([sys.executable, "-c", _CHILD, definition], cwd=_REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"the {definition!r} process failed:\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_changed_user_op_definition_never_loads_the_old_kernel(tmp_path):
    cache_dir = tmp_path / "cache"
    assert _build_in_a_new_process(cache_dir, "double")["llvm"] > 0
    # same op name, same Relay program, another compute: compiled afresh, numpy's 3x
    assert _build_in_a_new_process(cache_dir, "triple")["llvm"] > 0
    # the first definition again: its kernel is still in the cache and is served, not rebuilt
    assert _build_in_a_new_process(cache_dir, "double")["llvm"] == 0
