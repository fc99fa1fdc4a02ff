"""The disk cache across processes, end to end: a second process building the same model (graph
build, vm.compile, AOT) runs no LLVM compile and no C compiler, and computes the same bits; two
processes building one model at the same moment both succeed with identical outputs and leave
a cache a third process builds from without compiling; a corrupt or truncated entry is detected
and only that kernel recompiled. Outputs are checked against an independent numpy forward pass
of the network (relay_backend.testing.seed_cnn.numpy_forward)."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from relay_backend import cache, nd, te
from relay_backend.codegen import build, llvm_cache, llvm_target

pytestmark = pytest.mark.compile
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Builds the seed CNN for the executors named in argv[2] ("graph,vm,aot"), checks each output
# against numpy, saves them to argv[1] (.npz) and prints what compiling cost this process.
_CHILD = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    import relay_backend as relay
    from relay_backend import vm
    from relay_backend.aot.build import cc_compile_count
    from relay_backend.backend import te_compiler
    from relay_backend.codegen import llvm_target
    from relay_backend.testing import seed_cnn
    barrier = os.environ.get("BARRIER")
    if barrier:                     # start building together with the other process
        open(f"{barrier}.{os.getpid()}", "w").close()
        deadline = time.time() + 120
        while len([n for n in os.listdir(os.path.dirname(barrier)) if n.startswith(os.path.basename(barrier) + ".")]) < 2:
            assert time.time() < deadline, "the other process never started"
            time.sleep(0.01)
    mod, params = seed_cnn.get_workload()
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype("float32")
    want = seed_cnn.numpy_forward(x, params)
    outs = {}
    for kind in sys.argv[2].split(","):
        if kind == "graph":
            g = relay.build(mod, params=params)["default"](relay.cpu())
            g.set_input("data", x); g.run(); outs[kind] = g.get_output(0).numpy()
        elif kind == "vm":
            machine = vm.VirtualMachine(vm.compile(mod, params=params), relay.cpu())
            machine.set_input("main", x); outs[kind] = machine.invoke("main").numpy()
        else:
            a = relay.aot.AotModule(relay.build(mod, params=params, executor="aot")["default"](relay.cpu()))
            a.set_input("data", x); a.run(); outs[kind] = a.get_output(0).numpy()
        err = float(np.abs(outs[kind] - want).max())
        assert err <= 1e-4 * max(1.0, float(np.abs(want).max())), (kind, err)
    np.savez(sys.argv[1], **outs)
    print(json.dumps({"llvm": llvm_target.compile_count(), "cc": cc_compile_count(),
                      "lowered": te_compiler.get().stats["lowered"]}))
""")


def _child(tmp_path, tag, kinds, barrier=None):
    env = {**os.environ, "RB_CACHE_DIR": str(tmp_path / "cache"), "RB_NO_DISK_CACHE": "",
           "RB_DEBUG": "0", "RB_PROGRESS": "0"}
    if barrier:
        env["BARRIER"] = str(barrier)
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path / f"{tag}.npz"), kinds],
                            cwd=_REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc, tmp_path, tag) -> tuple:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    with np.load(tmp_path / f"{tag}.npz") as saved:
        return json.loads(out.strip().splitlines()[-1]), {k: saved[k] for k in saved.files}


def test_a_second_process_builds_without_compiling(tmp_path):
    first, first_outs = _finish(_child(tmp_path, "first", "graph,vm,aot"), tmp_path, "first")
    assert first["llvm"] > 0 and first["cc"] == 1
    second, second_outs = _finish(_child(tmp_path, "second", "graph,vm,aot"), tmp_path, "second")
    assert second["llvm"] == 0 and second["cc"] == 0          # every kernel and the AOT library loaded
    for kind in ("graph", "vm", "aot"):
        np.testing.assert_array_equal(second_outs[kind], first_outs[kind])


def test_a_second_process_lowers_nothing_for_graph_and_vm(tmp_path):
    """The Relay-level records (te_compiler/disk_records.py) stand in for lowering: a second
    process's graph build and vm.compile run neither te lowering nor LLVM, with the same bits."""
    first, first_outs = _finish(_child(tmp_path, "first", "graph,vm"), tmp_path, "first")
    assert first["lowered"] > 0 and first["llvm"] > 0
    second, second_outs = _finish(_child(tmp_path, "second", "graph,vm"), tmp_path, "second")
    assert second == {"llvm": 0, "cc": 0, "lowered": 0}
    for kind in ("graph", "vm"):
        np.testing.assert_array_equal(second_outs[kind], first_outs[kind])


def test_two_processes_building_one_model_at_once_agree(tmp_path):
    barrier = tmp_path / "ready"
    procs = [_child(tmp_path, tag, "graph", barrier) for tag in ("a", "b")]
    (_, outs_a), (_, outs_b) = [_finish(p, tmp_path, tag) for p, tag in zip(procs, ("a", "b"))]
    np.testing.assert_array_equal(outs_a["graph"], outs_b["graph"])
    assert not [n for n in os.listdir(tmp_path / "cache") if n.endswith(".tmp")]
    third, outs_c = _finish(_child(tmp_path, "c", "graph"), tmp_path, "c")
    assert third["llvm"] == 0                                 # what they stored is whole and valid
    np.testing.assert_array_equal(outs_c["graph"], outs_a["graph"])


def _kernels():
    """Three small kernels: exp(x) + k for k = 0, 1, 2."""
    funcs = []
    for k in range(3):
        a = te.placeholder((256,), "float32", name="A")
        b = te.compute(a.shape, lambda i, k=k: te.exp(a[i]) + float(k), name="B")
        funcs.append(te.lower(te.create_schedule([b]), [a, b], name=f"exp_plus_{k}"))
    return funcs


def _check(module):
    x = np.linspace(-2, 2, 256).astype("float32")
    for k in range(3):
        out = nd.empty((256,), "float32")
        module[f"exp_plus_{k}"](nd.array(x), out)
        np.testing.assert_allclose(out.numpy(), np.exp(x) + k, rtol=2e-6)


@pytest.mark.parametrize("damage", ["flip a byte", "truncate"])
def test_a_damaged_entry_is_detected_and_only_its_kernel_recompiled(cache_dir, damage):
    funcs = _kernels()
    _check(build(funcs))
    path = cache.entry_path(llvm_cache.CACHE_KIND, llvm_cache.target_kernel_key(funcs[1]))
    data = open(path, "rb").read()
    with open(path, "wb") as f:
        f.write(data[:200] + bytes([data[200] ^ 0x55]) + data[201:] if damage == "flip a byte"
                else data[:len(data) - 100])
    before = llvm_target.compile_count()
    module = build(_kernels())
    _check(module)
    assert llvm_target.compile_count() - before == 1          # the damaged kernel, no other
    assert module.build_stats == {"kernels": 3, "compiled": 1, "from_cache": 2}
    before = llvm_target.compile_count()
    _check(build(_kernels()))                                  # and it was replaced
    assert llvm_target.compile_count() == before


def test_a_module_loaded_from_the_cache_keeps_its_sources_and_exports(cache_dir, tmp_path):
    fresh = build(_kernels())
    loaded = build(_kernels())
    assert loaded.build_stats["from_cache"] == 3
    assert loaded.get_source("ll") == fresh.get_source("ll") and "exp_plus_2" in loaded.get_source("ll")
    path = loaded.export_library(str(tmp_path / "lib.so"))
    from relay_backend.runtime.module import load_module
    _check(load_module(path))
