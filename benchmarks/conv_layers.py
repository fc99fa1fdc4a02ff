"""Achieved GFLOP/s of ResNet-50's convolution kernels against the machine's peak, on one core.

    python -m benchmarks.conv_layers [--image 224] [--rounds 5]

The machine peak is measured, not looked up: a C loop of 12 independent FMA chains of the
host's widest vectors (`vfmadd231ps` on zmm, 16 float32 lanes, with AVX-512 (`cc -O2
-mavx512f`), else on ymm, 8 lanes (`cc -O2 -mavx2 -mfma`); 2 flops a lane), timed in thread
CPU time, best of 5 runs; that is the per-core ceiling (FMA units x lanes x 2 flops x clock;
the kernels use the same width: AlterOpLayout's channel block is one register). Each
convolution kernel of the network (built at opt_level 3: NCHWc, pre-packed weights, fused
epilogues) is then called alone through the graph executor's prepared kernel calls with
OMP_NUM_THREADS=1 and timed in thread CPU time (time.thread_time, min of `rounds`), which
the other processes of a shared machine do not inflate the way they inflate wall-clock time.
FLOPs = 2 x output elements x input channels per group x KH x KW.
"""
import argparse
import os
import subprocess
import tempfile
import time

PEAK_C = r"""
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
#ifdef __AVX512F__
#define VEC __m512
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define LANES 16
#else
#define VEC __m256
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define LANES 8
#endif
static double now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) {
  VEC a[12]; VEC b = SET1(0.999f), c = SET1(0.001f);
  long n = 100000000 / 12; double best = 1e9; float s = 0;
  for (int i = 0; i < 12; i++) a[i] = SET1((float)i);
  for (int r = 0; r < 5; r++) {
    double t = now();
    for (long i = 0; i < n; i++) {
#define F(k) a[k] = FMA(a[k], b, c);
      F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11)
    }
    t = now() - t; if (t < best) best = t;
  }
  for (int i = 0; i < 12; i++) s += a[i][0];
  printf("%f %f\n", n * 12 * 2.0 * LANES / best / 1e9, s);
  return 0;
}
"""


def peak_gflops() -> tuple:
    """(per-core float32 FMA peak measured by PEAK_C, the ISA it used), AVX-512 when the host has
    it; (None, None) without a C compiler or AVX2."""
    from relay_backend.codegen import llvm_target
    flags = [("AVX-512", ["-mavx512f"])] if llvm_target.host_has_feature("avx512f") else []
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "peak.c"), os.path.join(tmp, "peak")
        with open(src, "w") as f:
            f.write(PEAK_C)
        for isa, extra in flags + [("AVX2", ["-mavx2", "-mfma"])]:
            if subprocess.run(["cc", "-O2", *extra, src, "-o", exe], capture_output=True).returncode:
                continue
            out = subprocess.run([exe], capture_output=True, text=True)
            if out.returncode == 0:
                return float(out.stdout.split()[0]), isa
    return None, None


def conv_kernels(image: int):
    """[(label, flops, call)] for the convolution kernels of ResNet-50 at opt_level 3."""
    import numpy as np

    import relay_backend as relay
    from relay_backend.frontend import from_onnx
    from relay_backend.graph_executor import debug_executor
    from relay_backend.testing import onnx_models
    model, shape = onnx_models.resnet50(image=image)
    mod, params = from_onnx(model)
    with relay.transform.PassContext(opt_level=3):
        factory = relay.build(mod, target="llvm", params=params)
    dbg = debug_executor.create(factory.get_graph_json(), factory.get_lib(), relay.cpu(0))
    dbg.set_input("data", np.random.default_rng(0).standard_normal(shape).astype("float32"))
    for name, value in factory.get_params().items():
        dbg.set_input(name, value)
    calls, graph, out = dict(dbg._node_execs), dbg.graph, []
    for nid, node in enumerate(graph.nodes):
        if nid not in calls or "conv2d_NCHWc" not in str(node.attrs.get("relay_ops", "")):
            continue
        shapes = [list(graph.shape[graph.entry_id(e[0], e[1])]) for e in node.inputs]
        kernel = next(s for s in shapes if len(s) == 6)
        result = list(graph.shape[graph.entry_id(nid, 0)])
        flops = 2 * int(np.prod(result)) * kernel[1] * kernel[2] * kernel[3] * kernel[4]
        label = f"{shapes[0][1] * shapes[0][4]}x{shapes[0][2]}^2 -> {result[1] * result[4]}x{result[2]}^2 " \
                f"k{kernel[2]}x{kernel[3]}"
        out.append((label, flops, calls[nid]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", type=int, default=224)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    peak, isa = peak_gflops()
    print(f"peak (one core, {isa} FMA loop): {peak:.1f} GFLOP/s" if peak else "peak: not measured (no cc/AVX2)")
    total_flops = total_time = 0.0
    for label, flops, call in conv_kernels(args.image):
        best = float("inf")
        for _ in range(args.rounds):
            start = time.thread_time()
            call()
            best = min(best, time.thread_time() - start)
        total_flops, total_time = total_flops + flops, total_time + best
        share = f"{100 * flops / best / 1e9 / peak:5.1f}% of peak" if peak else ""
        print(f"{label:34} {1e3 * best:8.3f} ms {flops / best / 1e9:7.1f} GFLOP/s {share}")
    mean = total_flops / total_time / 1e9
    print(f"all convolutions: {1e3 * total_time:.1f} ms, {mean:.1f} GFLOP/s"
          + (f" ({100 * mean / peak:.0f}% of peak)" if peak else ""))


if __name__ == "__main__":
    main()
