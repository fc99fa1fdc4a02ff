"""Achieved GFLOP/s of a workload's convolution and dense kernels against the machine's peak, on one core.

    python -m benchmarks.conv_layers [--workload resnet50|resnet_block|mlp64] [--image 224] [--rounds 5]

The machine peak is measured, not looked up: a C loop of 12 independent FMA chains at the
kernels' SIMD width (`vfmadd231ps`; AVX-512: 16 float32 lanes, compiled with `-mavx512f`; else
AVX2: 8 lanes, `-mavx2 -mfma`; 2 flops a lane), timed in thread CPU time, best of 5 runs; that is
the per-core ceiling (FMA units x lanes x 2 flops x clock). Each
convolution kernel of the network (built at opt_level 3: NCHWc, pre-packed weights, fused
epilogues) is then called alone through the graph executor's prepared kernel calls with
OMP_NUM_THREADS=1 and timed in thread CPU time (time.thread_time, min of `rounds`), which
the other processes of a shared machine do not inflate the way they inflate wall-clock time.
FLOPs = 2 x output elements x input channels per group x KH x KW (convolution), 2 x output
elements x K (dense on a pre-packed weight). The workload's shipped tuning records apply as in
any build (RB_TOPHUB=0: the default schedules).
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
#if LANES == 16
typedef __m512 vec;
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#else
typedef __m256 vec;
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#endif
static double now(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) {
  vec a[12]; vec b = SET1(0.999f), c = SET1(0.001f);
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


def peak_gflops(lanes: int = None) -> float:
    """Per-core float32 FMA peak measured by PEAK_C at the SIMD width the kernels use (16 lanes
    with AVX-512, else 8 with AVX2; None without a C compiler or AVX2)."""
    if lanes is None:
        from relay_backend.strategy.x86_common import lanes as vector_lanes
        lanes = vector_lanes("float32")
    flags = ["-mavx512f"] if lanes == 16 else ["-mavx2", "-mfma"]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "peak.c"), os.path.join(tmp, "peak")
        with open(src, "w") as f:
            f.write(PEAK_C)
        if subprocess.run(["cc", "-O2", *flags, f"-DLANES={lanes}", src, "-o", exe], capture_output=True).returncode:
            return None
        out = subprocess.run([exe], capture_output=True, text=True)
        return float(out.stdout.split()[0]) if out.returncode == 0 else None


WORKLOADS = {"resnet50": ("resnet50", {"image": None}), "resnet_block": ("resnet_block", {}),
             "mlp64": ("mlp", {"batch": 64})}


def conv_kernels(image: int, workload: str = "resnet50"):
    """[(label, flops, call)] for the convolution and dense kernels of a workload at opt_level 3."""
    import numpy as np

    import relay_backend as relay
    from relay_backend.frontend import from_onnx
    from relay_backend.graph_executor import debug_executor
    from relay_backend.testing import onnx_models
    name, kwargs = WORKLOADS[workload]
    model, shape = getattr(onnx_models, name)(**{k: (image if v is None else v) for k, v in kwargs.items()})
    mod, params = from_onnx(model)
    with relay.transform.PassContext(opt_level=3):
        factory = relay.build(mod, target="llvm", params=params)
    dbg = debug_executor.create(factory.get_graph_json(), factory.get_lib(), relay.cpu(0))
    dbg.set_input("data", np.random.default_rng(0).standard_normal(shape).astype("float32"))
    for name, value in factory.get_params().items():
        dbg.set_input(name, value)
    calls, graph, out = dict(dbg._node_execs), dbg.graph, []
    for nid, node in enumerate(graph.nodes):
        ops = str(node.attrs.get("relay_ops", ""))
        if nid not in calls or ("conv2d_NCHWc" not in ops and "dense_pack" not in ops):
            continue
        shapes = [list(graph.shape[graph.entry_id(e[0], e[1])]) for e in node.inputs]
        result = list(graph.shape[graph.entry_id(nid, 0)])
        if "dense_pack" in ops:
            weight = next(s for s in shapes if len(s) == 3)
            flops = 2 * int(np.prod(result)) * weight[1]
            label = f"dense {shapes[0][0]}x{weight[1]} -> {result[-1]} ({node.func_name})"
        else:
            kernel = next(s for s in shapes if len(s) == 6)
            flops = 2 * int(np.prod(result)) * kernel[1] * kernel[2] * kernel[3] * kernel[4]
            label = f"{shapes[0][1] * shapes[0][4]}x{shapes[0][2]}^2 -> {result[1] * result[4]}x{result[2]}^2 " \
                    f"k{kernel[2]}x{kernel[3]}" + (f" ({node.func_name})" if workload != "resnet50" else "")
        out.append((label, flops, calls[nid]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", type=int, default=224)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="resnet50")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    import relay_backend as relay
    from relay_backend.strategy.x86_common import lanes as vector_lanes
    relay.runtime.set_num_threads(1)
    peak = peak_gflops()
    print(f"peak (one core, FMA loop, {vector_lanes('float32')} lanes): {peak:.1f} GFLOP/s" if peak
          else "peak: not measured (no cc/AVX2)")
    total_flops = total_time = 0.0
    for label, flops, call in conv_kernels(args.image, args.workload):
        best = float("inf")
        for _ in range(args.rounds):
            start = time.thread_time()
            call()
            best = min(best, time.thread_time() - start)
        total_flops, total_time = total_flops + flops, total_time + best
        share = f"{100 * flops / best / 1e9 / peak:5.1f}% of peak" if peak else ""
        print(f"{label:34} {1e3 * best:8.3f} ms {flops / best / 1e9:7.1f} GFLOP/s {share}")
    mean = total_flops / total_time / 1e9
    print(f"all kernels listed: {1e3 * total_time:.1f} ms, {mean:.1f} GFLOP/s"
          + (f" ({100 * mean / peak:.0f}% of peak)" if peak else ""))


if __name__ == "__main__":
    main()
