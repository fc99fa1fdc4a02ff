"""Timing script (not a test): a fused `relu(x*2+1) - tanh(x)` kernel on 4M float32, compiled
by the LLVM backend (parallel outer loop, vectorized inner loop), against numpy's op-by-op
chain. Runs interleaved, reports medians and the ratio.

    python tests/codegen/bench_llvm_chain.py [n]
"""
import os
import sys
import time

import numpy as np

from relay_backend import tir
from relay_backend.codegen import build, llvm_target
from relay_backend.runtime import nd


def fused_kernel(n: int, inner: int = 4096) -> "tir.PrimFunc":
    X, Y = tir.Buffer("X", (n,), "float32"), tir.Buffer("Y", (n,), "float32")
    io, ii = tir.Var("io"), tir.Var("ii")
    idx = io * inner + ii
    x = X[idx]
    value = tir.max(x * 2.0 + 1.0, 0.0) - tir.Call("float32", "tanh", [x])
    body = tir.For(io, 0, n // inner, "parallel",
                   tir.For(ii, 0, inner, "vectorized", tir.BufferStore(Y, value, (idx,))))
    return tir.PrimFunc([X, Y], body, "fused_chain")


def main(n: int = 4 * 1024 * 1024, rounds: int = 15) -> None:
    start = time.perf_counter()
    mod = build(fused_kernel(n))
    compile_s = time.perf_counter() - start
    xs = np.random.default_rng(0).standard_normal(n).astype("float32")
    x, y = nd.array(xs), nd.empty((n,), "float32")
    fn = mod["fused_chain"]
    fn(x, y)
    err = np.abs(y.numpy() - (np.maximum(xs * 2 + 1, 0) - np.tanh(xs))).max()
    ours, theirs = [], []
    for _ in range(rounds):                      # interleave the two systems
        t = time.perf_counter()
        fn(x, y)
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        np.maximum(xs * 2 + 1, 0) - np.tanh(xs)
        theirs.append(time.perf_counter() - t)
    o, t = np.median(ours) * 1e3, np.median(theirs) * 1e3
    print(f"n={n} cores={os.cpu_count()} cpu={llvm_target.host_cpu()[0]} "
          f"openmp={'yes' if llvm_target.libgomp_path() else 'no'} compile={compile_s * 1e3:.0f} ms "
          f"max|err|={err:.2e}")
    print(f"llvm fused: {o:.2f} ms (spread {np.ptp(ours) * 1e3:.2f})  numpy: {t:.2f} ms "
          f"(spread {np.ptp(theirs) * 1e3:.2f})  speedup x{t / o:.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4 * 1024 * 1024)
