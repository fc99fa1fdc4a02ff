"""`pip install .` from a clean clone gives a working package: the console script, the version
from its one source, py.typed and the license travel with it. Slow: it builds a wheel."""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(cmd, cwd, env=None):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"{cmd}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.mark.slow
def test_install_from_a_clean_clone_into_a_fresh_venv(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    _run(["git", "clone", "-q", str(ROOT), str(clone)], tmp_path)
    venv = tmp_path / "venv"
    # the venv sees this interpreter's packages (numpy, llvmlite, ...) so nothing is downloaded;
    # relay_backend itself is installed into it from the clone, without editable mode
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    # build offline with this interpreter's setuptools + wheel when it has them, else in pip's
    # isolated build environment (which fetches them)
    offline = ["--no-build-isolation"] if importlib.util.find_spec("wheel") else []
    _run([str(python), "-m", "pip", "install", "-q", "--no-deps", *offline, str(clone)], tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = ("import importlib.metadata as md, importlib.resources as res, relay_backend\n"
             "print(relay_backend.__file__)\n"
             "print(md.version('relay_backend'), relay_backend.__version__)\n"
             "print(res.files('relay_backend').joinpath('py.typed').is_file())\n"
             "print(md.metadata('relay_backend')['License'])\n")
    lines = _run([str(python), "-c", probe], elsewhere, env).splitlines()
    assert str(venv) in lines[0]                             # the installed copy, not the checkout
    assert lines[1].split()[0] == lines[1].split()[1]        # one version source
    assert lines[2] == "True" and lines[3] == "Apache-2.0"
    version = _run([str(venv / "bin" / "relay-backend"), "--version"], elsewhere, env)
    assert lines[1].split()[0] in version
    x = "import numpy as np, relay_backend as r; v = r.var('v', shape=(3,)); "
    x += "m = r.build(r.IRModule.from_expr(r.Function([v], r.exp(v))))['default'](r.cpu()); "
    x += "m.run(v=np.zeros(3, 'float32')); assert (m.get_output(0).numpy() == 1).all(); print('ran')"
    assert "ran" in _run([str(python), "-c", x], elsewhere, {**env, "RB_CACHE_DIR": str(tmp_path / "cache")})
