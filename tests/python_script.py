"""Run Python code in a fresh interpreter and read what it printed after a marker: for checks
that need a new process (thread settings read once at start-up)."""
import os
import subprocess
import sys


def printed_after(script: str, marker: str, timeout: int = 300, env: dict = None) -> str:
    """The text `script` printed after `marker` (stripped); the test fails with the script's
    stderr when it exits non-zero or never prints the marker. `env` adds environment variables."""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert marker in proc.stdout, f"{marker!r} not printed: {proc.stdout[-1000:]}{proc.stderr[-1000:]}"
    return proc.stdout.split(marker, 1)[1].strip()
