"""The step-by-step guides' code runs: every ```python block of each guide below is executed,
in order, in one fresh interpreter (as a reader would type them), so a renamed function or a
changed behaviour breaks this test instead of the guide. A guide whose blocks are all meant to
run top to bottom says so in its text and is listed here."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GUIDES = [ROOT / "docs" / name for name in ("adding_an_operator.md", "prelude.md", "quantization.md")]
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("guide", GUIDES, ids=[g.name for g in GUIDES])
def test_guide_code_runs(guide, tmp_path):
    blocks = PYTHON_BLOCK.findall(guide.read_text())
    assert blocks, f"{guide.name} has no python blocks"
    script = tmp_path / "guide.py"
    script.write_text("\n\n".join(blocks))
    # this checkout's relay_backend first, as `python -m pytest` from the root imports it
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    result = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True,
                            timeout=600, env={**os.environ, "PYTHONPATH": path})
    assert result.returncode == 0, f"{guide.name} failed:\n{result.stderr[-4000:]}"
