"""Cross-compiling through Target: -mtriple/-mcpu/-mattr reach the LLVM codegen, the object is
for that machine, export_library links it with the compiler given (or writes the object),
running or loading it on this host is refused with a clear error, and strategy selection
follows the target's keys (x86 schedules only for x86 targets)."""
import shutil

import numpy as np
import pytest

import relay_backend as relay
from relay_backend import te
from relay_backend.codegen import build
from relay_backend.errors import CompileError, RelayError, SerializationError
from relay_backend.runtime import load_module, nd
from relay_backend.runtime.elf_check import elf_machine
from relay_backend.strategy import op_strategy
from relay_backend.target import Target
from tests.artifact_edit import edit_library_object

pytestmark = pytest.mark.compile

EM_AARCH64, EM_X86_64 = 183, 62
AARCH64 = "llvm -mtriple=aarch64-linux-gnu"


def _kernel():
    x = te.placeholder((64,), "float32", name="x")
    y = te.compute((64,), lambda i: te.exp(x[i]) * 2.0, name="y")
    s = te.create_schedule(y)
    return te.lower(s, [x, y], "scale_exp")


def test_aarch64_object_is_aarch64(tmp_path):
    mod = build(_kernel(), AARCH64 + " -mcpu=cortex-a72 -mattr=+neon")
    path = mod.export_library(str(tmp_path / "k.o"))
    data = open(path, "rb").read()
    assert data[:4] == b"\x7fELF" and elf_machine(data) == EM_AARCH64
    assert "aarch64" in mod.get_source("ll").split("target triple")[1].splitlines()[0]
    assert "fmul" in mod.get_source("asm")                 # AArch64 assembly
    if relay.target.arch_family(relay.target.host_triple()) == "x86_64":
        host = build(_kernel(), "llvm").export_library(str(tmp_path / "h.o"))
        assert elf_machine(open(host, "rb").read()) == EM_X86_64


def test_running_or_linking_foreign_code_is_refused(tmp_path):
    mod = build(_kernel(), AARCH64)
    assert not mod.runnable and mod.function_names == ["scale_exp"]
    with pytest.raises(RelayError, match=r"cannot run in this process: it is aarch64 code"):
        mod["scale_exp"](nd.array(np.zeros(64, "float32")), nd.empty((64,)))
    with pytest.raises(CompileError, match=r"pass cc= a compiler for that machine .*'\.o'"):
        mod.export_library(str(tmp_path / "k.so"))
    with pytest.raises(CompileError, match=r"cc='no-such-cross-gcc' is not on PATH"):
        mod.export_library(str(tmp_path / "k.so"), cc="no-such-cross-gcc")


def test_cross_linked_library_exports_and_load_refuses_it(tmp_path):
    """fcompile stands in for a cross linker (none is installed here): it receives the aarch64
    object; the library it writes carries the loader trailer, and load_module refuses it before
    dlopen because it is not code for this machine."""
    seen = []

    def fake_cross_link(output, objects):
        seen.append(elf_machine(open(objects[0], "rb").read()))
        shutil.copyfile(objects[0], output)
    path = build(_kernel(), AARCH64).export_library(str(tmp_path / "k.so"), fcompile=fake_cross_link)
    assert seen == [EM_AARCH64]
    with pytest.raises(SerializationError, match=r"holds aarch64 code .*this host is x86_64"):
        load_module(path)


def test_host_library_with_a_foreign_machine_field_is_refused(tmp_path):
    path = build(_kernel(), "llvm").export_library(str(tmp_path / "k.so"))
    data = open(path, "rb").read()
    patched = edit_library_object(data, lambda b: b[:18] + EM_AARCH64.to_bytes(2, "little") + b[20:])
    open(path, "wb").write(patched)
    with pytest.raises(SerializationError, match=r"holds aarch64 code"):
        load_module(path)


def test_relay_build_cross_and_graph_refuses_to_run(tmp_path):
    x = relay.var("x", shape=(4, 8))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x) * relay.const(2.0)))
    factory = relay.build(mod, target=AARCH64)
    assert factory.target == Target(AARCH64) and not factory.get_lib().runnable
    out = factory.get_lib().export_library(str(tmp_path / "m.o"))
    assert elf_machine(open(out, "rb").read()) == EM_AARCH64
    with pytest.raises(RelayError, match="cannot run in this process"):
        factory["default"](relay.cpu())
    with pytest.raises(CompileError, match="AOT executor .*cannot cross-compile"):
        relay.build(mod, target=AARCH64, executor="aot")


def test_mcpu_and_mattr_reach_llvm():
    mod = build(_kernel(), "llvm -mcpu=x86-64 -mattr=-avx,-avx2,-sse4.1")
    assert mod.runnable
    asm = mod.get_source("asm")
    assert "ymm" not in asm            # no AVX registers without AVX
    out = nd.empty((64,))
    mod["scale_exp"](nd.array(np.ones(64, "float32")), out)
    np.testing.assert_allclose(out.numpy(), np.full(64, 2 * np.e, "float32"), rtol=1e-6)


def _dense_impls(target):
    data = te.placeholder((4, 16), "float32")
    weight = te.placeholder((32, 16), "float32")
    op = relay.op.get("nn.dense")
    from relay_backend.op.nn.dense import DenseAttrs
    strategy = op_strategy(op, DenseAttrs(), [data, weight],
                           relay.TensorType((4, 32)), target)
    return sorted(i.name for s in strategy.specializations for i in s.implementations)


@pytest.mark.parametrize("target, x86", [
    ("llvm", True), ("llvm -mtriple=x86_64-linux-gnu", True),
    ("llvm -mtriple=aarch64-linux-gnu", False), ("llvm -device=arm_cpu", False), ("c", False),
])
def test_strategy_selection_by_keys(target, x86):
    names = _dense_impls(target)
    assert "dense.generic" in names
    assert any(n.endswith(".x86") for n in names) == x86, names


def test_kernel_cache_distinguishes_target_options():
    from relay_backend.te_compiler.cache import CCacheKey
    x = relay.var("x", shape=(4,))
    func = relay.Function([x], relay.exp(x)).with_attr("Primitive", 1)
    # CCacheKeys compare by identity (TVM Objects); the cache matches their structural keys
    keys = {CCacheKey(func, t).structural_key for t in ("llvm", "llvm -mcpu=native", AARCH64, "llvm")}
    assert len(keys) == 3
