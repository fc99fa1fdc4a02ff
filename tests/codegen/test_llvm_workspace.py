"""Heap temporaries (bigger than llvm_stmt.STACK_LIMIT) keep their block between calls
(codegen/llvm_workspace.py): the results match numpy on every call, with static and growing
symbolic sizes and inside a parallel loop, and a warm kernel whose temporaries add up to 6 MB
no longer faults in fresh pages on each call (with aligned_alloc / free per call glibc gave
the memory back at every free: about 1,000 minor page faults per call here). The blocks go
when the kernel does: a collected module runs its kernels' free functions, which a shared
library lists as destructors. A temporary that cannot be allocated stops the process with a
message naming the kernel, the buffer and the size."""
import gc
import os
import resource
import signal
import subprocess
import sys

import numpy as np
import pytest

from relay_backend import tir
from relay_backend.codegen import build, codegen_llvm
from relay_backend.codegen import llvm_workspace
from relay_backend.codegen.llvm_workspace import ACQUIRE, FREE_SUFFIX, RELEASE
from relay_backend.runtime import nd

pytestmark = pytest.mark.compile

CHAIN_ELEMENTS = 512 * 1024          # 2 MB of float32 per temporary, three live at once


def _chain(n):
    """Y = ((X + 1) * 2 - 3) through three nested heap temporaries of n floats each."""
    x, y = tir.Buffer("X", (n,), "float32"), tir.Buffer("Y", (n,), "float32")
    temps = [tir.Buffer(f"T{k}", (n,), "float32", scope="global") for k in range(3)]
    i = [tir.Var(f"i{k}") for k in range(4)]
    steps = [tir.For(i[0], 0, n, "serial", tir.BufferStore(temps[0], x[i[0]] + 1.0, (i[0],))),
             tir.For(i[1], 0, n, "serial", tir.BufferStore(temps[1], temps[0][i[1]] * 2.0, (i[1],))),
             tir.For(i[2], 0, n, "serial", tir.BufferStore(temps[2], temps[1][i[2]] - 3.0, (i[2],))),
             tir.For(i[3], 0, n, "serial", tir.BufferStore(y, temps[2][i[3]], (i[3],)))]
    body = tir.seq(*steps)
    for temp in reversed(temps):
        body = tir.Allocate(temp, body)
    return tir.PrimFunc([x, y], body, "chain")


def test_heap_temporaries_go_through_the_site_caches():
    text, _ = codegen_llvm([_chain(CHAIN_ELEMENTS)])
    assert text.count(f'call ptr @"{ACQUIRE}"(') == 3 and text.count(f'call void @"{RELEASE}"(') == 3
    assert text.count('call ptr @"aligned_alloc"(') == 1      # only inside the acquire helper
    assert 'ptr @"rb_workspace_cache.3"' in text
    free = f'@"rb_chain{FREE_SUFFIX}"'
    assert f"define void {free}()" in text and text.count('call void @"free"') == 3 + 2   # + acquire, release
    assert "@\"llvm.global_dtors\" = appending global [1 x" in text and free in text.split("llvm.global_dtors")[1]


def test_a_collected_module_frees_its_blocks(monkeypatch):
    calls = []
    real = llvm_workspace._free_all
    monkeypatch.setattr(llvm_workspace, "_free_all", lambda fns, engine: (calls.append(len(fns)), real(fns, engine)))
    module = build(_chain(CHAIN_ELEMENTS))
    data, out = nd.array(np.ones(CHAIN_ELEMENTS, "float32")), nd.empty((CHAIN_ELEMENTS,), "float32")
    module["chain"](data, out)
    np.testing.assert_array_equal(out.numpy()[:4], [1.0] * 4)
    del module
    gc.collect()
    assert calls == [1]                          # one kernel with sites: its free function ran


def test_warm_calls_reuse_their_blocks():
    n = CHAIN_ELEMENTS
    kernel = build(_chain(n))["chain"]
    x = np.arange(n, dtype="float32") % 1000
    data, y = nd.array(x), nd.empty((n,), "float32")
    for _ in range(3):
        kernel(data, y)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    calls = 20
    for _ in range(calls):
        kernel(data, y)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls
    np.testing.assert_array_equal(y.numpy(), (x + 1) * 2 - 3)
    # one fresh 2 MB temporary alone is 512 faults of 4 KiB pages
    assert faults < 50, f"{faults:.0f} minor page faults per warm call"


