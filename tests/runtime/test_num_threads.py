"""runtime.set_num_threads / num_threads: the limit holds in every thread that runs a model,
TVM_NUM_THREADS and OMP_NUM_THREADS are honoured, and threadpoolctl sees the same setting."""
import json
import os
import subprocess
import sys

import pytest

from relay_backend.errors import InputError
from relay_backend.runtime import thread_count as threads_mod

from ..python_script import printed_after

# Runs in a fresh process: builds a model, optionally limits threads, runs the model from a new
# Python thread, and prints what libgomp reports in that thread (omp_get_max_threads).
PROBE = r'''
import ctypes, ctypes.util, sys, threading
import numpy as np
import relay_backend as relay
x = relay.var("x", shape=(64,))
mod = relay.IRModule.from_expr(relay.Function([x], relay.exp(x)))
gmod = relay.build(mod)["default"](relay.cpu())
if sys.argv[1] != "-":
    relay.runtime.set_num_threads(int(sys.argv[1]))
gomp = ctypes.CDLL(ctypes.util.find_library("gomp"))
seen = []
def work():
    gmod.run(x=np.ones(64, "float32"))
    np.testing.assert_allclose(gmod.get_output(0).numpy(), np.exp(np.ones(64)), rtol=1e-6)
    seen.append(gomp.omp_get_max_threads())
t = threading.Thread(target=work); t.start(); t.join()
print("REPORTED", relay.runtime.num_threads(), "WORKER", seen[0])
'''


def _probe(arg: str, **env_vars):
    if not __import__("ctypes").util.find_library("gomp"):
        pytest.skip("libgomp is not installed: kernels run serially")
    env = {k: v for k, v in os.environ.items() if k not in ("TVM_NUM_THREADS", "OMP_NUM_THREADS")}
    env.update(env_vars)
    proc = subprocess.run([sys.executable, "-c", PROBE, arg], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    words = proc.stdout.split()
    return int(words[words.index("REPORTED") + 1]), int(words[words.index("WORKER") + 1])


def test_set_num_threads_holds_in_another_python_thread():
    assert _probe("1") == (1, 1)


def test_tvm_num_threads_is_honoured():
    assert _probe("-", TVM_NUM_THREADS="1") == (1, 1)


def test_omp_num_threads_is_honoured():
    assert _probe("-", OMP_NUM_THREADS="1") == (1, 1)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "4", True])
def test_a_bad_thread_count_is_refused(bad):
    with pytest.raises(InputError, match="set_num_threads: n must be an int >= 1"):
        threads_mod.set_num_threads(bad)


def test_threadpoolctl_reports_the_limit():
    pytest.importorskip("threadpoolctl")
    script = ("import json, relay_backend as relay, threadpoolctl\n"
              "relay.runtime.set_num_threads(1)\n"
              "from relay_backend.codegen import llvm_target; llvm_target.libgomp_path()\n"
              "info = [i for i in threadpoolctl.threadpool_info() if i['internal_api'] == 'openmp']\n"
              "print('OPENMP', json.dumps([i['num_threads'] for i in info]))\n")
    reported = json.loads(printed_after(script, "OPENMP"))
    assert reported and all(n == 1 for n in reported)
