"""The C compiler lookup: $CC, then cc/gcc/clang, then the ziglang wheel's `zig cc`, then a
clear error saying how to install one."""
import os
import subprocess
import sys

import pytest

from relay_backend.codegen import c_compiler
from relay_backend.errors import CompileError


@pytest.fixture
def no_system_cc(monkeypatch, tmp_path):
    """PATH holds no C compiler and CC is unset; the lookup cache is cleared around the test."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    c_compiler.find_cc.cache_clear()
    yield
    c_compiler.find_cc.cache_clear()


def test_cc_from_the_environment_may_hold_words(monkeypatch):
    monkeypatch.setenv("CC", f"{sys.executable} -m ziglang cc")
    c_compiler.find_cc.cache_clear()
    try:
        assert c_compiler.find_cc() == (sys.executable, "-m", "ziglang", "cc")
    finally:
        c_compiler.find_cc.cache_clear()


def test_a_cc_that_is_not_on_path_is_named(monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler-xyz")
    c_compiler.find_cc.cache_clear()
    try:
        with pytest.raises(CompileError, match=r"\$CC='no-such-compiler-xyz' is not on PATH"):
            c_compiler.find_cc()
    finally:
        c_compiler.find_cc.cache_clear()


def test_without_any_compiler_the_error_says_how_to_install_one(no_system_cc, monkeypatch):
    monkeypatch.setattr(c_compiler, "zig_cc", lambda: ())
    with pytest.raises(CompileError, match=r"no C compiler found.*apt-get install gcc.*relay_backend\[zig\]"):
        c_compiler.find_cc()


def test_without_a_system_compiler_the_ziglang_wheel_is_used(no_system_cc):
    if not c_compiler.zig_cc():
        pytest.skip("the ziglang wheel is not installed (pip install ziglang)")
    cc = c_compiler.find_cc()
    assert cc[-1] == "cc" and os.path.basename(cc[0]).startswith("zig")


@pytest.mark.slow
def test_an_aot_model_builds_and_runs_with_zig_cc(tmp_path):
    """End to end in a fresh process whose PATH has no cc/gcc/clang: AOT compiles with zig cc."""
    if not c_compiler.zig_cc():
        pytest.skip("the ziglang wheel is not installed (pip install ziglang)")
    script = (
        "import numpy as np, relay_backend as relay\n"
        "from relay_backend.codegen.c_compiler import find_cc\n"
        "x = relay.var('x', shape=(8,))\n"
        "mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(x) * x))\n"
        "m = relay.build(mod, executor='aot')['default'](relay.cpu())\n"
        "d = np.linspace(-1, 1, 8).astype('float32')\n"
        "m.run(x=d)\n"
        "np.testing.assert_allclose(m.get_output(0).numpy(), np.exp(d) * d, rtol=1e-5)\n"
        "print('CC', find_cc()[-1])\n")
    env = {**os.environ, "PATH": str(tmp_path), "RB_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("CC", None)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "CC cc" in proc.stdout


def test_host_libraries_link_by_the_file_this_process_loads():
    """libm stays -lm (every toolchain has it); OpenMP is linked by the path of the runtime the
    process loaded, which zig cc finds where -lgomp fails (no libgomp.so dev link); an unknown
    name falls back to -l<name>."""
    from relay_backend.runtime.shared_library import pin_openmp_runtime
    loaded = pin_openmp_runtime()              # as compiling a parallel kernel does
    args = c_compiler.host_library_args(["m", "gomp", "no_such_library_xyz", "m"])
    assert args[0] == "-lm" and args[-1] == "-lno_such_library_xyz" and len(args) == 3
    if not loaded:
        pytest.skip("GNU OpenMP is not installed")
    assert os.path.isabs(args[1]) and os.path.exists(args[1]) and "libgomp" in args[1]