def test_symbolic_sizes_grow_and_shrink():
    """A block too small for this call's size is replaced; a bigger one serves smaller calls."""
    n = tir.SizeVar("n")
    x, y = tir.Buffer("X", (n,), "float32"), tir.Buffer("Y", (n,), "float32")
    temp = tir.Buffer("T", (n,), "float32", scope="global")
    i, j = tir.Var("i"), tir.Var("j")
    body = tir.Allocate(temp, tir.seq(
        tir.For(i, 0, n, "serial", tir.BufferStore(temp, x[i] * 3.0, (i,))),
        tir.For(j, 0, n, "serial", tir.BufferStore(y, temp[j] + 1.0, (j,)))))
    kernel = build(tir.PrimFunc([x, y], body, "grow"))["grow"]
    for size in (10, 100_000, 300_000, 1_000, 200_000):
        data = np.linspace(-1, 1, size).astype("float32")
        out = nd.empty((size,), "float32")
        kernel(nd.array(data), out)
        np.testing.assert_array_equal(out.numpy(), data * 3 + 1)


def test_temporary_inside_a_parallel_loop():
    """Each parallel iteration allocates its own heap row: threads that find the site's cache
    taken get fresh blocks, and every row is right."""
    rows, cols = 16, 40_000                  # 160 KB per row: above the stack limit
    x, y = tir.Buffer("X", (rows, cols), "float32"), tir.Buffer("Y", (rows,), "float32")
    temp = tir.Buffer("T", (cols,), "float32", scope="global")
    r, c, k = tir.Var("r"), tir.Var("c"), tir.Var("k")
    total = tir.Buffer("S", (1,), "float32", scope="local")
    row = tir.Allocate(temp, tir.seq(
        tir.For(c, 0, cols, "serial", tir.BufferStore(temp, x[r, c] * 2.0, (c,))),
        tir.Allocate(total, tir.seq(
            tir.BufferStore(total, tir.const(0.0, "float32"), (0,)),
            tir.For(k, 0, cols, "serial", tir.BufferStore(total, total[0] + temp[k], (0,))),
            tir.BufferStore(y, total[0], (r,))))))
    kernel = build(tir.PrimFunc([x, y], tir.For(r, 0, rows, "parallel", row), "rows"))["rows"]
    data = (np.arange(rows * cols, dtype="float32").reshape(rows, cols) % 7) - 3
    out = nd.empty((rows,), "float32")
    for _ in range(5):
        kernel(nd.array(data), out)
        np.testing.assert_array_equal(out.numpy(), (data * 2).sum(axis=1))


_OUT_OF_MEMORY_SCRIPT = """
import numpy as np
from relay_backend import tir
from relay_backend.codegen import build
from relay_backend.runtime import nd
n = tir.SizeVar("n")
x, y = tir.Buffer("X", (n,), "float32"), tir.Buffer("Y", (n,), "float32")
cube = tir.Buffer("Hypercube", (n, n, n, n), "float32", scope="global")     # n ** 4 floats
i, j = tir.Var("i"), tir.Var("j")
body = tir.Allocate(cube, tir.seq(
    tir.For(i, 0, n, "serial", tir.BufferStore(cube, x[i], (i, i, i, i))),
    tir.For(j, 0, n, "serial", tir.BufferStore(y, cube[j, j, j, j], (j,)))))
kernel = build(tir.PrimFunc([x, y], body, "diagonal"))["diagonal"]
small = np.arange(8, dtype="float32")
out = nd.empty((8,), "float32")
kernel(nd.array(small), out)
assert (out.numpy() == small).all()
print("small ok", flush=True)
size = 1 << 15            # 128 KB in, a 2**62-byte temporary: beyond any address space
kernel(nd.array(np.zeros(size, "float32")), nd.empty((size,), "float32"))
print("not reached", flush=True)
"""


def test_a_workspace_that_cannot_be_allocated_stops_with_a_message():
    """aligned_alloc returning NULL (a symbolic size too large for any machine) stops the
    process with a message naming the kernel, the buffer and the size, instead of a
    segmentation fault from writing through the null pointer."""
    proc = subprocess.run([sys.executable, "-c", _OUT_OF_MEMORY_SCRIPT], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "RB_NO_DISK_CACHE": "1"})
    assert "small ok" in proc.stdout and "not reached" not in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == -signal.SIGABRT, (proc.returncode, proc.stderr[-2000:])
    assert f"could not allocate {(1 << 15) ** 4 * 4} bytes of workspace" in proc.stderr, proc.stderr[-2000:]
    assert "kernel diagonal (buffer Hypercube)" in proc.stderr
