"""How idle OpenMP workers wait (runtime/thread_count.prepare_openmp_env): they spin
SPIN_COUNT iterations after a parallel region (catching the next kernel of a model), then
sleep, unless the user chose OMP_WAIT_POLICY or GOMP_SPINCOUNT; a process that finished its
kernels burns no CPU while it waits."""
import os
import subprocess
import sys

import pytest

from relay_backend.runtime import thread_count

# Runs parallel kernels back to back in a fresh process with two threads, then sleeps, and
# prints the process CPU seconds spent during the sleep (idle workers that kept spinning use it).
PROBE = r'''
import os, time
import numpy as np
import relay_backend as relay
x = relay.var("x", shape=(1 << 20,))
gmod = relay.build(relay.IRModule.from_expr(relay.Function([x], relay.exp(x))))["default"](relay.cpu())
gmod.set_input(x=np.ones(1 << 20, "float32"))
for _ in range(20):
    gmod.run()
cpu = time.process_time()
time.sleep(0.5)
print("IDLE_CPU", time.process_time() - cpu, os.environ.get("GOMP_SPINCOUNT"), os.environ.get("OMP_WAIT_POLICY"))
'''


@pytest.mark.parametrize("user, expected", [
    ({}, {"GOMP_SPINCOUNT": str(thread_count.SPIN_COUNT), "OMP_WAIT_POLICY": None}),
    ({"OMP_WAIT_POLICY": "active"}, {"GOMP_SPINCOUNT": None, "OMP_WAIT_POLICY": "active"}),
    ({"GOMP_SPINCOUNT": "5"}, {"GOMP_SPINCOUNT": "5", "OMP_WAIT_POLICY": None}),
])
def test_spin_count_is_set_unless_the_user_chose(monkeypatch, user, expected):
    for name in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in user.items():
        monkeypatch.setenv(name, value)
    thread_count.prepare_openmp_env()
    assert {name: os.environ.get(name) for name in expected} == expected


def test_idle_workers_stop_spinning():
    if not __import__("ctypes").util.find_library("gomp"):
        pytest.skip("libgomp is not installed: kernels run serially")
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env["OMP_NUM_THREADS"] = "2"
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    idle_cpu, spin, policy = proc.stdout.split("IDLE_CPU")[-1].split()
    assert (spin, policy) == (str(thread_count.SPIN_COUNT), "None")
    assert float(idle_cpu) < 0.1, f"idle OpenMP workers used {idle_cpu} CPU s during a 0.5 s sleep"
